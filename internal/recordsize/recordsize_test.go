package recordsize

import (
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// bodyLengths are string lengths on both sides of each varint length a
// body's two length prefixes (the string's and the AnyValue's) can cross.
func bodyLengths() []int {
	n := []int{0, 1}
	for _, edge := range []int{1 << 7, 1 << 14, 1 << 21} {
		for d := -6; d <= 2; d++ {
			n = append(n, edge+d)
		}
	}
	return n
}

// Every field a record without attributes can carry, at zero and at values
// that take the most bytes, with bodies across the varint lengths: the
// count is pdata's own, byte for byte.
func TestProtoIsPdatasSize(t *testing.T) {
	var sizer plog.ProtoMarshaler
	long := strings.Repeat("x", 1<<21+2)
	sets := []func(lr plog.LogRecord){
		func(lr plog.LogRecord) { lr.SetTimestamp(1764615600123456789) },
		func(lr plog.LogRecord) { lr.SetObservedTimestamp(math.MaxUint64) },
		func(lr plog.LogRecord) { lr.SetSeverityNumber(plog.SeverityNumberError) },
		func(lr plog.LogRecord) { lr.SetSeverityNumber(-1) },
		func(lr plog.LogRecord) { lr.SetSeverityNumber(200) },
		func(lr plog.LogRecord) { lr.SetSeverityText("info") },
		func(lr plog.LogRecord) { lr.SetSeverityText(long[:200]) },
		func(lr plog.LogRecord) { lr.SetEventName("browser.click") },
		func(lr plog.LogRecord) { lr.SetDroppedAttributesCount(math.MaxUint32) },
		func(lr plog.LogRecord) { lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true)) },
		func(lr plog.LogRecord) { lr.SetTraceID(pcommon.TraceID{15: 1}) },
		func(lr plog.LogRecord) { lr.SetSpanID(pcommon.SpanID{0: 1}) },
	}
	for _, n := range bodyLengths() {
		for mask := range 1 << len(sets) {
			if n > 1<<8 && mask != 0 && mask != 1<<len(sets)-1 {
				continue // long bodies: none and all of the fields
			}
			lr := plog.NewLogRecord()
			lr.Body().SetStr(long[:n])
			for i, set := range sets {
				if mask&(1<<i) != 0 {
					set(lr)
				}
			}
			if got, want := StrBody(lr, n), sizer.LogRecordSize(lr); got != want {
				t.Fatalf("body of %d bytes, fields %b: StrBody %d, pdata %d", n, mask, got, want)
			}
		}
	}
}

// A record with a string body and string attributes, keys and values on
// both sides of each varint length (empty ones too): StrBody plus
// StrAttribute for each is pdata's own count.
func TestStrAttributesArePdatasSize(t *testing.T) {
	var sizer plog.ProtoMarshaler
	long := strings.Repeat("y", 1<<14+2)
	lengths := []int{0, 1, 5, 1<<7 - 4, 1<<7 - 3, 1<<7 - 2, 1<<7 + 2, 1<<14 - 8, 1<<14 - 6, 1<<14 + 2}
	const body = `{"msg":"ok"}`
	for _, k := range lengths {
		for _, v := range lengths {
			for members := 1; members <= 3; members++ {
				lr := plog.NewLogRecord()
				lr.Body().SetStr(body)
				lr.SetTimestamp(1764615600123456789)
				want := StrBody(lr, len(body))
				for i := range members {
					key := long[:k] + strings.Repeat("k", i) // distinct keys, the first as long as k
					lr.Attributes().PutStr(key, long[:v])
					want += StrAttribute(key, long[:v])
				}
				if got := sizer.LogRecordSize(lr); got != want {
					t.Fatalf("key %d, value %d bytes, %d members: StrBody+StrAttribute %d, pdata %d", k, v, members, want, got)
				}
			}
		}
	}
}
