package otlpreceiver

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sidecarhq/sidecar/internal/metadatatest"
	"github.com/sidecarhq/sidecar/receivers/otlpreceiver/internal/metadata"
)

// The checks mdatagen generates upstream (generated_component_test.go).

func TestComponentMetadata(t *testing.T) {
	f := NewFactory()
	metadatatest.CheckFactory(t, f.Type(), component.KindReceiver, map[string]component.StabilityLevel{
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
		create func(context.Context, receiver.Settings, component.Config) (component.Component, error)
	}{
		{"traces", func(ctx context.Context, set receiver.Settings, cfg component.Config) (component.Component, error) {
			return f.CreateTraces(ctx, set, cfg, consumertest.NewNop())
		}},
		{"metrics", func(ctx context.Context, set receiver.Settings, cfg component.Config) (component.Component, error) {
			return f.CreateMetrics(ctx, set, cfg, consumertest.NewNop())
		}},
		{"logs", func(ctx context.Context, set receiver.Settings, cfg component.Config) (component.Component, error) {
			return f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
		}},
	} {
		t.Run(tc.name+"-shutdown", func(t *testing.T) {
			c, err := tc.create(context.Background(), receivertest.NewNopSettings(metadata.Type), metadatatest.Config(t, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
		t.Run(tc.name+"-lifecycle", func(t *testing.T) {
			c, err := tc.create(context.Background(), receivertest.NewNopSettings(metadata.Type), metadatatest.Config(t, f))
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
