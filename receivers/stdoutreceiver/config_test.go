package stdoutreceiver

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
)

func loadConfig(t *testing.T, raw map[string]any) (*Config, error) {
	t.Helper()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := confmap.NewFromStringMap(raw).Unmarshal(cfg); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return cfg, confmap.Validate(cfg)
}

func TestConfigSections(t *testing.T) {
	cfg, err := loadConfig(t, map[string]any{"stdin": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if sc := cfg.Stdin.Get(); sc == nil || !sc.ExitOnEOF {
		t.Errorf("stdin: {} must turn stdin on with exit_on_eof true, got %+v", sc)
	}
	if cfg.Files.HasValue() || cfg.Forward.HasValue() {
		t.Errorf("absent sections must stay off")
	}
	if cfg.MaxLineBytes != 1<<20 {
		t.Errorf("max_line_bytes default %d", cfg.MaxLineBytes)
	}

	cfg, err = loadConfig(t, map[string]any{
		"max_line_bytes": 1024,
		"storage":        "file_storage/offsets",
		"stdin":          map[string]any{"exit_on_eof": false},
		"files":          map[string]any{"include": []any{"/var/log/pods/*/*/*.log"}, "start_at": "beginning"},
		"forward":        map[string]any{"unix_socket": "/var/run/fluent.sock"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Stdin.Get().ExitOnEOF || cfg.MaxLineBytes != 1024 || cfg.Storage.String() != "file_storage/offsets" {
		t.Errorf("config %+v", cfg)
	}
	fc := cfg.Files.Get()
	if fc == nil || fc.StartAt != "beginning" || fc.Format != "auto" || fc.PollInterval != 200*time.Millisecond {
		t.Errorf("files must keep defaults for unset keys: %+v", fc)
	}
	if f := cfg.Forward.Get(); f == nil || f.UnixSocket != "/var/run/fluent.sock" || f.Endpoint != "127.0.0.1:24224" {
		t.Errorf("forward %+v", f)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  map[string]any
		want string
	}{
		"no transport":      {map[string]any{}, "no transport configured"},
		"bad line limit":    {map[string]any{"stdin": map[string]any{}, "max_line_bytes": 0}, "max_line_bytes"},
		"files need globs":  {map[string]any{"files": map[string]any{}}, "include"},
		"storage unused":    {map[string]any{"stdin": map[string]any{}, "storage": "file_storage"}, "storage"},
		"bad files format":  {map[string]any{"files": map[string]any{"include": []any{"/x"}, "format": "xml"}}, "format"},
		"bad forward start": {map[string]any{"forward": map[string]any{"endpoint": "no-port"}}, "endpoint"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(t, tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestFactoryType(t *testing.T) {
	f := NewFactory()
	if f.Type() != component.MustNewType("stdout") {
		t.Fatal(f.Type())
	}
	if err := confmap.Validate(f.CreateDefaultConfig()); err == nil {
		t.Fatal("the default config has no transport and must not validate")
	}
}
