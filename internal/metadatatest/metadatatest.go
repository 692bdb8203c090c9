// Package metadatatest checks a component against the metadata.yaml in its
// folder, as mdatagen's generated_component_test.go does upstream: the type
// and the stability per signal that the factory declares must be the ones
// metadata.yaml states, and the lifecycle tests start the component with
// the default config overlaid by metadata.yaml's tests::config.
//
// It exists because mdatagen does not resolve at our collector version
// (go.opentelemetry.io/collector/cmd/mdatagen is not served at v0.165.0),
// so each component's internal/metadata is written by hand and this is
// what keeps it equal to metadata.yaml.
package metadatatest

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// File is the metadata file of the package under test.
const File = "metadata.yaml"

// Metadata is the part of metadata.yaml the checks read.
type Metadata struct {
	Type   string `mapstructure:"type"`
	Status struct {
		Class string `mapstructure:"class"`
		// Stability maps a level (development, alpha, beta, stable) to
		// the signals at that level.
		Stability map[string][]string `mapstructure:"stability"`
	} `mapstructure:"status"`
}

// Load reads metadata.yaml from the package directory.
func Load(t *testing.T) Metadata {
	t.Helper()
	cm, err := confmaptest.LoadConf(File)
	if err != nil {
		t.Fatal(err)
	}
	var md Metadata
	if err := cm.Unmarshal(&md, confmap.WithIgnoreUnused()); err != nil {
		t.Fatalf("%s: %v", File, err)
	}
	return md
}

// CheckFactory fails t unless the factory's type, kind and stabilities
// match metadata.yaml. stability holds the factory's level for every signal
// (traces, metrics, logs), StabilityLevelUndefined for the unsupported ones.
func CheckFactory(t *testing.T, typ component.Type, kind component.Kind, stability map[string]component.StabilityLevel) {
	t.Helper()
	md := Load(t)
	if md.Type != typ.String() {
		t.Errorf("factory type %q, %s says %q", typ, File, md.Type)
	}
	if !strings.EqualFold(md.Status.Class, kind.String()) {
		t.Errorf("factory kind %s, %s says status.class %q", kind, File, md.Status.Class)
	}
	want := map[string]component.StabilityLevel{}
	for level, signals := range md.Status.Stability {
		var sl component.StabilityLevel
		if err := sl.UnmarshalText([]byte(level)); err != nil {
			t.Errorf("%s: status.stability: %v", File, err)
		}
		for _, s := range signals {
			want[s] = sl
		}
	}
	for signal, got := range stability {
		if got != want[signal] {
			t.Errorf("%s stability: factory %v, %s %v", signal, got, File, want[signal])
		}
		delete(want, signal)
	}
	for signal := range want {
		t.Errorf("%s lists signal %q that the check was not given", File, signal)
	}
}

// Config returns the factory's default config with metadata.yaml's
// tests::config (if any) unmarshalled over it.
func Config(t *testing.T, f component.Factory) component.Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(File)
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.CreateDefaultConfig()
	sub, err := cm.Sub("tests::config")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Unmarshal(&cfg); err != nil {
		t.Fatalf("%s tests::config: %v", File, err)
	}
	return cfg
}
