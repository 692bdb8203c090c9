package axiomexporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/rawevent"
)

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %q: %v", s, err)
	}
	return v
}

// FuzzRawEvent checks the splice: for any JSON object body, the line is one
// valid JSON object holding the body's fields (they win over ours on a
// clash, as with any last-wins JSON reader) plus attributes and resource.
func FuzzRawEvent(f *testing.F) {
	for _, s := range []string{
		`{}`, `{ }`, " {\"a\":1}\n", `{"_time":1796040000123,"level":"info","msg":"hi"}`,
		`{"attributes":{"mine":true},"x":[1,{"y":null}]}`, "{\n\"a\":\"b\\nc\"\n}", `{"u":"\u2028é"}`,
	} {
		f.Add(s, true, true)
		f.Add(s, false, false)
	}
	f.Fuzz(func(t *testing.T, body string, withAttrs, withResource bool) {
		trimmed := strings.TrimSpace(body)
		if !utf8.ValidString(body) || !json.Valid([]byte(body)) || !strings.HasPrefix(trimmed, "{") {
			return // outside the rawevent contract
		}
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		if withResource {
			rl.Resource().Attributes().PutStr("service.name", "api")
		}
		sl := rl.ScopeLogs().AppendEmpty()
		rawevent.MarkRawScope(sl)
		lr := sl.LogRecords().AppendEmpty()
		lr.Body().SetStr(body)
		if withAttrs {
			lr.Attributes().PutInt("n", 1)
		}
		line := encodeAll(t, ld)
		if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
			t.Fatalf("not one line: %q", line)
		}
		got := decodeJSON(t, line)
		want := map[string]any{}
		if withAttrs {
			want["attributes"] = map[string]any{"n": json.Number("1")}
		}
		if withResource {
			want["resource"] = map[string]any{"service.name": "api"}
		}
		for k, v := range decodeJSON(t, body).(map[string]any) {
			want[k] = v
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("body %q\ngot  %v\nwant %v", body, got, want)
		}
	})
}

// FuzzAppendString checks the string encoder against encoding/json.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl\x00\x1f\t\r\n", "bad \xff utf8 \xc3", "é 日本 \u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ours := appendString(nil, s)
		theirs, _ := json.Marshal(s)
		if !json.Valid(ours) {
			t.Fatalf("invalid JSON for %q: %s", s, ours)
		}
		var a, b string
		_ = json.Unmarshal(ours, &a)
		_ = json.Unmarshal(theirs, &b)
		if a != b {
			t.Fatalf("%q: ours decodes to %q, encoding/json's to %q", s, a, b)
		}
	})
}

// pinoLine is a typical ~300-byte pino line, already shaped by the stdout
// receiver; pinoLineN varies it like real traffic (ids, urls, timings), so
// that compression figures are not flattered by identical lines.
const pinoLine = `{"_time":1796040000123,"level":"info","pid":4242,"hostname":"ip-10-0-1-23.eu-central-1.compute.internal",` +
	`"reqId":"req-7f3a9c","req":{"method":"GET","url":"/api/v1/orders?limit=20","remoteAddress":"10.0.4.17"},` +
	`"res":{"statusCode":200},"responseTime":12.7,"msg":"request completed","service":"checkout","env":"production"}`

func pinoLineN(i int) string {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	return fmt.Sprintf(`{"_time":%d,"level":"info","pid":4242,"hostname":"ip-10-0-1-23.eu-central-1.compute.internal",`+
		`"reqId":"req-%x","req":{"method":"GET","url":"/api/v1/orders/%d?limit=20","remoteAddress":"10.0.%d.%d"},`+
		`"res":{"statusCode":%d},"responseTime":%.3f,"msg":"request completed","service":"checkout","env":"production"}`,
		1796040000123+i*7, r.Uint32(), r.IntN(1_000_000), r.IntN(255), r.IntN(255), []int{200, 200, 201, 404, 500}[r.IntN(5)], r.Float64()*100)
}

func rawLogs(n int, attrs bool) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "checkout")
	rl.Resource().Attributes().PutStr("host.name", "ip-10-0-1-23")
	sl := rl.ScopeLogs().AppendEmpty()
	rawevent.MarkRawScope(sl)
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.Body().SetStr(pinoLineN(i))
		if attrs {
			lr.Attributes().PutStr("log.iostream", "stdout")
		}
	}
	return ld
}

// encodeRawBatch is pushLogs' encoding loop for a single-scope batch.
func encodeRawBatch(enc *encoder, ld plog.Logs) {
	enc.events = enc.events[:0]
	rl := ld.ResourceLogs().At(0)
	enc.resource = appendMap(enc.resource[:0], rl.Resource().Attributes())
	sl := rl.ScopeLogs().At(0)
	sc := eventScope{raw: rawevent.IsRawScope(sl), resource: enc.resource}
	lrs := sl.LogRecords()
	for k := 0; k < lrs.Len(); k++ {
		enc.events = appendEvent(enc.events, lrs.At(k), &sc, &enc.attrs, time.Time{})
	}
}

func TestRawEventsDoNotAllocate(t *testing.T) {
	for _, attrs := range []bool{false, true} {
		ld := rawLogs(100, attrs)
		enc := newEncoderPool().get()
		encodeRawBatch(enc, ld) // grow the buffers once
		if n := testing.AllocsPerRun(10, func() { encodeRawBatch(enc, ld) }); n != 0 {
			t.Errorf("attributes=%v: %v allocations per batch of 100, want 0", attrs, n)
		}
	}
}

// BenchmarkEncodeRawEvents measures the hot path: raw events into NDJSON
// (ns/event, allocs/event), and the same plus zstd compression.
func BenchmarkEncodeRawEvents(b *testing.B) {
	const batch = 1000
	for _, bc := range []struct {
		name          string
		attrs, zstdOn bool
	}{
		{"resource-only", false, false},
		{"with-attributes", true, false},
		{"resource-only+zstd", false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ld := rawLogs(batch, bc.attrs)
			enc := newEncoderPool().get()
			b.SetBytes(int64(len(pinoLine)) * batch)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				encodeRawBatch(enc, ld)
				if bc.zstdOn {
					enc.compressed = enc.zstd.EncodeAll(enc.events, enc.compressed[:0])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
			if !bytes.HasSuffix(enc.events, []byte("}\n")) {
				b.Fatal("nothing encoded")
			}
		})
	}
}

// BenchmarkEncodeMappedEvents measures ordinary (OTLP) records with a map
// body, attributes and ids: the path that is not raw.
func BenchmarkEncodeMappedEvents(b *testing.B) {
	const batch = 1000
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "checkout")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for range batch {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(msTime))
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetTraceID(pcommon.TraceID{1, 2, 3})
		lr.SetSpanID(pcommon.SpanID{4, 5, 6})
		m := lr.Body().SetEmptyMap()
		m.PutStr("msg", "request completed")
		m.PutInt("status", 200)
		m.PutDouble("responseTime", 12.7)
		m.PutEmptyMap("req").PutStr("url", "/api/v1/orders?limit=20")
		lr.Attributes().PutStr("http.route", "/api/v1/orders")
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		res := appendMap(nil, rl.Resource().Attributes())
		for k := 0; k < lrs.Len(); k++ {
			buf = appendEvent(buf, lrs.At(k), &eventScope{resource: res}, new(attrsJSON), msTime)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
}

// BenchmarkPushRawLogs runs the whole logs path of the exporter, HTTP
// included, against the fake Axiom in count-only mode (which decodes every
// request in the same process, so the figure is an upper bound).
func BenchmarkPushRawLogs(b *testing.B) {
	srv := axiomtest.NewForTest(b, axiomtest.WithCountOnly())
	exp, err := NewFactory().CreateLogs(context.Background(), newHarness().set, testConfig(srv.URL()))
	if err != nil {
		b.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	const batch = 10_000
	ld := rawLogs(batch, true)
	b.SetBytes(int64(len(pinoLine)) * batch)
	b.ReportAllocs()
	for b.Loop() {
		if err := exp.ConsumeLogs(context.Background(), ld); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
	if srv.EventCount(logsDS) != b.N*batch {
		b.Fatalf("fake counted %d events, want %d", srv.EventCount(logsDS), b.N*batch)
	}
}

// FuzzAttrsJSON holds the attributes' cache to appendMap over sequences of
// maps drawn from few keys and values, so that maps repeat, or differ from
// the last in one key, value, type or position.
func FuzzAttrsJSON(f *testing.F) {
	f.Add([]byte{0x01, 0x01, 0x00, 0x01, 0x11, 0x00, 0x12, 0x21})
	f.Add([]byte{0x31, 0x00, 0x31, 0x00, 0x32, 0x13, 0x00})
	f.Fuzz(func(t *testing.T, script []byte) {
		words := []string{"log.iostream", "stdout", "stderr", ""}
		var c attrsJSON
		m := pcommon.NewMap()
		for _, op := range script {
			if op == 0 { // the map so far is a record's attributes; the next starts empty
				if got, want := c.own(m), appendMap(nil, m); !bytes.Equal(got, want) {
					t.Fatalf("%v: %s, want %s", m.AsRaw(), got, want)
				}
				m = pcommon.NewMap()
				continue
			}
			k, v := words[op&3], words[op>>2&3]
			switch op >> 4 & 3 {
			case 0, 1:
				m.PutStr(k, v)
			case 2:
				m.PutInt(k, int64(op>>6))
			case 3: // the member moves to the end
				m.Remove(k)
				m.PutStr(k, v)
			}
		}
	})
}

// A raw scope's attributes are its records' (rawevent.Shared): the events
// of records sharing them are those of the same records carrying them, the
// shared ones first and their own put over them, whatever the body, the
// attributes and the scope; and each weighs at least its event (for a body
// within the rawevent contract, which the weigher trusts).
func FuzzSharedAttributes(f *testing.F) {
	f.Add(`{"a":1}`, []byte{0x01, 0x00, 0x11}, true, false)
	f.Add(`{}`, []byte{0x01, 0x21, 0x00, 0x01}, false, true)
	f.Add("{\n\"a\":2}", []byte{0x31, 0x00, 0x02, 0x00}, false, false)
	f.Add(`not json`, []byte{0x05, 0x00, 0x21}, true, true)
	f.Fuzz(func(t *testing.T, body string, script []byte, oneLine, withResource bool) {
		words := []string{"log.iostream", "stdout", "log.truncated", ""}
		shared, own := pcommon.NewMap(), pcommon.NewMap()
		m := shared
		for _, op := range script {
			if op == 0 { // the shared attributes end, the record's own begin
				m = own
				continue
			}
			k, v := words[op&3], words[op>>2&3]
			switch op >> 4 & 3 {
			case 0, 1:
				m.PutStr(k, v)
			case 2:
				m.PutInt(k, int64(op>>6))
			case 3:
				m.PutBool(k, op&0x40 != 0)
			}
		}
		build := func(share bool) plog.Logs {
			ld := plog.NewLogs()
			rl := ld.ResourceLogs().AppendEmpty()
			if withResource {
				rl.Resource().Attributes().PutStr("service.name", "api")
			}
			sl := rl.ScopeLogs().AppendEmpty()
			if oneLine {
				rawevent.MarkOneLineScope(sl)
			} else {
				rawevent.MarkRawScope(sl)
			}
			lr := sl.LogRecords().AppendEmpty()
			lr.SetTimestamp(1796040000123000000)
			lr.Body().SetStr(body)
			if share {
				shared.CopyTo(sl.Scope().Attributes())
			} else {
				shared.CopyTo(lr.Attributes())
			}
			for k, v := range own.All() {
				v.CopyTo(lr.Attributes().PutEmpty(k))
			}
			return ld
		}
		ld := build(true)
		if got, want := encodeAll(t, ld), encodeAll(t, build(false)); got != want {
			t.Fatalf("shared %v, own %v:\n%s\nwant\n%s", shared.AsRaw(), own.AsRaw(), got, want)
		}
		if !utf8.ValidString(body) || !json.Valid([]byte(body)) || !strings.HasPrefix(strings.TrimSpace(body), "{") {
			return // outside the rawevent contract, which weighing trusts
		}
		w := newLogsWeigher(2 << 20)
		w.each(ld, func(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, weight int) {
			if event := len(encodeAll(t, ld)); weight < event {
				t.Fatalf("shared %v, own %v: weighs %d, its event is %d bytes", shared.AsRaw(), own.AsRaw(), weight, event)
			}
		})
	})
}
