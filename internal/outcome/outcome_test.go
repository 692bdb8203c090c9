package outcome

import (
	"strings"
	"testing"
)

// The package keeps process-wide state: one test walks through a run.
func TestSummaryIsCompleteOnlyWithNothingDroppedOrHeld(t *testing.T) {
	if _, _, asked := Summary(); asked {
		t.Fatal("a summary nobody asked for")
	}
	ReportAtExit()
	Delivered(90)
	Held("logs", -40, false) // a backlog of an earlier run delivered: not negative
	line, complete, asked := Summary()
	if !asked || !complete || !strings.Contains(line, "90 records delivered, 0 held on disk for the next start, 0 dropped") {
		t.Fatalf("%q complete=%v", line, complete)
	}
	Dropped("when_full", 7)
	Dropped("rejected by Axiom", 3)
	Held("traces", 5, false)
	line, complete, _ = Summary()
	if complete || !strings.Contains(line, "5 held on disk for the next start, 10 dropped (rejected by Axiom: 3, when_full: 7)") {
		t.Fatalf("%q complete=%v", line, complete)
	}
	Held("traces", 0, true)
	if line, complete, _ = Summary(); complete || !strings.Contains(line, "shutdown_timeout") {
		t.Fatalf("%q complete=%v", line, complete)
	}
}
