package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/rawevent"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// decoded is one record as a test sees it.
type decoded struct {
	raw  bool
	body string
	lr   plog.LogRecord
}

func decodeLines(t testing.TB, opts Options, lines ...stream.Line) (Output, []decoded) {
	t.Helper()
	out := New(opts).Decode(stream.Batch{Lines: lines}, nil, testNow)
	var recs []decoded
	rls := out.Logs.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			sl := sls.At(j)
			for k := range sl.LogRecords().Len() {
				lr := sl.LogRecords().At(k)
				recs = append(recs, decoded{raw: rawevent.IsRawScope(sl), body: lr.Body().Str(), lr: lr})
			}
		}
	}
	return out, recs
}

func decodeOne(t *testing.T, line string) decoded {
	t.Helper()
	_, recs := decodeLines(t, Options{Traces: true}, stream.Line{Data: []byte(line)})
	if len(recs) != 1 {
		t.Fatalf("want 1 record for %q, got %d", line, len(recs))
	}
	return recs[0]
}

func parseJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, s)
	}
	return m
}

func mustJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(parseJSON(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodeFormats(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantBody string // compared as JSON
		wantTime time.Time
		wantSev  plog.SeverityNumber
		wantText string
	}{
		{
			name:     "pino",
			line:     `{"level":30,"time":1764504000123,"pid":7,"hostname":"web-1","msg":"request done","req":{"id":1}}`,
			wantBody: `{"_time":1764504000123,"level":"info","pid":7,"hostname":"web-1","msg":"request done","req":{"id":1}}`,
			wantTime: time.UnixMilli(1764504000123),
			wantSev:  plog.SeverityNumberInfo, wantText: "info",
		},
		{
			name:     "pino error at 50",
			line:     `{"level":50,"time":1764504000000,"msg":"boom","err":{"type":"Error","message":"boom","stack":"Error: boom\n    at x (a.js:1:1)"}}`,
			wantBody: `{"_time":1764504000000,"level":"error","msg":"boom","err":{"type":"Error","message":"boom","stack":"Error: boom\n    at x (a.js:1:1)"}}`,
			wantTime: time.UnixMilli(1764504000000),
			wantSev:  plog.SeverityNumberError, wantText: "error",
		},
		{
			name:     "pino custom level 35 rounds up like mapLogLevel",
			line:     `{"level":35,"time":1764504000000,"msg":"x"}`,
			wantBody: `{"_time":1764504000000,"level":"warn","msg":"x"}`,
			wantTime: time.UnixMilli(1764504000000),
			wantSev:  plog.SeverityNumberWarn, wantText: "warn",
		},
		{
			name:     "pino level above 60 is silent",
			line:     `{"level":70,"time":1764504000000,"msg":"x"}`,
			wantBody: `{"_time":1764504000000,"level":"silent","msg":"x"}`,
			wantTime: time.UnixMilli(1764504000000),
			wantText: "silent",
		},
		{
			name:     "bunyan",
			line:     `{"name":"app","hostname":"h","pid":1,"level":40,"msg":"slow","time":"2026-11-30T11:59:58.250Z","v":0}`,
			wantBody: `{"name":"app","hostname":"h","pid":1,"level":"warn","msg":"slow","_time":"2026-11-30T11:59:58.250Z","v":0}`,
			wantTime: time.Date(2026, 11, 30, 11, 59, 58, 250e6, time.UTC),
			wantSev:  plog.SeverityNumberWarn, wantText: "warn",
		},
		{
			name:     "winston",
			line:     `{"level":"info","message":"listening","service":"api","timestamp":"2026-11-30T11:00:00.000Z"}`,
			wantBody: `{"_time":"2026-11-30T11:00:00.000Z","level":"info","message":"listening","service":"api","timestamp":"2026-11-30T11:00:00.000Z"}`,
			wantTime: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC),
			wantSev:  plog.SeverityNumberInfo, wantText: "info",
		},
		{
			name:     "zap float seconds give an RFC 3339 _time, ts is kept",
			line:     `{"level":"error","ts":1764504000.5,"caller":"main.go:12","msg":"failed","error":"eof"}`,
			wantBody: `{"level":"error","_time":"2025-11-30T12:00:00.5Z","ts":1764504000.5,"caller":"main.go:12","msg":"failed","error":"eof"}`,
			wantTime: time.Date(2025, 11, 30, 12, 0, 0, 5e8, time.UTC),
			wantSev:  plog.SeverityNumberError, wantText: "error",
		},
		{
			name:     "zap dpanic",
			line:     `{"level":"dpanic","ts":1764504000,"msg":"x"}`,
			wantBody: `{"level":"dpanic","_time":"2025-11-30T12:00:00Z","ts":1764504000,"msg":"x"}`,
			wantTime: time.Date(2025, 11, 30, 12, 0, 0, 0, time.UTC),
			wantSev:  plog.SeverityNumberFatal, wantText: "dpanic",
		},
		{
			name:     "logrus",
			line:     `{"level":"warning","msg":"disk low","time":"2026-11-30T13:00:00+01:00","free":"1G"}`,
			wantBody: `{"level":"warning","msg":"disk low","_time":"2026-11-30T13:00:00+01:00","free":"1G"}`,
			wantTime: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
			wantSev:  plog.SeverityNumberWarn, wantText: "warning",
		},
		{
			name:     "slog levels are kept as written, severity from the name",
			line:     `{"time":"2026-11-30T12:00:00.123456789Z","level":"INFO","msg":"hello","count":3}`,
			wantBody: `{"_time":"2026-11-30T12:00:00.123456789Z","level":"INFO","msg":"hello","count":3}`,
			wantTime: time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC),
			wantSev:  plog.SeverityNumberInfo, wantText: "INFO",
		},
		{
			name:     "slog offset level",
			line:     `{"time":"2026-11-30T12:00:00Z","level":"WARN+2","msg":"x"}`,
			wantBody: `{"_time":"2026-11-30T12:00:00Z","level":"WARN+2","msg":"x"}`,
			wantTime: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
			wantSev:  plog.SeverityNumberWarn, wantText: "WARN+2",
		},
		{
			name:     "ECS: log.level stands for level, no silent one is added",
			line:     `{"@timestamp":"2026-11-30T12:00:01.000Z","log.level":"ERROR","message":"db down","ecs.version":"1.6.0"}`,
			wantBody: `{"_time":"2026-11-30T12:00:01.000Z","@timestamp":"2026-11-30T12:00:01.000Z","log.level":"ERROR","message":"db down","ecs.version":"1.6.0"}`,
			wantTime: time.Date(2026, 11, 30, 12, 0, 1, 0, time.UTC),
			wantSev:  plog.SeverityNumberError, wantText: "ERROR",
		},
		{
			// pino 10.4 with a Google Cloud Logging formatter
			// (formatters.level returns {severity}), as it writes it.
			name:     "GCP severity gives the record its severity; the body gets silent as from the transport",
			line:     `{"severity":"ERROR","time":1796134457170,"pid":6506,"hostname":"vm","httpRequest":{"status":500},"message":"gcp error"}`,
			wantBody: `{"level":"silent","severity":"ERROR","_time":1796134457170,"pid":6506,"hostname":"vm","httpRequest":{"status":500},"message":"gcp error"}`,
			wantTime: time.UnixMilli(1796134457170),
			wantSev:  plog.SeverityNumberError, wantText: "ERROR",
		},
		{
			name:     "GCP WARNING and CRITICAL",
			line:     `{"severity":"WARNING","time":1796134457172,"pid":6506,"hostname":"vm","message":"gcp warn"}`,
			wantBody: `{"level":"silent","severity":"WARNING","_time":1796134457172,"pid":6506,"hostname":"vm","message":"gcp warn"}`,
			wantTime: time.UnixMilli(1796134457172),
			wantSev:  plog.SeverityNumberWarn, wantText: "WARNING",
		},
		{
			name:     "a level beside severity wins",
			line:     `{"severity":"CRITICAL","level":30,"time":1796134457172,"message":"x"}`,
			wantBody: `{"severity":"CRITICAL","level":"info","_time":1796134457172,"message":"x"}`,
			wantTime: time.UnixMilli(1796134457172),
			wantSev:  plog.SeverityNumberInfo, wantText: "info",
		},
		{
			name:     "a severity that is not a string is left alone",
			line:     `{"severity":500,"time":1796134457172,"message":"x"}`,
			wantBody: `{"level":"silent","severity":500,"_time":1796134457172,"message":"x"}`,
			wantTime: time.UnixMilli(1796134457172), wantText: "silent",
		},
		{
			name:     "no timestamp gets the transport time first",
			line:     `{"msg":"hi","level":"debug"}`,
			wantBody: `{"_time":"2026-11-30T12:00:00Z","msg":"hi","level":"debug"}`,
			wantTime: testNow,
			wantSev:  plog.SeverityNumberDebug, wantText: "debug",
		},
		{
			name:     "unparseable timestamp field is left alone",
			line:     `{"timestamp":"yesterday","msg":"hi"}`,
			wantBody: `{"_time":"2026-11-30T12:00:00Z","level":"silent","timestamp":"yesterday","msg":"hi"}`,
			wantTime: testNow, wantText: "silent",
		},
		{
			name:     "empty object",
			line:     ` { } `,
			wantBody: `{"_time":"2026-11-30T12:00:00Z","level":"silent"}`,
			wantTime: testNow, wantText: "silent",
		},
		{
			name:     "_time wins and time is dropped, as @axiomhq/pino's spread does",
			line:     `{"level":30,"time":1,"_time":"2026-11-30T10:00:00Z","msg":"x"}`,
			wantBody: `{"_time":"2026-11-30T10:00:00Z","level":"info","msg":"x"}`,
			wantTime: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
			wantSev:  plog.SeverityNumberInfo, wantText: "info",
		},
		{
			name:     "time dropped when it is the last member",
			line:     `{"_time":"2026-11-30T10:00:00Z","msg":"x","time":1}`,
			wantBody: `{"_time":"2026-11-30T10:00:00Z","level":"silent","msg":"x"}`,
			wantTime: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), wantText: "silent",
		},
		{
			name:     "duplicate keys: the last wins, as JSON.parse does",
			line:     `{"level":30,"time":1764504000000,"module":"db","module":"cache","msg":"a","level":50,"msg":"b"}`,
			wantBody: `{"_time":1764504000000,"level":"error","module":"cache","msg":"b"}`,
			wantTime: time.UnixMilli(1764504000000),
			wantSev:  plog.SeverityNumberError, wantText: "error",
		},
		{
			name:     "a user time key after pino's is the _time",
			line:     `{"level":30,"time":1764504000000,"time":"2026-11-30T10:00:00Z","msg":"x"}`,
			wantBody: `{"_time":"2026-11-30T10:00:00Z","level":"info","msg":"x"}`,
			wantTime: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
			wantSev:  plog.SeverityNumberInfo, wantText: "info",
		},
		{
			name:     "duplicates at the start and the end, escaped keys compare decoded",
			line:     `{"a":1,"\u0061":2,"b":3,"c":4,"c":5,"\u0074ime":1764504000000,"time":1764504000001,"b":6}`,
			wantBody: `{"a":2,"c":5,"_time":1764504000001,"b":6,"level":"silent"}`,
			wantTime: time.UnixMilli(1764504000001), wantText: "silent",
		},
		{
			name:     "a duplicate among plain keys, then an escaped key repeating a plain one",
			line:     `{"time":1764504000000,"c":4,"c":5,"\u0061":1,"a":2,"level":30}`,
			wantBody: `{"_time":1764504000000,"c":5,"a":2,"level":"info"}`,
			wantTime: time.UnixMilli(1764504000000),
			wantSev:  plog.SeverityNumberInfo, wantText: "info",
		},
		{
			name:     "formatters.level text is kept as written",
			line:     `{"level":"ERROR","time":1764504000000,"msg":"x"}`,
			wantBody: `{"_time":1764504000000,"level":"ERROR","msg":"x"}`,
			wantTime: time.UnixMilli(1764504000000),
			wantSev:  plog.SeverityNumberError, wantText: "ERROR",
		},
		{
			name:     "GCP severity without level: the body gets silent, as the transport's mapLogLevel(undefined)",
			line:     `{"severity":"ERROR","time":1764504000000,"msg":"x"}`,
			wantBody: `{"_time":1764504000000,"level":"silent","severity":"ERROR","msg":"x"}`,
			wantTime: time.UnixMilli(1764504000000),
			wantSev:  plog.SeverityNumberError, wantText: "ERROR",
		},
		{
			name:     "level values JavaScript compares as numbers",
			line:     `{"level":null,"time":1764504000000}`,
			wantBody: `{"_time":1764504000000,"level":"trace"}`,
			wantTime: time.UnixMilli(1764504000000),
			wantSev:  plog.SeverityNumberTrace, wantText: "trace",
		},
		{
			name:     "an array of one number",
			line:     `{"level":[50],"time":1764504000000}`,
			wantBody: `{"_time":1764504000000,"level":"error"}`,
			wantTime: time.UnixMilli(1764504000000),
			wantSev:  plog.SeverityNumberError, wantText: "error",
		},
		{
			name:     "an object level and an out of range number",
			line:     `{"level":{"n":1},"time":1764504000000,"x":1e400}`,
			wantBody: `{"_time":1764504000000,"level":"silent","x":1e400}`,
			wantTime: time.UnixMilli(1764504000000), wantText: "silent",
		},
		{
			name:     "nested time and level are not touched",
			line:     `{"time":1764504000000,"ctx":{"time":5,"level":10},"level":20}`,
			wantBody: `{"_time":1764504000000,"ctx":{"time":5,"level":10},"level":"debug"}`,
			wantTime: time.UnixMilli(1764504000000),
			wantSev:  plog.SeverityNumberDebug, wantText: "debug",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decodeOne(t, tt.line)
			if !r.raw {
				t.Fatalf("record is not in the raw-event scope")
			}
			if got, want := mustJSON(t, r.body), mustJSON(t, tt.wantBody); got != want {
				t.Errorf("body\n got %s\nwant %s", got, want)
			}
			if got := r.lr.Timestamp().AsTime(); !got.Equal(tt.wantTime) {
				t.Errorf("timestamp %v, want %v", got, tt.wantTime)
			}
			if got := r.lr.SeverityNumber(); got != tt.wantSev {
				t.Errorf("severity %v, want %v", got, tt.wantSev)
			}
			if got := r.lr.SeverityText(); got != tt.wantText {
				t.Errorf("severity text %q, want %q", got, tt.wantText)
			}
			if got := r.lr.ObservedTimestamp().AsTime(); !got.Equal(testNow) {
				t.Errorf("observed %v", got)
			}
		})
	}
}

// TestDecodeDropsFromTheComma: a superseded member after a kept one goes
// with the comma before it, found past the whitespace after the kept value;
// the rest of the line's bytes, whitespace too, stay as written.
func TestDecodeDropsFromTheComma(t *testing.T) {
	line := "{\"level\":30 ,\"msg\" : \"a\" \t, \"time\":1764504000000 , \"msg\":\"b\"}"
	want := "{\"level\":\"info\"  \t, \"_time\":1764504000000 , \"msg\":\"b\"}"
	if got := decodeOne(t, line).body; got != want {
		t.Errorf("body\n got %q\nwant %q", got, want)
	}
}

// TestDecodeSplicesLevelAndTime covers the lines whose level value and
// time key change, spliced without the list of edits when the level comes
// first and nothing is dropped or inserted (pino's), and the shapes that
// go through the list: the time first, adjacent members, whitespace, a
// string level, a dropped or superseded member, `_time` beside `time`.
func TestDecodeSplicesLevelAndTime(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"level":30,"time":1764504000000,"msg":"a"}`, `{"level":"info","_time":1764504000000,"msg":"a"}`},
		{`{"level":50,"time":1764504000000}`, `{"level":"error","_time":1764504000000}`},
		{"{ \"a\":1, \"level\" : 20 ,\t\"time\" :1764504000000.5 } ", "{ \"a\":1, \"level\" : \"debug\" ,\t\"_time\":1764504000000.5 }"},
		{`{"time":1764504000000,"level":40,"msg":"a"}`, `{"_time":1764504000000,"level":"warn","msg":"a"}`},
		{`{"level":"INFO","time":"2026-01-01T00:00:00Z"}`, `{"level":"INFO","_time":"2026-01-01T00:00:00Z"}`},
		{`{"level":30,"time":1,"level":40,"msg":"a"}`, `{"_time":1,"level":"warn","msg":"a"}`},
		{`{"level":30,"_time":5,"time":1764504000000}`, `{"level":"info","_time":5}`},
		{`{"level":30}`, `{"_time":"2026-11-30T12:00:00Z","level":"info"}`},
	} {
		if got := decodeOne(t, c.line).body; got != c.want {
			t.Errorf("%s: body\n got %s\nwant %s", c.line, got, c.want)
		}
	}
}

func TestDecodeTraceIDs(t *testing.T) {
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, line := range []string{
		`{"level":30,"time":1,"trace_id":"` + tid + `","span_id":"` + sid + `","msg":"x"}`,
		`{"level":30,"time":1,"traceId":"` + tid + `","spanId":"` + sid + `","msg":"x"}`,
		`{"level":30,"time":1,"trace_id":"nothex","traceId":"` + tid + `","span_id":"short","spanId":"` + sid + `"}`,
	} {
		r := decodeOne(t, line)
		if got := r.lr.TraceID().String(); got != tid {
			t.Errorf("%s: trace id %q", line, got)
		}
		if got := r.lr.SpanID().String(); got != sid {
			t.Errorf("%s: span id %q", line, got)
		}
		if !strings.Contains(r.body, tid) {
			t.Errorf("ids must stay in the body: %s", r.body)
		}
	}
	r := decodeOne(t, `{"trace_id":"zz","span_id":12}`)
	if !r.lr.TraceID().IsEmpty() || !r.lr.SpanID().IsEmpty() {
		t.Errorf("invalid ids must leave the record's ids empty")
	}
}

func TestDecodeText(t *testing.T) {
	lines := []stream.Line{
		{Data: []byte("Error: boom"), Stream: "stderr", Time: testNow.Add(-time.Second)},
		{Data: []byte("    at Object.<anonymous> (/app/index.js:3:9)\r")},
		{Data: []byte("panic: runtime error: index out of range [3] with length 3")},
		{Data: []byte(`{"unterminated": "json`)},
		{Data: []byte(`{"a":1} trailing`)},
		{Data: []byte(`[1,2,3]`)},
		{Data: []byte("bad \xff\xfe utf8 \xc3")},
		{Data: []byte("")},
		{Data: []byte("  \r")},
	}
	out, recs := decodeLines(t, Options{}, lines...)
	want := []string{
		"Error: boom",
		"    at Object.<anonymous> (/app/index.js:3:9)",
		"panic: runtime error: index out of range [3] with length 3",
		`{"unterminated": "json`,
		`{"a":1} trailing`,
		`[1,2,3]`,
		"bad \uFFFD utf8 \uFFFD",
	}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if r.raw {
			t.Errorf("record %d is marked raw", i)
		}
		if r.body != want[i] {
			t.Errorf("record %d body %q, want %q", i, r.body, want[i])
		}
	}
	if out.Stats.Text != 7 || out.Stats.Empty != 2 || out.Stats.JSON != 0 || out.Stats.Lines != 9 {
		t.Errorf("stats %+v", out.Stats)
	}
	if s, _ := recs[0].lr.Attributes().Get(AttrStream); s.Str() != "stderr" {
		t.Errorf("stream attribute %q", s.Str())
	}
	if got := recs[0].lr.Timestamp().AsTime(); !got.Equal(testNow.Add(-time.Second)) {
		t.Errorf("transport time not used: %v", got)
	}
	if got := recs[1].lr.Timestamp().AsTime(); !got.Equal(testNow) {
		t.Errorf("stdin line must get now: %v", got)
	}
	if recs[1].lr.Attributes().Len() != 0 {
		t.Errorf("no attributes expected without a stream")
	}
}

func TestDecodeRepairsUTF8InsideJSON(t *testing.T) {
	r := decodeOne(t, "{\"level\":30,\"time\":1,\"msg\":\"caf\xe9\"}")
	if !r.raw {
		t.Fatal("repaired JSON must stay JSON")
	}
	if m := parseJSON(t, r.body); m["msg"] != "caf\uFFFD" {
		t.Errorf("msg %q", m["msg"])
	}
}

// TestDecodeUTF8: the scan checks a line's strings as it reads them (a
// JSON line is not read for UTF-8 first); whatever it rejects is repaired
// and decoded as before.
func TestDecodeUTF8(t *testing.T) {
	for _, c := range []struct {
		line, body string
		raw        bool
	}{
		{"{\"msg\":\"café 😀 €\",\"é\":[\"ü\"]}", `{"_time":"2026-11-30T12:00:00Z","level":"silent","msg":"café 😀 €","é":["ü"]}`, true},
		{"{\"k\xff\":1}", "{\"_time\":\"2026-11-30T12:00:00Z\",\"level\":\"silent\",\"k\uFFFD\":1}", true},
		{"{\"a\":[\"x\xed\xa0\x80\"]}", "{\"_time\":\"2026-11-30T12:00:00Z\",\"level\":\"silent\",\"a\":[\"x\uFFFD\"]}", true},
		{"{\"a\":\"\xc3\"}", "{\"_time\":\"2026-11-30T12:00:00Z\",\"level\":\"silent\",\"a\":\"\uFFFD\"}", true},
		{"{\"a\":1}\xff", "{\"a\":1}\uFFFD", false},
		{"{\"a\":\xc3\xa9}", "{\"a\":é}", false},
	} {
		r := decodeOne(t, c.line)
		if r.raw != c.raw || r.body != c.body {
			t.Errorf("%q: raw %v, body %s; want %v, %s", c.line, r.raw, r.body, c.raw, c.body)
		}
	}
}

func TestDecodeTruncated(t *testing.T) {
	line := `{"level":30,"time":1764504000000,"req":{"url":"/x","tags":["a","` + strings.Repeat("x", 100)
	out, recs := decodeLines(t, Options{}, stream.Line{Data: []byte(line), Truncated: true, Stream: "stdout"})
	if len(recs) != 1 || !recs[0].raw {
		t.Fatalf("a cut JSON line must stay an event: %+v", recs)
	}
	want := `{"_time":1764504000000,"level":"info","req":{"url":"/x","tags":["a","` + strings.Repeat("x", 100) + `"]}}`
	if got := mustJSON(t, recs[0].body); got != mustJSON(t, want) {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	if !recs[0].lr.Timestamp().AsTime().Equal(time.UnixMilli(1764504000000)) {
		t.Errorf("the line's own time is lost: %v", recs[0].lr.Timestamp().AsTime())
	}
	if v, ok := recs[0].lr.Attributes().Get(AttrTruncated); !ok || !v.Bool() {
		t.Errorf("truncated record not marked")
	}
	if out.Stats.Truncated != 1 || out.Stats.JSON != 1 {
		t.Errorf("stats %+v", out.Stats)
	}
	text := "plain text " + strings.Repeat("y", 50)
	_, recs = decodeLines(t, Options{}, stream.Line{Data: []byte(text), Truncated: true})
	if len(recs) != 1 || recs[0].raw || recs[0].body != text {
		t.Fatalf("a cut text line stays text: %+v", recs)
	}
}

func TestDecodeHugeLine(t *testing.T) {
	msg := strings.Repeat("y", 300<<10)
	r := decodeOne(t, `{"level":30,"time":1,"msg":"`+msg+`"}`)
	if !r.raw || parseJSON(t, r.body)["msg"] != msg {
		t.Fatal("a large complete JSON line must decode whole")
	}
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	r = decodeOne(t, `{"a":`+deep+`}`)
	if r.raw {
		t.Error("nesting beyond the limit must fall back to text")
	}
}

const spanLine = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"shop"}}]},` +
	`"scopeSpans":[{"scope":{"name":"app"},"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",` +
	`"name":"GET /","kind":2,"startTimeUnixNano":"1764504000000000000","endTimeUnixNano":"1764504000100000000"}]}]}]}`

func TestDecodeSpanLines(t *testing.T) {
	lines := []stream.Line{
		{Data: []byte(spanLine)},
		{Data: []byte(`{"level":30,"time":1,"msg":"between"}`)},
		{Data: []byte(`{"resourceSpans":"not a list"}`)},
		{Data: []byte(`{"resourceSpans":[{"unknown":1}],"msg":"looks like a span line, is not"}`)},
	}
	d := New(Options{Traces: true})
	out := d.Decode(stream.Batch{Lines: lines}, []stream.Attr{{Key: "ecs_cluster", Value: "prod"}}, testNow)
	if out.Stats.SpanLines != 1 || out.Stats.JSON != 3 {
		t.Fatalf("stats %+v", out.Stats)
	}
	if out.Traces.SpanCount() != 1 {
		t.Fatalf("span count %d", out.Traces.SpanCount())
	}
	rs := out.Traces.ResourceSpans().At(0)
	if v, _ := rs.Resource().Attributes().Get("ecs_cluster"); v.Str() != "prod" {
		t.Errorf("resource attributes not added to spans")
	}
	if v, _ := rs.Resource().Attributes().Get("service.name"); v.Str() != "shop" {
		t.Errorf("service.name lost")
	}
	span := rs.ScopeSpans().At(0).Spans().At(0)
	if span.Name() != "GET /" || span.TraceID().String() != "5b8efff798038103d269b633813fc60c" {
		t.Errorf("span %s %s", span.Name(), span.TraceID())
	}
	if got := out.Logs.LogRecordCount(); got != 3 {
		t.Errorf("log records %d", got)
	}

	// Without a traces pipeline span lines stay logs.
	out = New(Options{}).Decode(stream.Batch{Lines: lines[:1]}, nil, testNow)
	if out.Stats.SpanLines != 0 || out.Logs.LogRecordCount() != 1 {
		t.Errorf("span line without traces: %+v", out.Stats)
	}
}

func TestDecodeResourceAttrs(t *testing.T) {
	b := stream.Batch{
		Attrs: []stream.Attr{{Key: "log.file.path", Value: "/var/log/a.log"}},
		Lines: []stream.Line{{Data: []byte(`{"msg":"a"}`)}, {Data: []byte("b")}},
	}
	out := New(Options{}).Decode(b, []stream.Attr{{Key: "ecs_task_arn", Value: "arn:x"}}, testNow)
	if out.Logs.ResourceLogs().Len() != 1 {
		t.Fatalf("want one ResourceLogs per batch")
	}
	attrs := out.Logs.ResourceLogs().At(0).Resource().Attributes()
	for k, v := range map[string]string{"log.file.path": "/var/log/a.log", "ecs_task_arn": "arn:x"} {
		if got, _ := attrs.Get(k); got.Str() != v {
			t.Errorf("%s = %q", k, got.Str())
		}
	}
}

// The decoder reuses its buffer: bodies of an earlier batch must not change.
func TestDecodeBodiesOutliveTheBatch(t *testing.T) {
	d := New(Options{})
	line := []byte(`{"level":30,"time":1,"msg":"first"}`)
	first := d.Decode(stream.Batch{Lines: []stream.Line{{Data: line}}}, nil, testNow)
	copy(line, bytes.Repeat([]byte("z"), len(line)))
	d.Decode(stream.Batch{Lines: []stream.Line{{Data: []byte(`{"msg":"second second second second"}`)}}}, nil, testNow)
	body := first.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str()
	if !strings.Contains(body, `"first"`) {
		t.Errorf("body changed: %s", body)
	}
}

// A batch of large lines takes the decoder's bodies buffer instead of a
// copy of it: the decoder (pooled) keeps no line-sized buffer, and the
// bodies survive its next batches.
func TestDecodeLargeLinesOwnTheirBodies(t *testing.T) {
	const size = 256 << 10 // over handOverBody
	d := New(Options{})
	line := []byte(`{"level":50,"time":1,"stack":"` + strings.Repeat("a", size) + `"}`)
	first := d.Decode(stream.Batch{Lines: []stream.Line{{Data: line}}}, nil, testNow)
	if cap(d.buf) >= size {
		t.Errorf("after a line of %d bytes the decoder keeps a buffer of %d", len(line), cap(d.buf))
	}
	copy(line, bytes.Repeat([]byte("z"), len(line)))
	d.Decode(stream.Batch{Lines: []stream.Line{{Data: line}}}, nil, testNow)
	d.Decode(stream.Batch{Lines: []stream.Line{{Data: []byte(`{"msg":"small"}`)}, {Data: []byte(`{"msg":"smaller"}`)}}}, nil, testNow)
	body := first.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str()
	if want := `{"level":"error","_time":1,"stack":"` + strings.Repeat("a", size) + `"}`; body != want {
		t.Errorf("the first batch's body changed: %.80s...", body)
	}
}

// axiomPino is the reference: what @axiomhq/pino (axiomhq/axiom-js,
// packages/pino/src/index.ts) sends for a pino line. The transport does
//
//	const { time, level, ...rest } = obj
//	event = { _time: time, level: mapLogLevel(level), ...rest }
//
// where mapLogLevel passes strings through and maps numbers <=10 trace,
// <=20 debug, <=30 info, <=40 warn, <=50 error, <=60 fatal, else silent.
func axiomPino(t *testing.T, line string) map[string]any {
	obj := parseJSON(t, line)
	event := map[string]any{}
	if tm, ok := obj["time"]; ok {
		event["_time"] = tm
	}
	switch lv := obj["level"].(type) {
	case string:
		event["level"] = lv
	case json.Number:
		f, _ := lv.Float64()
		names := []string{"trace", "debug", "info", "warn", "error", "fatal"}
		event["level"] = "silent"
		for i, n := range names {
			if f <= float64(10*(i+1)) {
				event["level"] = n
				break
			}
		}
	default:
		event["level"] = "silent"
	}
	for k, v := range obj {
		if k != "time" && k != "level" {
			event[k] = v
		}
	}
	return event
}

// pinoLines are shaped like real pino output: the fixed prefix
// {"level":N,"time":MS,"pid":...,"hostname":...} then bindings and the
// object argument, "msg" last; err serialiser objects; child bindings.
var pinoLines = []string{
	`{"level":30,"time":1764504000123,"pid":4242,"hostname":"ip-10-0-1-17","msg":"server listening"}`,
	`{"level":30,"time":1764504000124,"pid":4242,"hostname":"ip-10-0-1-17","req":{"id":"req-1","method":"GET","url":"/api/orders?limit=10","headers":{"host":"shop.local","user-agent":"curl/8.5.0"}},"msg":"incoming request"}`,
	`{"level":30,"time":1764504000181,"pid":4242,"hostname":"ip-10-0-1-17","req":{"id":"req-1"},"res":{"statusCode":200},"responseTime":57.21,"msg":"request completed"}`,
	`{"level":50,"time":1764504000200,"pid":4242,"hostname":"ip-10-0-1-17","module":"db","err":{"type":"Error","message":"connect ECONNREFUSED 127.0.0.1:5432","stack":"Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)","code":"ECONNREFUSED"},"msg":"connect ECONNREFUSED 127.0.0.1:5432"}`,
	`{"level":20,"time":1764504000201,"pid":4242,"hostname":"ip-10-0-1-17","module":"cache","key":"user:42","hit":false,"msg":"cache miss"}`,
	`{"level":10,"time":1764504000202,"pid":4242,"hostname":"ip-10-0-1-17","msg":"tick"}`,
	`{"level":40,"time":1764504000203,"pid":4242,"hostname":"ip-10-0-1-17","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","trace_flags":"01","msg":"slow query \"SELECT 1\" \u00e9"}`,
	`{"level":60,"time":1764504000204,"pid":4242,"hostname":"ip-10-0-1-17","msg":"uncaught exception, exiting"}`,
	`{"level":"info","time":1764504000205,"pid":4242,"hostname":"ip-10-0-1-17","msg":"formatters.level gives labels"}`,
	`{"level":30,"time":"2026-11-30T12:00:00.206Z","msg":"pino.stdTimeFunctions.isoTime"}`,
	`{"level":30,"time":1764504000207,"tags":["a","b"],"n":null,"ok":true,"big":12345678901234567890,"f":-1.5e-3,"msg":""}`,
}

func TestPinoMatchesAxiomPinoTransport(t *testing.T) {
	for _, line := range pinoLines {
		r := decodeOne(t, line)
		got, want := parseJSON(t, r.body), axiomPino(t, line)
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if !bytes.Equal(gb, wb) {
			t.Errorf("line %s\n got %s\nwant %s", line, gb, wb)
		}
	}
}

func TestScanAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`, `{"a":1}`, `{"a":-0.5e+10}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":"\u00zz"}`, `{"a":"\q"}`,
		`{"a":[1,{"b":[]}],"c":{}}`, `{"a":[1,]}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{"a":tru}`, `{"a":nul}`,
		"{\"a\":\"tab\there\"}", `{"a":"x"}}`, `{"a":{"b":1}`, `{"a":"\"\\\/\b\f\n\r\t\u1234"}`, `{"a":true,"b":false,"c":null}`,
	}
	var o object
	for _, c := range cases {
		if got, want := scanObject([]byte(c), &o), json.Valid([]byte(c)); got != want {
			t.Errorf("%s: scanObject %v, json.Valid %v", c, got, want)
		}
	}
}

func ExampleDecoder_Decode() {
	out := New(Options{}).Decode(stream.Batch{Lines: []stream.Line{
		{Data: []byte(`{"level":30,"time":1764504000123,"msg":"hello"}`)},
	}}, nil, time.Now())
	lr := out.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	fmt.Println(lr.Body().Str(), lr.SeverityText(), lr.Timestamp() == pcommon.Timestamp(1764504000123e6))
	// Output: {"level":"info","_time":1764504000123,"msg":"hello"} info true
}

// TestSmallBatchAfterLargeStaysSmall: the records of a batch pin its bodies
// buffer while they wait in the exporter's queue, so a one-line batch must
// not get a buffer sized like the large batch a pooled decoder saw before
// (forward clients send a few lines at a time between large bursts).
func TestSmallBatchAfterLargeStaysSmall(t *testing.T) {
	line := stream.Line{Data: []byte(`{"level":30,"time":1764504000000,"pid":1,"hostname":"h","msg":"hello"}`)}
	large := make([]stream.Line, 5000)
	for i := range large {
		large[i] = line
	}
	d := New(Options{})
	d.Decode(stream.Batch{Lines: large}, nil, testNow)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d.Decode(stream.Batch{Lines: []stream.Line{line}}, nil, testNow)
	runtime.ReadMemStats(&after)
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 64<<10 {
		t.Fatalf("decoding one line after a 5000-line batch allocated %d bytes", allocated)
	}
}

// blank's shortcut on the first byte must not change which lines are
// skipped: bytes.TrimSpace (Unicode white space) decides.
func TestBlankAgreesWithTrimSpace(t *testing.T) {
	lines := []string{"", " ", "\t\v\f", "\u00a0", " \u2003 ", "\u0085x", "x", "{}", " {}", "\x80", "\xff "}
	for c := range 256 {
		lines = append(lines, string([]byte{byte(c)}), string([]byte{byte(c), ' '}), string([]byte{byte(c), 0xa0}))
	}
	for _, l := range lines {
		if got, want := blank([]byte(l)), len(bytes.TrimSpace([]byte(l))) == 0; got != want {
			t.Errorf("blank(%q) = %v, want %v", l, got, want)
		}
	}
}

// A batch whose transport cut its lines at every newline gives a one-line
// raw scope (the decoder writes no newline either), and so does any other
// batch whose JSON lines hold none; one whose JSON lines do (whitespace
// between tokens) gives a plain raw scope, whose bodies the exporter scans.
func TestRawScopeIsOneLineUnlessABodyHoldsANewline(t *testing.T) {
	compact := []stream.Line{{Data: []byte(`{"level":30,"time":1764504000000,"msg":"a"}`)}, {Data: []byte(`{"msg":"no time or level"}`)}}
	spaced := append(slices.Clone(compact), stream.Line{Data: []byte("{\"msg\":\"b\",\n\"level\":30}")}, stream.Line{Data: []byte("text\nline")})
	for _, tc := range []struct {
		name             string
		lines            []stream.Line
		oneLine, wantOne bool
	}{
		{"cut at newlines, compact", compact, true, true},
		{"not cut, compact", compact, false, true},
		{"not cut, a JSON line with a newline", spaced, false, false},
		{"not cut, only a text line with a newline", append(slices.Clone(compact), spaced[3]), false, true},
	} {
		out := New(Options{}).Decode(stream.Batch{Lines: tc.lines, OneLine: tc.oneLine}, nil, testNow)
		sl := out.Logs.ResourceLogs().At(0).ScopeLogs().At(0)
		if !rawevent.IsRawScope(sl) || rawevent.IsOneLineScope(sl) != tc.wantOne {
			t.Errorf("%s: scope %q, want one-line %v", tc.name, sl.Scope().Name(), tc.wantOne)
		}
		checkOneLineScopes(t, out.Logs)
	}
}

// checkOneLineScopes fails if a one-line raw scope's body holds a newline.
func checkOneLineScopes(t *testing.T, logs plog.Logs) {
	t.Helper()
	for _, rl := range logs.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			if !rawevent.IsOneLineScope(sl) {
				continue
			}
			for _, lr := range sl.LogRecords().All() {
				if body := lr.Body().Str(); strings.Contains(body, "\n") {
					t.Fatalf("one-line scope's body %q holds a newline", body)
				}
			}
		}
	}
}

// A batch's JSON lines go to a raw scope per stream, which carries the
// stream as its attribute once for all its records (rawevent.Shared); a
// record's own attributes are only what is its alone (a cut line), and
// each record's stream reads as before, its own or else its scope's.
func TestDecodeCarriesAStreamOncePerScope(t *testing.T) {
	const a, b, c, d, e = `{"_time":1,"level":"info","msg":"a"}`, `{"_time":1,"level":"info","msg":"b"}`,
		`{"_time":1,"level":"info","msg":"c"}`, `{"_time":1,"level":"info","msg":"d"}`, `{"_time":1,"level":"info","msg":"e"}`
	streams := map[string]string{a: "stdout", b: "stderr", c: "stdout", d: "", "text": "stderr", e: "stderr"}
	lines := []stream.Line{
		{Data: []byte(a), Stream: "stdout"},
		{Data: []byte(b), Stream: "stderr"},
		{Data: []byte(c), Stream: "stdout", Truncated: true},
		{Data: []byte(d)},
		{Data: []byte("text"), Stream: "stderr"},
		{Data: []byte(e), Stream: "stderr"},
	}
	out := New(Options{}).Decode(stream.Batch{Lines: lines}, nil, testNow)
	type got struct{ stream, msgs, own string }
	var scopes []got
	sls := out.Logs.ResourceLogs().At(0).ScopeLogs()
	for _, sl := range sls.All() {
		var g got
		if shared, ok := rawevent.Shared(sl); ok {
			v, _ := shared.Get(AttrStream)
			g.stream = v.Str()
			if shared.Len() != 1 {
				t.Errorf("scope attributes %v", shared.AsRaw())
			}
		}
		for _, lr := range sl.LogRecords().All() {
			g.msgs += lr.Body().Str()
			for k := range lr.Attributes().All() {
				g.own += k + " "
			}
			v, ok := lr.Attributes().Get(AttrStream)
			if shared, isShared := rawevent.Shared(sl); !ok && isShared {
				v, ok = shared.Get(AttrStream)
			}
			if want := streams[lr.Body().Str()]; ok != (want != "") || v.Str() != want {
				t.Errorf("%s: stream %q %v, want %q", lr.Body().Str(), v.Str(), ok, want)
			}
		}
		scopes = append(scopes, g)
	}
	want := []got{
		{"stdout", a + c, "log.truncated "},
		{"stderr", b + e, ""},
		{"", d, ""},
		{"", "text", "log.iostream "},
	}
	if !slices.Equal(scopes, want) {
		t.Errorf("scopes\n%+v\nwant\n%+v", scopes, want)
	}
	for i, sl := range sls.All() {
		if raw := rawevent.IsRawScope(sl); raw != (i < 3) {
			t.Errorf("scope %d raw %v", i, raw)
		}
	}
}

// TestDecodeScopesOfBatchesInTurn decodes with one Decoder a batch of two
// streams, then batches of one (whose JSON lines go to one raw scope
// without being sorted one by one), with text lines among them and a
// batch of text alone: each batch's scopes are its own.
func TestDecodeScopesOfBatchesInTurn(t *testing.T) {
	const j = `{"_time":1,"level":"info"}`
	line := func(data, name string) stream.Line { return stream.Line{Data: []byte(data), Stream: name} }
	d := New(Options{})
	for _, c := range []struct {
		lines []stream.Line
		want  []string // per scope: its stream (raw) or "text", and its records
	}{
		{[]stream.Line{line(j, "stdout"), line(j, "stderr"), line(j, "stdout")}, []string{"stdout 2", "stderr 1"}},
		{[]stream.Line{line(j, "stderr"), line("x", "stderr"), line(j, "stderr")}, []string{"stderr 2", "text 1"}},
		{[]stream.Line{line(j, ""), line(j, "")}, []string{" 2"}},
		{[]stream.Line{line("x", "stdout")}, []string{"text 1"}},
		{[]stream.Line{line(j, "stdout"), line(j, "")}, []string{"stdout 1", " 1"}},
		{[]stream.Line{line(j, ""), line(j, "stdout")}, []string{" 1", "stdout 1"}},
		{[]stream.Line{line(j, "stdout"), line(j, "stdout"), line(j, "stderr")}, []string{"stdout 2", "stderr 1"}},
	} {
		out := d.Decode(stream.Batch{Lines: c.lines}, nil, testNow)
		var got []string
		for _, sl := range out.Logs.ResourceLogs().At(0).ScopeLogs().All() {
			name := "text"
			if rawevent.IsRawScope(sl) {
				name = ""
				if shared, ok := rawevent.Shared(sl); ok {
					v, _ := shared.Get(AttrStream)
					name = v.Str()
				}
			}
			got = append(got, fmt.Sprintf("%s %d", name, sl.LogRecords().Len()))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("scopes %q, want %q", got, c.want)
		}
	}
}

// LineBytes is each record's line length as read, in the order of the
// records in Logs: JSON records by stream scope, then text records; blank
// lines and span lines are no records.
func TestDecodeLineBytesFollowTheRecords(t *testing.T) {
	lines := []stream.Line{
		{Data: []byte(`{"msg":"a"}`), Stream: "stdout"},
		{Data: []byte("text 1\r"), Stream: "stderr"},
		{Data: []byte(`{"msg":"bb"}`), Stream: "stderr"},
		{Data: []byte("  ")},
		{Data: []byte(`{"msg":"ccc"}`), Stream: "stdout"},
		{Data: []byte("text 22"), Stream: "stdout"},
		{Data: []byte(spanLine)},
	}
	out := New(Options{LineBytes: true, Traces: true}).Decode(stream.Batch{Lines: lines}, nil, testNow)
	var got, want []string
	for _, sl := range out.Logs.ResourceLogs().At(0).ScopeLogs().All() {
		for _, lr := range sl.LogRecords().All() {
			body := lr.Body().Str() // a JSON body is edited: named by its msg
			if i := strings.Index(body, `"msg":`); i >= 0 {
				body = body[i:]
			}
			got = append(got, body)
		}
	}
	for i, n := range out.LineBytes {
		if i < len(got) {
			got[i] = fmt.Sprintf("%s:%d", got[i], n)
		}
	}
	want = []string{`"msg":"a"}:11`, `"msg":"ccc"}:13`, `"msg":"bb"}:12`, "text 1:7", "text 22:7"}
	if len(out.LineBytes) != len(got) || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("records with their line lengths %q (%d lengths), want %q", got, len(out.LineBytes), want)
	}
}

// A batch's records are allocated together (plogbulk), not two objects
// each: what allocation and the collector's marking cost per line.
func TestDecodeAllocatesPerBatchNotPerRecord(t *testing.T) {
	lines := make([]stream.Line, 1000)
	for i := range lines {
		lines[i].Data = benchPinoLine(i)
	}
	lines[10] = stream.Line{Data: []byte("a stack trace's line"), Stream: "stderr"}
	d := New(Options{})
	now := time.Now()
	batch := stream.Batch{Lines: lines, OneLine: true}
	d.Decode(batch, nil, now) // the decoder's buffers grow once
	if allocs := testing.AllocsPerRun(10, func() { d.Decode(batch, nil, now) }); allocs > 30 {
		t.Errorf("%.0f allocations for a batch of %d lines", allocs, len(lines))
	}
}
