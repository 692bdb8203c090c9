// Package drain wraps a stock exporter's factory so that its persistent
// sending queue empties before the exporter shuts down, as an in-memory
// queue does.
//
// Why: exporterhelper drains an in-memory queue at Shutdown, but a
// persistent one (sending_queue.storage) only stops reading: its consumers
// finish the request in hand and what is still queued waits on disk for the
// next start (persistentQueue.Shutdown in exporterhelper v0.165.0). For a
// sidecar whose state folder does not outlive its pod (an emptyDir), or for
// `app | sidecar` at EOF, that next start may never come. The axiom
// exporter drains its own queue (exporters/axiomexporter, boundShutdown);
// this package does it for exporters we do not write (otlp_http).
//
// How: the wrapped exporter starts with a host whose storage extensions
// hand out clients that watch the queue's metadata (internal/queuemeta) as
// the queue writes it. Shutdown waits until the queue holds no request, or
// until the bound passes, and then shuts the exporter down: what it still
// holds stays on disk.
package drain

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/queuemeta"
)

// Factory returns f with every exporter it creates draining its persistent
// queue for at most bound at shutdown.
func Factory(f exporter.Factory, bound time.Duration) exporter.Factory {
	var opts []exporter.FactoryOption
	if s := f.TracesStability(); s != component.StabilityLevelUndefined {
		opts = append(opts, exporter.WithTraces(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
			inner, err := f.CreateTraces(ctx, set, cfg)
			if err != nil {
				return nil, err
			}
			return traces{inner, newDrainer(inner, set, bound)}, nil
		}, s))
	}
	if s := f.LogsStability(); s != component.StabilityLevelUndefined {
		opts = append(opts, exporter.WithLogs(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
			inner, err := f.CreateLogs(ctx, set, cfg)
			if err != nil {
				return nil, err
			}
			return logs{inner, newDrainer(inner, set, bound)}, nil
		}, s))
	}
	if s := f.MetricsStability(); s != component.StabilityLevelUndefined {
		opts = append(opts, exporter.WithMetrics(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
			inner, err := f.CreateMetrics(ctx, set, cfg)
			if err != nil {
				return nil, err
			}
			return metrics{inner, newDrainer(inner, set, bound)}, nil
		}, s))
	}
	return exporter.NewFactory(f.Type(), f.CreateDefaultConfig, opts...)
}

type traces struct {
	exporter.Traces
	d *drainer
}

func (x traces) Start(ctx context.Context, host component.Host) error { return x.d.start(ctx, host) }
func (x traces) Shutdown(ctx context.Context) error                   { return x.d.shutdown(ctx) }

type logs struct {
	exporter.Logs
	d *drainer
}

func (x logs) Start(ctx context.Context, host component.Host) error { return x.d.start(ctx, host) }
func (x logs) Shutdown(ctx context.Context) error                   { return x.d.shutdown(ctx) }

type metrics struct {
	exporter.Metrics
	d *drainer
}

func (x metrics) Start(ctx context.Context, host component.Host) error { return x.d.start(ctx, host) }
func (x metrics) Shutdown(ctx context.Context) error                   { return x.d.shutdown(ctx) }

// poll is how often Shutdown looks whether the queue is empty.
const poll = 20 * time.Millisecond

// drainer is the wrapped exporter's lifecycle: start and shutdown.
type drainer struct {
	inner component.Component
	log   *zap.Logger
	bound time.Duration
	// watched: the exporter opened a storage client (its persistent
	// queue); queued is the number of requests the queue last wrote that
	// it holds, waiting or being sent.
	watched atomic.Bool
	queued  atomic.Int64
}

func newDrainer(inner component.Component, set exporter.Settings, bound time.Duration) *drainer {
	return &drainer{inner: inner, log: set.Logger, bound: bound}
}

func (d *drainer) start(ctx context.Context, host component.Host) error {
	return d.inner.Start(ctx, watchHost{Host: host, d: d})
}

// shutdown lets the persistent queue empty, within the bound, then shuts
// the exporter down.
func (d *drainer) shutdown(ctx context.Context) error {
	if d.watched.Load() && d.queued.Load() > 0 {
		deadline := time.NewTimer(d.bound)
		tick := time.NewTicker(poll)
	wait:
		for d.queued.Load() > 0 {
			select {
			case <-tick.C:
			case <-deadline.C:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
		tick.Stop()
		deadline.Stop()
		if n := d.queued.Load(); n > 0 {
			d.log.Warn("The sending queue did not empty before shutdown; what it holds stays on disk for the next start",
				zap.Int64("requests", n), zap.Duration("waited", d.bound))
		}
	}
	return d.inner.Shutdown(ctx)
}

// note reads the queue's metadata as the queue writes (or first reads) it.
func (d *drainer) note(meta []byte) {
	if m, err := queuemeta.Parse(meta); err == nil {
		d.queued.Store(m.Requests)
	}
}

// watchHost gives the exporter its storage extensions wrapped in watchers.
type watchHost struct {
	component.Host
	d *drainer
}

func (h watchHost) GetExtensions() map[component.ID]component.Component {
	exts := h.Host.GetExtensions()
	out := make(map[component.ID]component.Component, len(exts))
	for id, ext := range exts {
		if se, ok := ext.(storage.Extension); ok {
			ext = watchStorage{Extension: se, d: h.d}
		}
		out[id] = ext
	}
	return out
}

type watchStorage struct {
	storage.Extension
	d *drainer
}

func (s watchStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := s.Extension.GetClient(ctx, kind, id, name)
	if err != nil {
		return nil, err
	}
	s.d.watched.Store(true)
	return watchClient{Client: c, d: s.d}, nil
}

// watchClient passes every operation on and notes the queue's metadata.
type watchClient struct {
	storage.Client
	d *drainer
}

func (c watchClient) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := c.Client.Get(ctx, key)
	if err == nil && key == queuemeta.Key {
		c.d.note(v)
	}
	return v, err
}

func (c watchClient) Set(ctx context.Context, key string, value []byte) error {
	err := c.Client.Set(ctx, key, value)
	if err == nil && key == queuemeta.Key {
		c.d.note(value)
	}
	return err
}

func (c watchClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	err := c.Client.Batch(ctx, ops...)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if op.Key == queuemeta.Key && (op.Type == storage.Set || op.Type == storage.Get) {
			c.d.note(op.Value)
		}
	}
	return nil
}
