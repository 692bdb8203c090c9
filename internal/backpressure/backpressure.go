// Package backpressure lets a consumer that refuses data for want of room
// tell whoever retries when it has room again.
//
// The stdout receiver's sources retry a refused push after a backoff
// (10 ms doubling to 1 s). Against the axiom exporter's memory queue at max
// rate that backoff, not the CPU, set the pace: the queue freed its room
// when a request was sent, a few ms after it refused, and the sources slept
// on while the exporter sat idle (FireLens-style Forward at ~150,000 lines/s
// used 2.2-3.5 of its core's 6 CPU seconds, stdin alike). A refusal made
// with Full carries a channel that is closed at the consumer's next Free,
// so the retry comes as soon as room was freed; the backoff stays for
// refusals that say nothing (the memory limiter, the queue on disk).
// Backoff is that wait, for the receiver's retry and its when_full Buffer.
package backpressure

import (
	"context"
	"errors"
	"sync"
)

// Room is a consumer's signal that room was freed.
type Room struct {
	mu    sync.Mutex
	freed chan struct{} // closed at the next Free; nil while nobody waits
}

// Freed returns a channel that is closed at the next Free.
func (r *Room) Freed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.freed == nil {
		r.freed = make(chan struct{})
	}
	return r.freed
}

// Free tells everyone holding a channel from Freed that room was freed.
func (r *Room) Free() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.freed != nil {
		close(r.freed)
		r.freed = nil
	}
}

// fullError is a refusal for want of room.
type fullError struct {
	err   error
	freed <-chan struct{}
}

func (e *fullError) Error() string { return e.err.Error() }
func (e *fullError) Unwrap() error { return e.err }

// Full wraps the refusal err (errors.Is still sees what it wraps) with
// freed, a channel from Room.Freed taken before the consumer found it had
// no room: room freed since then has closed it already.
func Full(err error, freed <-chan struct{}) error {
	return &fullError{err: err, freed: freed}
}

// Freed returns the channel of a refusal made with Full, closed once the
// consumer has freed room; nil (a channel never ready) for other errors.
func Freed(err error) <-chan struct{} {
	var f *fullError
	if errors.As(err, &f) {
		return f.freed
	}
	return nil
}

type refusalKey struct{}

// Retry returns ctx for offering again the data that err refused, so that
// the consumer finds its refusal there (Refusal): a refusal may carry what
// the consumer found out about the data (the axiom exporter leaves its
// weight), which it then need not find out again. The note lives as long as
// the retry, so a consumer keeps nothing of data it refused. A nil err (a
// first offer) leaves ctx as it is.
func Retry(ctx context.Context, err error) context.Context {
	if err == nil {
		return ctx
	}
	return context.WithValue(ctx, refusalKey{}, err)
}

// Refusal is the refusal ctx retries after (Retry), or nil.
func Refusal(ctx context.Context) error {
	err, _ := ctx.Value(refusalKey{}).(error)
	return err
}
