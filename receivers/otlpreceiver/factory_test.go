package otlpreceiver

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	if f.Type().String() != "otlp" {
		t.Errorf("type %q", f.Type())
	}
	cfg := testConfig(t)
	set := receivertest.NewNopSettings(f.Type())
	ctx := context.Background()
	tr, err := f.CreateTraces(ctx, set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	lr, err := f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	mr, err := f.CreateMetrics(ctx, set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if tr != lr || lr != mr {
		t.Error("one config must give one shared receiver")
	}
	other, err := f.CreateTraces(ctx, set, testConfig(t), consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if other == tr {
		t.Error("another config must give another receiver")
	}
	for _, r := range []interface{ Shutdown(context.Context) error }{tr, other} {
		if err := r.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}
}
