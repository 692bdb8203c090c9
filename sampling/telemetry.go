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
	seen, kept, dropped metric.Int64Counter
	// opts[signal index][rule] holds the precomputed attribute set, so that
	// recording allocates nothing per rule.
	opts [2][]metric.AddOption
}

func newSelfMetrics(set processor.Settings, rules []string) (*selfMetrics, error) {
	b := selfmetrics.New(set.TelemetrySettings, metadata.ScopeName, component.KindProcessor, set.ID)
	m := &selfMetrics{
		seen:    b.Counter("seen_items", "{item}", "Items (spans or log records) matched by a sampling rule."),
		kept:    b.Counter("kept_items", "{item}", "Items matched by a sampling rule and kept."),
		dropped: b.Counter("dropped_items", "{item}", "Items matched by a sampling rule and dropped (they are counted in summary events)."),
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
}
