package plogbulk

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// If this fails after a pdata upgrade, bring logRecord and stringValue in
// line with pdata's internal LogRecord and AnyValue_StringValue: until
// then Append makes each record with AppendEmpty and SetStr.
func TestLayoutIsPdatas(t *testing.T) {
	if strType == nil {
		t.Fatal("pdata's LogRecordSlice, LogRecord or AnyValue_StringValue is not laid out as logRecord and stringValue")
	}
}

func TestSameLayoutTellsEveryDifference(t *testing.T) {
	type rec struct {
		A string
		B uint64
		C [4]byte
	}
	for name, other := range map[string]any{
		"a field renamed": struct {
			A string
			Z uint64
			C [4]byte
		}{},
		"fields in an order": struct {
			B uint64
			A string
			C [4]byte
		}{},
		"a kind": struct {
			A []byte
			B uint64
			C [4]byte
		}{},
		"an array's length": struct {
			A string
			B uint64
			C [3]byte
			D byte
		}{},
		"a field more": struct {
			A string
			B uint64
			C [4]byte
			D uint32
		}{},
		"a pointer": struct {
			A    *string
			P, B uint64
			C    [4]byte
		}{},
	} {
		if sameLayout(reflect.TypeFor[rec](), reflect.TypeOf(other)) {
			t.Errorf("%s: same layout", name)
		}
	}
	if !sameLayout(reflect.TypeFor[rec](), reflect.TypeFor[struct {
		A string
		B uint64
		C [4]byte
	}]()) {
		t.Error("the same fields: not the same layout")
	}
}

// fill sets record i as the decoder does, its body through set.
func fill(lr plog.LogRecord, i int, set func(string)) {
	lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + i))
	lr.SetObservedTimestamp(pcommon.Timestamp(1_700_000_000_000_000_001))
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("info")
	lr.SetTraceID(pcommon.TraceID{1, byte(i)})
	lr.SetSpanID(pcommon.SpanID{2, byte(i)})
	// A body in memory of its own, which only the record keeps.
	set(string(strconv.AppendInt([]byte(`{"msg":"line `), int64(i), 10)) + `"}`)
	if i%3 == 0 {
		lr.Attributes().PutBool("log.truncated", true)
	}
}

// logs is a batch of n records in two scopes (as the decoder's raw and
// text scopes), appended after one record made by AppendEmpty, with
// Append, or with AppendEmpty and SetStr.
func logs(n int, bulk bool) plog.Logs {
	ld := plog.NewLogs()
	sls := ld.ResourceLogs().AppendEmpty().ScopeLogs()
	for s := range 2 {
		recs := sls.AppendEmpty().LogRecords()
		first := recs.AppendEmpty()
		fill(first, -1, first.Body().SetStr)
		if bulk {
			rs := Append(recs, n)
			for i := range n {
				fill(rs.At(i), s*n+i, func(b string) { rs.SetStrBody(i, b) })
			}
			continue
		}
		for i := range n {
			lr := recs.AppendEmpty()
			fill(lr, s*n+i, lr.Body().SetStr)
		}
	}
	return ld
}

func marshal(t *testing.T, ld plog.Logs) []byte {
	t.Helper()
	var m plog.ProtoMarshaler
	b, err := m.MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendMakesTheRecordsAppendEmptyAndSetStrMake(t *testing.T) {
	defer func(typ unsafe.Pointer) { strType = typ }(strType)
	for _, fallback := range []bool{false, true} {
		if fallback {
			strType = nil
		}
		for _, n := range []int{0, 1, 2, 100} {
			want := marshal(t, logs(n, false))
			got := logs(n, true)
			runtime.GC() // the records and their bodies are reachable through pdata alone
			runtime.GC()
			if b := marshal(t, got); !bytes.Equal(b, want) {
				t.Errorf("fallback %v, %d records: the protobuf differs from AppendEmpty's and SetStr's", fallback, n)
			}
			if n == 0 {
				continue
			}
			lr := got.ResourceLogs().At(0).ScopeLogs().At(1).LogRecords().At(n)
			if body := lr.Body(); body.Type() != pcommon.ValueTypeStr || body.Str() != fmt.Sprintf(`{"msg":"line %d"}`, 2*n-1) {
				t.Errorf("fallback %v, %d records: last body %v %q", fallback, n, body.Type(), body.Str())
			}
		}
	}
}

// The records are pdata's to change, move and copy.
func TestAppendedRecordsArePdatas(t *testing.T) {
	ld := logs(10, true)
	recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	lr := recs.At(3)
	lr.Body().SetStr("again")
	lr.Body().SetInt(7)
	if lr.Body().Int() != 7 {
		t.Errorf("body %v after SetInt(7)", lr.Body().AsRaw())
	}
	moved := plog.NewLogRecord()
	recs.At(4).MoveTo(moved)
	copied := plog.NewLogRecord()
	recs.At(5).CopyTo(copied)
	runtime.GC()
	if moved.Body().Str() != `{"msg":"line 3"}` || copied.Body().Str() != `{"msg":"line 4"}` {
		t.Errorf("moved %q, copied %q", moved.Body().Str(), copied.Body().Str())
	}
	if recs.At(4).Body().Type() != pcommon.ValueTypeEmpty {
		t.Errorf("the record moved from holds %v", recs.At(4).Body().AsRaw())
	}
	recs.RemoveIf(func(lr plog.LogRecord) bool { return lr.Timestamp()%2 == 0 })
	if recs.Len() != 5 {
		t.Errorf("%d records left, want 5", recs.Len())
	}
}

func TestAppendPanicsOnReadOnlyRecords(t *testing.T) {
	ld := plog.NewLogs()
	recs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	ld.MarkReadOnly()
	defer func() {
		if recover() == nil {
			t.Error("Append on read-only records did not panic")
		}
	}()
	Append(recs, 2)
}
