package otlpreceiver

import (
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	// Defaults apply to a present section; absent sections stay off.
	if cfg.Protocols.GRPC.HasValue() || cfg.Protocols.HTTP.HasValue() {
		t.Fatal("no transport may be on by default")
	}
	if err := cfg.Validate(); err == nil {
		t.Error("a config without transports must not validate")
	}
	g := cfg.Protocols.GRPC.GetOrInsertDefault()
	h := cfg.Protocols.HTTP.GetOrInsertDefault()
	if g.NetAddr.Endpoint != "127.0.0.1:4317" || g.ReadBufferSize != 512<<10 {
		t.Errorf("grpc defaults %+v", g)
	}
	if h.NetAddr.Endpoint != "127.0.0.1:4318" || h.TLS.HasValue() || h.WriteTimeout != 0 || h.ReadHeaderTimeout != 0 {
		t.Errorf("http defaults %+v", h)
	}
	if cfg.SamplingProcessor != nil {
		t.Error("sampling_processor must be unset by default")
	}
}

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(name string) (*Config, error) {
		t.Helper()
		sub, err := cm.Sub(component.MustNewIDWithName("otlp", name).String())
		if err != nil {
			t.Fatal(err)
		}
		cfg := createDefaultConfig().(*Config)
		if err := sub.Unmarshal(cfg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return cfg, confmap.Validate(cfg)
	}

	cfg, err := load("grpc")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SamplingProcessor == nil || *cfg.SamplingProcessor != component.MustNewID("sampling") {
		t.Errorf("sampling_processor %v", cfg.SamplingProcessor)
	}
	if g := cfg.Protocols.GRPC.Get(); g == nil || g.NetAddr.Endpoint != "127.0.0.1:14317" || g.MaxRecvMsgSizeMiB != 8 || g.ReadBufferSize != 512<<10 {
		t.Errorf("grpc %+v", g)
	}
	if cfg.Protocols.HTTP.HasValue() {
		t.Error("absent http must stay off")
	}

	cfg, err = load("defaults")
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.Protocols.GRPC.Get(); g == nil || g.NetAddr.Endpoint != "127.0.0.1:4317" {
		t.Errorf("grpc %+v", g)
	}
	if h := cfg.Protocols.HTTP.Get(); h == nil || h.NetAddr.Endpoint != "127.0.0.1:4318" {
		t.Errorf("http %+v", h)
	}

	cfg, err = load("http")
	if err != nil {
		t.Fatal(err)
	}
	if h := cfg.Protocols.HTTP.Get(); h == nil || h.NetAddr.Endpoint != "0.0.0.0:4318" || h.MaxRequestBodySize != 1<<20 || len(h.CompressionAlgorithms) != 2 {
		t.Errorf("http %+v", h)
	}
	if cfg.Protocols.GRPC.HasValue() {
		t.Error("absent grpc must stay off")
	}

	if _, err = load("none"); err == nil || !strings.Contains(err.Error(), "at least one protocol") {
		t.Errorf("no protocol: %v", err)
	}
}

// The stock receiver's URL path overrides are not supported, and say so.
func TestUnknownKey(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	err := confmap.NewFromStringMap(map[string]any{
		"protocols": map[string]any{"http": map[string]any{"traces_url_path": "/traces"}},
	}).Unmarshal(cfg)
	if err == nil || !strings.Contains(err.Error(), "traces_url_path") {
		t.Errorf("unmarshal: %v", err)
	}
}
