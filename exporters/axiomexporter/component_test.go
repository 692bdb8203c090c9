package axiomexporter

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/metadata"
	"github.com/sidecarhq/sidecar/internal/metadatatest"
)

// The checks mdatagen generates upstream (generated_component_test.go).

func TestComponentFactory(t *testing.T) {
	f := NewFactory()
	metadatatest.CheckFactory(t, f, component.KindExporter, map[string]component.StabilityLevel{
		"traces": f.TracesStability(), "metrics": f.MetricsStability(), "logs": f.LogsStability(),
	})
}

// TestComponentLifecycle starts and stops the exporter; nothing is sent,
// as metadata.yaml's tests::config points it at a closed port.
func TestComponentLifecycle(t *testing.T) {
	f := NewFactory()
	set := exportertest.NewNopSettings(metadata.Type)
	metadatatest.Lifecycle(t, f,
		metadatatest.Signal{Name: "traces", Create: func(ctx context.Context, cfg component.Config) (component.Component, error) {
			return f.CreateTraces(ctx, set, cfg)
		}},
		metadatatest.Signal{Name: "logs", Create: func(ctx context.Context, cfg component.Config) (component.Component, error) {
			return f.CreateLogs(ctx, set, cfg)
		}},
	)
}
