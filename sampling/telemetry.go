package sampling

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sidecarhq/sidecar/internal/selfmetrics"
	"github.com/sidecarhq/sidecar/sampling/internal/metadata"
)

// selfMetrics counts items seen, kept and dropped per rule and signal
// (otelcol_processor_sampling_*).
type selfMetrics struct {
	seen, kept, dropped, rescued metric.Int64Counter
	held, released               metric.Int64Counter
	heldOpt                      metric.AddOption
	releasedOpts                 [numReleaseReasons]metric.AddOption
	// opts[signal index][rule] holds the precomputed attribute set, so that
	// recording allocates nothing per rule.
	opts [2][]metric.AddOption
}

func newSelfMetrics(set processor.Settings, rules []string) (*selfMetrics, error) {
	b := selfmetrics.New(set.TelemetrySettings, metadata.ScopeName, component.KindProcessor, set.ID)
	m := &selfMetrics{
		seen:     b.Counter("seen_items", "{item}", "Items (spans or log records) matched by a sampling rule."),
		kept:     b.Counter("kept_items", "{item}", "Items matched by a sampling rule and kept."),
		dropped:  b.Counter("dropped_items", "{item}", "Items matched by a sampling rule and dropped (they are counted in summary events)."),
		rescued:  b.Counter("rescued_items", "{item}", "Items a sampling rule dropped that were shipped after all because their request failed or was slow."),
		held:     b.Counter("held_items", "{item}", "Spans, and log records with a trace id, that a sampling rule dropped, held until their local root was seen."),
		released: b.Counter("released_items", "{item}", "Held items dropped as decided, by reason: root_ok (the request succeeded), window, budget (released early), shutdown."),
	}
	m.heldOpt = b.Attributes()
	for i, r := range releaseReasonNames {
		m.releasedOpts[i] = b.Attributes(attribute.String("reason", r))
	}
	for si, sig := range [2]string{"traces", "logs"} {
		for _, r := range rules {
			m.opts[si] = append(m.opts[si], b.Attributes(attribute.String("rule", r), attribute.String("signal", sig)))
		}
	}
	return m, b.Err()
}

func (m *selfMetrics) record(ctx context.Context, ruleIndex int, sig signalMask, c ruleCounts) {
	si := 0
	if sig == signalLogs {
		si = 1
	}
	opt := m.opts[si][ruleIndex]
	m.seen.Add(ctx, c.seen, opt)
	m.kept.Add(ctx, c.kept, opt)
	m.dropped.Add(ctx, c.dropped, opt)
	if c.rescued > 0 {
		m.rescued.Add(ctx, c.rescued, opt)
	}
	if c.rescuedLogs > 0 {
		m.rescued.Add(ctx, c.rescuedLogs, m.opts[1][ruleIndex])
	}
}

func (m *selfMetrics) recordHold(ctx context.Context, c holdCounts) {
	if c.held > 0 {
		m.held.Add(ctx, c.held, m.heldOpt)
	}
	for i, n := range c.released {
		if n > 0 {
			m.released.Add(ctx, n, m.releasedOpts[i])
		}
	}
}
