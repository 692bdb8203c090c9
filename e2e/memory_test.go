package e2e

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// peakRSS is the process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// The memory promise of issue 10: with the default budgets the sidecar's
// peak RSS stays at or under 96 MB whatever the record size, here stack
// traces of 18 KB and records of 1 MiB (the line limit raised to Axiom's
// field limit) arriving on stdin at full speed while Axiom is down. What
// Axiom does not take waits on disk, not in memory; with a state folder
// that cannot be used, in memory within dir_storage's fallback bound, and
// the rest is dropped (counted) by stdin's when_full policy.
func TestMemoryBudgetHoldsWithLargeLinesAndAxiomDown(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	const budget = 96_000_000
	for _, tc := range []struct {
		name      string
		lineBytes int
		total     int // bytes written
		unusable  bool
	}{
		{"18KB-lines", 18 << 10, 96 << 20, false},
		{"1MiB-lines", 1 << 20, 96 << 20, false},
		{"1MiB-lines-state-folder-unusable", 1 << 20, 96 << 20, true},
		{"18KB-lines-state-folder-unusable", 18 << 10, 96 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := axiomtest.NewForTest(t)
			fake.Outage("", axiomtest.Status(503))
			state := t.TempDir()
			if tc.unusable {
				state = unusableStateFolder(t)
			}
			env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+state)
			metricsPort := envValue(env, "SIDECAR_METRICS_PORT")
			s := StartSidecar(t, "", WithStdin(), WithEnv(env...),
				WithArgs("--config", "embedded:stdin", "--set", "receivers::stdout::max_line_bytes=1048576"))
			w := bufio.NewWriterSize(s.Stdin, 1<<20)
			pad := strings.Repeat("x", tc.lineBytes-80)
			lines := tc.total / tc.lineBytes
			for i := range lines {
				fmt.Fprintf(w, `{"level":50,"time":%d,"seq":%d,"msg":"boom","stack":"%s"}`+"\n", 1767225600000+i, i, pad)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if tc.unusable {
				waitRead(t, s, metricsPort, lines) // some are dropped, some wait in stdin's buffer
			} else {
				waitAccepted(t, s, metricsPort, lines)
			}
			peak := peakRSS(t, s.cmd.Process.Pid)
			t.Logf("%d lines of %d bytes with Axiom down: peak RSS %.1f MB", lines, tc.lineBytes, float64(peak)/1e6)
			if peak > budget {
				t.Errorf("peak RSS %d bytes, over the %d-byte budget", peak, budget)
			}
			if got := fake.EventCount("logs"); got != 0 {
				t.Errorf("%d events arrived while Axiom was down", got)
			}
			s.Kill(t)
		})
	}
}
