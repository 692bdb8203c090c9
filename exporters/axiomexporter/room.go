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
// tells the receiver it refused when room was freed. When the queue is
// full, a receiver offers the same plog.Logs again and again (with
// backoff) until it fits, and each offer made a new request that the queue
// weighed from scratch: at max rate on stdin that was more than one extra
// weighing per record. queueRoom keeps the weight the queue holds (Ref to
// Unref) and refuses, without weighing, data that cannot fit beside it: by
// a lower bound of its weight that reads only the records' body lengths
// (logsWeigher.floor), or for data refused before by the figure its
// refusal carries (the floor, or the weight the queue found). The
// receiver's retry brings that refusal back (backpressure.Retry), so the
// room keeps nothing of the data it refused. (It kept the last refused
// batch, which several sources retrying at once replaced before theirs came
// back: FireLens-style Forward on 4 connections found it in 0 of 17,000
// offers, and took three floors per batch.) Nothing is admitted on these
// figures: the queue weighs whatever it takes. A refusal only delays (the
// receiver retries), and never while the queue holds nothing, so the
// queued requests' Unref always ends it, even if a processor changed the
// data between offers. Disabled (capacity 0) when the queue is on disk,
// blocks on overflow or waits for results: then the queue calls no Ref.
// Offers refused here do not reach exporterhelper, so its enqueue_failed
// counts only those the queue itself refused. Each refusal for want of
// room, its own or the queue's, says when to retry (backpressure.Full):
// the receiver retries at the next Unref instead of after its backoff,
// which against this queue at max rate left the exporter idle (stdin and
// Forward used a third to a half of their core).
type queueRoom struct {
	capacity int64
	w        *logsWeigher

	mu   sync.Mutex
	held int64 // weight of the requests between Ref and Unref

	freed backpressure.Room // freed at every Unref
}

// offered is where newRequest leaves the request it made for one offer
// (the caller's, when ctx carries one).
type offered struct{ r *logsRequest }

type offeredKey struct{}

// roomRefusal is a refusal of ld for want of room, with a lower bound of
// its weight (or its weight).
type roomRefusal struct {
	err    error // backpressure.Full's
	room   *queueRoom
	ld     plog.Logs
	weight int64
}

func (e *roomRefusal) Error() string { return e.err.Error() }
func (e *roomRefusal) Unwrap() error { return e.err }

// offer offers ld to the queue through push unless it cannot fit.
func (q *queueRoom) offer(ctx context.Context, ld plog.Logs, push func(context.Context, plog.Logs) error) error {
	if q == nil || q.capacity <= 0 {
		return push(ctx, ld)
	}
	// Taken before the room is looked at: an Unref from here on closes it.
	freed := q.freed.Freed()
	q.mu.Lock()
	held := q.held
	q.mu.Unlock()
	if held > 0 {
		weight := q.weightRefused(ctx, ld)
		if weight == 0 {
			weight = int64(q.w.floor(ld))
		}
		if held+weight > q.capacity {
			return q.refuse(exporterhelper.ErrQueueIsFull, freed, ld, weight)
		}
	}
	o, ok := ctx.Value(offeredKey{}).(*offered)
	if !ok {
		o = &offered{}
		ctx = context.WithValue(ctx, offeredKey{}, o)
	}
	err := push(ctx, ld)
	if errors.Is(err, exporterhelper.ErrQueueIsFull) {
		var weight int64
		if o.r != nil && o.r.weight > 0 {
			weight = int64(o.r.weight)
		}
		return q.refuse(err, freed, ld, weight)
	}
	return err
}

// weightRefused is the figure for ld that this room's refusal, which ctx
// retries after, carries; 0 when it carries none.
func (q *queueRoom) weightRefused(ctx context.Context, ld plog.Logs) int64 {
	if r, ok := errors.AsType[*roomRefusal](backpressure.Refusal(ctx)); ok && r.room == q && r.ld == ld {
		return r.weight
	}
	return 0
}

// refuse is the refusal err of ld for want of room, with a figure for
// ld's weight when known (not 0).
func (q *queueRoom) refuse(err error, freed <-chan struct{}, ld plog.Logs, weight int64) error {
	err = backpressure.Full(err, freed)
	if weight == 0 {
		return err
	}
	return &roomRefusal{err: err, room: q, ld: ld, weight: weight}
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
