package axiomexporter

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/loadgen"
	"github.com/sidecarhq/sidecar/internal/rawevent"
	"github.com/sidecarhq/sidecar/internal/setupcheck"
)

// bodyRecorder is an ingest endpoint that keeps each zstd request body as
// sent and accepts it (no JSON answer: every event counts as ingested).
type bodyRecorder struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newBodyRecorder(t *testing.T) *bodyRecorder {
	r := &bodyRecorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil || req.Header.Get("Content-Encoding") != "zstd" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *bodyRecorder) sent() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

// referenceDecode decodes body with the reference zstd implementation (the
// zstd command, not the Go library that encodes it).
func referenceDecode(t *testing.T, body []byte) []byte {
	t.Helper()
	zstdCmd, err := exec.LookPath("zstd")
	if err != nil {
		setupcheck.Missing(t, "the zstd command")
	}
	cmd := exec.Command(zstdCmd, "-d", "-c", "-q")
	cmd.Stdin = bytes.NewReader(body)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zstd -d on a %d-byte body: %v: %s", len(body), err, stderr.String())
	}
	return out.Bytes()
}

// TestSentBodiesDecodeWithReferenceZstd holds the logs' request bodies,
// exactly as sent, to the reference zstd: requests of many 128 KiB blocks
// that match across blocks, without the content checksum (the frame
// header's Content_Checksum_flag is 0, RFC 8878 3.1.1.1.1), decode to the
// NDJSON of the lines in their order.
func TestSentBodiesDecodeWithReferenceZstd(t *testing.T) {
	srv := newBodyRecorder(t)
	const lines = 8000 // ~2.6 MB of NDJSON: two requests at the default budget
	gen := loadgen.NewPino(1)
	at := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	var want strings.Builder
	ld := stdoutRecords(lines, func(int) string {
		line := string(gen.Append(nil, at))
		want.WriteString(line)
		return strings.TrimSuffix(line, "\n")
	}, nil, nil)
	rawevent.MarkOneLineScope(ld.ResourceLogs().At(0).ScopeLogs().At(0))
	exp := startLogs(t, newHarness(), testConfig(srv.URL))
	if err := exp.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	bodies := srv.sent()
	if len(bodies) < 2 {
		t.Fatalf("%d requests, want at least 2", len(bodies))
	}
	var got []byte
	for i, body := range bodies {
		// Magic number (4 bytes), then the Frame_Header_Descriptor.
		if len(body) < 5 || body[4]&0x04 != 0 {
			t.Errorf("request %d: frame header %x has the content checksum flag set", i, body[:min(len(body), 5)])
		}
		got = append(got, referenceDecode(t, body)...)
	}
	if string(got) != want.String() {
		t.Errorf("the decoded requests (%d bytes) are not the lines' NDJSON (%d bytes)", len(got), want.Len())
	}
}

// TestTokenCheckBodyIsAnEmptyFrame: check_token's request holds no event,
// but its body is still zstd (a frame of no content), which the reference
// decoder accepts; an empty body is not (zstd -d: unexpected end of file).
func TestTokenCheckBodyIsAnEmptyFrame(t *testing.T) {
	srv := newBodyRecorder(t)
	cfg := testConfig(srv.URL)
	cfg.CheckToken = true
	startLogs(t, newHarness(), cfg)
	waitUntil(t, func() bool { return len(srv.sent()) == 1 })
	if got := referenceDecode(t, srv.sent()[0]); len(got) != 0 {
		t.Errorf("the check's body decodes to %q, want nothing", got)
	}
}

// BenchmarkCompressBatch is the exporter's compression alone: one request
// of stdin's events (internal/loadgen's pino lines, the NDJSON as
// pushLogs writes it) at the default budget's batch size, compressed by a
// pooled encoder as send does. It reports the bytes sent per event beside
// the time; count instructions per event under valgrind by differencing
// two -test.benchtime counts (bench/count-logpath.sh shows the pattern).
func BenchmarkCompressBatch(b *testing.B) {
	maxBytes := int(NewFactory().CreateDefaultConfig().(*Config).batchBytes())
	gen := loadgen.NewPino(1)
	at := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	ld := stdoutRecords(maxBytes/200, func(i int) string {
		return strings.TrimSuffix(string(gen.Append(nil, at.Add(time.Duration(i)*50*time.Microsecond))), "\n")
	}, nil, nil)
	sl := ld.ResourceLogs().At(0).ScopeLogs().At(0)
	rawevent.MarkOneLineScope(sl)
	enc := newEncoderPool().get()
	events := 0
	for lrs := sl.LogRecords(); events < lrs.Len(); events++ {
		next := appendEvent(enc.events, lrs.At(events), &eventScope{raw: true, oneLine: true}, &enc.attrs, at)
		if len(next) > maxBytes || events == maxEventsPerRequest {
			break
		}
		enc.events = next
	}
	b.SetBytes(int64(len(enc.events)))
	b.ReportAllocs()
	for b.Loop() {
		enc.compressed = enc.zstd.EncodeAll(enc.events, enc.compressed[:0])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
	b.ReportMetric(float64(len(enc.compressed))/float64(events), "bytes/event")
}
