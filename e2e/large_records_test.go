package e2e

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// stackTrace is the stack of line seq: about 18 KB of frames, with the
// newlines and quotes a JSON string escapes, and seq in every frame, so
// that an event cut, spliced or swapped with another does not pass for it.
func stackTrace(seq int) string {
	var b strings.Builder
	b.WriteString("Error: boom\n")
	for i := 0; b.Len() < 18<<10; i++ {
		fmt.Fprintf(&b, "    at handler%d (/srv/app/\"routes\"/r%d.js:%d:%d)\n", seq, i, seq, i)
	}
	return b.String()
}

// largeRecordLine is a pino error line of about 18 KB: its err.stack the
// JSON string of stackTrace(seq).
func largeRecordLine(seq int) string {
	stack := strings.NewReplacer("\\", `\\`, `"`, `\"`, "\n", `\n`).Replace(stackTrace(seq))
	return fmt.Sprintf(`{"level":50,"time":%d,"pid":1,"hostname":"h","seq":%d,"err":{"type":"Error","message":"boom %d","stack":"%s"},"msg":"boom %d"}`,
		1767225600000+seq, seq, seq, stack, seq)
}

// Records of about 18 KB (stack traces) through the disk queue, which
// stores them as the events the exporter sends (queuedevents): Axiom is
// down while they are read and queued, comes back slowly (each request
// answered after 200 ms), and the sidecar is killed with SIGKILL while the
// queue is being sent; restarted on the same state folder, it sends the
// rest. (The fake stores _time as Axiom does, in RFC 3339.) Nothing the pipeline took is lost; a line arrives twice only from
// a request in flight at the kill (one at a time with the default
// budgets, so at most one request's events); every event arrives intact.
func TestKillWhileSendingLargeRecordsFromDiskLosesNothing(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fake.Outage("", axiomtest.Status(503))
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir())
	metricsPort := envValue(env, "SIDECAR_METRICS_PORT")
	args := WithArgs("--config", "embedded:default", "--config", "embedded:stdin")
	const n = 1500 // 27 MB
	s := StartSidecar(t, "", args, WithEnv(env...), WithStdin())
	w := bufio.NewWriterSize(s.Stdin, 1<<20)
	for seq := range n {
		fmt.Fprintln(w, largeRecordLine(seq))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	waitAccepted(t, s, metricsPort, n) // all on disk
	if got := fake.EventCount("logs"); got != 0 {
		t.Fatalf("%d events arrived while Axiom was down", got)
	}

	fake.Outage("", axiomtest.Slow(200*time.Millisecond))
	if err := fake.WaitEvents("logs", n/4, 60*time.Second); err != nil {
		t.Fatalf("Axiom back: %v", err)
	}
	killed := time.Now()
	s.Kill(t)
	before := fake.EventCount("logs")
	if before >= n {
		t.Fatalf("all %d lines had arrived before the kill: the test did not kill while sending", n)
	}
	// With the default budgets one request is in flight at a time: what
	// may arrive twice is at most the largest request stored before the
	// kill.
	inFlight := 0
	for _, r := range fake.Requests() {
		if r.Dataset == "logs" && r.Received.Before(killed) {
			inFlight = max(inFlight, r.Events)
		}
	}

	fake.EndOutage("")
	s = StartSidecar(t, "", args, WithEnv(env...), WithStdin())
	waitArrived(t, fake, "logs", n, func(int) bool { return true })
	settle(fake, "logs")
	if code := s.EndInput(t, 60*time.Second); code != 0 {
		t.Errorf("the restarted sidecar exited %d at the end of its input", code)
	}
	_, r := tally(t, fake, "logs", n)
	t.Logf("%d lines of ~18 KB, killed with %d arrived: %v; a request held up to %d events", n, before, r, inFlight)
	if r.missing != 0 {
		t.Errorf("%d lines lost", r.missing)
	}
	if r.duplicated > inFlight {
		t.Errorf("%d lines arrived twice, more than the %d events of one request in flight", r.duplicated, inFlight)
	}
	intact := 0
	for _, ev := range fake.Events("logs") {
		seq := fmt.Sprint(ev["seq"])
		var i int
		if _, err := fmt.Sscan(seq, &i); err != nil {
			t.Fatalf("event without a seq: %.200v", ev)
		}
		errObj, _ := ev["err"].(map[string]any)
		switch {
		case errObj == nil || errObj["stack"] != stackTrace(i):
			t.Errorf("line %d: err.stack changed on the way (%.200v)", i, errObj)
		case errObj["message"] != fmt.Sprintf("boom %d", i) || ev["msg"] != fmt.Sprintf("boom %d", i):
			t.Errorf("line %d: message or msg changed: %v, %v", i, errObj["message"], ev["msg"])
		case ev["level"] != "error" || ev["_time"] != time.UnixMilli(1767225600000+int64(i)).UTC().Format(time.RFC3339Nano):
			t.Errorf("line %d: level %v, _time %v", i, ev["level"], ev["_time"])
		default:
			intact++
		}
	}
	if intact != n+r.duplicated {
		t.Errorf("%d of %d events intact", intact, n+r.duplicated)
	}
}
