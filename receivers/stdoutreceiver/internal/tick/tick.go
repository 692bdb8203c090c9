// Package tick is the clock the stdout receiver's transports pause on: a
// Fluent Forward connection waiting for more frames and stdin waiting for
// more writes end their pauses at the same moments (multiples of a period),
// so that they wake the process together, and on Linux they wake it through
// the poller (a timerfd) rather than through a runtime timer.
//
// Why not time.Sleep: the Go runtime's monitor thread (sysmon) sleeps, while
// the process is idle, until the next runtime timer, so every timer that
// ends a pause woke it as well as the goroutine, and it then stayed awake
// for up to 10 ms more (at 20k Fluent Forward lines/s on a 20 ms tick: ~100
// of the process's ~280 thread wake-ups a second). A wake-up through the
// poller leaves it asleep. With no runtime timer due, sysmon neither
// preempts long-running goroutines nor retakes a P from a system call until
// the next one; system calls made through the scheduler wake it themselves,
// and the transports' reads are short.
package tick

import (
	"sync"
	"time"
)

// Next is the first multiple of period (counted from the zero Unix time)
// after now: the moment a pause that began at now ends.
func Next(now time.Time, period time.Duration) time.Time {
	return now.Truncate(period).Add(period)
}

// At returns a channel that is closed once t has passed (at once if it
// has). Callers asking for the same t share one wake-up.
func At(t time.Time) <-chan struct{} {
	return clock.at(t)
}

// Sleep waits until t has passed.
func Sleep(t time.Time) {
	<-At(t)
}

// late is how much after its moment a wake-up is armed, so that a clock
// that runs a little apart from time.Now's never wakes a waiter early
// (which would then sleep again).
const late = 50 * time.Microsecond

// waker arms one wake-up at a time; wake is called from the waker's own
// goroutine once the armed moment has passed (or, for a fallback, from
// wherever it runs).
type waker interface {
	arm(d time.Duration) // wake in d (d > 0); replaces the armed wake-up
}

// timerClock is a clock over one waker: the earliest moment waited for is
// armed, and each wake-up closes the channels of every moment passed.
type timerClock struct {
	mu sync.Mutex
	w  waker
	// waiting maps the moments waited for (wall clock, so that equal
	// moments share a wake-up) to their channels.
	waiting map[time.Time]*waiter
	// armed is when the waker is armed for; zero when unarmed.
	armed time.Time
	// newWaker makes the waker on first use, with the function it calls
	// on every wake-up.
	newWaker func(wake func()) waker
}

// waiter is one moment's channel and when it is due on the monotonic
// clock: a step of the wall clock moves only moments asked for after it.
type waiter struct {
	ch  chan struct{}
	due time.Time
}

var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

var clock = &timerClock{newWaker: newWaker}

func (c *timerClock) at(t time.Time) <-chan struct{} {
	t = t.Round(0)
	now := time.Now()
	d := t.Sub(now)
	if d <= 0 {
		return closed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.waiting[t]; ok {
		return w.ch
	}
	if c.w == nil {
		c.w = c.newWaker(c.wake)
		c.waiting = make(map[time.Time]*waiter)
	}
	w := &waiter{ch: make(chan struct{}), due: now.Add(d)}
	c.waiting[t] = w
	if c.armed.IsZero() || w.due.Before(c.armed) {
		c.arm(w.due, now)
	}
	return w.ch
}

// arm sets the waker for due; c.mu is held.
func (c *timerClock) arm(due, now time.Time) {
	c.armed = due
	c.w.arm(due.Sub(now) + late)
}

// wake closes the channels of the moments passed and arms the earliest
// moment left.
func (c *timerClock) wake() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	var next time.Time
	for t, w := range c.waiting {
		if !now.Before(w.due) {
			close(w.ch)
			delete(c.waiting, t)
		} else if next.IsZero() || w.due.Before(next) {
			next = w.due
		}
	}
	c.armed = time.Time{}
	if !next.IsZero() {
		c.arm(next, now)
	}
}

// afterFuncWaker is the waker on systems without a timerfd: a runtime
// timer.
type afterFuncWaker struct {
	t    *time.Timer
	wake func()
}

func newAfterFuncWaker(wake func()) waker { return &afterFuncWaker{wake: wake} }

func (a *afterFuncWaker) arm(d time.Duration) {
	if a.t == nil {
		a.t = time.AfterFunc(d, a.wake)
		return
	}
	a.t.Reset(d)
}
