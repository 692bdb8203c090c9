package drain

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/sidecarhq/sidecar/extensions/dirstorage"
)

// otlpServer is an OTLP/HTTP logs endpoint that answers each request after
// a pause, or refuses all with 503, and counts the log records it took.
type otlpServer struct {
	*httptest.Server
	records atomic.Int64
	down    atomic.Bool
}

func newOTLPServer(t *testing.T) *otlpServer {
	s := &otlpServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if s.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		time.Sleep(10 * time.Millisecond) // a queue that has something to drain
		s.records.Add(int64(req.Logs().LogRecordCount()))
		out, _ := plogotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(s.Close)
	return s
}

type storageHost struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

// startLogs starts an otlp_http logs exporter, wrapped, with its queue in
// dir; stop shuts it and its storage down.
func startLogs(t *testing.T, url, dir string, bound time.Duration) (exp exporter.Logs, stop func()) {
	t.Helper()
	sf := dirstorage.NewFactory()
	scfg := sf.CreateDefaultConfig().(*dirstorage.Config)
	scfg.Directory = dir
	ext, err := sf.Create(context.Background(), extensiontest.NewNopSettings(sf.Type()), scfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	storageID := component.NewID(sf.Type())
	host := storageHost{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{storageID: ext}}

	f := Factory(otlphttpexporter.NewFactory(), bound)
	cfg := f.CreateDefaultConfig().(*otlphttpexporter.Config)
	cfg.ClientConfig.Endpoint = url
	cfg.ClientConfig.Compression = configcompression.Type("none")
	cfg.RetryConfig.InitialInterval = 10 * time.Millisecond
	cfg.RetryConfig.MaxElapsedTime = 0 // retried until taken, as in to-gateway.yaml
	q := cfg.QueueConfig.Get()
	q.StorageID = &storageID
	q.NumConsumers = 1
	set := exportertest.NewNopSettings(f.Type())
	set.ID = component.NewID(f.Type()) // the queue's storage: the same across "processes"
	exp, err = f.CreateLogs(context.Background(), set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	return exp, func() {
		if err := exp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := ext.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

func someLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for range n {
		lrs.AppendEmpty().Body().SetStr("line")
	}
	return ld
}

// Shutdown returns once the persistent queue handed everything over: the
// stock exporter would leave the queue's backlog on disk.
func TestShutdownDrainsThePersistentQueue(t *testing.T) {
	srv := newOTLPServer(t)
	exp, stop := startLogs(t, srv.URL, t.TempDir(), time.Minute) // the bound only ends a failing test
	const batches, per = 30, 10
	for range batches {
		if err := exp.ConsumeLogs(context.Background(), someLogs(per)); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if n := srv.records.Load(); n != batches*per {
		t.Fatalf("%d records arrived by shutdown, want %d", n, batches*per)
	}
}

// With the receiving end down, Shutdown gives up after the bound and the
// queue stays on disk: the next start delivers it.
func TestWhatCannotBeDeliveredStaysForTheNextStart(t *testing.T) {
	srv := newOTLPServer(t)
	srv.down.Store(true)
	dir := t.TempDir()
	exp, stop := startLogs(t, srv.URL, dir, 200*time.Millisecond)
	for range 5 {
		if err := exp.ConsumeLogs(context.Background(), someLogs(10)); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if n := srv.records.Load(); n != 0 {
		t.Fatalf("%d records arrived at a server that was down", n)
	}
	srv.down.Store(false)
	_, stop = startLogs(t, srv.URL, dir, time.Minute)
	stop()
	if n := srv.records.Load(); n != 50 {
		t.Fatalf("%d records arrived after the restart, want 50", n)
	}
}
