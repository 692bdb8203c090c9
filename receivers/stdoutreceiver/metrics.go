package stdoutreceiver

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/decode"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/metadata"
)

// selfMetrics are the receiver's own counters, beside the standard
// otelcol_receiver_accepted/refused_* that receiverhelper.ObsReport keeps.
type selfMetrics struct {
	lines, json, text, spanLines, truncated, refused, dropped metric.Int64Counter
}

func newSelfMetrics(mp metric.MeterProvider) (*selfMetrics, error) {
	meter := mp.Meter(metadata.ScopeName)
	m := &selfMetrics{}
	var errs []error
	counter := func(dst *metric.Int64Counter, name, unit, desc string) {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		*dst = c
	}
	counter(&m.lines, "sidecar.stdout.lines", "{line}", "Lines received from all transports.")
	counter(&m.json, "sidecar.stdout.json_records", "{record}", "JSON object lines turned into Axiom events.")
	counter(&m.text, "sidecar.stdout.text_records", "{record}", "Non-JSON lines kept as message records.")
	counter(&m.spanLines, "sidecar.stdout.span_lines", "{line}", "OTLP/JSON span lines sent to the traces pipeline.")
	counter(&m.truncated, "sidecar.stdout.truncated_lines", "{line}", "Lines cut at max_line_bytes.")
	counter(&m.refused, "sidecar.stdout.refused", "{push}", "Pushes the pipeline refused; each was retried after a backoff.")
	counter(&m.dropped, "sidecar.stdout.dropped_records", "{record}", "Records dropped: permanent pipeline errors or no pipeline for the signal.")
	return m, errors.Join(errs...)
}

func (m *selfMetrics) record(ctx context.Context, s decode.Stats) {
	m.lines.Add(ctx, int64(s.Lines))
	if s.JSON > 0 {
		m.json.Add(ctx, int64(s.JSON))
	}
	if s.Text > 0 {
		m.text.Add(ctx, int64(s.Text))
	}
	if s.SpanLines > 0 {
		m.spanLines.Add(ctx, int64(s.SpanLines))
	}
	if s.Truncated > 0 {
		m.truncated.Add(ctx, int64(s.Truncated))
	}
}
