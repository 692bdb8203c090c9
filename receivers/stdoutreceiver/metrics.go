package stdoutreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver"
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
		dropped:   b.Counter("dropped_records", "{record}", "Records dropped: permanent pipeline errors or no pipeline for the signal."),
		attrs:     b.Attributes(),
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

func (m *selfMetrics) recordDropped(ctx context.Context, records int) {
	m.dropped.Add(ctx, int64(records), m.attrs)
}

func (m *selfMetrics) recordRefused(ctx context.Context) { m.refused.Add(ctx, 1, m.attrs) }
