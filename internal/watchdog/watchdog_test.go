package watchdog

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
)

const grace = 5 * time.Minute

// clock is a time the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)} }

// blocking is a next consumer that blocks until released, as a deadlocked
// processor or a hung disk write would; entered says it was called.
func blocking() (next consumer.Logs, entered chan struct{}, release func()) {
	entered, gate := make(chan struct{}, 1), make(chan struct{})
	next, _ = consumer.NewLogs(func(context.Context, plog.Logs) error {
		entered <- struct{}{}
		<-gate
		return nil
	})
	return next, entered, func() { close(gate) }
}

// A hand-off to the pipeline that does not return is a wedge once it is
// past the grace; it names the stage, and ends once the call returns.
func TestAHandOffThatDoesNotReturnIsStuck(t *testing.T) {
	c := newClock()
	w := New(c.now)
	next, entered, release := blocking()
	wrapped := w.Logs("receiver/stdout handing records to the pipeline", next)
	done := make(chan struct{})
	go func() { _ = wrapped.ConsumeLogs(context.Background(), plog.NewLogs()); close(done) }()
	<-entered

	c.add(grace)
	if _, _, stuck := w.Stuck(grace); stuck {
		t.Fatal("stuck at exactly the grace")
	}
	c.add(time.Second)
	stage, since, stuck := w.Stuck(grace)
	if !stuck || stage != "receiver/stdout handing records to the pipeline" || !since.Equal(newClock().t) {
		t.Fatalf("Stuck = %q, %v, %v; want the hand-off, since it began", stage, since, stuck)
	}
	release()
	<-done
	if _, _, stuck := w.Stuck(grace); stuck {
		t.Fatal("still stuck after the call returned")
	}
}

// A push waiting for a 430's reset (known, an hour away) inside a
// receiver's hand-off (an exporter without a queue) is not a wedge until
// the reset is past by more than the grace; the push's progress is the
// hand-off's.
func TestAKnownWaitInsideAHandOffIsNotStuck(t *testing.T) {
	c := newClock()
	w := New(c.now)
	outer := w.Begin("receiver/stdout handing records to the pipeline", 0)
	ctx, push := w.BeginIn(WithStep(context.Background(), outer), "exporter/axiom sending logs", 0)
	Expect(ctx, 30*time.Second) // an attempt, within the client's timeout
	c.add(20 * time.Second)
	Expect(ctx, time.Hour) // Axiom answered 430, reset in an hour
	c.add(time.Hour + grace)
	if stage, _, stuck := w.Stuck(grace); stuck {
		t.Fatalf("%s counted as wedged while waiting for a known reset", stage)
	}
	c.add(time.Second)
	if stage, _, stuck := w.Stuck(grace); !stuck || stage != "exporter/axiom sending logs" {
		t.Fatalf("Stuck = %q, %v; want the push, past its reset by more than the grace", stage, stuck)
	}
	push.End() // the hand-off is to return now
	if _, _, stuck := w.Stuck(grace); stuck {
		t.Fatal("the hand-off counted as stuck the moment the push inside it ended")
	}
	c.add(grace + time.Second)
	if stage, _, stuck := w.Stuck(grace); !stuck || stage != "receiver/stdout handing records to the pipeline" {
		t.Fatalf("Stuck = %q, %v; want the hand-off, which did not return after its push", stage, stuck)
	}
	outer.End()
}

// A step that ended before the inner one began (a queue kept the caller's
// context) does not adopt it: the inner step is watched on its own.
func TestAnEndedStepIsNoParent(t *testing.T) {
	c := newClock()
	w := New(c.now)
	outer := w.Begin("receiver/otlp handing records to the pipeline", 0)
	outer.End()
	_, push := w.BeginIn(WithStep(context.Background(), outer), "exporter/axiom sending traces", 0)
	c.add(grace + time.Second)
	if stage, _, stuck := w.Stuck(grace); !stuck || stage != "exporter/axiom sending traces" {
		t.Fatalf("Stuck = %q, %v; want the push", stage, stuck)
	}
	push.End()
}

// With nothing under way, however long nothing happens, nothing is stuck:
// an idle sidecar, or one whose sources are quiet.
func TestIdleIsNeverStuck(t *testing.T) {
	c := newClock()
	w := New(c.now)
	w.Begin("exporter/axiom sending logs", time.Second).End()
	c.add(1000 * time.Hour)
	if _, _, stuck := w.Stuck(grace); stuck {
		t.Fatal("stuck with nothing under way")
	}
}
