package losses

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func newTestRecorder(t *testing.T) (*Recorder, *observer.ObservedLogs, *componenttest.Telemetry) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	core, logs := observer.New(zap.InfoLevel)
	set := tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	r, err := NewRecorder(set, "scope", component.KindExporter, component.MustNewID("axiom"), &Ledger{})
	if err != nil {
		t.Fatal(err)
	}
	return r, logs, tel
}

// Every drop is counted exactly in the metric and the ledger, and said in
// one log line per reason at most once a minute.
func TestRecordCountsExactlyAndLogsOncePerReason(t *testing.T) {
	r, logs, tel := newTestRecorder(t)
	for range 5 {
		r.Record("logs", TooLarge, 1, 2<<20)
	}
	r.Record("logs", Rejected, 40, 4000)
	r.Record("traces", Rejected, 3, 300)

	m, err := tel.GetMetric("otelcol_exporter_axiom_dropped_items")
	if err != nil {
		t.Fatal(err)
	}
	byAttrs := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		sig, _ := dp.Attributes.Value("signal")
		reason, _ := dp.Attributes.Value("reason")
		byAttrs[sig.AsString()+"/"+reason.AsString()] += dp.Value
	}
	if byAttrs["logs/too_large"] != 5 || byAttrs["logs/rejected"] != 40 || byAttrs["traces/rejected"] != 3 {
		t.Errorf("dropped_items by signal/reason: %v", byAttrs)
	}
	if n := logs.Len(); n != 3 {
		t.Errorf("%d log lines, want 3 (one per signal and reason)", n)
	}
	losses := r.ledger.Take()
	if len(losses) != 3 {
		t.Fatalf("ledger %+v, want 3 losses", losses)
	}
	byReason := map[string]Loss{}
	for _, l := range losses {
		byReason[l.Signal+"/"+string(l.Reason)] = l
	}
	if l := byReason["logs/too_large"]; l.Items != 5 || l.Bytes != 5*(2<<20) || l.Component != "exporter/axiom" || l.Last.Before(l.First) {
		t.Errorf("too_large: %+v", l)
	}
	if len(r.ledger.Take()) != 0 {
		t.Error("Take left losses behind")
	}
	r.ledger.Restore(losses)
	if again := r.ledger.Take(); len(again) != 3 {
		t.Errorf("Restore gave back %d losses, want 3", len(again))
	}
}

func TestEventSaysHowManyWhyAndWhen(t *testing.T) {
	first := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	line := Event(Loss{Component: "exporter/axiom", Signal: "logs", Reason: TooLarge, Items: 7, Bytes: 700, First: first, Last: first.Add(time.Hour)}, first.Add(2*time.Hour))
	var ev map[string]any
	if err := json.Unmarshal(line, &ev); err != nil || line[len(line)-1] != '\n' {
		t.Fatalf("not one NDJSON line: %q %v", line, err)
	}
	want := map[string]any{"sidecar.event": "data_loss", "reason": "too_large", "dropped_items": 7.0, "signal": "logs",
		"first_dropped": "2026-12-01T10:00:00Z", "last_dropped": "2026-12-01T11:00:00Z", "_time": "2026-12-01T12:00:00Z"}
	for k, v := range want {
		if ev[k] != v {
			t.Errorf("%s = %v, want %v", k, ev[k], v)
		}
	}
}
