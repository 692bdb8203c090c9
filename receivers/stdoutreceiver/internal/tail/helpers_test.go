package tail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap/zaptest"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// got is a line as the sink saw it, copied out of the batch.
type got struct {
	Data      string
	Time      time.Time
	Stream    string
	Truncated bool
	Path      string
}

// collector is a Sink that keeps what it was given; block, when set, is
// waited on before each batch is accepted (a slow or full pipeline).
type collector struct {
	mu      sync.Mutex
	lines   []got
	batches int
	calls   int
	block   chan struct{}
	changed chan struct{}
}

func newCollector() *collector { return &collector{changed: make(chan struct{}, 1)} }

func (c *collector) sink(ctx context.Context, b stream.Batch) error {
	c.mu.Lock()
	c.calls++
	block := c.block
	c.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if len(b.Lines) == 0 {
		return errors.New("empty batch")
	}
	path := ""
	for _, a := range b.Attrs {
		if a.Key == "log.file.path" {
			path = a.Value
		}
	}
	c.mu.Lock()
	for _, l := range b.Lines {
		c.lines = append(c.lines, got{Data: string(l.Data), Time: l.Time, Stream: l.Stream, Truncated: l.Truncated, Path: path})
	}
	c.batches++
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

func (c *collector) snapshot() []got {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]got(nil), c.lines...)
}

func (c *collector) callCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

// waitCount waits until at least n lines arrived; the long deadline only
// turns a hang into a failure, it measures nothing.
func (c *collector) waitCount(t *testing.T, n int) []got {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for c.count() < n {
		select {
		case <-c.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("got %d lines, want %d", c.count(), n)
		}
	}
	return c.snapshot()
}

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
func startTailer(t *testing.T, cfg Config, set Settings, c *collector) *Tailer {
	t.Helper()
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 10 * time.Millisecond
	}
	if set.Logger == nil {
		set.Logger = zaptest.NewLogger(t)
	}
	tl, err := New(cfg, set, c.sink)
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
func checkSequence(t *testing.T, lines []got, n int) {
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
