package e2e

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// partsLine is a pino line of about 1,000,000 bytes: two make one stdin
// batch (1 MiB of lines, cut after the line that reaches it), which weighs
// twice what the smallest budget's queue admits, so each batch goes in
// parts.
func partsLine(seq int) string {
	return fmt.Sprintf(`{"level":30,"time":%d,"pid":1,"hostname":"h","seq":%d,"pad":"%s","msg":"large"}`,
		1767225600000+seq, seq, strings.Repeat("q", 1000000-120))
}

// partsWriter writes numbered large lines to w until stop or a failed write
// (the sidecar was killed); it returns the next seq.
func partsWriter(w io.Writer, next int, stop <-chan struct{}) int {
	bw := bufio.NewWriterSize(w, 1<<20)
	for {
		select {
		case <-stop:
			return next
		default:
		}
		fmt.Fprintln(bw, partsLine(next))
		if err := bw.Flush(); err != nil {
			return next + 1 // it may have reached the pipe in part
		}
		next++
	}
}

// SIGKILL at random moments while ~1 MB lines go out in parts at the
// smallest budget, Axiom slow (each request 300 ms) so that parts wait in
// the queue at the kills. What the pipeline took before each kill
// (otelcol_receiver_accepted_log_records, which counts a partly taken
// batch's taken part) is a prefix of the lines read, in order. With the
// queue on disk every taken line arrives after the restarts, duplicates
// being the requests in flight at the kills (one request, one line, each);
// with it in memory the lines taken but still queued or in flight die with
// the process (counted: at most the queue, the batch being built and the
// request in flight, three lines a kill) and nothing arrives twice.
func TestKillsWhileLargeLinesGoInParts(t *testing.T) {
	for _, tc := range []struct {
		name             string
		onDisk           bool
		lostPerKill      int // taken lines a kill may cost
		duplicatePerKill int
	}{
		{"disk queue", true, 0, 1},
		{"memory queue", false, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := axiomtest.NewForTest(t)
			fake.Outage("", axiomtest.Slow(300*time.Millisecond))
			metrics := FreeAddr(t)
			_, metricsPort, _ := strings.Cut(metrics, ":")
			exporter := yamlMap{"memory": "8704KiB", "sending_queue": yamlMap{"block_on_overflow": false}}
			cfg := stdinConfig(fake.URL(), yamlMap{"when_full": "block"}, exporter)
			if tc.onDisk {
				exporter["disk"] = "2176KiB"
				exporter["sending_queue"] = yamlMap{"storage": "dir_storage"}
				cfg.extensions = yamlMap{"dir_storage": yamlMap{"directory": t.TempDir()}}
			}
			cfg.metrics = metrics
			c := newChaos(t, fake)
			const kills = 4
			var runs takenRuns
			next, inParts := 0, 0
			for k := range kills {
				s := StartSidecar(t, cfg.yaml(), WithStdin())
				stop := make(chan struct{})
				done := make(chan int)
				base := next
				go func() { done <- partsWriter(s.Stdin, base, stop) }()
				time.Sleep(time.Duration(800+c.rng.IntN(2500)) * time.Millisecond)
				accepted := int(scrapeCounter(metricsPort, "otelcol_receiver_accepted_log_records", `receiver="stdout"`))
				s.Kill(t)
				inParts += strings.Count(s.Logs(), "element size too large") // the queue's refusal of a whole batch
				close(stop)
				next = <-done
				runs = append(runs, takenRun{base, accepted})
				t.Logf("run %d: lines %d..%d written, %d taken in before the kill", k, base, next, accepted)
			}
			fake.EndOutage("")
			s := StartSidecar(t, cfg.yaml(), WithStdin())
			final := next
			for i := range 2 {
				fmt.Fprintln(s.Stdin, partsLine(final+i))
			}
			next = final + 2
			taken := func(seq int) bool { return seq >= final || runs.took(seq) }
			waitArrived(t, fake, "app-logs", next, func(seq int) bool { return seq >= final || tc.onDisk && taken(seq) })
			settle(fake, "app-logs")
			s.Stdin.Close()
			if code, err := s.Wait(120 * time.Second); err != nil || code != 0 {
				t.Errorf("the last run, which delivered everything, exited %d, %v", code, err)
			}
			seen, r := tally(t, fake, "app-logs", next)
			lostTaken, neverTaken := 0, 0
			for seq, n := range seen {
				switch {
				case n == 0 && taken(seq):
					lostTaken++
				case n == 0:
					neverTaken++
				}
			}
			t.Logf("%d kills: %v; %d taken lines lost, %d never taken (in the pipe or being read at a kill); %d batches went in parts",
				kills, r, lostTaken, neverTaken, inParts)
			if inParts == 0 {
				t.Error("no batch was refused whole by the queue: the test did not exercise the parts")
			}
			if lostTaken > tc.lostPerKill*kills {
				t.Errorf("%d lines the pipeline had taken were lost, more than %d a kill", lostTaken, tc.lostPerKill)
			}
			if r.duplicated > tc.duplicatePerKill*kills {
				t.Errorf("%d lines arrived twice, more than %d a kill", r.duplicated, tc.duplicatePerKill)
			}
		})
	}
}
