package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/losses"
)

// The chaos tests of issue 10: the real binary on an embedded config is
// killed with SIGKILL at random moments while its source keeps writing and
// the fake Axiom flaps between refusing connections, 503 and 429 with
// reset headers. After the last restart, with Axiom up, everything that was
// committed (a file's lines), acknowledged (Fluent Forward) or taken into
// the pipeline (stdin) must arrive; duplicates are counted and may be no
// more than what was in flight at the kills (inflight_test.go), which must
// stay within the sidecar's bounds at each kill. bench/chaos.sh runs them
// long.

// chaosKills is how many times each test kills the sidecar; CHAOS_KILLS
// raises it (bench/chaos.sh).
func chaosKills(t *testing.T) int {
	if v := os.Getenv("CHAOS_KILLS"); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
			return n
		}
	}
	return 10
}

// chaos drives the kill loop: before each start it sets Axiom's next
// behaviour, then lets the source run for a random time and kills.
type chaos struct {
	t        *testing.T
	fake     *axiomtest.Server
	rng      *rand.Rand
	inFlight inFlight // summed over the kills
	arrived  []int    // how often each seq had arrived at the last kill
}

func newChaos(t *testing.T, fake *axiomtest.Server) *chaos {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	t.Logf("seed %d (CHAOS_SEED reruns it)", seed)
	return &chaos{t: t, fake: fake, rng: rand.New(rand.NewPCG(seed, 10))}
}

// flap sets Axiom's behaviour for run k: connections reset (as refused),
// 503, 429 until a reset a second away, or up.
func (c *chaos) flap(k int) string {
	c.fake.EndOutage("")
	switch k % 4 {
	case 0:
		c.fake.Outage("", axiomtest.ConnReset())
		return "refused"
	case 1:
		c.fake.Outage("", axiomtest.Status(503))
		return "503"
	case 2:
		reset := time.Now().Add(time.Second)
		c.fake.Fail("", axiomtest.RateLimited(reset), axiomtest.RateLimited(reset), axiomtest.RateLimited(reset))
		return "429"
	default:
		return "up"
	}
}

// killed measures what the kill that just happened cut off (see inFlight),
// checks it against the sidecar's bounds and adds it to c.inFlight.
func (c *chaos) killed(k int, state string, n int, logFile string) {
	c.t.Helper()
	f, arrived := measureInFlight(c.t, c.fake, state, n, logFile, c.arrived)
	c.arrived = arrived
	c.inFlight.add(f)
	if limit := exporterInFlightCap(); f.exporterBytes > limit {
		c.t.Errorf("kill %d: %d bytes of lines Axiom had accepted were still listed as being sent, more than the %d the requests in flight may hold", k, f.exporterBytes, limit)
	}
	if f.rereadBytes > sourceBatchBytes {
		c.t.Errorf("kill %d: %d bytes past the saved file offset were already in the pipeline, more than one batch (%d)", k, f.rereadBytes, sourceBatchBytes)
	}
	c.t.Logf("kill %d cut off: %v", k, f)
}

// runFor is how long a run lasts before its kill: from during startup to
// well into sending.
func (c *chaos) runFor() time.Duration {
	return time.Duration(50+c.rng.IntN(1500)) * time.Millisecond
}

// chaosResult is what arrived of n numbered lines.
type chaosResult struct {
	sent, arrived, missing, duplicated int
	reportedDropped                    int
	peakRSS                            int64
}

func (r chaosResult) String() string {
	return fmt.Sprintf("sent %d, arrived %d distinct, %d missing, %d duplicated, %d dropped (counted), peak RSS %.1f MB",
		r.sent, r.arrived, r.missing, r.duplicated, r.reportedDropped, float64(r.peakRSS)/1e6)
}

// tally counts the arrivals of seqs [0, n) in dataset, and the records
// the data_loss report events there say were dropped.
func tally(t *testing.T, fake *axiomtest.Server, dataset string, n int) (seen []int, r chaosResult) {
	t.Helper()
	seen = make([]int, n)
	for _, ev := range fake.Events(dataset) {
		if isLossReport(ev) {
			// The fake keeps numbers exact (json.Number), as seq below.
			var items int
			if _, err := fmt.Sscan(fmt.Sprint(ev["dropped_items"]), &items); err != nil {
				t.Fatalf("data_loss event without a dropped_items count: %v", ev)
			}
			r.reportedDropped += items
			continue
		}
		num, _ := ev["seq"].(json.Number)
		seq, err := strconv.Atoi(string(num))
		if err != nil || seq < 0 || seq >= n {
			t.Fatalf("unexpected event %v", ev)
		}
		seen[seq]++
	}
	r.sent = n
	for _, c := range seen {
		switch {
		case c == 0:
			r.missing++
		default:
			r.arrived++
			r.duplicated += c - 1
		}
	}
	return seen, r
}

// isLossReport tells the sidecar's data_loss events (internal/losses),
// whose "sidecar.event" key the fake stores as Axiom does, dotted or not.
func isLossReport(ev map[string]any) bool {
	if ev["sidecar.event"] == losses.EventKind {
		return true
	}
	nested, _ := ev["sidecar"].(map[string]any)
	return nested["event"] == losses.EventKind
}

// waitArrived waits until every seq in want has arrived (or 90 s pass).
func waitArrived(t *testing.T, fake *axiomtest.Server, dataset string, n int, want func(seq int) bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		seen, _ := tally(t, fake, dataset, n)
		missing := 0
		for seq, c := range seen {
			if c == 0 && want(seq) {
				missing++
			}
		}
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("%d lines still missing after 90s", missing)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// CRI files: the files are the buffer, offsets are committed only once
// their lines are on disk. Every line written arrives; duplicates are lines
// read again from the last offset saved before a kill (saved after every
// batch) and requests whose answers a kill cut off.
func TestChaosKillsWhileTailingCRIFilesLoseNoLine(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	pod, state := newPodLogs(t), t.TempDir()
	env, _ := pod.kubernetesEnv(t, fake, state)
	c := newChaos(t, fake)
	kills := chaosKills(t)
	written := 0
	var peak int64
	for k := range kills {
		mode := c.flap(k)
		s := StartSidecar(t, "", kubernetesArgs, WithEnv(env...))
		end := time.Now().Add(c.runFor())
		for time.Now().Before(end) {
			pod.write(written, written+50)
			written += 50
			time.Sleep(10 * time.Millisecond)
		}
		peak = max(peak, peakRSS(t, s.cmd.Process.Pid))
		s.Kill(t)
		t.Logf("run %d (%s): %d lines written so far", k, mode, written)
		c.killed(k, state, written, pod.f.Name())
	}
	fake.EndOutage("")
	s := StartSidecar(t, "", kubernetesArgs, WithEnv(env...))
	waitArrived(t, fake, "logs", written, func(int) bool { return true })
	peak = max(peak, peakRSS(t, s.cmd.Process.Pid))
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	_, r := tally(t, fake, "logs", written)
	r.peakRSS = peak
	t.Logf("CRI files, %d kills: %v; in flight at the kills: %v", kills, r, c.inFlight)
	if r.missing != 0 {
		t.Fatalf("%d of %d lines never arrived", r.missing, written)
	}
	if bound := c.inFlight.exporter + c.inFlight.reread; r.duplicated > bound {
		t.Fatalf("%d duplicates, more than were in flight at the kills (%d)", r.duplicated, bound)
	}
}

// forwardClient speaks Fluent Forward with acks, as Fluent Bit's forward
// output does: chunks of records in Forward mode, each acknowledged before
// the next is sent; a chunk not acknowledged is sent again on the next
// connection.
type forwardClient struct {
	t       *testing.T
	network string // "" is tcp
	addr    string
	acked   []bool
	unacked [][2]int // seq ranges sent without an ack
	resent  int
}

const forwardChunk = 50

// run sends chunks of new records from next on until stop is closed or the
// connection breaks, after resending what was not acknowledged; it returns
// the next seq.
func (f *forwardClient) run(next int, stop <-chan struct{}) int {
	network := f.network
	if network == "" {
		network = "tcp"
	}
	conn, err := net.DialTimeout(network, f.addr, time.Second)
	if err != nil {
		return next
	}
	defer conn.Close()
	r := msgp.NewReader(conn)
	send := func(from, to int) bool {
		var b []byte
		b = msgp.AppendArrayHeader(b, 3)
		b = msgp.AppendString(b, "app")
		b = msgp.AppendArrayHeader(b, uint32(to-from))
		for seq := from; seq < to; seq++ {
			b = msgp.AppendArrayHeader(b, 2)
			b = msgp.AppendInt64(b, time.Now().Unix())
			b = msgp.AppendMapHeader(b, 2)
			b = msgp.AppendString(b, "log")
			b = msgp.AppendString(b, pinoLine(seq))
			b = msgp.AppendString(b, "source")
			b = msgp.AppendString(b, "stdout")
		}
		chunk := fmt.Sprintf("c%d-%d", from, to)
		b = msgp.AppendMapHeader(b, 1)
		b = msgp.AppendString(b, "chunk")
		b = msgp.AppendString(b, chunk)
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write(b); err != nil {
			return false
		}
		var ack map[string]any
		m, err := r.ReadIntf()
		if err != nil {
			return false
		}
		ack, _ = m.(map[string]any)
		if ack["ack"] != chunk {
			f.t.Errorf("ack %v for chunk %s", m, chunk)
			return false
		}
		for seq := from; seq < to; seq++ {
			f.acked[seq] = true
		}
		return true
	}
	for len(f.unacked) > 0 {
		u := f.unacked[0]
		if !send(u[0], u[1]) {
			return next
		}
		f.resent += u[1] - u[0]
		f.unacked = f.unacked[1:]
	}
	for {
		select {
		case <-stop:
			return next
		default:
		}
		from, to := next, next+forwardChunk
		next = to
		for len(f.acked) < to {
			f.acked = append(f.acked, false)
		}
		if !send(from, to) {
			f.unacked = append(f.unacked, [2]int{from, to})
			return next
		}
	}
}

// Fluent Forward with acks (the ecs config): every acknowledged record
// arrives, and so does every record, since the client resends what was not
// acknowledged. Duplicates: resent chunks that were on disk before the ack
// was cut off, and requests whose answers a kill cut off.
func TestChaosKillsWhileForwardClientsWaitForAcksLoseNothingAcknowledged(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	addr, state := FreeAddr(t), t.TempDir()
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+state, "SIDECAR_FORWARD_ENDPOINT="+addr,
		"SIDECAR_FORWARD_SOCKET="+socketPath(t))
	args := WithArgs("--config", "embedded:default", "--config", "embedded:ecs")
	c := newChaos(t, fake)
	kills := chaosKills(t)
	client := &forwardClient{t: t, addr: addr}
	next := 0
	var peak int64
	for k := range kills {
		mode := c.flap(k)
		s := StartSidecar(t, "", args, WithEnv(env...))
		s.WaitListening(t, addr)
		stop := make(chan struct{})
		done := make(chan int)
		go func() { done <- client.run(next, stop) }()
		time.Sleep(c.runFor())
		peak = max(peak, peakRSS(t, s.cmd.Process.Pid))
		s.Kill(t)
		close(stop)
		next = <-done
		t.Logf("run %d (%s): %d records sent, %d unacknowledged chunks", k, mode, next, len(client.unacked))
		c.killed(k, state, next, "")
	}
	fake.EndOutage("")
	s := StartSidecar(t, "", args, WithEnv(env...))
	s.WaitListening(t, addr)
	stop := make(chan struct{})
	close(stop) // only resend what was not acknowledged
	client.run(next, stop)
	if len(client.unacked) != 0 {
		t.Fatalf("%d chunks still unacknowledged with Axiom up", len(client.unacked))
	}
	waitArrived(t, fake, "logs", next, func(int) bool { return true })
	peak = max(peak, peakRSS(t, s.cmd.Process.Pid))
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	seen, r := tally(t, fake, "logs", next)
	r.peakRSS = peak
	t.Logf("forward, %d kills: %v; %d records resent by the client; in flight at the kills: %v", kills, r, client.resent, c.inFlight)
	lostAcked := 0
	for seq, ok := range client.acked {
		if ok && seen[seq] == 0 {
			lostAcked++
		}
	}
	if lostAcked != 0 || r.missing != 0 {
		t.Fatalf("%d acknowledged records lost, %d records missing in all", lostAcked, r.missing)
	}
	if bound := client.resent + c.inFlight.exporter; r.duplicated > bound {
		t.Fatalf("%d duplicates, more than were in flight at the kills (%d, %d of them resent by the client)", r.duplicated, bound, client.resent)
	}
}

// stdinWriter writes numbered pino lines to a sidecar's stdin until stop
// or a failed write (the sidecar was killed).
func stdinWriter(w io.Writer, next int, stop <-chan struct{}) (written int) {
	bw := bufio.NewWriterSize(w, 16<<10)
	for written = next; ; {
		select {
		case <-stop:
			bw.Flush()
			return written
		default:
		}
		for range 50 {
			fmt.Fprintln(bw, pinoLine(written))
			written++
		}
		if err := bw.Flush(); err != nil {
			return written // some of these may not have reached the pipe
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// takenRun is one run of the sidecar between kills: the lines from base on
// that it had taken in (otelcol_receiver_accepted_log_records) at the kill.
type takenRun struct{ base, accepted int }

type takenRuns []takenRun

// took says whether a run had taken line seq in before its kill.
func (runs takenRuns) took(seq int) bool {
	for _, r := range runs {
		if seq >= r.base && seq < r.base+r.accepted {
			return true
		}
	}
	return false
}

// stdin: a pipe has no acknowledgement, so the promise is about what the
// pipeline took (otelcol_receiver_accepted_log_records, read just before
// each kill): the first `accepted` lines of each run all arrive, in any
// case. Lines still in the pipe or read but not yet on disk die with the
// process (as with any reader of a pipe); their number is reported.
func TestChaosKillsWhileReadingStdinLoseNothingTakenIn(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	state := t.TempDir()
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+state)
	metricsPort := envValue(env, "SIDECAR_METRICS_PORT")
	args := WithArgs("--config", "embedded:default", "--config", "embedded:stdin")
	c := newChaos(t, fake)
	kills := chaosKills(t)
	var runs takenRuns
	next, inFlightLost := 0, 0
	var peak int64
	for k := range kills {
		mode := c.flap(k)
		s := StartSidecar(t, "", args, WithEnv(env...), WithStdin())
		stop := make(chan struct{})
		done := make(chan int)
		base := next
		go func() { done <- stdinWriter(s.Stdin, base, stop) }()
		time.Sleep(c.runFor())
		accepted := int(scrapeCounter(metricsPort, "otelcol_receiver_accepted_log_records", `receiver="stdout"`))
		peak = max(peak, peakRSS(t, s.cmd.Process.Pid))
		s.Kill(t)
		close(stop)
		next = <-done
		runs = append(runs, takenRun{base, accepted})
		t.Logf("run %d (%s): lines %d..%d written, %d taken in before the kill", k, mode, base, next, accepted)
		c.killed(k, state, next, "")
	}
	fake.EndOutage("")
	s := StartSidecar(t, "", args, WithEnv(env...), WithStdin())
	lastPeak := watchPeakRSS(s)
	final := next
	for i := range 100 {
		fmt.Fprintln(s.Stdin, pinoLine(final+i))
	}
	next = final + 100
	taken := func(seq int) bool { return seq >= final || runs.took(seq) }
	waitArrived(t, fake, "logs", next, taken)
	settle(fake, "logs") // the queue's backlog, duplicates included, is sent
	s.Stdin.Close()      // nothing is left: the run is complete
	code, err := s.Wait(120 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	seen, r := tally(t, fake, "logs", next)
	r.peakRSS = max(peak, lastPeak())
	lost := 0
	for seq, n := range seen {
		switch {
		case n == 0 && taken(seq):
			lost++
		case n == 0:
			inFlightLost++
		}
	}
	t.Logf("stdin, %d kills: %v; %d of the missing were never taken in (in the pipe or being read at a kill); in flight at the kills: %v", kills, r, inFlightLost, c.inFlight)
	if code != 0 {
		t.Errorf("exit code %d at the end of the last run, which delivered everything", code) // see the summary line
	}
	if lost != 0 {
		t.Fatalf("%d lines the pipeline had taken in never arrived", lost)
	}
	if bound := c.inFlight.exporter; r.duplicated > bound {
		t.Fatalf("%d duplicates, more than were in flight at the kills (%d)", r.duplicated, bound)
	}
	if !strings.Contains(s.Logs(), "records delivered") {
		t.Errorf("no summary line at the end of stdin")
	}
}
