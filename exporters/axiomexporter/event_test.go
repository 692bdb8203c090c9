package axiomexporter

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/rawevent"
)

var (
	msTime   = time.Date(2026, 11, 30, 12, 0, 0, 123_000_000, time.UTC)
	nanoTime = time.Date(2026, 11, 30, 12, 0, 0, 123_456_789, time.UTC)
)

type mappingCase struct {
	name  string
	raw   bool // record goes in a rawevent scope
	bare  bool // record goes under a resource without attributes
	fill  func(lr plog.LogRecord)
	want  string // the event as Axiom stores it (fake: _time as RFC3339Nano)
	wantL string // the exact NDJSON line, when it matters
}

var mappingCases = []mappingCase{
	{
		name: "string body, ms timestamp, level from severity number",
		bare: true,
		fill: func(lr plog.LogRecord) {
			lr.SetTimestamp(pcommon.NewTimestampFromTime(msTime))
			lr.SetSeverityNumber(plog.SeverityNumberWarn2)
			lr.Body().SetStr("disk almost full")
		},
		want:  `{"_time":"2026-11-30T12:00:00.123Z","level":"warn","message":"disk almost full"}`,
		wantL: `{"message":"disk almost full","_time":1796040000123,"level":"warn"}`,
	},
	{
		name: "nanosecond timestamp kept as RFC3339Nano, severity text wins",
		bare: true,
		fill: func(lr plog.LogRecord) {
			lr.SetTimestamp(pcommon.NewTimestampFromTime(nanoTime))
			lr.SetSeverityNumber(plog.SeverityNumberError)
			lr.SetSeverityText("ERROR")
			lr.Body().SetStr("x")
		},
		want:  `{"_time":"2026-11-30T12:00:00.123456789Z","level":"ERROR","message":"x"}`,
		wantL: `{"message":"x","_time":"2026-11-30T12:00:00.123456789Z","level":"ERROR"}`,
	},
	{
		name: "observed timestamp when timestamp is unset; no level when unset",
		bare: true,
		fill: func(lr plog.LogRecord) {
			lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(msTime))
			lr.Body().SetInt(42)
		},
		want: `{"_time":"2026-11-30T12:00:00.123Z","message":42}`,
	},
	{
		name: "map body fields on top; attributes, resource, ids, typed values",
		fill: func(lr plog.LogRecord) {
			lr.SetTimestamp(pcommon.NewTimestampFromTime(msTime))
			lr.SetSeverityNumber(plog.SeverityNumberInfo)
			lr.SetTraceID(pcommon.TraceID{0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xef})
			lr.SetSpanID(pcommon.SpanID{0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3})
			m := lr.Body().SetEmptyMap()
			m.PutStr("msg", "hello \"world\"\n")
			m.PutInt("status", 200)
			m.PutDouble("ratio", 1)
			m.PutBool("ok", true)
			m.PutEmptyMap("req").PutStr("method", "GET")
			s := m.PutEmptySlice("tags")
			s.AppendEmpty().SetStr("a")
			s.AppendEmpty().SetInt(2)
			lr.Attributes().PutStr("log.file.path", "/var/log/app.log")
			lr.Attributes().PutInt("retries", 3)
		},
		want: `{"msg":"hello \"world\"\n","status":200,"ratio":1.0,"ok":true,"req":{"method":"GET"},"tags":["a",2],` +
			`"_time":"2026-11-30T12:00:00.123Z","level":"info",` +
			`"trace_id":"ab0102030405060708090a0b0c0d0eef","span_id":"deadbeef00010203",` +
			`"attributes":{"log.file.path":"/var/log/app.log","retries":3},"resource":{"service.name":"api"}}`,
	},
	{
		name: "body fields win over _time, level and ids",
		fill: func(lr plog.LogRecord) {
			lr.SetTimestamp(pcommon.NewTimestampFromTime(msTime))
			lr.SetSeverityNumber(plog.SeverityNumberInfo)
			lr.SetTraceID(pcommon.TraceID{1})
			m := lr.Body().SetEmptyMap()
			m.PutStr("_time", "2020-01-01T00:00:00Z")
			m.PutInt("level", 30)
			m.PutStr("trace_id", "mine")
		},
		want: `{"_time":"2020-01-01T00:00:00Z","level":30,"trace_id":"mine","resource":{"service.name":"api"}}`,
	},
	{
		name: "raw event without attributes is written as-is (plus resource)",
		raw:  true,
		fill: func(lr plog.LogRecord) {
			lr.Body().SetStr(`{"_time":1796040000123,"level":"info","msg":"raw","n":1.5}`)
		},
		want:  `{"_time":"2026-11-30T12:00:00.123Z","level":"info","msg":"raw","n":1.5,"resource":{"service.name":"api"}}`,
		wantL: `{"resource":{"service.name":"api"},"_time":1796040000123,"level":"info","msg":"raw","n":1.5}`,
	},
	{
		name: "raw event with attributes",
		raw:  true,
		fill: func(lr plog.LogRecord) {
			lr.Body().SetStr(`{"_time":1796040000123,"msg":"raw"}`)
			lr.Attributes().PutStr("container_name", "app")
		},
		want:  `{"_time":"2026-11-30T12:00:00.123Z","msg":"raw","attributes":{"container_name":"app"},"resource":{"service.name":"api"}}`,
		wantL: `{"attributes":{"container_name":"app"},"resource":{"service.name":"api"},"_time":1796040000123,"msg":"raw"}`,
	},
	{
		name: "raw empty object",
		raw:  true,
		fill: func(lr plog.LogRecord) {
			lr.SetTimestamp(pcommon.NewTimestampFromTime(msTime))
			lr.Body().SetStr(`{ }`)
			lr.Attributes().PutBool("x", true)
		},
		wantL: `{"attributes":{"x":true},"resource":{"service.name":"api"}}`,
	},
	{
		name: "raw body that is not an object becomes a message",
		raw:  true,
		fill: func(lr plog.LogRecord) {
			lr.SetTimestamp(pcommon.NewTimestampFromTime(msTime))
			lr.Body().SetStr(`not json`)
		},
		want: `{"_time":"2026-11-30T12:00:00.123Z","message":"not json","resource":{"service.name":"api"}}`,
	},
}

// buildMappingLogs puts every case in its own record, raw ones in a
// rawevent scope, under a resource with service.name=api unless bare.
func buildMappingLogs(cases []mappingCase) plog.Logs {
	ld := plog.NewLogs()
	bare := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	withRes := ld.ResourceLogs().AppendEmpty()
	withRes.Resource().Attributes().PutStr("service.name", "api")
	plain := withRes.ScopeLogs().AppendEmpty()
	raw := withRes.ScopeLogs().AppendEmpty()
	rawevent.MarkRawScope(raw)
	for _, c := range cases {
		switch {
		case c.bare:
			c.fill(bare.LogRecords().AppendEmpty())
		case c.raw:
			c.fill(raw.LogRecords().AppendEmpty())
		default:
			c.fill(plain.LogRecords().AppendEmpty())
		}
	}
	return ld
}

func TestEventLines(t *testing.T) {
	for _, c := range mappingCases {
		if c.wantL == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			line := encodeAll(t, buildMappingLogs([]mappingCase{c}))
			if line != c.wantL+"\n" {
				t.Errorf("got  %s\nwant %s", line, c.wantL)
			}
		})
	}
}

// encodeAll runs the exporter's encoding over ld into NDJSON text.
func encodeAll(t *testing.T, ld plog.Logs) string {
	t.Helper()
	var b, res []byte
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		res = res[:0]
		if rl.Resource().Attributes().Len() > 0 {
			res = appendMap(res, rl.Resource().Attributes())
		}
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			for k := 0; k < sl.LogRecords().Len(); k++ {
				b = appendEvent(b, sl.LogRecords().At(k), scopeOf(sl, res), new(attrsJSON), time.Now())
			}
		}
	}
	return string(b)
}

func TestEventMappingAtAxiom(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	exp := startLogs(t, newHarness(), testConfig(srv.URL()))
	if err := exp.ConsumeLogs(context.Background(), buildMappingLogs(mappingCases)); err != nil {
		t.Fatal(err)
	}
	events := srv.Events(logsDS)
	if len(events) != len(mappingCases) {
		t.Fatalf("got %d events, want %d", len(events), len(mappingCases))
	}
	// Events arrive in pdata order: bare resource first, then plain, then raw.
	var ordered []mappingCase
	for _, pass := range []func(c mappingCase) bool{
		func(c mappingCase) bool { return c.bare },
		func(c mappingCase) bool { return !c.bare && !c.raw },
		func(c mappingCase) bool { return !c.bare && c.raw },
	} {
		for _, c := range mappingCases {
			if pass(c) {
				ordered = append(ordered, c)
			}
		}
	}
	for i, c := range ordered {
		if c.want == "" {
			continue
		}
		got := events[i]
		delete(got, "_sysTime")
		var want map[string]any
		dec := json.NewDecoder(strings.NewReader(c.want))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("%s: bad want: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			gotJSON, _ := json.Marshal(got)
			t.Errorf("%s:\ngot  %s\nwant %s", c.name, gotJSON, c.want)
		}
	}
}

func TestRawEventNewlinesStayOneLine(t *testing.T) {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	rawevent.MarkRawScope(sl)
	sl.LogRecords().AppendEmpty().Body().SetStr("{\n  \"a\": 1\n}\n")
	if got := encodeAll(t, ld); got != "{   \"a\": 1 }\n" {
		t.Errorf("got %q", got)
	}
}

// A one-line scope's bodies are written as they are, spliced or not: the
// receiver vouched they hold no newline, so none is looked for.
func TestOneLineRawEventsAreWrittenAsTheyAre(t *testing.T) {
	ld := plog.NewLogs()
	bare := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	rawevent.MarkOneLineScope(bare)
	bare.LogRecords().AppendEmpty().Body().SetStr(`{"a":1}`)
	bare.LogRecords().AppendEmpty().Body().SetStr("{\"b\":\n2}") // breaks the promise: kept, to show it is not looked for
	withRes := ld.ResourceLogs().AppendEmpty()
	withRes.Resource().Attributes().PutStr("service.name", "api")
	spliced := withRes.ScopeLogs().AppendEmpty()
	rawevent.MarkOneLineScope(spliced)
	spliced.LogRecords().AppendEmpty().Body().SetStr(`{"c":3}`)
	want := `{"a":1}` + "\n" + "{\"b\":\n2}\n" + `{"resource":{"service.name":"api"},"c":3}` + "\n"
	if got := encodeAll(t, ld); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestAppendFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", -2.5: "-2.5", 1e21: "1e+21", 1e-7: "1e-7", 0: "0.0",
		math.NaN(): "null", math.Inf(1): "null", 123456789.125: "123456789.125",
	} {
		if got := string(appendFloat(nil, f)); got != want {
			t.Errorf("appendFloat(%v) = %s, want %s", f, got, want)
		}
	}
}
