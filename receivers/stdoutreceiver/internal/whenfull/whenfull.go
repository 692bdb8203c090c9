// Package whenfull is what a source of the stdout receiver does while the
// pipeline refuses its data (the sending queue's disk budget is full, or
// the memory limiter refuses): the when_full policy, and the Buffer in
// memory where the two drop policies keep refused batches until the
// pipeline takes them again.
//
//   - block: the source waits until the pipeline takes the batch, and is
//     not read meanwhile. Right for tailed files, where the files are the
//     buffer; on a pipe it blocks the app's writes. The receiver retries
//     itself; no Buffer is involved.
//   - drop_newest: refused batches wait in the Buffer, in order, and are
//     pushed again with backoff (or as soon as a refusal made with
//     backpressure.Full says there is room); a batch that does not fit is
//     dropped.
//   - drop_oldest: as drop_newest, but room is made by dropping the oldest
//     waiting batches, so the latest lines survive an outage.
//
// With the persistent sending queue every shipped config has, the
// pipeline refuses only once the disk budget is full, so the Buffer
// decides only which lines are lost once both budgets are spent: the disk
// queue keeps the start of an outage, the Buffer (with drop_oldest) its
// latest moments, and the records in between are dropped and counted.
//
// Every batch Put ends exactly once: pushed (the pipeline returned nil) or
// dropped, through Batch.Dropped, which counts it. Batch.Done runs in both
// cases, after that: a transport that acknowledges (Fluent Forward) acks
// then, never while the batch is only in memory, so a kill -9 loses no
// acknowledged record.
package whenfull

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sidecarhq/sidecar/internal/backpressure"
)

// Policy is a source's when_full setting.
type Policy string

const (
	DropOldest Policy = "drop_oldest"
	DropNewest Policy = "drop_newest"
	Block      Policy = "block"
)

// UnmarshalText accepts the three policy names.
func (p *Policy) UnmarshalText(b []byte) error {
	switch v := Policy(b); v {
	case DropOldest, DropNewest, Block:
		*p = v
		return nil
	}
	return fmt.Errorf("when_full %q: use drop_oldest, drop_newest or block", b)
}

// Drops says whether the policy drops rather than blocks.
func (p Policy) Drops() bool { return p == DropOldest || p == DropNewest }

// Batch is a decoded batch on its way to the pipeline.
type Batch struct {
	// Bytes is what it holds in memory.
	Bytes int
	// Push hands the batch to the pipeline. It returns nil once the
	// pipeline took it, or the refusal.
	Push func(ctx context.Context) error
	// Dropped counts what of the batch was not pushed, when it is dropped.
	Dropped func(why Reason)
	// Done, if set, runs once the batch was pushed or dropped.
	Done func()

	// refusal is the pipeline's last refusal of the batch: its next push
	// retries after it (backpressure.Retry), so that the consumer may find
	// what it found out of the batch then.
	refusal error
}

// push pushes the batch, retrying after its last refusal, if any.
func (b *Batch) push(ctx context.Context) error {
	err := b.Push(backpressure.Retry(ctx, b.refusal))
	b.refusal = err
	return err
}

// Reason says why a batch was dropped.
type Reason int

const (
	// Full: the pipeline refused and the source's buffer was full.
	Full Reason = iota
	// Undelivered: the receiver stopped while the pipeline still refused.
	Undelivered
)

// Settings configure a Buffer.
type Settings struct {
	Policy Policy // DropOldest or DropNewest
	// Limit is the most bytes held while the pipeline refuses.
	Limit int
	// Refused is told about every refused push (self-metric, log).
	Refused func(err error)
	// Retry backoff while the pipeline refuses.
	RetryFirst, RetryMax time.Duration
}

// Buffer holds refused batches in order and pushes them again in the
// background, the oldest first.
type Buffer struct {
	set Settings

	mu      sync.Mutex
	waiting []*Batch
	bytes   int
	// pushing is set while the head of waiting is being pushed by the
	// background loop: drop_oldest may not drop it.
	pushing bool
	wake    chan struct{}
	closed  bool // Close began: nothing is pushed in the background any more

	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

// New starts a Buffer's background loop; Close ends it.
func New(set Settings) *Buffer {
	b := &Buffer{set: set, wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go b.run()
	return b
}

// Put hands a batch on: pushed at once when nothing is waiting, else (or
// when the pipeline refuses it) kept in order, making room per the policy.
// It never waits for the pipeline to accept.
func (b *Buffer) Put(ctx context.Context, batch Batch) {
	b.mu.Lock()
	idle, closed := len(b.waiting) == 0, b.closed
	b.mu.Unlock()
	if idle || closed {
		err := batch.push(ctx)
		if err == nil {
			finish(&batch)
			return
		}
		b.set.Refused(err)
		if closed { // transports stop before Close: only a straggler gets here
			b.drop(&batch, Undelivered)
			return
		}
	}
	b.mu.Lock()
	dropped := b.add(&batch)
	b.mu.Unlock()
	for _, d := range dropped {
		b.drop(d, Full)
	}
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// add appends batch and returns what the policy drops to stay in Limit.
func (b *Buffer) add(batch *Batch) []*Batch {
	if b.set.Policy == DropNewest {
		if b.bytes+batch.Bytes > b.set.Limit && len(b.waiting) > 0 {
			return []*Batch{batch}
		}
		b.waiting = append(b.waiting, batch)
		b.bytes += batch.Bytes
		return nil
	}
	b.waiting = append(b.waiting, batch)
	b.bytes += batch.Bytes
	var dropped []*Batch
	first := 0
	if b.pushing {
		first = 1 // in flight: kept
	}
	for b.bytes > b.set.Limit && len(b.waiting) > first+1 {
		d := b.waiting[first]
		b.waiting = append(b.waiting[:first], b.waiting[first+1:]...)
		b.bytes -= d.Bytes
		dropped = append(dropped, d)
	}
	return dropped
}

func (b *Buffer) drop(batch *Batch, why Reason) {
	batch.Dropped(why)
	finish(batch)
}

func finish(batch *Batch) {
	if batch.Done != nil {
		batch.Done()
	}
}

// Len reports the batches and line bytes waiting.
func (b *Buffer) Len() (batches, bytes int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiting), b.bytes
}

// run pushes the head of the queue until it is taken, backing off while
// the pipeline refuses.
func (b *Buffer) run() {
	defer close(b.stopped)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-b.stop
		cancel()
	}()
	backoff := backpressure.Backoff{First: b.set.RetryFirst, Max: b.set.RetryMax}
	for {
		b.mu.Lock()
		var head *Batch
		if len(b.waiting) > 0 {
			head, b.pushing = b.waiting[0], true
		}
		b.mu.Unlock()
		if head == nil {
			select {
			case <-b.wake:
				continue
			case <-b.stop:
				return
			}
		}
		err := head.push(ctx)
		b.mu.Lock()
		b.pushing = false
		if err == nil {
			b.waiting = b.waiting[1:]
			b.bytes -= head.Bytes
		}
		b.mu.Unlock()
		if err == nil {
			finish(head)
			backoff.Reset()
			continue
		}
		b.set.Refused(err)
		// A new batch (wake) is a reason to try again now rather than drop
		// for nothing.
		if !backoff.Wait(ctx, err, b.wake, b.stop) {
			return
		}
	}
}

// Close stops the background loop, then pushes what still waits, retrying
// until ctx ends; what the pipeline has not taken by then is dropped and
// counted as Undelivered.
func (b *Buffer) Close(ctx context.Context) {
	b.once.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(b.stop)
		<-b.stopped
		backoff := backpressure.Backoff{First: b.set.RetryFirst, Max: b.set.RetryMax}
		for {
			b.mu.Lock()
			var head *Batch
			if len(b.waiting) > 0 {
				head = b.waiting[0]
			}
			b.mu.Unlock()
			if head == nil {
				return
			}
			var err error
			if ctx.Err() == nil {
				err = head.push(ctx)
			} else {
				err = ctx.Err()
			}
			if err != nil && ctx.Err() == nil {
				backoff.Wait(ctx, err, nil, nil) // when ctx ends, the next round drops
				continue
			}
			b.mu.Lock()
			b.waiting = b.waiting[1:]
			b.bytes -= head.Bytes
			b.mu.Unlock()
			if err == nil {
				finish(head)
			} else {
				b.drop(head, Undelivered)
			}
		}
	})
}
