package axiomexporter

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/metadata"
)

// telemetry holds the exporter's self-metrics. Every counter carries the
// attribute signal=logs|traces; requests also carry status (the HTTP status
// code, or "error" when no answer arrived).
type telemetry struct {
	sent             metric.Int64Counter
	failed           metric.Int64Counter
	rejected         metric.Int64Counter
	droppedShutdown  metric.Int64Counter
	requests         metric.Int64Counter
	signal           attribute.KeyValue
	signalAttributes metric.MeasurementOption
}

func newTelemetry(mp metric.MeterProvider, signal string) (*telemetry, error) {
	m := mp.Meter(metadata.ScopeName)
	t := &telemetry{signal: attribute.String("signal", signal)}
	t.signalAttributes = metric.WithAttributeSet(attribute.NewSet(t.signal))
	var err, e error
	t.sent, e = m.Int64Counter("axiom_exporter_items_sent", metric.WithUnit("{item}"),
		metric.WithDescription("Events or spans Axiom accepted."))
	err = errors.Join(err, e)
	t.failed, e = m.Int64Counter("axiom_exporter_items_failed", metric.WithUnit("{item}"),
		metric.WithDescription("Events Axiom answered as failed in a successful ingest response (partial failure); not retried."))
	err = errors.Join(err, e)
	t.rejected, e = m.Int64Counter("axiom_exporter_items_rejected", metric.WithUnit("{item}"),
		metric.WithDescription("Events or spans dropped because Axiom rejected the request permanently (400, 401, 403, 404, ...)."))
	err = errors.Join(err, e)
	t.droppedShutdown, e = m.Int64Counter("axiom_exporter_items_dropped_on_shutdown", metric.WithUnit("{item}"),
		metric.WithDescription("Events or spans whose delivery was cut off by shutdown_timeout."))
	err = errors.Join(err, e)
	t.requests, e = m.Int64Counter("axiom_exporter_requests", metric.WithUnit("{request}"),
		metric.WithDescription("HTTP requests to Axiom by answer status."))
	err = errors.Join(err, e)
	return t, err
}

// request counts one request; status is 0 when no answer arrived.
func (t *telemetry) request(ctx context.Context, status int) {
	s := "error"
	if status > 0 {
		s = strconv.Itoa(status)
	}
	t.requests.Add(ctx, 1, metric.WithAttributes(t.signal, attribute.String("status", s)))
}

// onceSet reports each key as new exactly once; it makes "log once per
// status and dataset" possible without spamming on every request.
type onceSet struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

func (o *onceSet) first(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.seen[key]; ok {
		return false
	}
	if o.seen == nil {
		o.seen = make(map[string]struct{})
	}
	o.seen[key] = struct{}{}
	return true
}

// everyInterval allows one event per interval, for rate-limited logging.
type everyInterval struct {
	mu       sync.Mutex
	interval time.Duration
	last     time.Time
}

func (e *everyInterval) allow(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.last.IsZero() && now.Sub(e.last) < e.interval {
		return false
	}
	e.last = now
	return true
}
