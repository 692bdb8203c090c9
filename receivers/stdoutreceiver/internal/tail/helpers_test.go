package tail

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap/zaptest"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

// memStorage is an in-memory storage.Client, standing in for file_storage.
type memStorage struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemStorage() *memStorage { return &memStorage{m: map[string][]byte{}} }

func (s *memStorage) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.m[key]...), nil
}

func (s *memStorage) Set(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = append([]byte(nil), value...)
	return nil
}

func (s *memStorage) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

func (s *memStorage) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		var err error
		switch op.Type {
		case storage.Get:
			op.Value, err = s.Get(ctx, op.Key)
		case storage.Set:
			err = s.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			err = s.Delete(ctx, op.Key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *memStorage) Close(context.Context) error { return nil }

// startTailer starts a Tailer that polls quickly and stops it at cleanup.
func startTailer(t *testing.T, cfg Config, set Settings, c *streamtest.Recorder) *Tailer {
	t.Helper()
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 10 * time.Millisecond
	}
	if set.Logger == nil {
		set.Logger = zaptest.NewLogger(t)
	}
	tl, err := New(cfg, set, c.Sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tl.Shutdown(context.Background()) })
	return tl
}

func cfgFor(include ...string) Config {
	cfg := NewDefaultConfig()
	cfg.Include = include
	cfg.StartAt = StartAtBeginning
	return cfg
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}

func criLine(i int) string {
	return fmt.Sprintf("2024-05-06T07:08:09.%09dZ stdout F {\"level\":30,\"seq\":%d,\"msg\":\"hello\"}\n", i, i)
}

// checkSequence asserts the lines are exactly seq 0..n-1, each once, in order.
func checkSequence(t *testing.T, lines []streamtest.Line, n int) {
	t.Helper()
	if len(lines) != n {
		t.Errorf("got %d lines, want %d", len(lines), n)
	}
	for i, l := range lines {
		want := fmt.Sprintf("{\"level\":30,\"seq\":%d,\"msg\":\"hello\"}", i)
		if l.Data != want {
			t.Fatalf("line %d = %q, want %q (lost, repeated or reordered)", i, l.Data, want)
		}
	}
}

func tempLog(t *testing.T, name string) (dir, path string) {
	dir = t.TempDir()
	return dir, filepath.Join(dir, name)
}
