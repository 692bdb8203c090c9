package queuedlogs

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// plainLogs has every field the compact form carries, set in some records
// and not in others, two resources, and empty scopes and resources.
func plainLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
	rl.Resource().Attributes().PutStr("service.name", "api")
	rl.Resource().Attributes().PutInt("pid", 4242)
	rl.Resource().SetDroppedAttributesCount(3)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("sidecar/rawevent/oneline")
	sl.Scope().SetVersion("1")
	sl.Scope().Attributes().PutBool("b", true)
	sl.SetSchemaUrl("s")
	for i := range 3 {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1764504000000000000 + i))
		lr.SetObservedTimestamp(pcommon.Timestamp(1764504000000000999))
		lr.Body().SetStr(`{"level":30,"msg":"request ` + strings.Repeat("é", i) + `"}`)
		if i == 1 {
			lr.SetSeverityNumber(plog.SeverityNumberWarn)
			lr.SetSeverityText("warn")
			lr.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			lr.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
			lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
			lr.SetEventName("http.request")
			lr.SetDroppedAttributesCount(1)
			lr.Attributes().PutStr("log.iostream", "stderr")
			lr.Attributes().PutStr("k", "")
		}
		if i == 2 {
			lr.SetSpanID(pcommon.SpanID{8})
			lr.SetSeverityNumber(plog.SeverityNumber(-7)) // out of the enum: kept as it is
		}
	}
	rl.ScopeLogs().AppendEmpty() // a scope without records
	rl2 := ld.ResourceLogs().AppendEmpty()
	rl2.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("")
	ld.ResourceLogs().AppendEmpty() // a resource without scopes
	return ld
}

func protobuf(t *testing.T, ld plog.Logs) []byte {
	t.Helper()
	var m plog.ProtoMarshaler
	b, err := m.MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPlainLogsComeBackAsTheyWent(t *testing.T) {
	ld := plainLogs()
	b, ok := Marshal(ld)
	if !ok || !Is(b) {
		t.Fatalf("Marshal: ok %v, Is %v; want both", ok, Is(b))
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(protobuf(t, got), protobuf(t, ld)) {
		t.Errorf("read back differs from what was written:\n got %v\nwant %v", protobuf(t, got), protobuf(t, ld))
	}
	if got.LogRecordCount() != 4 {
		t.Errorf("read back %d records, want 4", got.LogRecordCount())
	}
}

// Lines of 18 KiB (a large stack trace) and 1 MiB (the default line limit)
// have lengths of three varint bytes, and keep every byte.
func TestLargeRecordsComeBackAsTheyWent(t *testing.T) {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, n := range []int{18 << 10, 1 << 20} {
		lr := lrs.AppendEmpty()
		lr.Body().SetStr(`{"msg":"` + strings.Repeat("x", n) + `"}`)
		lr.Attributes().PutStr("stack", strings.Repeat("y", n))
	}
	b, ok := Marshal(ld)
	if !ok {
		t.Fatal("Marshal refused plain records")
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(protobuf(t, got), protobuf(t, ld)) {
		t.Error("read back differs from what was written")
	}
}

// Unmarshal takes the request's bytes over: a record's strings point into
// them rather than into a copy.
func TestReadBackStringsSliceTheRequestsBytes(t *testing.T) {
	b, _ := Marshal(plainLogs())
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	lr := got.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(1)
	attr, _ := lr.Attributes().Get("log.iostream")
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for name, s := range map[string]string{"body": lr.Body().Str(), "severity text": lr.SeverityText(), "attribute": attr.Str()} {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p < start || p >= start+uintptr(len(b)) {
			t.Errorf("the %s %q is a copy, not a slice of the request", name, s)
		}
	}
}

func TestRecordsThatAreNotPlainAreLeftToTheProtobuf(t *testing.T) {
	for name, spoil := range map[string]func(plog.LogRecord){
		"map body":         func(lr plog.LogRecord) { lr.Body().SetEmptyMap().PutStr("a", "b") },
		"empty body":       func(lr plog.LogRecord) { lr.Body().FromRaw(nil) },
		"bool attribute":   func(lr plog.LogRecord) { lr.Attributes().PutBool("log.truncated", true) },
		"number attribute": func(lr plog.LogRecord) { lr.Attributes().PutInt("n", 1) },
	} {
		ld := plainLogs()
		spoil(ld.ResourceLogs().At(1).ScopeLogs().At(0).LogRecords().At(0))
		if b, ok := Marshal(ld); ok || b != nil {
			t.Errorf("%s: Marshal wrote %d bytes; want it to refuse", name, len(b))
		}
	}
}

func TestACutOrCorruptRequestIsAnErrorNotAPanic(t *testing.T) {
	b, _ := Marshal(plainLogs())
	for n := len(Magic); n < len(b); n++ {
		if _, err := Unmarshal(b[:n]); err == nil {
			t.Fatalf("a request cut to %d of %d bytes read without an error", n, len(b))
		}
	}
	if _, err := Unmarshal(append(b[:len(b):len(b)], 0)); err == nil {
		t.Error("a request with a byte after its records read without an error")
	}
	for i := len(Magic); i < len(b); i++ { // no flip may panic; most are errors
		c := bytes.Clone(b)
		c[i] ^= 0xff
		_, _ = Unmarshal(c)
	}
}

func TestProtobufIsNotMistakenForTheCompactForm(t *testing.T) {
	if Is(protobuf(t, plainLogs())) {
		t.Error("pdata's protobuf passes for the compact form")
	}
	if Is([]byte(Magic[:3])) {
		t.Error("a prefix of the magic passes for the compact form")
	}
}

// BenchmarkRoundTrip is a queued request of stdin's shape: 3,000 pino-like
// lines in one raw scope.
func BenchmarkRoundTrip(b *testing.B) {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName("sidecar/rawevent/oneline")
	for i := range 3000 {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1764504000000000000 + i))
		lr.SetObservedTimestamp(1764504000000000000)
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetTraceID(pcommon.TraceID{byte(i), 1})
		lr.Body().SetStr(`{"level":30,"time":1764504000000,"pid":4242,"hostname":"ip-10-0-1-17.ec2.internal","req":{"id":"req-00000001","method":"GET","url":"/api/orders/1?include=items","remoteAddress":"10.0.3.4"},"res":{"statusCode":200},"responseTime":1.25,"trace_id":"0000000000000000000000000000abcd","msg":"request completed"}`)
	}
	b.ReportAllocs()
	for b.Loop() {
		buf, _ := Marshal(ld)
		if _, err := Unmarshal(buf); err != nil {
			b.Fatal(err)
		}
	}
}
