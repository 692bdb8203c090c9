package e2e

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// podLogs is a fake node's /var/log/pods with one app container whose CRI
// log file lines are appended to, each a pino line with its seq.
type podLogs struct {
	t    *testing.T
	root string
	f    *os.File
}

func newPodLogs(t *testing.T) *podLogs {
	root := t.TempDir()
	dir := filepath.Join(root, "shop_checkout-7d9f_4f1c", "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "0.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &podLogs{t: t, root: root, f: f}
}

func (p *podLogs) write(from, to int) {
	w := bufio.NewWriterSize(p.f, 64<<10)
	for i := from; i < to; i++ {
		fmt.Fprintf(w, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), pinoLine(i))
	}
	if err := w.Flush(); err != nil {
		p.t.Fatal(err)
	}
}

// kubernetesEnv runs `--config embedded:default --config embedded:kubernetes`
// on p's pod, with its state (queue and offsets) in stateDir.
func (p *podLogs) kubernetesEnv(t *testing.T, fake *axiomtest.Server, stateDir string) (env []string, metricsPort string) {
	env = append(embeddedEnv(t, fake), "SIDECAR_POD_LOGS_DIR="+p.root, "POD_NAMESPACE=shop",
		"POD_NAME=checkout-7d9f", "POD_UID=4f1c", "SIDECAR_STATE_DIR="+stateDir)
	return env, envValue(env, "SIDECAR_METRICS_PORT")
}

// envValue is the value of name in env ("NAME=value" entries).
func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

var kubernetesArgs = WithArgs("--config", "embedded:default", "--config", "embedded:kubernetes")

// waitAccepted waits until the stdout receiver has handed n log records to
// the pipeline (its self-metric), failing after 60 s.
func waitAccepted(t *testing.T, s *Sidecar, metricsPort string, n int) {
	t.Helper()
	waitRecords(t, s, metricsPort, n, "otelcol_receiver_accepted_log_records")
}

// waitRead waits until the stdout receiver has read n lines.
func waitRead(t *testing.T, s *Sidecar, metricsPort string, n int) {
	t.Helper()
	waitRecords(t, s, metricsPort, n, "otelcol_receiver_stdout_lines")
}

// waitRecords waits until the stdout receiver's counters add up to n,
// failing after 60 s.
func waitRecords(t *testing.T, s *Sidecar, metricsPort string, n int, counters ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var got float64
		for _, c := range counters {
			got += scrapeCounter(metricsPort, c, `receiver="stdout"`)
		}
		if got >= float64(n) {
			return
		}
		select {
		case <-s.done:
			t.Fatalf("sidecar exited (%v) with %v of %d records in %v", s.err, got, n, counters)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v of %d records in %v after 60s", got, n, counters)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scrapeCounter sums a counter's series whose labels contain label, from the
// sidecar's Prometheus endpoint; 0 when it cannot be read yet.
func scrapeCounter(port, name, label string) float64 {
	resp, err := http.Get("http://127.0.0.1:" + port + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || !strings.Contains(line, label) {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// countSeqs counts how often each seq in [0, n) arrived; it fails the test
// on an event that is not one of those lines.
func countSeqs(t *testing.T, events []map[string]any, n int) (missing, duplicated int) {
	t.Helper()
	seen := make([]int, n)
	for _, ev := range events {
		seq, err := strconv.Atoi(fmt.Sprint(ev["seq"]))
		if err != nil || seq < 0 || seq >= n {
			t.Fatalf("unexpected event %v", ev)
		}
		seen[seq]++
	}
	for _, c := range seen {
		switch {
		case c == 0:
			missing++
		case c > 1:
			duplicated += c - 1
		}
	}
	return missing, duplicated
}

// The crash of issue 10: Axiom answers 503, the sidecar reads 20,000 CRI
// lines (and commits their offsets), is killed with SIGKILL, and restarts on
// the same state folder once Axiom is back. The lines waited in the
// persistent sending queue: all 20,000 arrive, once.
func TestKillDuringOutageLosesNothing(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fake.Outage("", axiomtest.Status(503))
	pod, state := newPodLogs(t), t.TempDir()
	const n = 20000
	pod.write(0, n)
	env, metricsPort := pod.kubernetesEnv(t, fake, state)

	s := StartSidecar(t, "", kubernetesArgs, WithEnv(env...))
	waitAccepted(t, s, metricsPort, n)
	s.Kill(t)
	if got := fake.EventCount("logs"); got != 0 {
		t.Fatalf("%d events arrived during the outage", got)
	}

	fake.EndOutage("")
	s = StartSidecar(t, "", kubernetesArgs, WithEnv(env...))
	if err := fake.WaitEvents("logs", n, 60*time.Second); err != nil {
		t.Fatalf("after the restart: %v (have %d of %d)", err, fake.EventCount("logs"), n)
	}
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if missing, dup := countSeqs(t, fake.Events("logs"), n); missing != 0 || dup != 0 {
		t.Fatalf("%d lines missing, %d duplicated", missing, dup)
	}
}

// SIGKILL at random moments (during startup, reading, sending, retrying)
// while the app keeps writing and Axiom flaps between down, 503 and up:
// after the last restart every line arrives. Duplicates are logged: lines
// read again from an offset saved before the kill, and requests Axiom took
// whose answer the kill cut off.
func TestRepeatedKillsWhileAxiomFlapsLoseNothing(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	pod, state := newPodLogs(t), t.TempDir()
	env, _ := pod.kubernetesEnv(t, fake, state)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 10))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)
	rng = rand.New(rand.NewPCG(seed, 10))

	const kills, perRun = 6, 3000
	written := 0
	for run := range kills {
		switch run % 3 {
		case 0:
			fake.Outage("", axiomtest.Status(503))
		case 1:
			fake.Outage("", axiomtest.ConnReset())
		default:
			fake.EndOutage("")
		}
		s := StartSidecar(t, "", kubernetesArgs, WithEnv(env...))
		deadline := time.Now().Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
		for time.Now().Before(deadline) {
			next := min(written+100, (run+1)*perRun)
			pod.write(written, next)
			written = next
			time.Sleep(10 * time.Millisecond)
		}
		s.Kill(t)
	}
	pod.write(written, kills*perRun)
	const n = kills * perRun

	fake.EndOutage("")
	s := StartSidecar(t, "", kubernetesArgs, WithEnv(env...))
	s.WaitOutput(t, "Everything is ready")
	// Lines sent twice count towards any total, so wait for each line.
	waitArrived(t, fake, "logs", n, func(int) bool { return true })
	if code := s.Stop(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	missing, dup := countSeqs(t, fake.Events("logs"), n)
	t.Logf("%d lines written, %d kills: %d missing, %d duplicated", n, kills, missing, dup)
	if missing != 0 {
		t.Fatalf("%d of %d lines never arrived", missing, n)
	}
}
