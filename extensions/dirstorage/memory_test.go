package dirstorage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sidecarhq/sidecar/extensions/dirstorage/internal/metadata"
)

// statusHost records the status the extension reports.
type statusHost struct {
	component.Host
	events []*componentstatus.Event
}

func (h *statusHost) Report(ev *componentstatus.Event) { h.events = append(h.events, ev) }

// A directory that cannot exist (its path runs through a file: tests run as
// root, so permissions would not stop a write) does not fail the start:
// the clients keep their keys in memory, one warning says so and why, and
// the extension reports a permanent error naming the directory.
func TestUnusableDirectoryFallsBackToMemory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "state")
	core, logs := observer.New(zapcore.InfoLevel)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := extensiontest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	ext, err := newExtension(&Config{Directory: dir}, set)
	if err != nil {
		t.Fatal(err)
	}
	host := &statusHost{Host: componenttest.NewNopHost()}
	if err := ext.Start(context.Background(), host); err != nil {
		t.Fatalf("start on an unusable directory: %v", err)
	}
	m, err := tel.GetMetric("otelcol_extension_dir_storage_in_memory")
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := m.Data.(metricdata.Gauge[int64]); !ok || len(g.DataPoints) != 1 || g.DataPoints[0].Value != 1 {
		t.Errorf("otelcol_extension_dir_storage_in_memory: %+v, want 1", m.Data)
	}
	if logs.Len() != 1 || logs.All()[0].Level != zapcore.WarnLevel || !strings.Contains(logs.All()[0].Message, dir) ||
		!strings.Contains(logs.All()[0].Message, "do not survive a restart") {
		t.Errorf("want one warning naming %s and what is lost on a restart: %v", dir, logs.All())
	}
	if len(host.events) != 1 || host.events[0].Status() != componentstatus.StatusPermanentError || !strings.Contains(host.events[0].Err().Error(), dir) {
		t.Errorf("reported %v, want one permanent error naming %s", host.events, dir)
	}

	ctx := context.Background()
	logsClient, err := ext.GetClient(ctx, component.KindExporter, component.MustNewID("axiom"), "logs")
	if err != nil {
		t.Fatal(err)
	}
	traces, err := ext.GetClient(ctx, component.KindExporter, component.MustNewID("axiom"), "traces")
	if err != nil {
		t.Fatal(err)
	}
	if err := logsClient.Batch(ctx, storage.SetOperation("meta", []byte("m")), storage.SetOperation("0", []byte("item"))); err != nil {
		t.Fatal(err)
	}
	get := storage.GetOperation("0")
	if err := logsClient.Batch(ctx, get); err != nil || string(get.Value) != "item" {
		t.Errorf("read back %q, %v", get.Value, err)
	}
	if got, _ := traces.Get(ctx, "0"); got != nil {
		t.Errorf("another client sees %q", got)
	}
	if err := logsClient.Delete(ctx, "0"); err != nil {
		t.Fatal(err)
	}
	if got, _ := logsClient.Get(ctx, "0"); got != nil {
		t.Errorf("deleted key reads %q", got)
	}
}

// The memory fallback is bounded in bytes as a disk is: a write that would
// grow it past the bound is storage.ErrStorageFull and changes nothing
// (nor the bookkeeping written before it in a batch), a small value over an
// existing key (the queue's bookkeeping, written in place on a disk)
// always fits, and deleting makes room.
func TestMemoryFallbackIsBoundedInBytes(t *testing.T) {
	ctx := context.Background()
	const max = 64 << 10
	c := newMemStore(max).client("exporter_axiom__logs")
	item := bytes.Repeat([]byte("x"), 10<<10)
	n := 0
	var err error
	for ; n < 100; n++ {
		if err = c.Batch(ctx, storage.SetOperation("meta", []byte{byte(n)}), storage.SetOperation(string(rune('a'+n)), item)); err != nil {
			break
		}
	}
	if !errors.Is(err, storage.ErrStorageFull) || n != max/len(item) {
		t.Fatalf("after %d items of %d bytes: %v; want ErrStorageFull after %d", n, len(item), err, max/len(item))
	}
	if got, _ := c.Get(ctx, "meta"); len(got) != 1 || got[0] != byte(n-1) {
		t.Errorf("bookkeeping %v was written although its item was not", got)
	}
	if err := c.Set(ctx, "meta", bytes.Repeat([]byte("m"), 1000)); err != nil {
		t.Errorf("small bookkeeping over an existing key when full: %v", err)
	}
	if err := c.Set(ctx, "new", item); !errors.Is(err, storage.ErrStorageFull) {
		t.Errorf("a new item when full: %v", err)
	}
	if err := c.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "new", item); err != nil {
		t.Errorf("after a delete made room: %v", err)
	}
}
