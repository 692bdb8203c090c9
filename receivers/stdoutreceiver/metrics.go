package stdoutreceiver

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sidecarhq/sidecar/internal/selfmetrics"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/decode"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/metadata"
)

// selfMetrics are the receiver's own counters (otelcol_receiver_stdout_*),
// beside the standard otelcol_receiver_accepted/refused_* that
// receiverhelper.ObsReport keeps.
type selfMetrics struct {
	lines, json, text, spanLines, truncated, refused, dropped metric.Int64Counter
	attrs                                                     metric.MeasurementOption
	builder                                                   *selfmetrics.Builder
	byReason                                                  sync.Map // reason -> metric.MeasurementOption
}

func newSelfMetrics(set receiver.Settings) (*selfMetrics, error) {
	b := selfmetrics.New(set.TelemetrySettings, metadata.ScopeName, component.KindReceiver, set.ID)
	m := &selfMetrics{
		lines:     b.Counter("lines", "{line}", "Lines received from all transports."),
		json:      b.Counter("json_records", "{record}", "JSON object lines turned into Axiom events."),
		text:      b.Counter("text_records", "{record}", "Non-JSON lines kept as message records."),
		spanLines: b.Counter("span_lines", "{line}", "OTLP/JSON span lines sent to the traces pipeline."),
		truncated: b.Counter("truncated_lines", "{line}", "Lines cut at max_line_bytes."),
		refused:   b.Counter("refused_pushes", "{push}", "Pushes the pipeline refused; each was retried after a backoff."),
		dropped:   b.Counter("dropped_records", "{record}", "Records dropped, by reason: when_full (the pipeline refused and the source's buffer was full), shutdown (still refused when the receiver stopped), rejected (permanent pipeline error), no_pipeline."),
		attrs:     b.Attributes(),
		builder:   b,
	}
	return m, b.Err()
}

func (m *selfMetrics) record(ctx context.Context, s decode.Stats) {
	m.lines.Add(ctx, int64(s.Lines), m.attrs)
	if s.JSON > 0 {
		m.json.Add(ctx, int64(s.JSON), m.attrs)
	}
	if s.Text > 0 {
		m.text.Add(ctx, int64(s.Text), m.attrs)
	}
	if s.SpanLines > 0 {
		m.spanLines.Add(ctx, int64(s.SpanLines), m.attrs)
	}
	if s.Truncated > 0 {
		m.truncated.Add(ctx, int64(s.Truncated), m.attrs)
	}
}

func (m *selfMetrics) recordDropped(ctx context.Context, records int, reason string) {
	m.dropped.Add(ctx, int64(records), m.dropAttrs(reason))
}

// dropAttrs is the measurement option of a drop reason, built once.
func (m *selfMetrics) dropAttrs(reason string) metric.MeasurementOption {
	if a, ok := m.byReason.Load(reason); ok {
		return a.(metric.MeasurementOption)
	}
	a, _ := m.byReason.LoadOrStore(reason, m.builder.Attributes(attribute.String("reason", reason)))
	return a.(metric.MeasurementOption)
}

func (m *selfMetrics) recordRefused(ctx context.Context) { m.refused.Add(ctx, 1, m.attrs) }
