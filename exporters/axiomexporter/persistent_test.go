package axiomexporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/metadata"
	"github.com/sidecarhq/sidecar/extensions/dirstorage"
	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/losses"
)

// storageHost offers one file_storage extension to the exporter.
type storageHost struct {
	component.Host
	extensions map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.extensions }

func startFileStorage(t *testing.T, dir string) (storageHost, component.ID) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	cfg.Compaction.Directory = dir
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	id := component.NewID(f.Type())
	return storageHost{Host: componenttest.NewNopHost(), extensions: map[component.ID]component.Component{id: ext}}, id
}

// closedURL is an http URL on which nothing listens.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

// startPersistentLogs starts a logs exporter whose queue lives in dir; stop
// shuts the exporter and then the storage down.
func startPersistentLogs(t *testing.T, url, dir string) (exp exporter.Logs, stop func()) {
	t.Helper()
	host, storageID := startFileStorage(t, dir)
	return startPersistentLogsWith(t, url, host, storageID)
}

// startDirStorage starts the dir_storage extension, which the shipped
// configs use, on dir.
func startDirStorage(t *testing.T, dir string) (storageHost, component.ID) {
	t.Helper()
	f := dirstorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*dirstorage.Config)
	cfg.Directory = dir
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	id := component.NewID(f.Type())
	return storageHost{Host: componenttest.NewNopHost(), extensions: map[component.ID]component.Component{id: ext}}, id
}

func startPersistentLogsWith(t *testing.T, url string, host storageHost, storageID component.ID) (exp exporter.Logs, stop func()) {
	t.Helper()
	cfg := testConfig(url)
	cfg.QueueConfig = NewFactory().CreateDefaultConfig().(*Config).QueueConfig
	cfg.QueueConfig.Get().StorageID = &storageID
	cfg.QueueConfig.Get().Batch.Get().FlushTimeout = 10 * time.Millisecond
	cfg.RetryConfig.InitialInterval = time.Hour // failed data waits in the queue
	// exporterhelper keeps a request cut off by shutdown in the persistent
	// queue only when its next retry still fits in max_elapsed_time; an hour
	// does not fit the default 5m, and the request would be dropped instead.
	cfg.RetryConfig.MaxElapsedTime = 0
	cfg.ShutdownTimeout = 100 * time.Millisecond
	set := newHarness().set
	set.ID = component.NewID(metadata.Type) // the queue's storage key: same as the previous "process"
	exp, err := NewFactory().CreateLogs(context.Background(), set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	return exp, func() {
		_ = exp.Shutdown(context.Background()) // reports the undelivered data
		for _, ext := range host.extensions {
			if err := ext.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// With sending_queue.storage, what Axiom did not take before shutdown is
// sent by the next process.
func TestPersistentQueueSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	exp, stop := startPersistentLogs(t, closedURL(t), dir) // Axiom unreachable
	if err := exp.ConsumeLogs(context.Background(), stringLogs(15)); err != nil {
		t.Fatal(err)
	}
	stop()

	srv := axiomtest.NewForTest(t)
	_, stop = startPersistentLogs(t, srv.URL(), dir)
	defer stop()
	if err := srv.WaitEvents(logsDS, 15, waitWindow); err != nil {
		t.Fatal(err)
	}
	if n := srv.EventCount(logsDS); n != 15 {
		t.Errorf("got %d events after restart, want 15", n)
	}
}

// testdata/queue-ee4774e is a dir_storage queue that main at ee4774e (the
// last version to write queuedlogs' compact form) left with Axiom down: 30
// pino lines and 12 Forward records in the compact form, 5 records with a
// map body as pdata's protobuf, the requests it was sending listed for the
// next start to move. After the upgrade it drains, each record once.
func TestAQueueAnEarlierVersionLeftDrainsAfterAnUpgrade(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/queue-ee4774e")); err != nil {
		t.Fatal(err)
	}
	srv := axiomtest.NewForTest(t)
	host, id := startDirStorage(t, dir)
	_, stop := startPersistentLogsWith(t, srv.URL(), host, id)
	defer stop()
	const want = 30 + 5 + 12
	if err := srv.WaitEvents(logsDS, want, waitWindow); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // a request sent twice would have arrived
	events := srv.Events(logsDS)
	if len(events) != want {
		t.Fatalf("%d events arrived, want %d", len(events), want)
	}
	mapBodies := 0
	for _, ev := range events {
		if ev["msg"] == "a map body" {
			mapBodies++
		}
	}
	if mapBodies != 1 {
		t.Errorf("%d events of the protobuf request's map body, want 1", mapBodies)
	}
}

// A persistent queue only stops reading at Shutdown; the exporter first
// lets it hand over everything this process queued, so that `app | sidecar`
// delivers all of its input at EOF instead of leaving it on disk.
func TestShutdownDrainsPersistentQueue(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.Slow(50*time.Millisecond), axiomtest.Slow(50*time.Millisecond))
	host, storageID := startFileStorage(t, t.TempDir())
	cfg := testConfig(srv.URL())
	cfg.QueueConfig = NewFactory().CreateDefaultConfig().(*Config).QueueConfig
	cfg.QueueConfig.Get().StorageID = &storageID
	cfg.QueueConfig = cfg.queueConfig() // on disk: sized by the disk budget
	cfg.ShutdownTimeout = time.Minute   // generous: only bounds a failing test
	exp, err := NewFactory().CreateLogs(context.Background(), newHarness().set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	const batches, per = 40, 500
	for range batches {
		if err := exp.ConsumeLogs(context.Background(), stringLogs(per)); err != nil {
			t.Fatal(err)
		}
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.EventCount(logsDS); n != batches*per {
		t.Errorf("got %d events after shutdown, want %d", n, batches*per)
	}
}

// The contract with the receivers' when_full policies: once the disk budget
// is full the exporter refuses new data at once with an error that is
// exporterhelper.ErrQueueIsFull, and what it accepted before stays queued.
func TestFullDiskBudgetRefusesWithErrQueueIsFull(t *testing.T) {
	host, storageID := startFileStorage(t, t.TempDir())
	cfg := testConfig(closedURL(t)) // Axiom unreachable: nothing leaves the queue
	cfg.QueueConfig = NewFactory().CreateDefaultConfig().(*Config).QueueConfig
	cfg.QueueConfig.Get().StorageID = &storageID
	cfg.Disk = 64 << 10 // 32 KiB per signal
	cfg.ShutdownTimeout = 100 * time.Millisecond
	cfg.QueueConfig = cfg.queueConfig()
	exp, err := NewFactory().CreateLogs(context.Background(), newHarness().set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	accepted := 0
	for range 100 {
		err = exp.ConsumeLogs(context.Background(), stringLogs(100))
		if err != nil {
			break
		}
		accepted++
	}
	if !errors.Is(err, exporterhelper.ErrQueueIsFull) {
		t.Fatalf("after %d accepted batches: err = %v, want ErrQueueIsFull", accepted, err)
	}
	if accepted == 0 {
		t.Error("the queue refused the first batch")
	}
}

// What the persistent queue keeps for the next start is read from the
// queue itself, so it includes what earlier runs left there: the summary
// line of `app | sidecar` says what is really on disk.
func TestQueuedOnDiskCountsEveryRunsRecords(t *testing.T) {
	dir := t.TempDir()
	exp, stop := startPersistentLogs(t, closedURL(t), dir) // Axiom unreachable
	if err := exp.ConsumeLogs(context.Background(), stringLogs(15)); err != nil {
		t.Fatal(err)
	}
	stop()
	exp, stop = startPersistentLogs(t, closedURL(t), dir)
	defer stop()
	if err := exp.ConsumeLogs(context.Background(), stringLogs(7)); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := exp.(boundedLogs).base
	if n, err := b.queuedOnDisk(context.Background()); err != nil || n != 22 {
		t.Fatalf("queued on disk: %d (%v), want 15 + 7", n, err)
	}
	if b.pending.Load() != 7 {
		t.Fatalf("this run's pending: %d, want 7", b.pending.Load())
	}
}

// The collector stops exporters in no set order. Spans the traces exporter
// drops after the logs exporter (which reports drops) has stopped are saved
// with the report, and the next run sends them: here the traces exporter's
// in-memory queue is cut off by shutdown_timeout while Axiom answers 503.
func TestDropsAfterTheLogsExporterStoppedAreReportedByTheNextRun(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Outage(tracesDS, axiomtest.Status(http.StatusServiceUnavailable))
	dir := t.TempDir()
	logs, stop := startPersistentLogs(t, srv.URL(), dir)
	cfg := testConfig(srv.URL())
	cfg.QueueConfig = NewFactory().CreateDefaultConfig().(*Config).QueueConfig // in memory
	cfg.ShutdownTimeout = 100 * time.Millisecond
	cfg.RetryConfig.MaxElapsedTime = 0
	// Not newHarness: the traces exporter must add to the logs exporter's ledger.
	traces, err := NewFactory().CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := traces.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := traces.ConsumeTraces(context.Background(), richTraces()); err != nil {
			t.Fatal(err)
		}
	}
	if err := logs.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := traces.Shutdown(context.Background()); err != nil { // drops the 6 spans
		t.Fatal(err)
	}
	stop()
	if n := srv.EventCount(logsDS); n != 0 {
		t.Fatalf("%d events in the logs dataset before the restart", n)
	}

	_, stop = startPersistentLogs(t, srv.URL(), dir)
	defer stop()
	if err := srv.WaitEvents(logsDS, 1, waitWindow); err != nil {
		t.Fatalf("no report from the next run: %v", err)
	}
	evs := srv.Events(logsDS)
	if len(evs) != 1 || evs[0]["sidecar.event"] != losses.EventKind || evs[0]["signal"] != "traces" ||
		evs[0]["reason"] != string(losses.Shutdown) || fmt.Sprint(evs[0]["dropped_items"]) != "6" {
		t.Fatalf("the next run reported %v, want one data_loss event of 6 spans dropped at shutdown", evs)
	}
}
