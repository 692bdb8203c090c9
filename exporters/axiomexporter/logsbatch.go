package axiomexporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/xpdata/pref"
	pdatareq "go.opentelemetry.io/collector/pdata/xpdata/request"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/queuedevents"
	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/queuedlogs"
	"github.com/sidecarhq/sidecar/internal/recordsize"
)

// This file is what the logs signal's sending queue holds and its batcher
// merges and splits: plog.Logs weighed by what they will weigh in an ingest
// request, so that a batch of at most batchBytes is one request by
// construction. A queued request whose records go out in two HTTP requests
// is deleted from the queue only once both are accepted, and a kill between
// them sends the first again: so the batcher also keeps each queued request
// whole in one batch when it fits one.

// logsWeigher weighs log records for the queue and the batcher. A record
// weighs the largest of its NDJSON event (what the request carries and the
// disk queue stores), its protobuf and minEvent, its share of a request
// that holds Axiom's 10,000 events: a batch of batchBytes then fits one
// request by bytes and by events, and the memory and disk budgets stay no
// looser than pdata's own measure.
type logsWeigher struct {
	minEvent int
	mu       sync.Mutex
	scratch  []byte // one event at a time
	resource []byte // the walk's encoded resource
	shared   []byte // and a raw scope's shared attributes
	head     []byte // and the walk's head (the weigher does not read it)
	attrs    attrsJSON
}

func newLogsWeigher(batchBytes int64) *logsWeigher {
	return &logsWeigher{minEvent: int((batchBytes + maxEventsPerRequest - 1) / maxEventsPerRequest)}
}

// weighTime stands for the send time of records without a timestamp: its
// nanoseconds give appendTime's longest form, so the event sent is never
// longer than the one weighed.
var weighTime = time.Date(2000, 1, 1, 0, 0, 0, 123456789, time.UTC)

var protoSizer plog.ProtoMarshaler

// each calls fn with every record of ld, in order, and its weight; fn
// must not weigh.
func (w *logsWeigher) each(ld plog.Logs, fn func(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, weight int)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.done()
	walk := walkRecords(ld, logPosition{}, w.resource, w.shared, w.head) // not in the for statement, which would copy it every round
	for walk.next() {
		lr := walk.record()
		fn(walk.rl, walk.sl, lr, max(w.size(lr, &walk.eventScope), w.minEvent))
	}
	w.resource, w.shared, w.head = walk.resource, walk.shared, walk.head
}

// done lets go of what a weighing kept.
func (w *logsWeigher) done() {
	w.attrs.forget()
	if cap(w.scratch) > maxPooledBuffer {
		w.scratch = nil
	}
	if cap(w.resource) > maxPooledBuffer {
		w.resource = nil
	}
	if cap(w.shared) > maxPooledBuffer {
		w.shared = nil
	}
}

// size is the larger of lr's event (or its bound) and its protobuf, lr
// being a record of the scope sc. The protobuf of a record with a string
// body and no attributes of its own (stdin's and files' lines, raw or
// text, and Forward's, whose stream their raw scope carries), or string
// attributes on a raw one (a cut line's: attributedSize), is counted from
// its fields (recordsize), and its body is read once for both.
func (w *logsWeigher) size(lr plog.LogRecord, sc *eventScope) int {
	body, attrs := lr.Body(), lr.Attributes()
	if body.Type() != pcommon.ValueTypeStr {
		return max(w.eventSize(lr, sc), protoSizer.LogRecordSize(lr))
	}
	if attrs.Len() > 0 {
		return w.attributedSize(lr, sc)
	}
	n := len(body.Str())
	event := n + len("\n") // rawEventSize with nothing to splice in, without the call
	switch {
	case !sc.raw:
		event = w.eventSize(lr, sc)
	case len(sc.resource) > 0 || len(sc.shared) > 0:
		event = w.rawEventSize(n, attrs, sc)
	}
	return max(event, recordsize.StrBody(lr, n))
}

// attributedSize is size for a record with a string body and attributes.
func (w *logsWeigher) attributedSize(lr plog.LogRecord, sc *eventScope) int {
	if !sc.raw {
		return max(w.eventSize(lr, sc), protoSizer.LogRecordSize(lr))
	}
	n := len(lr.Body().Str())
	event := w.rawEventSize(n, lr.Attributes(), sc)
	if len(w.attrs.last) == 0 { // a value that is not a string
		return max(event, protoSizer.LogRecordSize(lr))
	}
	proto := recordsize.StrBody(lr, n)
	for _, kv := range w.attrs.last { // the attributes' members, as rawEventSize found them
		proto += recordsize.StrAttribute(kv[0], kv[1])
	}
	return max(event, proto)
}

// eventSize is the length of lr's NDJSON event (appendEvent), or for a
// raw record a bound on it. A raw body is not read: by the rawevent
// contract it is exactly one object, which appendRawEvent writes whole
// after the attributes and resource it splices in, so the event is
// counted from the body's length (exact, or one byte over for "{}").
// Reading the body to trim it missed the cache once a line (3% of the
// stdin path's CPU), and copying 1 MiB lines to weigh them raised peak
// RSS by ~4 MB; a body that broke the contract would be sent longer than
// weighed, in two requests (pushLogs cuts at maxBytes).
func (w *logsWeigher) eventSize(lr plog.LogRecord, sc *eventScope) int {
	if body := lr.Body(); sc.raw && body.Type() == pcommon.ValueTypeStr {
		return w.rawEventSize(len(body.Str()), lr.Attributes(), sc)
	}
	w.scratch = appendEvent(w.scratch[:0], lr, sc, &w.attrs, weighTime)
	return len(w.scratch)
}

// rawEventSize is the length of appendRawEvent's line for an object body
// of n bytes with the record's own attributes own: exact for an object
// with members, a few bytes over for an empty one (its "{}" becomes the
// event's own braces), and over by what the shared attributes that own
// replaces would have taken. The event's '{' is the body's, and each
// object spliced in front of the body's first member adds a comma.
func (w *logsWeigher) rawEventSize(n int, own pcommon.Map, sc *eventScope) int {
	switch {
	case own.Len() > 0:
		// Both: the shared object without its '}' and own's without its
		// '{', a comma between.
		n += len(`"attributes":`) + len(w.attrs.own(own)) + len(sc.shared) + len(",")
		if len(sc.shared) > 0 {
			n += len(",") - len("}{")
		}
	case len(sc.shared) > 0:
		n += len(`"attributes":`) + len(sc.shared) + len(",")
	}
	if len(sc.resource) > 0 {
		n += len(`"resource":`) + len(sc.resource) + len(",")
	}
	return n + len("\n")
}

// weigh is ld's weight: each's weights summed, in a loop of its own (the
// queue weighs every request it takes).
func (w *logsWeigher) weigh(ld plog.Logs) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.done()
	total := 0
	walk := walkRecords(ld, logPosition{}, w.resource, w.shared, w.head)
	for walk.next() {
		total += max(w.size(walk.record(), &walk.eventScope), w.minEvent)
	}
	w.resource, w.shared, w.head = walk.resource, walk.shared, walk.head
	return total
}

// floor is a lower bound of ld's weight that reads no more than the
// records' body lengths: a record weighs at least minEvent and at least its
// string body (its event and its protobuf both carry the body whole).
func (w *logsWeigher) floor(ld plog.Logs) int {
	total := 0
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			lrs := sls.At(j).LogRecords()
			for k := range lrs.Len() {
				n := 0
				if body := lrs.At(k).Body(); body.Type() == pcommon.ValueTypeStr {
					n = len(body.Str())
				}
				total += max(n, w.minEvent)
			}
		}
	}
	return total
}

// logsRequest is one queued or batched plog.Logs with its weight, -1 until
// weighed.
type logsRequest struct {
	ld     plog.Logs
	weight int
	queued int // its weight when the memory queue took it (Ref), for Unref
	w      *logsWeigher
	// stored is what the disk queue read it from (in a form an earlier
	// version wrote), until the batcher adds to it.
	stored []byte
}

func (w *logsWeigher) request(ld plog.Logs) *logsRequest {
	return &logsRequest{ld: ld, weight: -1, w: w}
}

func (r *logsRequest) ItemsCount() int { return r.ld.LogRecordCount() }

func (r *logsRequest) BytesSize() int {
	if r.weight < 0 {
		r.weight = r.w.weigh(r.ld)
	}
	return r.weight
}

// OnError keeps, of a request partly refused, what is left to retry.
func (r *logsRequest) OnError(err error) xexporterhelper.Request {
	if partial, ok := errors.AsType[consumererror.Logs](err); ok {
		return r.w.request(partial.Data())
	}
	return r
}

// MergeSplit adds next (when not nil) to the batch r, and cuts what is
// over maxSize. next joins r when both fit one batch; otherwise r goes as
// it is and next starts the next batch, so that a queued request is not
// split across batches (and requests) unless it is larger than one batch
// by itself. Then it is cut in even parts, each over half a batch (the
// batcher's min_size) as far as its records allow, so that they all go at
// once rather than the last one waiting for more.
func (r *logsRequest) MergeSplit(ctx context.Context, maxSize int, sizer exporterhelper.RequestSizerType, next xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	if sizer != exporterhelper.RequestSizerTypeBytes {
		return nil, fmt.Errorf("the axiom exporter batches logs by bytes (budget.go), not %v", sizer.String())
	}
	var out []xexporterhelper.Request
	if next != nil {
		nr, ok := next.(*logsRequest)
		if !ok { // events read back from the disk queue (eventsbatch.go)
			rest, err := next.MergeSplit(ctx, maxSize, sizer, nil)
			return append([]xexporterhelper.Request{r}, rest...), err
		}
		if maxSize <= 0 || r.BytesSize()+nr.BytesSize() <= maxSize {
			weight := r.BytesSize() + nr.BytesSize()
			nr.ld.ResourceLogs().MoveAndAppendTo(r.ld.ResourceLogs())
			r.weight, r.stored, nr.stored = weight, nil, nil
			return []xexporterhelper.Request{r}, nil
		}
		out, r = append(out, r), nr
	}
	if maxSize <= 0 || r.BytesSize() <= maxSize {
		return append(out, r), nil
	}
	return append(out, r.split(maxSize)...), nil
}

// split moves r's records, in order, into the fewest even parts of at most
// maxSize each (a record heavier than maxSize goes alone: Axiom's 413, if
// it comes, drops and counts it).
func (r *logsRequest) split(maxSize int) []xexporterhelper.Request {
	cut := evenCut{total: r.BytesSize(), maxSize: maxSize}
	var (
		out    []xexporterhelper.Request
		cur    *logsRequest
		dstRL  plog.ResourceLogs
		dstSL  plog.ScopeLogs
		lastRL plog.ResourceLogs
		lastSL plog.ScopeLogs
	)
	r.w.each(r.ld, func(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, weight int) {
		if cut.starts(weight) {
			cur = r.w.request(plog.NewLogs())
			cur.weight = 0
			out = append(out, cur)
			lastRL, lastSL = plog.ResourceLogs{}, plog.ScopeLogs{}
		}
		if lastRL != rl {
			dstRL = cur.ld.ResourceLogs().AppendEmpty()
			dstRL.SetSchemaUrl(rl.SchemaUrl())
			rl.Resource().CopyTo(dstRL.Resource())
			lastRL, lastSL = rl, plog.ScopeLogs{}
		}
		if lastSL != sl {
			dstSL = dstRL.ScopeLogs().AppendEmpty()
			dstSL.SetSchemaUrl(sl.SchemaUrl())
			sl.Scope().CopyTo(dstSL.Scope())
			lastSL = sl
		}
		lr.MoveTo(dstSL.LogRecords().AppendEmpty()) // weighed already; r is done with
		cur.weight += weight
	})
	return out
}

// evenCut cuts items of known weights, in order, into the fewest even parts
// of at most maxSize each, an item heavier than maxSize alone: each part
// ends where its even share of what is left ends, give or take half an
// item. It serves both forms of a logs request (records, events).
type evenCut struct {
	total, maxSize int
	done           int // weight of the parts before the current one
	cur            int // weight of the current part
	end            int // where the current part's even share ends
	started        bool
}

// starts counts in an item of the given weight and says whether it begins
// a new part.
func (c *evenCut) starts(weight int) bool {
	if c.started && (c.cur == 0 || c.cur+weight <= c.maxSize && c.done+c.cur+weight/2 <= c.end) {
		c.cur += weight
		return false
	}
	c.done += c.cur
	left := c.total - c.done
	c.end = c.done + left/((left+c.maxSize-1)/c.maxSize)
	c.cur, c.started = weight, true
	return true
}

// logsEncoding writes queued requests as the events they will be sent as
// (queuedevents, read back as an eventsRequest), and those whose context
// carries something (client metadata or address, a span), which the events
// have no room for, as exporterhelper's own logs queue does: pdata's
// protobuf with the request's context. It reads every form an earlier
// version wrote too (queuedlogs' compact form, the protobuf with or without
// its context), so a disk queue left by one is delivered after an upgrade.
type logsEncoding struct {
	w *logsWeigher
	q *queueWriter
}

func newLogsEncoding(w *logsWeigher) logsEncoding { return logsEncoding{w: w, q: &queueWriter{}} }

// emptyContext is what pdatareq writes for logs of nothing sent with a
// context that carries nothing: a request whose context writes anything
// else is not written as events.
var emptyContext, _ = pdatareq.MarshalLogs(context.Background(), plog.NewLogs())

// Marshal writes a request the queue read back (which it writes again
// under a new key when it moves the requests an earlier process was sending,
// at start) as it read it: dir_storage tells a move by its bytes (see its
// README), and a kill during a move then sends no request twice.
func (e logsEncoding) Marshal(ctx context.Context, r xexporterhelper.Request) ([]byte, error) {
	if er, ok := r.(*eventsRequest); ok {
		if er.stored != nil {
			return er.stored, nil
		}
		return er.marshal(), nil
	}
	lr := r.(*logsRequest)
	if lr.stored != nil {
		return lr.stored, nil
	}
	if carried, err := pdatareq.MarshalLogs(ctx, plog.NewLogs()); err == nil && bytes.Equal(carried, emptyContext) {
		return e.q.marshal(lr.ld, lr.BytesSize()), nil
	}
	return pdatareq.MarshalLogs(ctx, lr.ld)
}

func (e logsEncoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	if queuedevents.Is(b) {
		events, ends, weight, err := queuedevents.Read(b)
		return context.Background(), &eventsRequest{events: events, ends: ends, weight: weight, minEvent: e.w.minEvent, stored: b}, err
	}
	ctx, ld := context.Background(), plog.Logs{}
	var err error
	if queuedlogs.Is(b) {
		ld, err = queuedlogs.Unmarshal(b)
	} else if ctx, ld, err = pdatareq.UnmarshalLogs(b); errors.Is(err, pdatareq.ErrInvalidFormat) { // written without its context
		var u plog.ProtoUnmarshaler
		ld, err = u.UnmarshalLogs(b)
	}
	r := e.w.request(ld)
	r.stored = b
	return ctx, r, err
}

// logsRefs lets pdata's pooling, and the queue's room, know the memory
// queue holds a request: it calls Ref once it has weighed the request and
// Unref once it is done with it (or did not take it).
type logsRefs struct{ room *queueRoom }

func (x logsRefs) Ref(req xexporterhelper.Request) {
	r := req.(*logsRequest)
	pref.RefLogs(r.ld)
	r.queued = r.BytesSize()
	x.room.add(int64(r.queued))
}

func (x logsRefs) Unref(req xexporterhelper.Request) {
	r := req.(*logsRequest)
	x.room.add(-int64(r.queued))
	pref.UnrefLogs(r.ld)
}

func (e *logsExporter) newRequest(ctx context.Context, ld plog.Logs) (xexporterhelper.Request, error) {
	r := e.weigher.request(ld)
	made(ctx, r)
	return r, nil
}

// pushRequest sends r with an encoder of the pool, on the encoder's
// goroutine (see encoder.run).
func (e *logsExporter) pushRequest(ctx context.Context, r xexporterhelper.Request) (err error) {
	enc := e.encoders.get()
	defer e.encoders.put(enc)
	enc.run(func() {
		if er, ok := r.(*eventsRequest); ok {
			err = e.pushEvents(ctx, enc, er)
		} else {
			err = e.pushLogs(ctx, enc, r.(*logsRequest).ld)
		}
	})
	return err
}
