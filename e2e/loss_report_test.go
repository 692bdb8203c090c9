package e2e

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
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

// Drops made after the logs exporter (which reports) has stopped are saved
// for the next run. The collector stops exporters in no set order; here the
// traces go to their own axiom exporter, with an in-memory queue, while
// Axiom answers 503 for spans, so shutdown_timeout cuts them off at EOF and
// they are dropped and counted. The run is repeated until the traces
// exporter stopped after the logs exporter (no report arrived in that run:
// the logs exporter, whose last request Axiom accepted, reports at its
// shutdown what was dropped before it). The next start then sends exactly
// one data_loss event with exactly those spans.
func TestDropsAfterTheLogsExporterStoppedAreReportedByTheNextRun(t *testing.T) {
	const spans = 50
	fake := axiomtest.NewForTest(t)
	fake.Outage("traces", axiomtest.Status(503))
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir())
	overlay := filepath.Join(t.TempDir(), "spans.yaml")
	writeFile(t, overlay, []byte(`exporters:
  axiom/spans:
    url: ${env:AXIOM_URL}
    token: ${env:AXIOM_TOKEN}
    traces_dataset: traces
    check_token: false
    shutdown_timeout: 1s
service:
  pipelines:
    traces:
      exporters: [axiom/spans]
`))
	args := WithArgs("--config", "embedded:default", "--config", "embedded:stdin", "--config", "file:"+overlay)
	spanReports := func() (n int, items string) {
		for _, ev := range lossReports(fake) {
			if ev["component"] == "exporter/axiom/spans" {
				n++
				items = fmt.Sprint(ev["dropped_items"])
			}
		}
		return n, items
	}
	run := func(withSpans bool) {
		s := StartSidecar(t, "", args, WithEnv(env...), WithStdin())
		before := fake.EventCount("logs")
		if _, err := io.WriteString(s.Stdin, pinoLine(0)+"\n"); err != nil {
			t.Fatal(err)
		}
		// The logs exporter reports at shutdown only once Axiom accepted a request.
		if err := fake.WaitEvents("logs", before+1, 60*time.Second); err != nil {
			t.Fatal(err)
		}
		if withSpans {
			if _, err := io.WriteString(s.Stdin, strings.Repeat(stdinSpanLine+"\n", spans)); err != nil {
				t.Fatal(err)
			}
		}
		s.EndInput(t, 60*time.Second)
	}

	tries := 0
	for {
		tries++
		before, _ := spanReports()
		run(true)
		after, items := spanReports()
		if after == before {
			break // the traces exporter stopped after the logs exporter
		}
		if items != fmt.Sprint(spans) {
			t.Fatalf("a run's data_loss event reports %s spans dropped, want %d", items, spans)
		}
		if tries == 12 {
			t.Skip("the traces exporter stopped before the logs exporter in 12 runs: the order under test never happened")
		}
	}
	reported, _ := spanReports()

	fake.EndOutage("traces")
	s := StartSidecar(t, "", args, WithEnv(env...), WithStdin())
	deadline := time.Now().Add(60 * time.Second)
	for n, _ := spanReports(); n == reported && time.Now().Before(deadline); n, _ = spanReports() {
		time.Sleep(100 * time.Millisecond)
	}
	settle(fake, "logs") // any repeat of the report
	s.EndInput(t, 60*time.Second)
	n, items := spanReports()
	t.Logf("%d runs until the traces exporter stopped last; data_loss events for its spans: %d before the restart, %d after", tries, reported, n)
	if n != reported+1 || items != fmt.Sprint(spans) {
		t.Fatalf("after the restart %d new data_loss events for the spans (last reports %s dropped), want 1 of %d", n-reported, items, spans)
	}
}
