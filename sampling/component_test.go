package sampling

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/sidecarhq/sidecar/internal/metadatatest"
	"github.com/sidecarhq/sidecar/sampling/internal/metadata"
)

// The checks mdatagen generates upstream (generated_component_test.go).

func TestComponentFactory(t *testing.T) {
	f := NewFactory()
	metadatatest.CheckFactory(t, f, component.KindProcessor, map[string]component.StabilityLevel{
		"traces": f.TracesStability(), "metrics": f.MetricsStability(), "logs": f.LogsStability(),
	})
}

func TestComponentLifecycle(t *testing.T) {
	f := NewFactory()
	set := processortest.NewNopSettings(metadata.Type)
	metadatatest.Lifecycle(t, f,
		metadatatest.Signal{Name: "traces", Create: func(ctx context.Context, cfg component.Config) (component.Component, error) {
			return f.CreateTraces(ctx, set, cfg, consumertest.NewNop())
		}, Consume: func(ctx context.Context, c component.Component) error {
			return c.(processor.Traces).ConsumeTraces(ctx, lifecycleTraces())
		}},
		metadatatest.Signal{Name: "logs", Create: func(ctx context.Context, cfg component.Config) (component.Component, error) {
			return f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
		}, Consume: func(ctx context.Context, c component.Component) error {
			return c.(processor.Logs).ConsumeLogs(ctx, lifecycleLogs())
		}},
	)
}

func lifecycleTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("lifecycle")
	span.SetTraceID(pcommon.TraceID{1})
	span.SetSpanID(pcommon.SpanID{1})
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now().Add(-time.Second)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	return td
}

func lifecycleLogs() plog.Logs {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("lifecycle")
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	return ld
}
