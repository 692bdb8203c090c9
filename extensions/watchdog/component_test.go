package watchdog

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/sidecarhq/sidecar/extensions/watchdog/internal/metadata"
	"github.com/sidecarhq/sidecar/internal/metadatatest"
)

// The checks mdatagen generates upstream (generated_component_test.go).

func TestComponentFactory(t *testing.T) {
	f := NewFactory()
	metadatatest.CheckFactory(t, f, component.KindExtension, map[string]component.StabilityLevel{
		"extension": f.Stability(),
	})
}

func TestComponentLifecycle(t *testing.T) {
	f := NewFactory()
	cfg := metadatatest.Config(t, f)
	ctx := context.Background()
	ext, err := f.Create(ctx, extensiontest.NewNopSettings(metadata.Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
