package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// The report of dropped records survives kill -9. Axiom answers 430 while
// the app writes to stdin far faster than the disk budget holds, so the
// stdout receiver drops and counts; the sidecar is killed before Axiom takes
// data again. The next start, with Axiom accepting, sends exactly one
// data_loss event, with exactly the count the killed process recorded.
func TestLossReportSurvivesKillAndArrivesOnce(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fake.Outage("", axiomtest.IngestLimited(time.Now().Add(time.Hour)))
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir())
	metricsPort := envValue(env, "SIDECAR_METRICS_PORT")
	args := WithArgs("--config", "embedded:default", "--config", "embedded:stdin",
		"--config", "yaml:exporters::axiom::disk: 8MiB")
	s := StartSidecar(t, "", args, WithEnv(env...), WithStdin())
	app := &timedWriter{rate: appRate}
	app.writeFor(t, s.Stdin, 3*time.Second)
	// Once the app stops writing, the drops stop: wait until the count has
	// been still for a second (the ledger is saved within 200 ms of a drop).
	dropped, still := -1.0, 0
	for still < 10 {
		n := scrapeCounter(metricsPort, "otelcol_receiver_stdout_dropped_items", `reason="budget_full"`)
		if n == dropped {
			still++
		} else {
			dropped, still = n, 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	if dropped == 0 {
		t.Fatal("nothing dropped: the disk budget was never exhausted, the test did not test it")
	}
	s.Kill(t)
	if n := len(lossReports(fake)); n != 0 {
		t.Fatalf("%d data_loss events while Axiom refused data", n)
	}

	fake.EndOutage("")
	s = StartSidecar(t, "", args, WithEnv(env...), WithStdin())
	deadline := time.Now().Add(60 * time.Second)
	for len(lossReports(fake)) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	settle(fake, "logs") // the backlog on disk, and any repeat of the report
	s.EndInput(t, 60*time.Second)
	reports := lossReports(fake)
	t.Logf("sent %d lines, %.0f dropped before the kill; data_loss events after the restart: %v", app.sent, dropped, reports)
	if len(reports) != 1 {
		t.Fatalf("%d data_loss events, want exactly 1", len(reports))
	}
	ev := reports[0]
	if got := fmt.Sprint(ev["dropped_items"]); got != fmt.Sprint(dropped) {
		t.Errorf("the data_loss event reports %s dropped, the killed process counted %.0f", got, dropped)
	}
	if ev["reason"] != "budget_full" || ev["component"] != "receiver/stdout" || ev["report_id"] == "" || ev["report_id"] == nil {
		t.Errorf("data_loss event %v", ev)
	}
}

// lossReports returns the data_loss events in the logs dataset.
func lossReports(fake *axiomtest.Server) []map[string]any {
	var out []map[string]any
	for _, ev := range fake.Events("logs") {
		if isLossReport(ev) {
			out = append(out, ev)
		}
	}
	return out
}
