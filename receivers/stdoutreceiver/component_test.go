package stdoutreceiver

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sidecarhq/sidecar/internal/metadatatest"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/metadata"
)

// The checks mdatagen generates upstream (generated_component_test.go).

func TestComponentFactory(t *testing.T) {
	f := NewFactory()
	metadatatest.CheckFactory(t, f, component.KindReceiver, map[string]component.StabilityLevel{
		"traces": f.TracesStability(), "metrics": f.MetricsStability(), "logs": f.LogsStability(),
	})
}

func TestComponentLifecycle(t *testing.T) {
	f := NewFactory()
	set := receivertest.NewNopSettings(metadata.Type)
	metadatatest.Lifecycle(t, f,
		metadatatest.Signal{Name: "traces", Create: func(ctx context.Context, cfg component.Config) (component.Component, error) {
			return f.CreateTraces(ctx, set, cfg, consumertest.NewNop())
		}},
		metadatatest.Signal{Name: "logs", Create: func(ctx context.Context, cfg component.Config) (component.Component, error) {
			return f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
		}},
	)
}
