// Package queuedlogs reads the compact form in which the axiom exporter's
// persistent queue stored logs whose records were plain (a string body and
// string attributes: what stdin, files and Fluent Forward make) before it
// stored their events (queuedevents): a disk queue an earlier version left
// is still delivered after an upgrade. The writer, kept as the form's
// specification, is in marshal_test.go.
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

var errCorrupt = errors.New("queuedlogs: a queued request is cut short or corrupt")

// Unmarshal reads a request in this form (Is(b)). It takes b over:
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
