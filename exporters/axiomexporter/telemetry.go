package axiomexporter

import (
	"context"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/metadata"
	"github.com/sidecarhq/sidecar/internal/selfmetrics"
)

// telemetry holds the exporter's self-metrics (otelcol_exporter_axiom_*).
// Every counter carries the exporter's ID and signal=logs|traces; requests
// also carry status (the HTTP status code, or "error" when no answer
// arrived).
type telemetry struct {
	sent             metric.Int64Counter
	failed           metric.Int64Counter
	requests         metric.Int64Counter
	tokenRefused     metric.Int64Gauge
	signal           attribute.KeyValue
	signalAttributes metric.MeasurementOption
	attributes       func(...attribute.KeyValue) metric.MeasurementOption
}

func newTelemetry(set exporter.Settings, signal string) (*telemetry, error) {
	b := selfmetrics.New(set.TelemetrySettings, metadata.ScopeName, component.KindExporter, set.ID)
	t := &telemetry{
		sent: b.Counter("sent_items", "{item}", "Events or spans Axiom accepted."),
		failed: b.Counter("failed_items", "{item}",
			"Events Axiom answered as failed in a successful ingest response (partial failure); not retried."),
		requests: b.Counter("requests", "{request}", "HTTP requests to Axiom by answer status."),
		tokenRefused: b.Gauge("token_refused", "1",
			"1 while Axiom refuses the token (401/403) and data is held, 0 once it accepts data."),
		signal:     attribute.String("signal", signal),
		attributes: b.Attributes,
	}
	t.signalAttributes = b.Attributes(t.signal)
	return t, b.Err()
}

// request counts one request; status is 0 when no answer arrived.
func (t *telemetry) request(ctx context.Context, status int) {
	s := "error"
	if status > 0 {
		s = strconv.Itoa(status)
	}
	t.requests.Add(ctx, 1, t.attributes(t.signal, attribute.String("status", s)))
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
