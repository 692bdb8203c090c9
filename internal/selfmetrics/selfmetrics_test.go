package selfmetrics

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestNameAndAttributes(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	id := component.MustNewIDWithName("stdout", "app")
	b := New(tel.NewTelemetrySettings(), "scope", component.KindReceiver, id)
	c := b.Counter("lines", "{line}", "Lines.")
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	c.Add(context.Background(), 3, b.Attributes(attribute.String("signal", "logs")))

	m, err := tel.GetMetric("otelcol_receiver_stdout_lines")
	if err != nil {
		t.Fatal(err)
	}
	if m.Unit != "{line}" || m.Description != "Lines." {
		t.Errorf("unit %q, description %q", m.Unit, m.Description)
	}
	dps := m.Data.(metricdata.Sum[int64]).DataPoints
	if len(dps) != 1 || dps[0].Value != 3 {
		t.Fatalf("data points %+v", dps)
	}
	want := attribute.NewSet(attribute.String("receiver", "stdout/app"), attribute.String("signal", "logs"))
	if !dps[0].Attributes.Equals(&want) {
		t.Errorf("attributes %v, want %v", dps[0].Attributes.ToSlice(), want.ToSlice())
	}
}

func TestRegistrationErrorsAreReported(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	b := New(tel.NewTelemetrySettings(), "scope", component.KindExporter, component.MustNewID("axiom"))
	b.Counter("bad name!", "1", "")
	if b.Err() == nil {
		t.Error("an invalid instrument name must be reported")
	}
}

func TestGauge(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	id := component.MustNewID("dir_storage")
	b := New(tel.NewTelemetrySettings(), "scope", component.KindExtension, id)
	g := b.Gauge("in_memory", "1", "State.")
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	g.Record(context.Background(), 1, b.Attributes())
	m, err := tel.GetMetric("otelcol_extension_dir_storage_in_memory")
	if err != nil {
		t.Fatal(err)
	}
	gauge, ok := m.Data.(metricdata.Gauge[int64])
	if !ok || len(gauge.DataPoints) != 1 || gauge.DataPoints[0].Value != 1 {
		t.Fatalf("got %+v, want one gauge point of 1", m.Data)
	}
	if v, _ := gauge.DataPoints[0].Attributes.Value("extension"); v.AsString() != "dir_storage" {
		t.Errorf("attributes %v, want extension=dir_storage", gauge.DataPoints[0].Attributes)
	}
}
