package backpressure

import (
	"context"
	"time"
)

// Backoff is how a source waits between pushes its consumer refused: a
// delay that doubles from First up to Max, cut short when the refusal was
// made with Full and room is freed. The stdout receiver's retry and the
// when_full Buffer both wait with it. The zero delay fields are not
// defaulted: set both.
type Backoff struct {
	First, Max time.Duration

	wait  time.Duration // the next delay; 0 before the first
	timer *time.Timer
}

// Wait waits after the refusal err until the current delay ends, room is
// freed (Freed(err)) or wake is ready, and doubles the next delay up to Max.
// It returns false, at once, when ctx ends or stop is closed first. A nil
// wake or stop is never ready.
func (b *Backoff) Wait(ctx context.Context, err error, wake, stop <-chan struct{}) bool {
	if b.wait == 0 {
		b.wait = b.First
	}
	if b.timer == nil {
		b.timer = time.NewTimer(b.wait)
	} else {
		b.timer.Reset(b.wait) // since Go 1.23 a Reset timer delivers no stale tick, and one left running is collected
	}
	b.wait = min(2*b.wait, b.Max)
	select {
	case <-b.timer.C:
	case <-Freed(err):
	case <-wake:
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	}
	return true
}

// Reset starts the delays again from First: the consumer took a push.
func (b *Backoff) Reset() { b.wait = 0 }
