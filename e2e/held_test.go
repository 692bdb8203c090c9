package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// "Held on disk" in the summary line of `app | sidecar` is what the queue
// really keeps for the next start: with Axiom refusing, a second run over
// the same state folder reports its own lines and those the first left.
func TestSummaryCountsWhatIsOnDiskFromEveryRun(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fake.Outage("", axiomtest.IngestLimited(time.Now().Add(time.Hour)))
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir())
	args := WithArgs("--config", "embedded:default", "--config", "embedded:stdin",
		"--config", "yaml:exporters::axiom::shutdown_timeout: 1s")
	held := 0
	for run, lines := range []int{300, 200} {
		s := StartSidecar(t, "", args, WithEnv(env...), WithStdin())
		for i := range lines {
			if _, err := fmt.Fprintln(s.Stdin, pinoLine(held+i)); err != nil {
				t.Fatal(err)
			}
		}
		held += lines
		code := s.EndInput(t, 60*time.Second)
		sum := readSummary(t, s.Logs())
		t.Logf("run %d: %d lines written, exit %d, summary %+v", run, lines, code, sum)
		if sum.held != held || sum.delivered != 0 || sum.dropped != 0 || code != 3 {
			t.Fatalf("run %d: summary %+v, exit %d; want %d held on disk, exit 3", run, sum, code, held)
		}
	}
}
