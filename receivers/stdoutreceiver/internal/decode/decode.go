// Package decode turns the lines of an application's stdout stream into log
// records (and, for OTLP/JSON span lines, traces), one pass per line.
//
// A line that is one JSON object becomes a record whose string body is the
// Axiom event itself (see internal/rawevent), made by splicing the original
// bytes: the timestamp field is renamed to `_time`, the level is normalised,
// everything else is kept byte for byte. No map or pcommon.Map is built.
//
// The rules, in order (the stdoutreceiver package documentation repeats them
// for app authors):
//   - `_time` present: kept as is; a `time` field is then dropped (this is
//     what @axiomhq/pino's `{_time: time, level, ...rest}` spread yields).
//   - `time` present (pino, bunyan, logrus, slog): renamed to `_time`, value
//     verbatim, exactly as @axiomhq/pino does.
//   - otherwise the first of `timestamp` (winston), `ts` (zap), `@timestamp`
//     (ECS) that parses as a date becomes `_time`: strings and epoch
//     milliseconds verbatim, other epoch units (zap's float seconds)
//     rewritten as an RFC 3339 string so Axiom cannot misread the unit.
//   - no usable timestamp: `"_time":"<transport time or now, RFC 3339>"` is
//     inserted first.
//   - `level` as a number (pino, bunyan): replaced by its name exactly as
//     @axiomhq/pino's mapLogLevel does (<=10 trace, <=20 debug, <=30 info,
//     <=40 warn, <=50 error, <=60 fatal, above: silent).
//   - `level` as a string (winston, zap, logrus, slog), or else ECS's
//     `log.level`: lowercased in place (slog's "INFO" -> "info").
//   - `trace_id`/`span_id` or `traceId`/`spanId` (32/16 hex digits) set the
//     record's TraceID/SpanID and stay in the body.
//
// The record's Timestamp is the parsed timestamp (transport time if none),
// SeverityNumber/SeverityText come from the level.
//
// A line that is not a JSON object (stack trace, panic, plain text), a
// truncated line, or an object that is not valid JSON becomes an ordinary
// record with the line as its body and the transport time: nothing is
// dropped for being malformed. Invalid UTF-8 is replaced by U+FFFD. A JSON
// object with a top-level `resourceSpans` member is decoded as an OTLP/JSON
// ExportTraceServiceRequest and goes to traces; if that fails, or it holds
// no span, it is a log. Blank lines are skipped (Stats.Empty counts them).
// Records carry the attribute log.iostream when the transport knows the
// stream, and log.truncated when the transport cut the line.
package decode

import (
	"bytes"
	"encoding/hex"
	"time"
	"unicode/utf8"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/loglevel"
	"github.com/sidecarhq/sidecar/internal/rawevent"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// Record attributes the decoder sets.
const (
	// AttrStream holds "stdout" or "stderr" when the transport knows it
	// (OpenTelemetry semantic convention log.iostream).
	AttrStream = "log.iostream"
	// AttrTruncated is true on a record whose line was cut at the size limit.
	AttrTruncated = "log.truncated"
)

// Options configure a Decoder.
type Options struct {
	// Traces sends OTLP/JSON span lines to Output.Traces. When false (no
	// traces pipeline) they are kept as log records.
	Traces bool
}

// Stats counts what one Decode call saw.
type Stats struct {
	Lines     int // lines in the batch
	JSON      int // JSON object records (raw events)
	Text      int // non-JSON records
	Empty     int // blank lines, skipped
	SpanLines int // OTLP/JSON span lines moved to traces
	Truncated int // lines the transport cut at the size limit
}

// Output is what one batch decodes to.
type Output struct {
	Logs   plog.Logs     // always set; may hold no records
	Traces ptrace.Traces // set only when Stats.SpanLines > 0
	Stats  Stats
}

// A Decoder keeps buffers between batches. It is not safe for concurrent use;
// pool one per goroutine.
type Decoder struct {
	opts  Options
	buf   []byte // the bodies of the current batch, back to back
	fixed []byte // the current line with invalid UTF-8 repaired
	recs  []decodedLine
	obj   object
}

// decodedLine is one decoded line waiting to be written into plog as a log
// record.
type decodedLine struct {
	raw        bool // body is a JSON event (rawevent scope)
	start, end int  // body bytes in Decoder.buf
	ts         pcommon.Timestamp
	sev        plog.SeverityNumber
	sevText    string
	traceID    pcommon.TraceID
	spanID     pcommon.SpanID
	stream     string
	truncated  bool
}

// New returns a Decoder.
func New(opts Options) *Decoder { return &Decoder{opts: opts} }

// maxRetainedBuf caps the scratch buffer a Decoder keeps between batches so
// one huge line does not pin memory in a pool forever.
const maxRetainedBuf = 4 << 20

// Decode decodes a batch. The log records share one ResourceLogs whose
// attributes are b.Attrs followed by resource (for example ECS metadata);
// span lines get resource attributes they do not already have. now is the
// observed time and the timestamp of lines with none of their own.
func (d *Decoder) Decode(b stream.Batch, resource []stream.Attr, now time.Time) Output {
	out := Output{Logs: plog.NewLogs()}
	out.Stats.Lines = len(b.Lines)
	// The bodies buffer becomes the records' memory (see build) and stays
	// pinned while they wait in the exporter's queue, so each batch gets a
	// fresh one sized from its own lines (plus room for `_time`, `level` and
	// the like): sized like an earlier, larger batch, every small batch (a
	// forward client sends a few lines at a time) pinned hundreds of KB.
	n := 0
	for i := range b.Lines {
		n += len(b.Lines[i].Data)
	}
	d.buf = make([]byte, 0, n+n/4+128*len(b.Lines))
	d.recs = d.recs[:0]
	for i := range b.Lines {
		d.line(&b.Lines[i], now, &out, resource)
	}
	if len(d.recs) > 0 {
		d.build(out.Logs, b.Attrs, resource, now)
	}
	d.buf = nil
	if cap(d.fixed) > maxRetainedBuf {
		d.fixed = nil
	}
	return out
}

func (d *Decoder) line(l *stream.Line, now time.Time, out *Output, resource []stream.Attr) {
	data := bytes.TrimRight(l.Data, "\r")
	if len(bytes.TrimSpace(data)) == 0 {
		out.Stats.Empty++
		return
	}
	if l.Truncated {
		out.Stats.Truncated++
	}
	if !utf8.Valid(data) {
		d.fixed = appendValidUTF8(d.fixed[:0], data)
		data = d.fixed
	}
	when := l.Time
	if when.IsZero() {
		when = now
	}
	r := decodedLine{stream: l.Stream, truncated: l.Truncated, ts: pcommon.NewTimestampFromTime(when)}
	// A truncated line is never parsed: its JSON would be cut anyway.
	if !l.Truncated && scanObject(data, &d.obj) {
		if d.opts.Traces && d.obj.members[keyResourceSpans].found && d.spanLine(data, out, resource) {
			out.Stats.SpanLines++
			return
		}
		out.Stats.JSON++
		r.raw = true
		r.start = len(d.buf)
		d.buf = d.event(d.buf, data, &r, when)
		r.end = len(d.buf)
		d.recs = append(d.recs, r)
		return
	}
	out.Stats.Text++
	r.start = len(d.buf)
	d.buf = append(d.buf, data...)
	r.end = len(d.buf)
	d.recs = append(d.recs, r)
}

// spanLine decodes an OTLP/JSON ExportTraceServiceRequest into out.Traces.
func (d *Decoder) spanLine(data []byte, out *Output, resource []stream.Attr) bool {
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(data[d.obj.start:d.obj.end])
	if err != nil || td.SpanCount() == 0 {
		return false // kept as a log line: a request without spans carries nothing else
	}
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		attrs := rss.At(i).Resource().Attributes()
		for _, a := range resource {
			if _, ok := attrs.Get(a.Key); !ok {
				attrs.PutStr(a.Key, a.Value)
			}
		}
	}
	if out.Stats.SpanLines == 0 {
		out.Traces = ptrace.NewTraces()
	}
	rss.MoveAndAppendTo(out.Traces.ResourceSpans())
	return true
}

// edit kinds, applied to the line's bytes in position order.
const (
	editRenameTime  = iota // replace `"key":` with `"_time":`
	editInsertTime         // insert `"_time":"<ts>",` after the opening brace
	editReplaceTime        // replace the whole member with `"_time":"<ts>"`
	editRemove             // delete the member and one comma
	editLevelName          // replace the value with `"<name>"`
	editLowercase          // lowercase the string value
)

type edit struct {
	start, end int
	kind       int
	text       string
}

// event appends the Axiom event for a scanned JSON line to dst and fills the
// record's timestamp, severity and ids.
func (d *Decoder) event(dst, line []byte, r *decodedLine, fallback time.Time) []byte {
	o := &d.obj
	m := &o.members
	var edits [3]edit
	n := 0
	add := func(e edit) { edits[n] = e; n++ }
	val := func(k int) []byte { return line[m[k].valStart:m[k].valEnd] }

	ts := fallback
	switch {
	case m[keyUnderscoreTime].found:
		if t, _, ok := parseTimeValue(val(keyUnderscoreTime)); ok {
			ts = t
		}
		if t := m[keyTime]; t.found {
			add(edit{start: t.cutStart, end: t.cutEnd, kind: editRemove})
		}
	case m[keyTime].found:
		if t, _, ok := parseTimeValue(val(keyTime)); ok {
			ts = t
		}
		add(edit{start: m[keyTime].keyStart, end: m[keyTime].valStart, kind: editRenameTime})
	default:
		found := false
		for _, k := range [...]int{keyTimestamp, keyTs, keyAtTimestamp} {
			if !m[k].found {
				continue
			}
			t, unit, ok := parseTimeValue(val(k))
			if !ok {
				continue
			}
			ts, found = t, true
			if line[m[k].valStart] == '"' || unit == unitMillis {
				add(edit{start: m[k].keyStart, end: m[k].valStart, kind: editRenameTime})
			} else {
				add(edit{start: m[k].keyStart, end: m[k].valEnd, kind: editReplaceTime})
			}
			break
		}
		if !found {
			add(edit{start: o.start + 1, end: o.start + 1, kind: editInsertTime})
		}
	}
	r.ts = pcommon.NewTimestampFromTime(ts)

	levelKey := keyLevel
	if !m[keyLevel].found {
		levelKey = keyLogLevel
	}
	if lv := m[levelKey]; lv.found {
		v := val(levelKey)
		switch {
		case levelKey == keyLevel && (v[0] == '-' || '0' <= v[0] && v[0] <= '9'):
			if text, sev, ok := pinoLevel(v); ok {
				r.sevText, r.sev = text, sev
				add(edit{start: lv.valStart, end: lv.valEnd, kind: editLevelName, text: text})
			}
		case plainLevel(v):
			var lowerBuf [34]byte
			lower := appendLower(lowerBuf[:0], v[1:len(v)-1])
			r.sev = loglevel.Severity(bytesToString(lower))
			r.sevText = levelText(lower)
			if !bytes.Equal(lower, v[1:len(v)-1]) {
				add(edit{start: lv.valStart + 1, end: lv.valEnd - 1, kind: editLowercase})
			}
		}
	}

	hexID(r.traceID[:], line, m, keyTraceID, keyTraceIDCamel)
	hexID(r.spanID[:], line, m, keySpanID, keySpanIDCamel)

	sortEdits(edits[:n])
	pos := o.start
	for _, e := range edits[:n] {
		dst = append(dst, line[pos:e.start]...)
		switch e.kind {
		case editRenameTime:
			dst = append(dst, `"_time":`...)
		case editInsertTime:
			dst = appendTimeMember(dst, ts)
			if !o.empty {
				dst = append(dst, ',')
			}
		case editReplaceTime:
			dst = appendTimeMember(dst, ts)
		case editLevelName:
			dst = append(dst, '"')
			dst = append(dst, e.text...)
			dst = append(dst, '"')
		case editLowercase:
			dst = appendLower(dst, line[e.start:e.end])
		}
		pos = e.end
	}
	return append(dst, line[pos:o.end]...)
}

func appendTimeMember(dst []byte, t time.Time) []byte {
	dst = append(dst, `"_time":"`...)
	dst = t.UTC().AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

func sortEdits(e []edit) {
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && e[j].start < e[j-1].start; j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
}

// hexID fills id from the first of keys whose member is a JSON string of
// exactly len(id) bytes in hex; id stays zero (empty) otherwise.
func hexID(id, line []byte, m *[numKeys]member, keys ...int) {
	for _, k := range keys {
		if !m[k].found {
			continue
		}
		v := line[m[k].valStart:m[k].valEnd]
		if len(v) != 2*len(id)+2 || v[0] != '"' {
			continue
		}
		if _, err := hex.Decode(id, v[1:len(v)-1]); err == nil {
			return
		}
		clear(id)
	}
}

// build writes the decoded records into logs. The batch's bodies buffer is
// turned into one string without a copy (Decode never writes to it again)
// and the records' bodies slice it: one allocation per batch, not per line.
func (d *Decoder) build(logs plog.Logs, batchAttrs, resource []stream.Attr, now time.Time) {
	rl := logs.ResourceLogs().AppendEmpty()
	attrs := rl.Resource().Attributes()
	attrs.EnsureCapacity(len(batchAttrs) + len(resource))
	for _, a := range batchAttrs {
		attrs.PutStr(a.Key, a.Value)
	}
	for _, a := range resource {
		attrs.PutStr(a.Key, a.Value)
	}
	var raw, text plog.LogRecordSlice
	nRaw := 0
	for i := range d.recs {
		if d.recs[i].raw {
			nRaw++
		}
	}
	if nRaw > 0 {
		sl := rl.ScopeLogs().AppendEmpty()
		rawevent.MarkRawScope(sl)
		raw = sl.LogRecords()
		raw.EnsureCapacity(nRaw)
	}
	if nRaw < len(d.recs) {
		text = rl.ScopeLogs().AppendEmpty().LogRecords()
		text.EnsureCapacity(len(d.recs) - nRaw)
	}
	observed := pcommon.NewTimestampFromTime(now)
	bodies := unsafe.String(unsafe.SliceData(d.buf), len(d.buf))
	for i := range d.recs {
		r := &d.recs[i]
		var lr plog.LogRecord
		if r.raw {
			lr = raw.AppendEmpty()
		} else {
			lr = text.AppendEmpty()
		}
		lr.SetTimestamp(r.ts)
		lr.SetObservedTimestamp(observed)
		if r.sev != plog.SeverityNumberUnspecified {
			lr.SetSeverityNumber(r.sev)
		}
		if r.sevText != "" {
			lr.SetSeverityText(r.sevText)
		}
		lr.SetTraceID(r.traceID)
		lr.SetSpanID(r.spanID)
		lr.Body().SetStr(bodies[r.start:r.end])
		if r.stream != "" || r.truncated {
			la := lr.Attributes()
			if r.stream != "" {
				la.PutStr(AttrStream, r.stream)
			}
			if r.truncated {
				la.PutBool(AttrTruncated, true)
			}
		}
	}
}

// appendValidUTF8 appends s to dst with each run of invalid bytes replaced
// by one U+FFFD, as bytes.ToValidUTF8 does, without allocating.
func appendValidUTF8(dst, s []byte) []byte {
	invalid := false
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size <= 1 {
			if !invalid {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			}
			invalid = true
		} else {
			dst = append(dst, s[:size]...)
			invalid = false
		}
		s = s[size:]
	}
	return dst
}
