package losses

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sidecarhq/sidecar/extensions/dirstorage"
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
	if l := byReason["logs/too_large"]; l.Items != 5 || l.Bytes != 5*(2<<20) || l.Component != "exporter/axiom" || l.Last.Before(l.First) || l.ID == "" {
		t.Errorf("too_large: %+v", l)
	}
}

// One report is under way at a time; a report Axiom did not accept is sent
// again unchanged (same IDs and counts, so a repeat is recognisable), beside
// the losses recorded since, which get IDs of their own.
func TestAReportIsSentAgainUnchangedUntilAxiomAcceptsIt(t *testing.T) {
	r, _, _ := newTestRecorder(t)
	r.Record("logs", Rejected, 40, 4000)
	first := r.ledger.Take()
	if len(first) != 1 || first[0].Items != 40 {
		t.Fatalf("first report %+v", first)
	}
	if again := r.ledger.Take(); again != nil {
		t.Fatalf("a second report while the first is under way: %+v", again)
	}
	r.Record("logs", Rejected, 2, 200)
	r.ledger.Done(first, false)
	second := r.ledger.Take()
	if len(second) != 2 || second[0] != first[0] || second[1].Items != 2 || second[1].ID == first[0].ID {
		t.Fatalf("after a failed report: %+v, want %+v unchanged and the 2 since", second, first[0])
	}
	r.ledger.Done(second, true)
	if r.ledger.Pending() || r.ledger.Take() != nil {
		t.Fatal("an accepted report is still pending")
	}
}

func startStore(t *testing.T, dir string) storage.Client {
	t.Helper()
	f := dirstorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*dirstorage.Config)
	cfg.Directory = dir
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	c, err := ext.(storage.Extension).GetClient(context.Background(), component.KindExporter, component.MustNewID("axiom"), "losses")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A ledger kept in a store outlives its process (no Release: as after
// kill -9): the next one loads it, with the drops saved shortly after they
// were recorded and the report taken (IDs and all) before the kill.
func TestAKeptLedgerIsReportedByTheNextProcess(t *testing.T) {
	dir := t.TempDir()
	first := &Ledger{}
	if err := first.Keep(context.Background(), startStore(t, dir), zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	first.add(key{"receiver/stdout", "logs", BudgetFull}, 1000, 64000, at)
	sent := first.Take() // sent, then killed before Done
	first.add(key{"receiver/stdout", "logs", BudgetFull}, 7, 448, at.Add(time.Second))
	first.add(key{"exporter/axiom", "traces", Rejected}, 3, 300, at.Add(2*time.Second))
	// The drops after Take are saved within saveInterval.
	store := startStore(t, dir)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var s saved
		b, _ := store.Get(context.Background(), ledgerKey)
		if json.Unmarshal(b, &s) == nil && len(s.Open) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the drops after the report were not saved: %s", b)
		}
	}

	next := &Ledger{}
	next.Hold()
	if err := next.Keep(context.Background(), store, zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	report := next.Take()
	if len(report) != 3 || report[0] != sent[0] {
		t.Fatalf("report %+v, want first %+v as it was sent", report, sent[0])
	}
	if report[1].Items != 7 || report[2].Items != 3 || report[2].Component != "exporter/axiom" {
		t.Fatalf("report %+v", report)
	}
	next.Done(report, true)
	if err := next.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, err := startStore(t, dir).Get(context.Background(), ledgerKey); err != nil || b != nil {
		t.Fatalf("a reported ledger left %q (%v)", b, err)
	}
}

// An unreadable saved ledger is replaced, not a reason to fail.
func TestAnUnreadableSavedLedgerIsReplaced(t *testing.T) {
	dir := t.TempDir()
	store := startStore(t, dir)
	if err := store.Set(context.Background(), ledgerKey, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	l := &Ledger{}
	l.Hold()
	if err := l.Keep(context.Background(), store, zap.NewNop()); err == nil {
		t.Fatal("no error for an unreadable ledger")
	}
	l.add(key{"receiver/stdout", "logs", BudgetFull}, 1, 10, time.Now())
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := savedIn(t, dir); len(s.Open) != 1 {
		t.Fatalf("saved %+v", s)
	}
}

// The store is kept until the last holder lets go: drops recorded after
// the reporting exporter stopped (the traces exporter may stop after the
// logs exporter) are saved for the next run, and only then is the store
// closed.
func TestDropsAfterTheReporterStoppedAreSavedUntilTheLastHolderStops(t *testing.T) {
	dir := t.TempDir()
	l := &Ledger{}
	l.Hold() // the traces exporter
	l.Hold() // the logs exporter, which keeps the ledger
	if err := l.Keep(context.Background(), startStore(t, dir), zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); err != nil { // the logs exporter stops
		t.Fatal(err)
	}
	l.add(key{"exporter/axiom", "traces", Shutdown}, 42, 0, time.Now())
	if err := l.Release(context.Background()); err != nil { // the traces exporter stops
		t.Fatal(err)
	}
	next := &Ledger{}
	next.Hold()
	if err := next.Keep(context.Background(), startStore(t, dir), zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	report := next.Take()
	if len(report) != 1 || report[0].Items != 42 || report[0].Signal != "traces" || report[0].Reason != Shutdown {
		t.Fatalf("the next run's report %+v, want the 42 spans dropped after the logs exporter stopped", report)
	}
}

// A second exporter with storage moves what its store holds into the
// ledger's store, so each earlier loss is reported once, from one place.
func TestASecondStoreIsMovedIntoTheFirst(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	for _, dir := range []string{dirA, dirB} {
		l := &Ledger{}
		l.Hold()
		if err := l.Keep(context.Background(), startStore(t, dir), zap.NewNop()); err != nil {
			t.Fatal(err)
		}
		l.add(key{"exporter/axiom", "logs", Rejected}, 5, 50, time.Now())
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	l := &Ledger{}
	l.Hold()
	l.Hold()
	for _, dir := range []string{dirA, dirB} {
		if err := l.Keep(context.Background(), startStore(t, dir), zap.NewNop()); err != nil {
			t.Fatal(err)
		}
	}
	if s := savedIn(t, dirA); len(s.Open) != 1 || s.Open[0].Items != 10 {
		t.Fatalf("the first store holds %+v, want both runs' 10 records", s)
	}
	if s := savedIn(t, dirB); len(s.Open) != 0 {
		t.Fatalf("the second store still holds %+v", s)
	}
}

// savedIn reads the ledger saved in dir.
func savedIn(t *testing.T, dir string) saved {
	t.Helper()
	store := startStore(t, dir)
	defer store.Close(context.Background())
	var s saved
	b, err := store.Get(context.Background(), ledgerKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
	}
	return s
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
