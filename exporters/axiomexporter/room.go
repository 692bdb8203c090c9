package axiomexporter

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/backpressure"
)

// queueRoom spares weighing data the memory queue has no room for, and
// tells the receiver it refused when room was freed. When
// the queue is full, a receiver offers the same plog.Logs again and again
// (with backoff) until it fits, and each offer made a new request that the
// queue weighed from scratch: at max rate on stdin that was more than one
// extra weighing per record. queueRoom keeps the weight the queue holds
// (Ref to Unref) and refuses, without weighing, data that cannot fit
// beside it: by a lower bound of its weight that reads only the records'
// body lengths (logsWeigher.floor) or, for data the queue refused last
// time, the weight it had then. Nothing is admitted on these figures: the
// queue weighs whatever it takes. A refusal only delays (the receiver
// retries), and never while the queue holds nothing, so the queued
// requests' Unref always ends it, even if a processor changed the data
// between offers. Disabled (capacity 0) when the queue is on disk, blocks
// on overflow or waits for results: then the queue calls no Ref. Offers
// refused here do not reach exporterhelper, so its enqueue_failed counts
// only those the queue itself refused. Each refusal for want of room,
// its own or the queue's, says when to retry (backpressure.Full): the
// receiver retries at the next Unref instead of after its backoff, which
// against this queue at max rate left the exporter idle (stdin and
// Forward used a third to a half of their core).
type queueRoom struct {
	capacity int64
	w        *logsWeigher

	mu      sync.Mutex
	held    int64     // weight of the requests between Ref and Unref
	refused plog.Logs // the last data refused as full (zero when none)
	weight  int64     // a lower bound of its weight, or its weight

	freed backpressure.Room // freed at every Unref
}

// offered is where newRequest leaves the request it made for one offer
// (the caller's, when ctx carries one).
type offered struct{ r *logsRequest }

type offeredKey struct{}

// offer offers ld to the queue through push unless it cannot fit.
func (q *queueRoom) offer(ctx context.Context, ld plog.Logs, push func(context.Context, plog.Logs) error) error {
	if q == nil || q.capacity <= 0 {
		return push(ctx, ld)
	}
	// Taken before the room is looked at: an Unref from here on closes it.
	freed := q.freed.Freed()
	q.mu.Lock()
	held, weight := q.held, int64(0)
	if q.refused == ld {
		weight = q.weight
	}
	q.refused, q.weight = plog.Logs{}, 0 // holds no refused batch past the next offer
	q.mu.Unlock()
	if held > 0 {
		if weight == 0 {
			weight = int64(q.w.floor(ld))
		}
		if held+weight > q.capacity {
			q.remember(ld, weight)
			return backpressure.Full(exporterhelper.ErrQueueIsFull, freed)
		}
	}
	o, ok := ctx.Value(offeredKey{}).(*offered)
	if !ok {
		o = &offered{}
		ctx = context.WithValue(ctx, offeredKey{}, o)
	}
	err := push(ctx, ld)
	if errors.Is(err, exporterhelper.ErrQueueIsFull) {
		if o.r != nil && o.r.weight > 0 {
			q.remember(ld, int64(o.r.weight))
		}
		return backpressure.Full(err, freed)
	}
	return err
}

func (q *queueRoom) remember(ld plog.Logs, weight int64) {
	q.mu.Lock()
	q.refused, q.weight = ld, weight
	q.mu.Unlock()
}

// made records r as the request made for the offer in ctx, if any.
func made(ctx context.Context, r *logsRequest) {
	if o, ok := ctx.Value(offeredKey{}).(*offered); ok {
		o.r = r
	}
}

func (q *queueRoom) add(n int64) {
	if q == nil || q.capacity <= 0 {
		return
	}
	q.mu.Lock()
	q.held += n
	q.mu.Unlock()
	if n < 0 {
		q.freed.Free()
	}
}

// newQueueRoom is the room of the logs queue cfg describes (its sizes in
// bytes, budget.go), disabled unless the queue is in memory and refuses
// when full.
func newQueueRoom(cfg *Config, w *logsWeigher) *queueRoom {
	q := cfg.QueueConfig.Get()
	if q == nil || q.StorageID != nil || q.WaitForResult || q.BlockOnOverflow {
		return &queueRoom{}
	}
	return &queueRoom{capacity: q.QueueSize, w: w}
}
