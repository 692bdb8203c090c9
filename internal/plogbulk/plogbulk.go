// Package plogbulk appends log records with string bodies to a
// plog.LogRecordSlice in two allocations for all of them, where pdata
// (v1.71) makes two per record: AppendEmpty allocates each LogRecord, and
// Value.SetStr each body's string value. On the stdin path those were 96%
// of the objects allocated, and with the collector's marking of them ~700
// of the ~9,900 instructions per pino line (bench/COMPARISON.md,
// 2026-12-07).
//
// pdata has no API for it (its pooling gate, an alpha, saved a tenth of
// this: bench/COMPARISON.md), so Append writes into pdata's memory through
// unsafe: logRecord and stringValue repeat the layout of pdata's internal
// LogRecord and AnyValue_StringValue, which init compares with pdata's own
// types through reflect, field by field (name, offset, kind, size). If
// they differ (a pdata upgrade), Append and SetStrBody fall back to
// AppendEmpty and SetStr, and this package's tests fail until the copies
// here are brought in line. The records are then pdata's like any other:
// the slice holds pointers into one array of them, which stays allocated
// while any of its records is referenced (as the batch's one bodies string
// already does); MoveTo, CopyTo and pdata's pooling treat them as their own.
package plogbulk

import (
	"reflect"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/plog"
)

// logRecord is pdata's internal.LogRecord, as laid out in memory.
type logRecord struct {
	Body                   anyValue
	SeverityText           string
	EventName              string
	Attributes             []struct{} // pdata's []KeyValue; its elements are not touched here
	TimeUnixNano           uint64
	ObservedTimeUnixNano   uint64
	SeverityNumber         int32
	DroppedAttributesCount uint32
	Flags                  uint32
	TraceId                [16]byte //nolint:revive // pdata's name, compared by init
	SpanId                 [8]byte  //nolint:revive // pdata's name, compared by init
}

// anyValue is pdata's internal.AnyValue: a oneof held in an interface.
type anyValue struct{ Value any }

// stringValue is pdata's internal.AnyValue_StringValue.
type stringValue struct{ StringValue string }

// eface is an interface value as the runtime lays it out.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// strType is the type word of an interface holding pdata's
// *AnyValue_StringValue; nil when the layouts differ, and then Append and
// SetStrBody use pdata's API.
var strType = layoutType()

// layoutType checks that plog.LogRecordSlice and the internal types it
// points to are laid out as here, and returns the type word a string
// body's interface holds, or nil.
func layoutType() unsafe.Pointer {
	slice := reflect.TypeFor[plog.LogRecordSlice]()
	if slice.NumField() == 0 || slice.Field(0).Offset != 0 {
		return nil
	}
	ptrs := slice.Field(0).Type // *[]*internal.LogRecord
	if ptrs.Kind() != reflect.Pointer || ptrs.Elem().Kind() != reflect.Slice || ptrs.Elem().Elem().Kind() != reflect.Pointer ||
		!sameLayout(reflect.TypeFor[logRecord](), ptrs.Elem().Elem().Elem()) {
		return nil
	}
	recs := plog.NewLogRecordSlice()
	recs.AppendEmpty().Body().SetStr("")
	body := &(*(*logRecord)((*pointers(recs))[0])).Body.Value
	if t := reflect.TypeOf(*body); t.Kind() != reflect.Pointer || !sameLayout(reflect.TypeFor[stringValue](), t.Elem()) {
		return nil
	}
	return (*eface)(unsafe.Pointer(body)).typ
}

// sameLayout reports whether the types have the same size and kind and,
// for structs, the same fields (names, offsets) of the same layout, for
// arrays the same length: what makes memory of one the other's, its
// pointers where the garbage collector expects them. A slice's or an
// interface's elements are not compared: they are pdata's own.
func sameLayout(ours, theirs reflect.Type) bool {
	if ours.Kind() != theirs.Kind() || ours.Size() != theirs.Size() {
		return false
	}
	switch ours.Kind() {
	case reflect.Struct:
		if ours.NumField() != theirs.NumField() {
			return false
		}
		for i := range ours.NumField() {
			a, b := ours.Field(i), theirs.Field(i)
			if a.Name != b.Name || a.Offset != b.Offset || !sameLayout(a.Type, b.Type) {
				return false
			}
		}
	case reflect.Array:
		return ours.Len() == theirs.Len() && sameLayout(ours.Elem(), theirs.Elem())
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return false // none here: a pointer's target would need comparing
	}
	return true
}

// pointers is recs' slice of record pointers (pdata's []*internal.LogRecord).
func pointers(recs plog.LogRecordSlice) *[]unsafe.Pointer {
	return *(**[]unsafe.Pointer)(unsafe.Pointer(&recs))
}

// Records are records Append added to a slice.
type Records struct {
	recs  plog.LogRecordSlice
	first int
	strs  []stringValue // the bodies' string values, one per record; nil in the fallback
}

// Append appends n empty records to recs, as n AppendEmpty calls would,
// and returns them.
func Append(recs plog.LogRecordSlice, n int) Records {
	first := recs.Len()
	recs.EnsureCapacity(first + n) // and panics, as AppendEmpty would, if recs is read-only
	if strType == nil || n == 0 {
		for range n {
			recs.AppendEmpty()
		}
		return Records{recs: recs, first: first}
	}
	bulk := make([]logRecord, n)
	ptrs := pointers(recs)
	for i := range bulk {
		*ptrs = append(*ptrs, unsafe.Pointer(&bulk[i]))
	}
	return Records{recs: recs, first: first, strs: make([]stringValue, n)}
}

// At is the i-th record Append added.
func (r *Records) At(i int) plog.LogRecord { return r.recs.At(r.first + i) }

// SetStrBody sets the i-th record's body to the string s, as
// At(i).Body().SetStr(s) does, once per record.
func (r *Records) SetStrBody(i int, s string) {
	if r.strs == nil {
		r.At(i).Body().SetStr(s)
		return
	}
	v := &r.strs[i]
	v.StringValue = s
	rec := (*logRecord)((*pointers(r.recs))[r.first+i])
	*(*eface)(unsafe.Pointer(&rec.Body.Value)) = eface{typ: strType, data: unsafe.Pointer(v)}
}
