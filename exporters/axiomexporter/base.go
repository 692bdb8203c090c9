package axiomexporter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/metadata"
	"github.com/sidecarhq/sidecar/internal/losses"
	"github.com/sidecarhq/sidecar/internal/outcome"
	"github.com/sidecarhq/sidecar/internal/watchdog"
)

// base is what the logs and traces exporters share: configuration, the HTTP
// client (or the local file), self-metrics and the shutdown deadline.
type base struct {
	cfg    *Config
	set    exporter.Settings
	tel    *telemetry
	drops  *losses.Recorder // every forced drop, counted and reported
	ledger *losses.Ledger   // what the logs signal reports to Axiom
	// holding: start took a Hold on the ledger, which shutdown releases
	// once this exporter can drop no more.
	holding atomic.Bool
	signal  string
	dataset string
	// stage names this exporter's pushes for the watchdog.
	stage string
	// localPath is the file written instead of sending (local_dir mode).
	localPath string

	client *http.Client
	file   *appendFile
	// storage is the persistent queue's storage extension, nil for an
	// in-memory queue.
	storage storage.Extension

	// abortCtx is cancelled once shutdown_timeout has passed during
	// Shutdown; every request runs under it so a stuck Axiom cannot hold
	// shutdown.
	abortCtx context.Context
	abort    context.CancelFunc

	rejectedOnce  onceSet
	droppedOnce   sync.Once
	partialLogged everyInterval
	retryLogged   everyInterval

	// drainCtx is cancelled when Shutdown begins: retries stop waiting
	// for their backoff and hurry to deliver before shutdown_timeout.
	drainCtx     context.Context
	startDrain   context.CancelFunc
	shutdownOnce sync.Once
	shutdownErr  error

	// pending counts the records (events or spans) the queue accepted in
	// this process that no push has finished yet; pushing counts pushes
	// under way; lastActive is when the queue last accepted records or a
	// push ended (unix ns). A persistent queue's backlog from an earlier
	// run is not in pending.
	pending    atomic.Int64
	pushing    atomic.Int64
	lastActive atomic.Int64

	health health
}

func newBase(cfg *Config, set exporter.Settings, signal, dataset, localFile string) (*base, error) {
	if dataset == "" {
		return nil, fmt.Errorf("the axiom exporter is used in a %s pipeline but %s_dataset is not set", signal, signal)
	}
	tel, err := newTelemetry(set, signal)
	if err != nil {
		return nil, err
	}
	drops, err := losses.NewRecorder(set.TelemetrySettings, metadata.ScopeName, component.KindExporter, set.ID, losses.Default)
	if err != nil {
		return nil, err
	}
	b := &base{cfg: cfg, set: set, tel: tel, drops: drops, ledger: losses.Default, signal: signal, dataset: dataset, stage: "exporter/" + set.ID.String() + " sending " + signal, partialLogged: everyInterval{interval: time.Minute}, retryLogged: everyInterval{interval: time.Minute}}
	b.health.logged.interval = time.Minute
	if cfg.localMode() {
		b.localPath = filepath.Join(cfg.LocalDir, localFile)
	}
	b.abortCtx, b.abort = context.WithCancel(context.Background())
	b.drainCtx, b.startDrain = context.WithCancel(context.Background())
	return b, nil
}

func (b *base) start(ctx context.Context, host component.Host, what string) error {
	b.ledger.Hold()
	b.holding.Store(true)
	b.health.setHost(host)
	se, err := b.queueStorage(host)
	if err != nil {
		return err
	}
	b.storage = se
	b.tel.tokenRefused.Record(ctx, 0, b.tel.signalAttributes)
	if b.localPath != "" {
		f, err := openAppend(b.localPath)
		if err != nil {
			return err
		}
		b.file = f
		b.set.Logger.Warn(fmt.Sprintf("%s is not set: writing %s to %s instead of sending to Axiom", tokenEnvVar, what, b.localPath))
		return nil
	}
	cc := b.httpClientConfig()
	client, err := cc.ToClient(ctx, withRawDial(&cc, host.GetExtensions()), untracedClient(b.set.TelemetrySettings))
	if err != nil {
		return err
	}
	b.client = client
	return nil
}

// untracedClient is set without a tracer provider, so that ToClient does
// not wrap the client in otelhttp: nothing reads spans of the sidecar's
// requests to Axiom, and the wrapper cost ~0.6% of the stdin path's CPU at
// max rate even with the no-op provider the service gives by default
// (perf, bench/COMPARISON.md, 2026-12-07).
func untracedClient(set component.TelemetrySettings) component.TelemetrySettings {
	set.TracerProvider = nil
	return set
}

// httpClientConfig maps our small set of HTTP knobs onto confighttp. The
// org id travels as a header on every request: axiom-go itself would send
// it only with personal tokens.
func (b *base) httpClientConfig() confighttp.ClientConfig {
	cc := confighttp.NewDefaultClientConfig()
	cc.Timeout = b.cfg.Timeout
	cc.TLS = b.cfg.TLS
	cc.ProxyURL = b.cfg.ProxyURL
	cc.Headers = append(cc.Headers, b.cfg.Headers...)
	if b.cfg.OrgID != "" {
		if _, set := cc.Headers.Get("X-Axiom-Org-Id"); !set {
			cc.Headers.Set("X-Axiom-Org-Id", configopaque.String(b.cfg.OrgID))
		}
	}
	return cc
}

func (b *base) shutdown(ctx context.Context) error {
	b.abort()
	var err error
	if b.file != nil {
		err = b.file.close()
	}
	if b.client != nil {
		b.client.CloseIdleConnections()
	}
	if b.holding.Swap(false) {
		err = errors.Join(err, b.ledger.Release(ctx))
	}
	return err
}

// accept runs offer, which hands n records to the queue, and counts them
// as pending unless it refused them.
func (b *base) accept(n int, offer func() error) error {
	b.pending.Add(int64(n)) // before: a push may finish them before offer returns
	err := offer()
	if err != nil {
		b.pending.Add(-int64(n))
	}
	b.lastActive.Store(time.Now().UnixNano())
	return err
}

// finished records that a push is done with n records: delivered, or
// dropped for good and counted.
func (b *base) finished(n int) { b.pending.Add(-int64(n)) }

// pushStarted marks a push under way, and opens its watchdog step (its
// encoding must not take longer than the watchdog's grace; deliver moves
// the step's deadline for each attempt and wait); call the function it
// returns when the push ends.
func (b *base) pushStarted(ctx context.Context) (context.Context, func()) {
	b.pushing.Add(1)
	ctx, step := watchdog.Default.BeginIn(ctx, b.stage, 0)
	return ctx, func() {
		step.End()
		b.lastActive.Store(time.Now().UnixNano())
		b.pushing.Add(-1)
	}
}

// drainPoll is how often Shutdown looks whether the queue has drained;
// drainSlack is how long, beyond the batch's flush_timeout, the queue may
// take to read what it holds and start a push.
const (
	drainPoll  = 20 * time.Millisecond
	drainSlack = 250 * time.Millisecond
)

// draining reports whether the queue may still hand pending records to a
// push: one is under way, or the queue was active within the time a batch
// waits to be flushed. Beyond that, pending records can only sit in the
// batch being built, which exporterhelper's Shutdown flushes. The wait is
// capped at half of shutdown_timeout so that the flush has time to finish.
func (b *base) draining() bool {
	q := b.cfg.QueueConfig.Get()
	if q == nil || q.StorageID == nil || b.pending.Load() <= 0 {
		return false // an in-memory queue is drained by exporterhelper
	}
	quiet := drainSlack
	if q.Batch.HasValue() {
		quiet += q.Batch.Get().FlushTimeout
	}
	quiet = min(quiet, b.cfg.ShutdownTimeout/2)
	return b.pushing.Load() > 0 || time.Since(time.Unix(0, b.lastActive.Load())) < quiet
}

// boundShutdown lets the queue hand what this process queued to pushes,
// then runs the exporterhelper shutdown (which flushes the batch being
// built), all within shutdown_timeout: after it, in-flight requests are
// cancelled and the rest of a persistent queue stays on disk.
// (exporterhelper drains an in-memory queue itself, but a persistent queue
// only stops reading.) A second call returns the first result
// (exporterhelper panics on a second Shutdown).
func (b *base) boundShutdown(ctx context.Context, inner func(context.Context) error) error {
	b.shutdownOnce.Do(func() {
		b.startDrain()
		t := time.AfterFunc(b.cfg.ShutdownTimeout, b.abort)
		defer t.Stop()
		tick := time.NewTicker(drainPoll)
		defer tick.Stop()
		for b.draining() && b.abortCtx.Err() == nil && ctx.Err() == nil {
			select {
			case <-tick.C:
			case <-b.abortCtx.Done():
			case <-ctx.Done():
			}
		}
		b.shutdownErr = inner(ctx)
		timedOut := !t.Stop() // inner aborts too, once done: only the timer's abort cuts sending short
		if b.storage != nil {
			held, err := b.queuedOnDisk(ctx)
			if err != nil {
				held = b.pending.Load() // this run's at least
				b.set.Logger.Warn("Reading how much the queue holds on disk failed", zap.Error(err))
			}
			outcome.Held(b.dataset, held, timedOut)
		}
	})
	return b.shutdownErr
}

// droppedOnShutdown records that shutdown_timeout cut a request off, and
// says so once. With a persistent queue the data stays queued instead.
func (b *base) droppedOnShutdown(items int) {
	persistent := false
	if q := b.cfg.QueueConfig.Get(); q != nil && q.StorageID != nil {
		persistent = true
	}
	if !persistent {
		b.drops.Record(b.signal, losses.Shutdown, items, 0)
	}
	b.droppedOnce.Do(func() {
		what := "it is dropped (counted in otelcol_exporter_axiom_dropped_items{reason=\"shutdown\"})"
		if persistent {
			what = "it stays in the persistent queue for the next start"
		}
		b.set.Logger.Error("shutdown_timeout reached before Axiom accepted everything; "+what,
			zap.String("dataset", b.dataset), zap.Duration("shutdown_timeout", b.cfg.ShutdownTimeout))
	})
}

// appendFile is a file that whole batches are appended to, one write each.
type appendFile struct {
	mu sync.Mutex
	f  *os.File
}

func openAppend(path string) (*appendFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &appendFile{f: f}, nil
}

func (a *appendFile) write(p []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, err := a.f.Write(p)
	return err
}

func (a *appendFile) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}
