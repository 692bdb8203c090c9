package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/bench/internal/procstat"
	"github.com/sidecarhq/sidecar/internal/setupcheck"
)

func TestRotateRunsEveryModeInEveryPositionAlike(t *testing.T) {
	modes := []string{"direct", "otlp", "stdout"}
	at := map[string][]int{}
	for round := range 2 * len(modes) {
		order := rotate(modes, round)
		if len(order) != len(modes) {
			t.Fatalf("round %d: %v", round, order)
		}
		for i, m := range order {
			at[m] = append(at[m], i)
		}
	}
	for _, m := range modes {
		count := map[int]int{}
		for _, i := range at[m] {
			count[i]++
		}
		for i := range modes {
			if count[i] != 2 {
				t.Errorf("%s ran %d times at position %d in %d rounds, want 2", m, count[i], i, 2*len(modes))
			}
		}
	}
	if strings.Join(modes, ",") != "direct,otlp,stdout" {
		t.Errorf("rotate changed its input: %v", modes)
	}
}

func TestReportGivesMediansAndPairedRatiosPerRound(t *testing.T) {
	o := options{requests: 1000, warmup: 0, rounds: 3, conc: 1}
	var results []result
	// stdout is 10% cheaper than otlp in each round while the machine's
	// speed drifts 2x across rounds; one round's peak RSS is an outlier.
	// After the full collections, stdout's RSS and retained heap grow less
	// than otlp's, and it retains 2 MiB less at the end of every round.
	peaks := []int64{100 * 1024, 140 * 1024, 95 * 1024}
	means := []int64{80 * 1024, 90 * 1024, 70 * 1024}
	const mb = 1 << 20
	gcRSS := []int64{100 * mb, 110 * mb, 104 * mb}
	for round, scale := range []float64{1, 2, 1.5} {
		results = append(results,
			result{runtime: "node", mode: "otlp", round: round, seconds: 1, appCPU: 0.30 * scale, spans: 7000, appPeak: peaks[round], rssMean: means[round] + 10*1024,
				gc0: memory{RSS: gcRSS[round], Heap: 12 * mb}, gc1: memory{RSS: gcRSS[round] + 6*mb, Heap: 14*mb + mb/2}},
			result{runtime: "node", mode: "stdout", round: round, seconds: 1, appCPU: 0.27 * scale, spans: 7000, appPeak: peaks[round], rssMean: means[round],
				gc0: memory{RSS: gcRSS[round], Heap: 10 * mb}, gc1: memory{RSS: gcRSS[round] + int64(round)*mb, Heap: 12*mb + mb/2}})
	}
	var b strings.Builder
	report(&b, o, results)
	out := b.String()
	for _, want := range []string{
		"| node | otlp | 1000 | 0.450 | 0.300-0.600 | 67% | 0.300 / 0.600 / 0.450 | 0 / 0 / 0 | 90 | 100 (140) |",
		"| node | stdout | 1000 | 0.405 | 0.270-0.540 | 67% | 0.270 / 0.540 / 0.405 | 0 / 0 / 0 | 80 | 100 (140) |",
		"| node | stdout / otlp | 0.900 | 0.90-0.90 | 0.90 / 0.90 / 0.90 |",
		"| node | otlp | 110 | 6 / 6 / 6 | 14.5 | 2.5 / 2.5 / 2.5 |",
		"| node | stdout | 106 | 0 / 1 / 2 | 12.5 | 2.5 / 2.5 / 2.5 |",
		"| node | stdout − otlp | -10.0 (-10.0 to -10.0) | -5.0 (-6.0 to -4.0) | -2.0 (-2.0 to -2.0) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// The example app, run as measure runs it, reports its memory after a full
// collection whenever it is probed, under both runtimes; without
// APPCOST_MEMORY_FILE (its default) it has no handler for the signal.
func TestProbeMemoryReportsTheExampleAppsMemoryAfterAFullCollection(t *testing.T) {
	appDir, err := filepath.Abs("../../examples/node-app")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(appDir, "node_modules/@sidecarhq/otel-stdout")); err != nil {
		setupcheck.Missing(t, "the example app's node_modules")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		setupcheck.Missing(t, "redis-server")
	}
	redis, stopRedis, err := startRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stopRedis()
	for _, rt := range []string{"node", "bun"} {
		t.Run(rt, func(t *testing.T) {
			bin, err := runtimeBinary(appDir, rt)
			if err != nil {
				setupcheck.Missing(t, rt)
			}
			memFile := filepath.Join(t.TempDir(), "memory.jsonl")
			app, done := startApp(t, appCommand(appDir, rt, bin, memFile), redis)
			for nth := 1; nth <= 2; nth++ {
				m, err := probeMemory(app.Process, memFile, nth, done)
				if err != nil {
					t.Fatalf("probe %d: %v", nth, err)
				}
				s, err := procstat.Read(app.Process.Pid)
				if err != nil {
					t.Fatal(err)
				}
				// The app's objects take a few MB, all inside its RSS,
				// which the app read as /proc reads it.
				if m.Heap < 1<<20 || m.Heap >= m.RSS {
					t.Errorf("probe %d: heap %d bytes, RSS %d", nth, m.Heap, m.RSS)
				}
				if rss := s.RSSKB << 10; m.RSS < rss/2 || m.RSS > 2*rss {
					t.Errorf("probe %d: RSS %d bytes, /proc says %d", nth, m.RSS, rss)
				}
			}

			app, done = startApp(t, appCommand(appDir, rt, bin, ""), redis) // empty: unset
			app.Process.Signal(syscall.SIGUSR2)
			select {
			case err := <-done:
				if !errors.As(err, new(*exec.ExitError)) {
					t.Errorf("without APPCOST_MEMORY_FILE, SIGUSR2: %v, want the signal's default action (exit)", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("without APPCOST_MEMORY_FILE the app handles SIGUSR2")
			}
		})
	}
}

// startApp starts the example app on a free port, on redis, and waits until
// it listens; done receives its exit.
func startApp(t *testing.T, app *exec.Cmd, redis string) (*exec.Cmd, chan error) {
	t.Helper()
	addr := freeAddr()
	_, port, _ := net.SplitHostPort(addr)
	app.Env = append(app.Env, "PORT="+port, "REDIS_URL=redis://"+redis, "TELEMETRY=stdout")
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Wait() }()
	t.Cleanup(func() { app.Process.Kill() })
	if err := waitDial(addr, done); err != nil {
		t.Fatal(err)
	}
	return app, done
}
