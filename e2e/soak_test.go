package e2e

import (
	"bufio"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// soakFor is the short soak's length; bench/soak.sh runs the long one (30
// minutes) with the same load.
const soakFor = 75 * time.Second

// The short soak: the sidecar (embedded default + stdin) at 5,000 pino
// lines/s on stdin plus 2,000 spans/s over OTLP/HTTP for 75 s. Its RSS
// stays under the 96 MB budget throughout; its live Go heap (what the
// runtime's own trace, GODEBUG=gctrace=1, says each collection left) is no
// higher in the last third of the run than in the middle third, give or take
// 2 MiB (medians: one collection that caught a batch in flight is not a
// trend); and every line and span arrives.
func TestShortSoakKeepsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("a 75 s soak; skipped with -short")
	}
	fake := axiomtest.NewForTest(t, axiomtest.WithCountOnly())
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir(), "GODEBUG=gctrace=1")
	httpAddr := envValue(env, "SIDECAR_OTLP_HTTP_ENDPOINT")
	s := StartSidecar(t, "", WithArgs("--config", "embedded:default", "--config", "embedded:stdin"), WithEnv(env...), WithStdin())
	s.WaitListening(t, httpAddr)
	peakRSS := watchPeakRSS(s)

	const linesPerSec, spansPerSec = 5000, 2000
	pino, gen := loadgen.NewPino(1), loadgen.NewSpans(2)
	w := bufio.NewWriterSize(s.Stdin, 256<<10)
	var buf []byte
	linesSent, spansSent := 0, 0
	start := time.Now()
	for now := start; now.Sub(start) < soakFor; now = time.Now() {
		elapsed := now.Sub(start).Seconds()
		for due := int(elapsed * linesPerSec); linesSent < due; linesSent++ {
			buf = pino.Append(buf[:0], now)
			if _, err := w.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if due := int(elapsed * spansPerSec); due-spansSent >= loadgen.SpansPerRequest {
			td := gen.Requests((due-spansSent)/loadgen.SpansPerRequest, now)
			postTraces(t, httpAddr, td)
			spansSent += td.SpanCount()
		}
		time.Sleep(100 * time.Millisecond)
	}
	code := s.EndInput(t, 120*time.Second)
	rss := peakRSS()

	middle, last := liveHeapMedians(t, s.Logs(), soakFor)
	st := fake.Stats()
	t.Logf("%v at %d lines/s + %d spans/s: %d lines and %d spans sent, %d events and %d spans arrived; peak RSS %.1f MB; live heap %d MB in the middle third, %d MB in the last (medians)",
		soakFor, linesPerSec, spansPerSec, linesSent, spansSent, st.Total.Events, st.Total.Spans, float64(rss)/1e6, middle, last)
	if code != 0 {
		t.Errorf("exit code %d at the end of stdin", code)
	}
	if rss > 96e6 {
		t.Errorf("peak RSS %.1f MB over the 96 MB budget", float64(rss)/1e6)
	}
	if last > middle+2 {
		t.Errorf("the live heap grew from %d MB to %d MB after warm-up", middle, last)
	}
	if st.Total.Events != int64(linesSent) || st.Total.Spans != int64(spansSent) {
		t.Errorf("sent %d lines and %d spans, %d events and %d spans arrived", linesSent, spansSent, st.Total.Events, st.Total.Spans)
	}
}

// gcLine is one collection in the runtime's gctrace: when (seconds since
// start) and the live heap it left (the third of "a->b->c MB", in MiB).
var gcLine = regexp.MustCompile(`gc \d+ @([0-9.]+)s .*? \d+->\d+->(\d+) MB`)

// liveHeapMedians returns the median live heap after the collections of
// the middle and of the last third of a run of length d.
func liveHeapMedians(t *testing.T, logs string, d time.Duration) (middle, last int) {
	t.Helper()
	var parts [3][]int
	for _, m := range gcLine.FindAllStringSubmatch(logs, -1) {
		at, _ := strconv.ParseFloat(m[1], 64)
		live, _ := strconv.Atoi(m[2])
		parts[min(2, int(at*3/d.Seconds()))] = append(parts[min(2, int(at*3/d.Seconds()))], live)
	}
	median := func(xs []int) int {
		if len(xs) == 0 {
			t.Fatalf("no collections in a third of the run in the gctrace output")
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	return median(parts[1]), median(parts[2])
}
