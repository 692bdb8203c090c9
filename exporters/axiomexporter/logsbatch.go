package axiomexporter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/xpdata/pref"
	pdatareq "go.opentelemetry.io/collector/pdata/xpdata/request"

	"github.com/sidecarhq/sidecar/internal/rawevent"
)

// This file is what the logs signal's sending queue holds and its batcher
// merges and splits: plog.Logs weighed by what they will weigh as Axiom
// events, so that a batch of at most batchBytes is one ingest request by
// construction. A batch sent as two requests is deleted from the queue only
// once both are accepted, and a kill between them sends the first again.

// logsWeigher weighs log records for the queue and the batcher. A record
// weighs the larger of its NDJSON event (what the request carries) and its
// protobuf (what the disk queue stores): the batch then fits the request,
// and the memory and disk budgets stay no looser than pdata's own measure.
type logsWeigher struct {
	maxEvents int       // per batch: Axiom's limit per request
	scratch   sync.Pool // *[]byte, one event at a time
}

func newLogsWeigher() *logsWeigher { return &logsWeigher{maxEvents: maxEventsPerRequest} }

// weighTime stands for the send time of records without a timestamp: its
// nanoseconds give appendTime's longest form, so the event sent is never
// longer than the one weighed.
var weighTime = time.Date(2000, 1, 1, 0, 0, 0, 123456789, time.UTC)

var protoSizer plog.ProtoMarshaler

// each calls fn with every record of ld, in order, and its weight.
func (w *logsWeigher) each(ld plog.Logs, fn func(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, weight int)) {
	buf, _ := w.scratch.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	var resource []byte
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		resource = appendResource(resource[:0], rl)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			raw := rawevent.IsRawScope(sl)
			lrs := sl.LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				*buf = appendEvent((*buf)[:0], lr, raw, resource, weighTime)
				fn(rl, sl, lr, max(len(*buf), protoSizer.LogRecordSize(lr)))
			}
		}
	}
	if cap(*buf) <= maxPooledBuffer {
		w.scratch.Put(buf)
	}
}

func (w *logsWeigher) weigh(ld plog.Logs) int {
	total := 0
	w.each(ld, func(_ plog.ResourceLogs, _ plog.ScopeLogs, _ plog.LogRecord, weight int) { total += weight })
	return total
}

// logsRequest is one queued or batched plog.Logs with its weight, -1 until
// weighed.
type logsRequest struct {
	ld     plog.Logs
	weight int
	w      *logsWeigher
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

// MergeSplit appends next (when not nil) to r and cuts the result, in
// order, into batches of at most maxSize and at most maxEvents records: a
// record goes to the next batch when it would take the current one over
// either. A record heavier than maxSize goes alone (Axiom's 413, if it
// comes, drops and counts it).
func (r *logsRequest) MergeSplit(_ context.Context, maxSize int, sizer exporterhelper.RequestSizerType, next xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	byItems := sizer == exporterhelper.RequestSizerTypeItems
	if !byItems && sizer != exporterhelper.RequestSizerTypeBytes {
		return nil, fmt.Errorf("the axiom exporter batches logs by bytes or items, not %v", sizer.String())
	}
	if next != nil {
		nr, ok := next.(*logsRequest)
		if !ok {
			return nil, fmt.Errorf("cannot merge a %T into logs", next)
		}
		weight := -1
		if r.weight >= 0 && nr.weight >= 0 {
			weight = r.weight + nr.weight
		}
		nr.ld.ResourceLogs().MoveAndAppendTo(r.ld.ResourceLogs())
		r.weight = weight
	}
	maxEvents := r.w.maxEvents
	if byItems && maxSize > 0 {
		maxEvents = min(maxEvents, maxSize)
	}
	if r.ItemsCount() <= maxEvents && (byItems || maxSize <= 0 || r.BytesSize() <= maxSize) {
		return []xexporterhelper.Request{r}, nil
	}
	if byItems {
		maxSize = 0
	}
	return r.split(maxSize, maxEvents), nil
}

// split moves r's records into batches of at most maxSize (0: any) and
// maxEvents records.
func (r *logsRequest) split(maxSize, maxEvents int) []xexporterhelper.Request {
	var (
		out    []xexporterhelper.Request
		cur    *logsRequest
		dstRL  plog.ResourceLogs
		dstSL  plog.ScopeLogs
		lastRL plog.ResourceLogs
		lastSL plog.ScopeLogs
		events int
	)
	r.w.each(r.ld, func(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, weight int) {
		full := events == maxEvents || maxSize > 0 && events > 0 && cur.weight+weight > maxSize
		if cur == nil || full {
			cur = r.w.request(plog.NewLogs())
			cur.weight = 0
			out = append(out, cur)
			events = 0
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
		events++
		cur.weight += weight
	})
	return out
}

// logsEncoding writes queued requests as exporterhelper's own logs queue
// does, so a disk queue left by an earlier version is read.
type logsEncoding struct{ w *logsWeigher }

func (e logsEncoding) Marshal(ctx context.Context, r xexporterhelper.Request) ([]byte, error) {
	return pdatareq.MarshalLogs(ctx, r.(*logsRequest).ld)
}

func (e logsEncoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	ctx, ld, err := pdatareq.UnmarshalLogs(b)
	if errors.Is(err, pdatareq.ErrInvalidFormat) { // written without its context
		var u plog.ProtoUnmarshaler
		ld, err = u.UnmarshalLogs(b)
	}
	return ctx, e.w.request(ld), err
}

// logsRefs lets pdata's pooling know the queue holds a request.
type logsRefs struct{}

func (logsRefs) Ref(r xexporterhelper.Request)   { pref.RefLogs(r.(*logsRequest).ld) }
func (logsRefs) Unref(r xexporterhelper.Request) { pref.UnrefLogs(r.(*logsRequest).ld) }

func (e *logsExporter) newRequest(_ context.Context, ld plog.Logs) (xexporterhelper.Request, error) {
	return e.weigher.request(ld), nil
}

func (e *logsExporter) pushRequest(ctx context.Context, r xexporterhelper.Request) error {
	return e.pushLogs(ctx, r.(*logsRequest).ld)
}
