// Package metadatatest holds the component checks that mdatagen's
// generated_component_test.go makes upstream: the type, kind and stability
// per signal that the factory declares must be the ones metadata.yaml in its
// folder states, its default config must pass CheckConfigStruct, and every
// signal must create, start and shut down with the default config overlaid
// by metadata.yaml's tests::config.
//
// It exists because mdatagen does not resolve at our collector version
// (go.opentelemetry.io/collector/cmd/mdatagen is not served at v0.165.0),
// so each component's internal/metadata is written by hand and this is
// what keeps it equal to metadata.yaml.
package metadatatest

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
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

// CheckFactory fails t unless f's type, its kind and stabilities match
// metadata.yaml and its default config passes CheckConfigStruct. stability
// holds the factory's level for every signal (traces, metrics, logs),
// StabilityLevelUndefined for the unsupported ones.
func CheckFactory(t *testing.T, f component.Factory, kind component.Kind, stability map[string]component.StabilityLevel) {
	t.Helper()
	if err := componenttest.CheckConfigStruct(f.CreateDefaultConfig()); err != nil {
		t.Error(err)
	}
	md := Load(t)
	if md.Type != f.Type().String() {
		t.Errorf("factory type %q, %s says %q", f.Type(), File, md.Type)
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

// Signal is one signal of a component, for Lifecycle.
type Signal struct {
	Name   string
	Create func(context.Context, component.Config) (component.Component, error)
	// Consume, if set, hands the started component one batch (processors
	// and exporters that can take one without a server behind them).
	Consume func(context.Context, component.Component) error
}

// Lifecycle runs each signal twice with Config(t, f): created and shut down
// without a start; created, started, given a batch (if Consume is set) and
// shut down.
func Lifecycle(t *testing.T, f component.Factory, signals ...Signal) {
	t.Helper()
	ctx := context.Background()
	for _, s := range signals {
		t.Run(s.Name+"-shutdown", func(t *testing.T) {
			c, err := s.Create(ctx, Config(t, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		})
		t.Run(s.Name+"-lifecycle", func(t *testing.T) {
			c, err := s.Create(ctx, Config(t, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			if s.Consume != nil {
				if err := s.Consume(ctx, c); err != nil {
					t.Error(err)
				}
			}
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
