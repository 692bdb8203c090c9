package sampling

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sidecarhq/sidecar/sampling/internal/metadata"
)

// selfMetrics counts items seen, kept and dropped per rule and signal.
type selfMetrics struct {
	seen, kept, dropped metric.Int64Counter
	// opts[signal index][rule] holds the precomputed attribute set, so that
	// recording allocates nothing per rule.
	opts [2][]metric.AddOption
}

func newSelfMetrics(set component.TelemetrySettings, rules []string) (*selfMetrics, error) {
	meter := set.MeterProvider.Meter(metadata.ScopeName)
	m := &selfMetrics{}
	var err, e error
	m.seen, e = meter.Int64Counter("sidecar.sampling.seen", metric.WithUnit("{item}"),
		metric.WithDescription("Items (spans or log records) matched by a sampling rule."))
	err = errors.Join(err, e)
	m.kept, e = meter.Int64Counter("sidecar.sampling.kept", metric.WithUnit("{item}"),
		metric.WithDescription("Items matched by a sampling rule and kept."))
	err = errors.Join(err, e)
	m.dropped, e = meter.Int64Counter("sidecar.sampling.dropped", metric.WithUnit("{item}"),
		metric.WithDescription("Items matched by a sampling rule and dropped (they are counted in summary events)."))
	err = errors.Join(err, e)
	for si, sig := range [2]string{"traces", "logs"} {
		for _, r := range rules {
			m.opts[si] = append(m.opts[si], metric.WithAttributeSet(attribute.NewSet(
				attribute.String("rule", r), attribute.String("signal", sig))))
		}
	}
	return m, err
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
