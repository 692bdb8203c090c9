package decode

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/loadgen"
	"github.com/sidecarhq/sidecar/internal/recordsize"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// The axiom exporter weighs the records this decoder makes by
// recordsize.StrBody instead of pdata's sizer: on real records (pino request
// logs with their errors, lines with trace and span ids, other shapes,
// text, a JSON line from a stream, whose raw scope carries the stream, and
// lines whose bodies cross each varint length of a body's prefixes) the two
// agree byte for byte. Records with attributes of their own (a text line's
// stream, a cut line) are pdata's to size.
func TestRecordsizeIsPdatasSizeOfDecodedRecords(t *testing.T) {
	var lines []stream.Line
	add := func(s string) { lines = append(lines, stream.Line{Data: []byte(s)}) }
	gen := loadgen.NewPino(1)
	for range 500 {
		add(strings.TrimSuffix(string(gen.Append(nil, testNow)), "\n"))
	}
	for _, s := range []string{
		`{"level":30,"time":1764615600000,"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331","msg":"traced"}`,
		`{"level":"ERROR","traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","msg":"camel"}`,
		`{"msg":"no level, no time"}`,
		`{"severity":"WARNING","timestamp":"2026-12-01T10:00:00.123456789Z","message":"gcp"}`,
		`{"level":"` + strings.Repeat("v", 300) + `","msg":"a long level name"}`,
		`{}`,
		`plain text`,
		`{"broken":`,
	} {
		add(s)
	}
	// Bodies of every length around each edge: a pino line's body is its
	// line plus a constant (`time` renamed, the level named).
	const head, tail = `{"level":30,"time":1764615600000,"msg":"`, `"}`
	grow := len(decodeBody(t, head+tail)) - len(head+tail)
	for _, edge := range []int{1 << 7, 1 << 14, 1 << 21} {
		for body := edge - 6; body <= edge+2; body++ {
			add(head + strings.Repeat("m", body-grow-len(head+tail)) + tail)
		}
	}
	lines = append(lines, stream.Line{Data: []byte(`{"level":30,"msg":"from a stream"}`), Stream: "stdout"},
		stream.Line{Data: []byte("text from a stream"), Stream: "stderr"})

	var sizer plog.ProtoMarshaler
	out := New(Options{}).Decode(stream.Batch{Lines: lines}, nil, testNow)
	counted := 0
	for _, rl := range out.Logs.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				if lr.Body().Type() != pcommon.ValueTypeStr || lr.Attributes().Len() > 0 {
					continue
				}
				counted++
				if got, want := recordsize.StrBody(lr, len(lr.Body().Str())), sizer.LogRecordSize(lr); got != want {
					t.Errorf("body %.80q (%d bytes): recordsize %d, pdata %d", lr.Body().Str(), len(lr.Body().Str()), got, want)
				}
			}
		}
	}
	if want := len(lines) - 1; counted != want {
		t.Errorf("counted %d records, want %d (all but the text line with a stream)", counted, want)
	}
}

// decodeBody is the body the decoder makes of one line.
func decodeBody(t *testing.T, line string) string {
	t.Helper()
	_, recs := decodeLines(t, Options{}, stream.Line{Data: []byte(line)})
	if len(recs) != 1 {
		t.Fatalf("%q decoded to %d records", line, len(recs))
	}
	return recs[0].body
}
