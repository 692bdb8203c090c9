// Package queuedlogs is the compact form in which the axiom exporter's
// persistent queue stores logs whose records are plain: a string body and
// string attributes (what stdin, files and Fluent Forward make). It holds
// the same fields as pdata's protobuf, which the queue wrote before and
// still writes for other logs, at a fraction of the cost: at 1 MiB per
// request, marshalling the protobuf, and unmarshalling it with one string
// per body, took 15% of the sidecar's CPU with the disk buffer on.
//
// Layout, after Magic: the logs without their records (resources and
// scopes, as pdata's protobuf), then for each scope, in order, its number
// of records and the records. A record is its two timestamps (fixed 64
// bits), severity number, flags and dropped attribute count (varints), a
// byte saying whether a trace id (16 bytes) and a span id (8 bytes)
// follow, then its strings, each a varint length and the bytes: severity
// text, event name, body, the number of attributes and each key and value.
// Read back, the records' strings all slice the request's bytes, which
// Unmarshal takes over: no allocation or copy for them at all.
package queuedlogs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Magic begins a request in this form. A protobuf message never begins
// with a zero byte (field number 0 is invalid), so neither pdata's form
// nor its request wrapper, which earlier versions wrote, is mistaken for it.
const Magic = "\x00sq\x01"

const (
	hasTraceID = 1 << iota
	hasSpanID
)

// Is reports whether b is a request in this form.
func Is(b []byte) bool { return len(b) >= len(Magic) && string(b[:len(Magic)]) == Magic }

// Marshal returns ld in this form, or false when a record is not plain
// (a body or an attribute that is not a string).
func Marshal(ld plog.Logs) ([]byte, bool) {
	size, ok := plainSize(ld)
	if !ok {
		return nil, false
	}
	var skeleton plog.ProtoMarshaler
	shape, err := skeleton.MarshalLogs(withoutRecords(ld))
	if err != nil {
		return nil, false
	}
	b := make([]byte, 0, len(Magic)+uvarintLen(len(shape))+len(shape)+size)
	b = append(b, Magic...)
	b = binary.AppendUvarint(b, uint64(len(shape)))
	b = append(b, shape...)
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			lrs := sls.At(j).LogRecords()
			b = binary.AppendUvarint(b, uint64(lrs.Len()))
			for k := range lrs.Len() {
				b = appendRecord(b, lrs.At(k))
			}
		}
	}
	return b, true
}

// plainSize is at most what ld's records take in this form (it counts a
// trace and span id for every record; Marshal sizes its buffer with it, so
// it follows appendRecord's fields), and whether they are all plain.
func plainSize(ld plog.Logs) (int, bool) {
	size := 0
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			lrs := sls.At(j).LogRecords()
			size += uvarintLen(lrs.Len())
			for k := range lrs.Len() {
				lr := lrs.At(k)
				body := lr.Body()
				if body.Type() != pcommon.ValueTypeStr {
					return 0, false
				}
				size += 8 + 8 + uvarintLen(int(uint32(lr.SeverityNumber()))) + uvarintLen(int(lr.Flags())) +
					uvarintLen(int(lr.DroppedAttributesCount())) + 1 + 16 + 8 +
					stringLen(lr.SeverityText()) + stringLen(lr.EventName()) + stringLen(body.Str())
				attrs := lr.Attributes()
				size += uvarintLen(attrs.Len())
				for key, v := range attrs.All() {
					if v.Type() != pcommon.ValueTypeStr {
						return 0, false
					}
					size += stringLen(key) + stringLen(v.Str())
				}
			}
		}
	}
	return size, true
}

func uvarintLen(n int) int {
	size := 1
	for ; n >= 0x80; n >>= 7 {
		size++
	}
	return size
}

func stringLen(s string) int { return uvarintLen(len(s)) + len(s) }

// withoutRecords is ld's resources and scopes, without the records.
func withoutRecords(ld plog.Logs) plog.Logs {
	out := plog.NewLogs()
	rls := ld.ResourceLogs()
	out.ResourceLogs().EnsureCapacity(rls.Len())
	for i := range rls.Len() {
		rl, orl := rls.At(i), out.ResourceLogs().AppendEmpty()
		orl.SetSchemaUrl(rl.SchemaUrl())
		rl.Resource().CopyTo(orl.Resource())
		sls := rl.ScopeLogs()
		orl.ScopeLogs().EnsureCapacity(sls.Len())
		for j := range sls.Len() {
			sl, osl := sls.At(j), orl.ScopeLogs().AppendEmpty()
			osl.SetSchemaUrl(sl.SchemaUrl())
			sl.Scope().CopyTo(osl.Scope())
		}
	}
	return out
}

func appendRecord(b []byte, lr plog.LogRecord) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(lr.Timestamp()))
	b = binary.LittleEndian.AppendUint64(b, uint64(lr.ObservedTimestamp()))
	b = binary.AppendUvarint(b, uint64(uint32(lr.SeverityNumber())))
	b = binary.AppendUvarint(b, uint64(lr.Flags()))
	b = binary.AppendUvarint(b, uint64(lr.DroppedAttributesCount()))
	tid, sid := lr.TraceID(), lr.SpanID()
	var ids byte
	if !tid.IsEmpty() {
		ids |= hasTraceID
	}
	if !sid.IsEmpty() {
		ids |= hasSpanID
	}
	b = append(b, ids)
	if ids&hasTraceID != 0 {
		b = append(b, tid[:]...)
	}
	if ids&hasSpanID != 0 {
		b = append(b, sid[:]...)
	}
	b = appendString(b, lr.SeverityText())
	b = appendString(b, lr.EventName())
	b = appendString(b, lr.Body().Str())
	attrs := lr.Attributes()
	b = binary.AppendUvarint(b, uint64(attrs.Len()))
	for k, v := range attrs.All() {
		b = appendString(appendString(b, k), v.Str())
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

var errCorrupt = errors.New("queuedlogs: a queued request is cut short or corrupt")

// Unmarshal reads a request that Marshal wrote (Is(b)). It takes b over:
// the records' strings slice it, so b must not change afterwards (a
// storage client's Get returns a value of the caller's own; dir_storage
// reads each into a buffer of its own). Copying a request of a megabyte
// into a string, and the fresh memory that took, cost 3% of the sidecar's
// CPU with the disk buffer on.
func Unmarshal(b []byte) (plog.Logs, error) {
	r := reader{s: unsafe.String(unsafe.SliceData(b), len(b)), off: len(Magic)}
	n := r.length()
	if r.err != nil || n > len(b)-r.off {
		return plog.Logs{}, errCorrupt
	}
	var u plog.ProtoUnmarshaler
	ld, err := u.UnmarshalLogs(b[r.off : r.off+n])
	if err != nil {
		return plog.Logs{}, fmt.Errorf("queuedlogs: the resources and scopes of a queued request: %w", err)
	}
	r.off += n
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			count := r.length()
			if r.err != nil || count > len(r.s)-r.off { // each record takes more than a byte
				return plog.Logs{}, errCorrupt
			}
			lrs := sls.At(j).LogRecords()
			lrs.EnsureCapacity(count)
			for range count {
				r.record(lrs.AppendEmpty())
			}
		}
	}
	if r.err != nil || r.off != len(r.s) {
		return plog.Logs{}, errCorrupt
	}
	return ld, nil
}

// reader reads s from off; the first error sticks, and every read after it
// returns zero.
type reader struct {
	s   string
	off int
	err error
}

func (r *reader) record(lr plog.LogRecord) {
	lr.SetTimestamp(pcommon.Timestamp(r.fixed64()))
	lr.SetObservedTimestamp(pcommon.Timestamp(r.fixed64()))
	lr.SetSeverityNumber(plog.SeverityNumber(int32(uint32(r.varint(math.MaxUint32)))))
	lr.SetFlags(plog.LogRecordFlags(uint32(r.varint(math.MaxUint32))))
	lr.SetDroppedAttributesCount(uint32(r.varint(math.MaxUint32)))
	ids := r.bytes(1)
	if ids != "" && ids[0]&hasTraceID != 0 {
		var tid pcommon.TraceID
		copy(tid[:], r.bytes(len(tid)))
		lr.SetTraceID(tid)
	}
	if ids != "" && ids[0]&hasSpanID != 0 {
		var sid pcommon.SpanID
		copy(sid[:], r.bytes(len(sid)))
		lr.SetSpanID(sid)
	}
	if s := r.string(); s != "" {
		lr.SetSeverityText(s)
	}
	if s := r.string(); s != "" {
		lr.SetEventName(s)
	}
	lr.Body().SetStr(r.string())
	n := r.length()
	if r.err != nil || n == 0 {
		return
	}
	if n > len(r.s)-r.off { // each attribute takes two bytes at least
		r.err = errCorrupt
		return
	}
	attrs := lr.Attributes()
	attrs.EnsureCapacity(n)
	for range n {
		k := r.string()
		attrs.PutStr(k, r.string())
	}
}

func (r *reader) fixed64() uint64 {
	s := r.bytes(8)
	if s == "" {
		return 0
	}
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// varint reads a varint of at most limit.
func (r *reader) varint(limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		if r.off >= len(r.s) {
			break
		}
		c := r.s[r.off]
		r.off++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			if v > limit {
				break
			}
			return v
		}
	}
	r.err = errCorrupt
	return 0
}

// length reads a varint that counts bytes or items of what follows.
func (r *reader) length() int { return int(r.varint(uint64(len(r.s)))) }

func (r *reader) bytes(n int) string {
	if r.err != nil || n > len(r.s)-r.off {
		r.err = errCorrupt
		return ""
	}
	s := r.s[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) string() string { return r.bytes(r.length()) }
