package axiomexporter

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/exporter"
	"go.uber.org/zap"
)

// base is what the logs and traces exporters share: configuration, the HTTP
// client (or the local file), self-metrics and the shutdown deadline.
type base struct {
	cfg     *Config
	set     exporter.Settings
	tel     *telemetry
	dataset string
	// localPath is the file written instead of sending (local_dir mode).
	localPath string

	client *http.Client
	file   *appendFile

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
}

func newBase(cfg *Config, set exporter.Settings, signal, dataset, localFile string) (*base, error) {
	if dataset == "" {
		return nil, fmt.Errorf("the axiom exporter is used in a %s pipeline but %s_dataset is not set", signal, signal)
	}
	tel, err := newTelemetry(set, signal)
	if err != nil {
		return nil, err
	}
	b := &base{cfg: cfg, set: set, tel: tel, dataset: dataset, partialLogged: everyInterval{interval: time.Minute}, retryLogged: everyInterval{interval: time.Minute}}
	if cfg.localMode() {
		b.localPath = filepath.Join(cfg.LocalDir, localFile)
	}
	b.abortCtx, b.abort = context.WithCancel(context.Background())
	b.drainCtx, b.startDrain = context.WithCancel(context.Background())
	return b, nil
}

func (b *base) start(ctx context.Context, host component.Host, what string) error {
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
	client, err := cc.ToClient(ctx, host.GetExtensions(), b.set.TelemetrySettings)
	if err != nil {
		return err
	}
	b.client = client
	return nil
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

func (b *base) shutdown(context.Context) error {
	b.abort()
	if b.file != nil {
		return b.file.close()
	}
	if b.client != nil {
		b.client.CloseIdleConnections()
	}
	return nil
}

// boundShutdown runs the exporterhelper shutdown (which drains the queue)
// with shutdown_timeout as its limit: after it, in-flight and remaining
// requests are cancelled. A second call returns the first result
// (exporterhelper panics on a second Shutdown).
func (b *base) boundShutdown(ctx context.Context, inner func(context.Context) error) error {
	b.shutdownOnce.Do(func() {
		b.startDrain()
		t := time.AfterFunc(b.cfg.ShutdownTimeout, b.abort)
		defer t.Stop()
		b.shutdownErr = inner(ctx)
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
		b.tel.droppedShutdown.Add(context.Background(), int64(items), b.tel.signalAttributes)
	}
	b.droppedOnce.Do(func() {
		what := "it is dropped (counted in otelcol_exporter_axiom_shutdown_dropped_items)"
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
