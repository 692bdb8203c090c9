package forward

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

// TestUnixSocketModeFromYAML reads unix_socket_mode the ways a config
// writes it: an octal YAML number or a quoted string.
func TestUnixSocketModeFromYAML(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want SocketMode
	}{
		{"unix_socket: /s\n", 0o600},
		{"unix_socket: /s\nunix_socket_mode: 0660\n", 0o660},
		{"unix_socket: /s\nunix_socket_mode: \"0660\"\n", 0o660},
		{"unix_socket: /s\nunix_socket_mode: \"0o666\"\n", 0o666},
	} {
		cfg := NewDefaultConfig()
		conf, err := confmap.NewRetrievedFromYAML([]byte(tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := conf.AsConf()
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Unmarshal(&cfg); err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if cfg.UnixSocketMode != tc.want {
			t.Errorf("%q: mode %v, want %v", tc.yaml, cfg.UnixSocketMode, tc.want)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
		}
	}
}

func TestUnixSocketModeErrors(t *testing.T) {
	for _, m := range []SocketMode{600, 0o1600, 0o400, 0o066} {
		cfg := Config{UnixSocket: "/var/run/fluent.sock", UnixSocketMode: m}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "unix_socket_mode") {
			t.Errorf("mode %v: error %v, want one naming unix_socket_mode", m, err)
		}
	}
	var m SocketMode
	if err := m.UnmarshalText([]byte("rw-rw----")); err == nil {
		t.Error("a symbolic mode was accepted")
	}
}

// TestUnixSocketIsCreatedWithTheConfiguredMode: 0600 by default, so no
// other local user can inject records; a configured mode is applied as is.
func TestUnixSocketIsCreatedWithTheConfiguredMode(t *testing.T) {
	for _, mode := range []SocketMode{0, 0o600, 0o660} {
		cfg := NewDefaultConfig()
		cfg.Endpoint = ""
		cfg.UnixSocket = filepath.Join(shortTempDir(t), "fluent.sock")
		if mode != 0 {
			cfg.UnixSocketMode = mode
		}
		s, err := New(cfg, Settings{}, streamtest.NewRecorder().Sink)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(cfg.UnixSocket)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(cfg.UnixSocketMode)
		if fi.Mode().Perm() != want {
			t.Errorf("socket mode %v, want %v", fi.Mode().Perm(), want)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
