package sampling

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
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

func TestComponentMetadata(t *testing.T) {
	f := NewFactory()
	metadatatest.CheckFactory(t, f.Type(), component.KindProcessor, map[string]component.StabilityLevel{
		"traces": f.TracesStability(), "metrics": f.MetricsStability(), "logs": f.LogsStability(),
	})
}

func TestComponentConfigStruct(t *testing.T) {
	if err := componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
}

func TestComponentLifecycle(t *testing.T) {
	f := NewFactory()
	for _, tc := range []struct {
		name    string
		create  func(context.Context, processor.Settings, component.Config) (component.Component, error)
		consume func(context.Context, component.Component) error
	}{
		{"traces", func(ctx context.Context, set processor.Settings, cfg component.Config) (component.Component, error) {
			return f.CreateTraces(ctx, set, cfg, consumertest.NewNop())
		}, func(ctx context.Context, c component.Component) error {
			return c.(processor.Traces).ConsumeTraces(ctx, lifecycleTraces())
		}},
		{"logs", func(ctx context.Context, set processor.Settings, cfg component.Config) (component.Component, error) {
			return f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
		}, func(ctx context.Context, c component.Component) error {
			return c.(processor.Logs).ConsumeLogs(ctx, lifecycleLogs())
		}},
	} {
		t.Run(tc.name+"-shutdown", func(t *testing.T) {
			c, err := tc.create(context.Background(), processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
		t.Run(tc.name+"-lifecycle", func(t *testing.T) {
			c, err := tc.create(context.Background(), processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			if err := tc.consume(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
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
