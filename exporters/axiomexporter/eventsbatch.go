package axiomexporter

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/queuedevents"
)

// This file is what the disk queue reads back: events, encoded once when
// their records were queued (queuedevents), which the batcher merges and
// splits at event boundaries and pushEvents sends as they are.

// eventsRequest is NDJSON events read back from the disk queue, with the
// end offset of each and the weight their records had when queued (which
// the queue takes back when it is done with them).
type eventsRequest struct {
	events   []byte
	ends     []int
	weight   int
	minEvent int
	stored   []byte // what it was read from, until the batcher adds to it
}

func (r *eventsRequest) ItemsCount() int { return len(r.ends) }

func (r *eventsRequest) BytesSize() int { return r.weight }

// OnError keeps the whole request: pushEvents refuses no part of it alone.
func (r *eventsRequest) OnError(error) xexporterhelper.Request { return r }

// MergeSplit is logsRequest's, over events: next joins r when both fit one
// batch, else r goes as it is and next starts the next batch, cut in even
// parts when it is larger than a batch by itself. A request of records (in
// a form read from a queue an earlier version wrote) never joins events.
func (r *eventsRequest) MergeSplit(ctx context.Context, maxSize int, sizer exporterhelper.RequestSizerType, next xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	if sizer != exporterhelper.RequestSizerTypeBytes {
		return nil, fmt.Errorf("the axiom exporter batches logs by bytes (budget.go), not %v", sizer.String())
	}
	if next == nil {
		if maxSize <= 0 || r.weight <= maxSize {
			return []xexporterhelper.Request{r}, nil
		}
		return r.split(maxSize), nil
	}
	nr, ok := next.(*eventsRequest)
	if ok && (maxSize <= 0 || r.weight+nr.weight <= maxSize) {
		base := len(r.events)
		r.events = appendEvents(r.events, nr.events, maxSize)
		for _, end := range nr.ends {
			r.ends = append(r.ends, base+end)
		}
		r.weight += nr.weight
		r.stored, nr.stored = nil, nil
		return []xexporterhelper.Request{r}, nil
	}
	rest, err := next.MergeSplit(ctx, maxSize, sizer, nil)
	return append([]xexporterhelper.Request{r}, rest...), err
}

// appendEvents appends next to events (capped when read back: the first
// append copies them), growing the buffer to twice what it needs, within
// maxSize (the batch's bound, which its events' bytes do not pass): append
// grows a buffer this large by a quarter, so a batch of many small requests
// (the file tailer's, 1,000 lines at most) was copied again at each merge,
// 0.38 s of 5.21 in a CRI file profile at 20k lines/s (bench/COMPARISON.md).
func appendEvents(events, next []byte, maxSize int) []byte {
	need := len(events) + len(next)
	if need <= cap(events) {
		return append(events, next...)
	}
	grown := make([]byte, len(events), max(need, min(2*need, maxSize)))
	copy(grown, events)
	return append(grown, next...)
}

// eventWeight is an event's weight in a part split from a request: what
// its record weighed when queued is not kept, but it weighed its event's
// length at least, and at least minEvent.
func (r *eventsRequest) eventWeight(i int) int {
	start := 0
	if i > 0 {
		start = r.ends[i-1]
	}
	return max(r.ends[i]-start, r.minEvent)
}

// split cuts r, in order, into the fewest even parts of at most maxSize
// each (an event heavier than maxSize goes alone), which slice r's events.
func (r *eventsRequest) split(maxSize int) []xexporterhelper.Request {
	cut := evenCut{maxSize: maxSize}
	for i := range r.ends {
		cut.total += r.eventWeight(i)
	}
	var (
		out  []xexporterhelper.Request
		cur  *eventsRequest
		from int // offset of cur's first event in r.events
	)
	for i := range r.ends {
		weight := r.eventWeight(i)
		if cut.starts(weight) {
			if cur != nil {
				from = r.ends[i-1]
			}
			cur = &eventsRequest{minEvent: r.minEvent}
			out = append(out, cur)
		}
		cur.ends = append(cur.ends, r.ends[i]-from)
		cur.events = r.events[from:r.ends[i]:r.ends[i]]
		cur.weight += weight
	}
	return out
}

// marshal is r in queuedevents' form.
func (r *eventsRequest) marshal() []byte {
	var w queuedevents.Writer
	b := w.Begin(len(r.events), len(r.ends))
	start := 0
	for _, end := range r.ends {
		b = append(b, r.events[start:end]...)
		w.Event(b, nil)
		start = end
	}
	return w.Finish(b, r.weight)
}

// queueWriter encodes requests of records into events for the disk queue
// (logsEncoding.Marshal), with buffers kept between requests.
type queueWriter struct {
	mu                     sync.Mutex
	resource, shared, head []byte
	attrs                  attrsJSON
	w                      queuedevents.Writer
}

// marshal is ld's events in queuedevents' form, weight being its weight.
// A record without a timestamp takes the time it was queued, where a
// request sent from memory gives it the time it is sent.
func (q *queueWriter) marshal(ld plog.Logs, weight int) []byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.attrs.forget()
	now := time.Now()
	b := q.w.Begin(weight, ld.LogRecordCount())
	walk := walkRecords(ld, logPosition{}, q.resource, q.shared, q.head)
	for walk.next() {
		var headed bool
		b, headed = walk.appendEventAfterHead(b, &q.attrs, now)
		if headed {
			q.w.Event(b, walk.head)
		} else {
			q.w.Event(b, nil)
		}
	}
	q.resource, q.shared, q.head = walk.resource, walk.shared, walk.head
	return q.w.Finish(b, weight)
}
