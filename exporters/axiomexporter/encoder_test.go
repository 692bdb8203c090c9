package axiomexporter

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
)

// goroutines returns the stack of every goroutine, one string each.
func goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

const serveFrame = "axiomexporter.(*encoder).serve"

func countEncoderGoroutines() int {
	n := 0
	for _, g := range goroutines() {
		if strings.Contains(g, serveFrame) {
			n++
		}
	}
	return n
}

// encoderGoroutines counts the goroutines of encoders, waiting up to a
// few seconds for the count to reach want (a closed encoder's goroutine
// ends a moment after close returns).
func encoderGoroutines(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := countEncoderGoroutines()
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settledEncoderGoroutines counts the goroutines of encoders once the
// count holds for 50 ms: an earlier test's closed encoders may still be
// ending.
func settledEncoderGoroutines() int {
	n, same := countEncoderGoroutines(), 0
	for same < 5 {
		time.Sleep(10 * time.Millisecond)
		if m := countEncoderGoroutines(); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}

// Each push runs on a pooled encoder's long-lived goroutine, whichever
// goroutine asked for it: exporterhelper's batcher starts a new one for
// every batch, whose stack the push would grow by copying every time.
func TestPushesRunOnTheEncodersGoroutine(t *testing.T) {
	var (
		mu      sync.Mutex
		pushers []string // the header of the goroutine that pushed each request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, g := range goroutines() { // the push waits for this answer
			if strings.Contains(g, "(*logsExporter).pushLogs") {
				header, _, _ := strings.Cut(g, "\n")
				if !strings.Contains(g, serveFrame) {
					header += " (not an encoder's)"
				}
				mu.Lock()
				pushers = append(pushers, header)
				mu.Unlock()
			}
		}
	}))
	t.Cleanup(srv.Close)
	e := startLogsExporter(t, testConfig(srv.URL))
	for range 3 {
		done := make(chan error)
		go func() { done <- e.pushRequest(context.Background(), e.weigher.request(stringLogs(3))) }()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pushers) != 3 {
		t.Fatalf("saw %d pushing goroutines during 3 requests, want 3: %q", len(pushers), pushers)
	}
	for _, p := range pushers {
		if p != pushers[0] || strings.HasSuffix(p, "(not an encoder's)") {
			t.Fatalf("pushes ran on %q, want the same encoder's goroutine each time", pushers)
		}
	}
}

// The pool keeps at most its capacity of encoders, and their goroutines:
// an encoder it does not keep, and every one once it is closed, ends its
// goroutine.
func TestEncoderGoroutinesEndWithThePool(t *testing.T) {
	before := settledEncoderGoroutines()
	p := newEncoderPool()
	encs := make([]*encoder, cap(p.free)+3)
	for i := range encs {
		encs[i] = p.get()
	}
	if got := encoderGoroutines(before + len(encs)); got != before+len(encs) {
		t.Fatalf("%d encoder goroutines with %d encoders out, want %d", got, len(encs), before+len(encs))
	}
	for _, enc := range encs {
		p.put(enc)
	}
	if got := encoderGoroutines(before + cap(p.free)); got != before+cap(p.free) {
		t.Fatalf("%d encoder goroutines with %d pooled, want %d", got, cap(p.free), before+cap(p.free))
	}
	p.close()
	late := p.get() // a get after close (a loss report at shutdown) still works
	late.run(func() {})
	p.put(late)
	if got := encoderGoroutines(before); got != before {
		t.Fatalf("%d encoder goroutines after the pool closed, want %d", got, before)
	}
}

// Shutting the exporter down ends its encoders' goroutines.
func TestShutdownEndsTheEncodersGoroutines(t *testing.T) {
	before := settledEncoderGoroutines()
	srv := newBodyRecorder(t)
	e, err := newLogsExporter(testConfig(srv.URL), newHarness().set)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := e.pushRequest(context.Background(), e.weigher.request(stringLogs(3))); err != nil {
		t.Fatal(err)
	}
	if got := encoderGoroutines(before + 1); got != before+1 {
		t.Fatalf("%d encoder goroutines after a push, want %d", got, before+1)
	}
	if err := e.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := encoderGoroutines(before); got != before {
		t.Fatalf("%d encoder goroutines after shutdown, want %d", got, before)
	}
}
