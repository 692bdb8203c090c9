package axiomexporter

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/metadata"
	"github.com/sidecarhq/sidecar/internal/metadatatest"
)

// The checks mdatagen generates upstream (generated_component_test.go).

func TestComponentMetadata(t *testing.T) {
	f := NewFactory()
	metadatatest.CheckFactory(t, f.Type(), component.KindExporter, map[string]component.StabilityLevel{
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
		name   string
		create func(context.Context, exporter.Settings, component.Config) (component.Component, error)
	}{
		{"traces", func(ctx context.Context, set exporter.Settings, cfg component.Config) (component.Component, error) {
			return f.CreateTraces(ctx, set, cfg)
		}},
		{"logs", func(ctx context.Context, set exporter.Settings, cfg component.Config) (component.Component, error) {
			return f.CreateLogs(ctx, set, cfg)
		}},
	} {
		t.Run(tc.name+"-shutdown", func(t *testing.T) {
			c, err := tc.create(context.Background(), exportertest.NewNopSettings(metadata.Type), metadatatest.Config(t, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
		t.Run(tc.name+"-lifecycle", func(t *testing.T) {
			c, err := tc.create(context.Background(), exportertest.NewNopSettings(metadata.Type), metadatatest.Config(t, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
