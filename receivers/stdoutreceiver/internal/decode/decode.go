// Package decode turns the lines of an application's stdout stream into log
// records (and, for OTLP/JSON span lines, traces), one pass per line.
//
// A line that is one JSON object becomes a record whose string body is the
// Axiom event itself (see internal/rawevent), made by splicing the original
// bytes: members are dropped, renamed or have their level value named, `_time`
// and `level` may be inserted, everything else is kept byte for byte. No map
// or pcommon.Map is built. For a pino line the event is what @axiomhq/pino
// sends: it runs `const {time, level, ...rest} = JSON.parse(line)` and sends
// `{_time: time, level: mapLogLevel(level), ...rest}`.
//
// The rules, in order (the stdoutreceiver README repeats them for app
// authors, with the few places where we keep a better behaviour than the
// transport's):
//   - duplicate keys (pino writes them: a child binding and the same key in
//     a call, `msg` in the object and as the argument): the last one wins,
//     as in JSON.parse; the earlier members are dropped. Keys compare as
//     decoded, so `"\u0074ime"` is `time`.
//   - `_time` present: kept as is; `time` is dropped (the transport's spread
//     puts the line's `_time` over `time`).
//   - `time` present (pino, bunyan, logrus, slog; also a user `time` key
//     after pino's): renamed to `_time`, value verbatim, as the transport.
//   - otherwise `_time` is inserted first: from the first of `timestamp`
//     (winston, pino's custom timestamp key), `ts` (zap), `@timestamp` (ECS)
//     that parses as a date (strings and epoch milliseconds verbatim, other
//     epoch units, zap's float seconds, as an RFC 3339 string so Axiom cannot
//     misread the unit), else the transport time or now. That field itself
//     is kept, as the transport keeps it. (The transport sends no `_time`
//     here, so Axiom stamps the ingest time: we keep the line's own time,
//     or the time it was read, which a disk buffer may hold for long.)
//   - `level` as a number: replaced by its name as the transport's
//     mapLogLevel (<=10 trace, <=20 debug, <=30 info, <=40 warn, <=50
//     error, <=60 fatal, above: silent); values JavaScript compares as
//     numbers (null, booleans, [], [n]) likewise, objects are silent.
//   - `level` as a string: kept as written (formatters.level's "ERROR",
//     slog's "INFO"), as the transport; its severity is by the lowercase name.
//   - no `level`: `"level":"silent"` is inserted, as mapLogLevel(undefined)
//     gives, unless ECS's `log.level` says the level (kept as written).
//     A string `severity` (Google Cloud Logging: "ERROR", "WARNING")
//     still gives the record its severity.
//   - `trace_id`/`span_id` or `traceId`/`spanId` (32/16 hex digits) set the
//     record's TraceID/SpanID and stay in the body.
//
// The record's Timestamp is the parsed timestamp (transport time if none),
// SeverityNumber/SeverityText come from the level.
//
// A line the transport cut at its size limit (max_line_bytes, marked
// log.truncated) that starts as a JSON object is decoded by the same rules.
// From stdin, container log files and Fluent Forward it usually still is
// one (stream.Skimmer kept its structure); otherwise it is closed into JSON
// again (cut.go): the value being written at the cut is cut short, members
// after it are lost, `_time` and the level come from the line when they
// precede the cut.
//
// A line that is not a JSON object (stack trace, panic, plain text), or an
// object that is not valid JSON, becomes an ordinary record with the line as
// its body and the transport time: nothing is dropped for being malformed.
// Invalid UTF-8 is replaced by U+FFFD. A JSON object with a top-level
// `resourceSpans` member is decoded as an OTLP/JSON
// ExportTraceServiceRequest and goes to traces; if that fails, or it holds
// no span, it is a log. Blank lines are skipped (Stats.Empty counts them).
// Records carry the attribute log.iostream when the transport knows the
// stream (a JSON line's record through its raw scope, which holds the
// batch's JSON lines of that stream: internal/rawevent), and log.truncated
// when the transport cut the line.
package decode

import (
	"bytes"
	"math"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/jsontext"
	"github.com/sidecarhq/sidecar/internal/loglevel"
	"github.com/sidecarhq/sidecar/internal/plogbulk"
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
	// ReadSpans reads a span line's request object into the spans to send
	// on and the number the line held: a sampler's pre-sampling keeps only
	// some (decided is then true; see sampling/presample). An error or no
	// span leaves the line a log. nil reads every span with pdata. It must
	// reject text that is not exactly one JSON object (whitespace around it
	// aside): a line starting `{"resourceSpans"` goes to it unscanned.
	ReadSpans func(req []byte) (td ptrace.Traces, spans int, decided bool, err error)
	// LineBytes fills Output.LineBytes.
	LineBytes bool
}

// Stats counts what one Decode call saw.
type Stats struct {
	Lines     int // lines in the batch
	JSON      int // JSON object records (raw events)
	Text      int // non-JSON records
	Empty     int // blank lines, skipped
	SpanLines int // OTLP/JSON span lines moved to traces
	Spans     int // spans those lines held, kept or not
	Truncated int // lines the transport cut at the size limit
}

// Output is what one batch decodes to.
type Output struct {
	Logs   plog.Logs     // always set; may hold no records
	Traces ptrace.Traces // set only when Stats.SpanLines > 0
	// Decided is true when Options.ReadSpans decided the spans in Traces.
	Decided bool
	Stats   Stats
	// LineBytes is, with Options.LineBytes, the length of each log
	// record's line as read (its line end aside), in the order of the
	// records in Logs: what a drop policy counts as lost of a record.
	LineBytes []int32
}

// A Decoder keeps buffers between batches. It is not safe for concurrent use;
// pool one per goroutine.
type Decoder struct {
	opts   Options
	buf    []byte // the bodies of the current batch, back to back (scratch: build copies it)
	fixed  []byte // the current line with invalid UTF-8 repaired
	closed []byte // the current line, cut at the line limit, closed into JSON again
	recs   []decodedLine
	obj    object
	edits  []edit
	millis epochMillis
	scopes []rawScope // build's, one per stream of the batch's JSON lines
	// The stream of the batch's first JSON line, and whether a later one
	// has another: only then does build sort the records into scopes one
	// by one.
	jsonStream   string
	mixedStreams bool
	// Whether the batch's lines may hold newlines (its transport did not
	// cut them at every one), and whether a JSON line's body did: build
	// marks the raw scopes one-line when none did.
	mayHoldNewlines, rawNewline bool
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
	scope      int   // build's: the raw scope in Decoder.scopes
	line       int32 // the line's length as read
}

// New returns a Decoder.
func New(opts Options) *Decoder { return &Decoder{opts: opts} }

// maxRetainedBuf caps the scratch buffer a Decoder keeps between batches so
// one huge line does not pin memory in a pool forever.
const maxRetainedBuf = 4 << 20

// handOverBody is the mean body size from which a batch's records take
// the bodies buffer rather than a copy of it (build).
const handOverBody = 64 << 10

// maxRetainedMembers likewise caps the per-member scratch kept after a line
// with very many top-level members.
const maxRetainedMembers = 4096

// Decode decodes a batch. The log records share one ResourceLogs whose
// attributes are b.Attrs followed by resource (for example ECS metadata);
// span lines get resource attributes they do not already have. now is the
// observed time and the timestamp of lines with none of their own.
func (d *Decoder) Decode(b stream.Batch, resource []stream.Attr, now time.Time) Output {
	out := Output{Logs: plog.NewLogs()}
	out.Stats.Lines = len(b.Lines)
	d.buf, d.recs = d.buf[:0], d.recs[:0]
	d.mayHoldNewlines, d.rawNewline = !b.OneLine, false
	for i := range b.Lines {
		d.line(&b.Lines[i], now, &out, resource)
	}
	if len(d.recs) > 0 {
		if d.opts.LineBytes {
			out.LineBytes = d.lineBytes(&out.Stats)
		}
		d.build(out.Logs, &out.Stats, b, resource, now)
	}
	if cap(d.buf) > maxRetainedBuf {
		d.buf = nil
	}
	if cap(d.fixed) > maxRetainedBuf {
		d.fixed = nil
	}
	if cap(d.closed) > maxRetainedBuf {
		d.closed = nil
	}
	if cap(d.obj.members) > maxRetainedMembers {
		d.obj, d.edits = object{}, nil
	}
	return out
}

func (d *Decoder) line(l *stream.Line, now time.Time, out *Output, resource []stream.Attr) {
	data := l.Data
	if len(data) > 0 && data[len(data)-1] == '\r' {
		data = bytes.TrimRight(data, "\r")
	}
	if blank(data) {
		out.Stats.Empty++
		return
	}
	if l.Truncated {
		out.Stats.Truncated++
		data = trimPartialRune(data)
	}
	// A cut line is closed, and a span line read, as valid UTF-8. Any other
	// line is checked by the scan, which rejects invalid UTF-8 in a string
	// (outside strings JSON is ASCII): only a line it rejects is looked at
	// again, so a JSON line is read once.
	spansTried := d.spansFirst(l)
	checked := l.Truncated || spansTried
	if checked && !utf8.Valid(data) {
		data = d.validUTF8(data)
	}
	when := l.Time
	if when.IsZero() {
		when = now
	}
	obj := data
	if l.Truncated { // a cut JSON object is closed again and decoded
		var ok bool
		if d.closed, ok = appendClosed(d.closed[:0], data); ok {
			obj = d.closed
		}
	}
	// A line that starts as a span request (encoders write resourceSpans
	// first) goes to ReadSpans at once: it validates what it reads (pdata's
	// reader, the default, does not look past the object), so scanning the
	// line first would read it twice.
	if spansTried && d.spanLine(data, out, resource) {
		out.Stats.SpanLines++
		return
	}
	isObject := scanObject(obj, &d.obj)
	if !isObject && !checked && !utf8.Valid(data) {
		data = d.validUTF8(data)
		obj = data
		isObject = scanObject(obj, &d.obj)
	}
	if isObject && d.obj.has(keyResourceSpans) && d.opts.Traces && !l.Truncated && !spansTried &&
		d.spanLine(obj[d.obj.start:d.obj.end], out, resource) {
		out.Stats.SpanLines++
		return
	}
	// The record is filled in place: copying a decodedLine (it holds
	// strings) into the slice costs a bulk write barrier while the GC runs.
	d.recs = append(d.recs, decodedLine{})
	r := &d.recs[len(d.recs)-1]
	r.stream, r.truncated, r.line = l.Stream, l.Truncated, int32(len(l.Data))
	r.start = len(d.buf)
	if isObject {
		// The lengths are compared first: stdin's lines have no stream,
		// and Go compares even two empty strings with a call.
		if out.Stats.JSON == 0 {
			d.jsonStream = l.Stream
		} else if (len(l.Stream) > 0 || len(d.jsonStream) > 0) && l.Stream != d.jsonStream {
			d.mixedStreams = true
		}
		out.Stats.JSON++
		r.raw = true
		// Valid JSON holds a raw newline only as whitespace between
		// tokens; the line is in cache now, where the exporter's scan of
		// every body would read it from the request it writes.
		if d.mayHoldNewlines && !d.rawNewline {
			d.rawNewline = bytes.IndexByte(obj[d.obj.start:d.obj.end], '\n') >= 0
		}
		d.buf = d.event(d.buf, obj, r, when) // sets r.ts
	} else {
		out.Stats.Text++
		r.ts = pcommon.NewTimestampFromTime(when)
		d.buf = append(d.buf, data...)
	}
	r.end = len(d.buf)
}

// blank reports whether line is empty or only white space (as
// bytes.TrimSpace sees it). Most lines start with a printable ASCII byte,
// which settles it.
func blank(line []byte) bool {
	if len(line) > 0 && ' ' < line[0] && line[0] < utf8.RuneSelf {
		return false
	}
	return allSpace(line)
}

// allSpace is blank's slow part, apart so that blank is inlined.
//
//go:noinline
func allSpace(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// spanLine decodes an OTLP/JSON ExportTraceServiceRequest into out.Traces.
func (d *Decoder) spanLine(req []byte, out *Output, resource []stream.Attr) bool {
	read := d.opts.ReadSpans
	if read == nil {
		read = readSpans
	}
	td, n, decided, err := read(req)
	if err != nil || n == 0 {
		return false // kept as a log line: a request without spans carries nothing else
	}
	out.Stats.Spans += n
	out.Decided = out.Decided || decided
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

// spansFirst reports whether l goes to ReadSpans before it is scanned.
func (d *Decoder) spansFirst(l *stream.Line) bool {
	return d.opts.Traces && d.opts.ReadSpans != nil && !l.Truncated && startsSpanRequest(l.Data)
}

// startsSpanRequest reports whether line starts as `{"resourceSpans"`.
func startsSpanRequest(line []byte) bool {
	i := jsontext.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = jsontext.SkipSpace(line, i+1)
	return bytes.HasPrefix(line[i:], []byte(`"resourceSpans"`))
}

// readSpans is ReadSpans without a sampler: every span, as pdata reads it.
func readSpans(req []byte) (ptrace.Traces, int, bool, error) {
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(req)
	if err != nil {
		return td, 0, false, err
	}
	return td, td.SpanCount(), false, nil
}

// edit kinds, applied to the line's bytes in position order.
const (
	editRenameTime = iota // replace `"key":` with `"_time":`
	editInsert            // insert `"_time":...` and/or `"level":"silent"` after the opening brace
	editRemove            // delete the bytes (a member with one comma)
	editLevelName         // replace the value with `"<name>"`
)

// edit holds no pointer (the level's name is event's levelName), so
// sorting edits moves plain words.
type edit struct {
	start, end int
	kind       int
}

// inserted is what an editInsert writes.
type inserted struct {
	time       bool
	timeRaw    []byte // the value verbatim, or nil to write ts as RFC 3339
	ts         time.Time
	level      bool // `"level":"silent"`
	beforeMore bool // members follow: end with a comma
}

// event appends the Axiom event for a scanned JSON line to dst and fills the
// record's timestamp, severity and ids.
func (d *Decoder) event(dst, line []byte, r *decodedLine, fallback time.Time) []byte {
	o := &d.obj
	dropTime := -1 // a member dropped besides the superseded ones
	var ins inserted
	var levelName string // what an editLevelName writes
	// The level's value and the time's key, when they change (end 0: they
	// do not; no member ends at the object's first byte).
	var levelEdit, timeEdit edit

	// The level first: pino writes it before the time, so the edits come
	// in position order.
	switch {
	case o.has(keyLevel):
		m := o.at(keyLevel)
		v := line[m.ValStart:m.ValEnd]
		if v[0] == '"' {
			r.sevText, r.sev = stringLevel(v)
		} else {
			levelName, r.sev = jsLevel(v)
			r.sevText = levelName
			levelEdit = edit{start: m.ValStart, end: m.ValEnd, kind: editLevelName}
		}
	case o.has(keyLogLevel):
		r.sevText, r.sev = stringLevel(o.val(line, keyLogLevel))
	default:
		ins.level = true
		r.sevText, r.sev = loglevel.Pino(math.NaN())
		// Google Cloud's structured logs (pino's GCP formatters) name the
		// level in `severity` only: the body gets "silent" as from the
		// transport, the record the severity the line says.
		if o.has(keySeverity) {
			if v := o.val(line, keySeverity); v[0] == '"' {
				r.sevText, r.sev = stringLevel(v)
			}
		}
	}

	switch {
	case o.has(keyUnderscoreTime):
		var ok bool
		if r.ts, ok = d.millis.timestamp(o.val(line, keyUnderscoreTime)); !ok {
			r.ts = pcommon.NewTimestampFromTime(fallback)
		}
		if o.has(keyTime) {
			dropTime = o.known[keyTime] - 1
		}
	case o.has(keyTime):
		m := o.at(keyTime)
		var ok bool
		if r.ts, ok = d.millis.timestamp(line[m.ValStart:m.ValEnd]); !ok {
			r.ts = pcommon.NewTimestampFromTime(fallback)
		}
		timeEdit = edit{start: m.KeyStart, end: m.ValStart, kind: editRenameTime}
	default:
		ins.time, ins.ts = true, fallback
		for _, k := range [...]int{keyTimestamp, keyTs, keyAtTimestamp} {
			if !o.has(k) {
				continue
			}
			v := o.val(line, k)
			t, unit, ok := parseTimeValue(v)
			if !ok {
				continue
			}
			ins.ts = t
			if v[0] == '"' || unit == unitMillis {
				ins.timeRaw = v
			}
			break
		}
		r.ts = pcommon.NewTimestampFromTime(ins.ts)
	}

	if o.has(keyTraceID) || o.has(keyTraceIDCamel) { // r's ids are zero (empty) otherwise
		r.traceID = traceID(line, o)
	}
	if o.has(keySpanID) || o.has(keySpanIDCamel) {
		r.spanID = spanID(line, o)
	}

	if o.nSuperseded == 0 && dropTime < 0 && !ins.time && !ins.level && levelEdit.end != 0 && timeEdit.end != 0 &&
		levelEdit.end <= timeEdit.start {
		// A pino line (its level's value, then its time's key change):
		// spliced without the list of edits.
		dst = append(dst, line[o.start:levelEdit.start]...)
		dst = append(dst, '"')
		dst = append(dst, levelName...)
		dst = append(dst, '"')
		dst = append(dst, line[levelEdit.end:timeEdit.start]...)
		dst = append(dst, `"_time":`...)
		return append(dst, line[timeEdit.end:o.end]...)
	}
	edits := d.edits[:0]
	if levelEdit.end != 0 {
		edits = append(edits, levelEdit)
	}
	if timeEdit.end != 0 {
		edits = append(edits, timeEdit)
	}

	// Dropped members go with one comma: the one before them, or, for a
	// run of dropped members at the start, the one after each.
	kept := len(o.members) > 0
	if o.nSuperseded > 0 || dropTime >= 0 {
		kept = false
		for i := range o.members {
			m := &o.members[i]
			switch {
			case !o.isSuperseded(i) && i != dropTime:
				kept = true
			case kept: // from the comma, which follows the previous value's end and whitespace
				sep := jsontext.SkipSpace(line, o.members[i-1].ValEnd)
				edits = append(edits, edit{start: sep, end: m.ValEnd, kind: editRemove})
			case i+1 < len(o.members):
				edits = append(edits, edit{start: m.KeyStart, end: o.members[i+1].KeyStart, kind: editRemove})
			default:
				edits = append(edits, edit{start: m.KeyStart, end: m.ValEnd, kind: editRemove})
			}
		}
	}
	if ins.time || ins.level {
		ins.beforeMore = kept
		edits = append(edits, edit{start: o.start + 1, end: o.start + 1, kind: editInsert})
	}
	sortEdits(edits)

	pos := o.start
	for _, e := range edits {
		dst = append(dst, line[pos:e.start]...)
		switch e.kind {
		case editRenameTime:
			dst = append(dst, `"_time":`...)
		case editInsert:
			dst = appendInserted(dst, &ins)
		case editLevelName:
			dst = append(dst, '"')
			dst = append(dst, levelName...)
			dst = append(dst, '"')
		}
		pos = e.end
	}
	if cap(edits) > cap(d.edits) {
		d.edits = edits // kept only when grown: a store per line costs a write barrier
	}
	return append(dst, line[pos:o.end]...)
}

func appendInserted(dst []byte, ins *inserted) []byte {
	if ins.time {
		dst = append(dst, `"_time":`...)
		if ins.timeRaw != nil {
			dst = append(dst, ins.timeRaw...)
		} else {
			dst = append(dst, '"')
			dst = ins.ts.UTC().AppendFormat(dst, time.RFC3339Nano)
			dst = append(dst, '"')
		}
		if ins.level {
			dst = append(dst, ',')
		}
	}
	if ins.level {
		dst = append(dst, `"level":"silent"`...)
	}
	if ins.beforeMore {
		dst = append(dst, ',')
	}
	return dst
}

// sortEdits orders edits by position; an insertion sorts before a removal
// at the same position (the insertion goes right after the brace).
func sortEdits(e []edit) {
	less := func(a, b *edit) bool {
		return a.start < b.start || a.start == b.start && a.kind == editInsert && b.kind != editInsert
	}
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && less(&e[j], &e[j-1]); j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
}

// traceID is the id in the first of trace_id and traceId that is a JSON
// string of 32 hex digits; empty (zero) if neither is.
func traceID(line []byte, o *object) pcommon.TraceID {
	for _, k := range [...]int{keyTraceID, keyTraceIDCamel} {
		if v := hexString(line, o, k, 32); v != nil {
			if id, ok := parseTraceID((*[32]byte)(v)); ok {
				return id
			}
		}
	}
	return pcommon.TraceID{}
}

// spanID is traceID for span_id and spanId, of 16 hex digits.
func spanID(line []byte, o *object) pcommon.SpanID {
	for _, k := range [...]int{keySpanID, keySpanIDCamel} {
		if v := hexString(line, o, k, 16); v != nil {
			if id, ok := parseSpanID((*[16]byte)(v)); ok {
				return id
			}
		}
	}
	return pcommon.SpanID{}
}

// hexString returns the text of key k's member if it is a JSON string of
// n bytes and no escape (a hex digit needs none), else nil.
func hexString(line []byte, o *object, k, n int) []byte {
	if !o.has(k) {
		return nil
	}
	v := o.val(line, k)
	if len(v) != n+2 || v[0] != '"' {
		return nil
	}
	return v[1 : len(v)-1]
}

// build writes the decoded records into logs. The records' bodies slice one
// string per batch, copied from the bodies buffer at its exact size: that
// string stays pinned while the records wait in the exporter's queue, and
// a string conversion does not zero the memory first, as a fresh buffer
// (make) would, so the copy costs less than allocating the buffer per batch.
// A batch of large lines (handOverBody or more per record: a stack trace
// of 1 MiB) gives the records the buffer itself instead: the copy would be
// a second copy of each line, alive with the first until the buffer's
// next batch, and the buffer, kept in the receiver's pool of decoders, one
// more line's worth per decoder there; such a buffer is filled again in a
// few large appends, each allocating about what the string would.
// JSON lines go to a raw scope per stream, whose attributes carry the
// stream once for all its records (rawevent); other lines to one scope,
// each record with its stream. Each scope's records and their string
// bodies are allocated at once (plogbulk), not two objects a record.
func (d *Decoder) build(logs plog.Logs, st *Stats, b stream.Batch, resource []stream.Attr, now time.Time) {
	rl := logs.ResourceLogs().AppendEmpty()
	attrs := rl.Resource().Attributes()
	attrs.EnsureCapacity(len(b.Attrs) + len(resource))
	for _, a := range b.Attrs {
		attrs.PutStr(a.Key, a.Value)
	}
	for _, a := range resource {
		attrs.PutStr(a.Key, a.Value)
	}
	switch {
	case d.mixedStreams:
		for i := range d.recs {
			if r := &d.recs[i]; r.raw {
				r.scope = d.rawScope(r.stream)
			}
		}
	case st.JSON > 0: // one raw scope, each record's scope 0
		d.scopes = append(d.scopes, rawScope{stream: d.jsonStream, n: st.JSON})
	}
	d.jsonStream, d.mixedStreams = "", false
	nText := st.Text
	for i := range d.scopes {
		sc := &d.scopes[i]
		sl := rl.ScopeLogs().AppendEmpty()
		if !d.rawNewline { // and nothing the decoder writes holds a newline
			rawevent.MarkOneLineScope(sl)
		} else {
			rawevent.MarkRawScope(sl)
		}
		if sc.stream != "" {
			sl.Scope().Attributes().PutStr(AttrStream, sc.stream)
		}
		sc.recs = plogbulk.Append(sl.LogRecords(), sc.n)
	}
	var text plogbulk.Records
	if nText > 0 {
		text = plogbulk.Append(rl.ScopeLogs().AppendEmpty().LogRecords(), nText)
	}
	observed := pcommon.NewTimestampFromTime(now)
	var bodies string
	if len(d.buf) >= handOverBody*len(d.recs) {
		bodies, d.buf = bytesToString(d.buf), nil
	} else {
		bodies = string(d.buf)
	}
	nextText := 0
	for i := range d.recs {
		r := &d.recs[i]
		recs, k := &text, nextText
		if r.raw {
			sc := &d.scopes[r.scope]
			recs, k = &sc.recs, sc.next
			sc.next++
		} else {
			nextText++
		}
		lr := recs.At(k)
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
		recs.SetStrBody(k, bodies[r.start:r.end])
		if r.stream != "" && !r.raw || r.truncated {
			la := lr.Attributes()
			if r.stream != "" && !r.raw {
				la.PutStr(AttrStream, r.stream)
			}
			if r.truncated {
				la.PutBool(AttrTruncated, true)
			}
		}
	}
	clear(d.scopes) // they hold the batch's records
	d.scopes = d.scopes[:0]
}

// lineBytes is the length of each record's line in the order build writes
// the records: the JSON ones by raw scope (in the order of their streams'
// first lines), then the text ones. Called before build, which forgets
// the scopes.
func (d *Decoder) lineBytes(st *Stats) []int32 {
	out := make([]int32, len(d.recs))
	at := make([]int, 0, 4) // where each raw scope's records start
	if d.mixedStreams {
		seen := map[string]int{}
		for i := range d.recs {
			if r := &d.recs[i]; r.raw {
				if _, ok := seen[r.stream]; !ok {
					seen[r.stream] = len(at)
					at = append(at, 0)
				}
				at[seen[r.stream]]++
			}
		}
		start := 0
		for i, n := range at {
			at[i], start = start, start+n
		}
		for i := range d.recs {
			if r := &d.recs[i]; r.raw {
				k := seen[r.stream]
				out[at[k]] = r.line
				at[k]++
			}
		}
	} else {
		k := 0
		for i := range d.recs {
			if r := &d.recs[i]; r.raw {
				out[k] = r.line
				k++
			}
		}
	}
	text := st.JSON
	for i := range d.recs {
		if r := &d.recs[i]; !r.raw {
			out[text] = r.line
			text++
		}
	}
	return out
}

// rawScope is the index in d.scopes of the raw scope for the stream's
// records, counting one more record in it.
func (d *Decoder) rawScope(stream string) int {
	for i := range d.scopes {
		if d.scopes[i].stream == stream {
			d.scopes[i].n++
			return i
		}
	}
	d.scopes = append(d.scopes, rawScope{stream: stream, n: 1})
	return len(d.scopes) - 1
}

// rawScope is a raw scope being built: its stream, and its records.
type rawScope struct {
	stream string
	n      int
	recs   plogbulk.Records
	next   int // the record build fills next
}

// validUTF8 returns line with each run of invalid bytes replaced by U+FFFD,
// in d.fixed.
func (d *Decoder) validUTF8(line []byte) []byte {
	d.fixed = appendValidUTF8(d.fixed[:0], line)
	return d.fixed
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
