// Package watchdog tells a wedged pipeline from a slow or refused one, so
// that liveness can fail for the first and never for the second.
//
// Every stage that holds work says, while it holds it, by when it will next
// make progress: a receiver handing records to the pipeline (a call that by
// design never waits: a full queue or the memory limiter refuse at once), an
// exporter's push (encoding, then each HTTP attempt, bounded by the client's
// timeout, and each wait before a retry, whose length is known: a backoff,
// or the reset a 429/430 announced, capped at a minute). Axiom down, slow or limiting, and a
// full disk, all keep every stage within what it said. A stage is stuck when
// it is past what it said by more than the grace (the watchdog extension's
// wedged_after): a goroutine blocked on a lock or a channel that will never
// move, a write to a volume that hangs.
//
// Parties: receivers wrap their next consumer (Logs, Traces); the axiom
// exporter opens a Step for each push and moves its deadline (Expect); the
// watchdog extension asks Stuck periodically. All use Default.
package watchdog

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Watch holds the steps under way.
type Watch struct {
	now   func() time.Time
	mu    sync.Mutex
	steps map[*Step]struct{}
}

// Default is the process's watch. Tests make their own with New.
var Default = New(time.Now)

// New makes a watch that reads the time from now.
func New(now func() time.Time) *Watch {
	return &Watch{now: now, steps: map[*Step]struct{}{}}
}

// Step is one piece of work under way in a stage.
type Step struct {
	w     *Watch
	stage string
	// since is when the step last made progress; due is when it said it
	// would next make progress at the latest.
	since, due time.Time
	// parent is the step this one runs inside (an exporter's push in a
	// receiver's hand-off, when the exporter has no queue); children
	// counts the steps under way inside this one, which speak for it.
	parent   *Step
	children int
}

// Begin opens a step of stage that should make progress (or end) within
// bound of now.
func (w *Watch) Begin(stage string, bound time.Duration) *Step {
	now := w.now()
	s := &Step{w: w, stage: stage, since: now, due: now.Add(bound)}
	w.mu.Lock()
	w.steps[s] = struct{}{}
	w.mu.Unlock()
	return s
}

// BeginIn opens a step of stage inside the step ctx carries, if that one is
// still under way: while the inner step runs, its deadline is the one
// watched (a push without a queue may wait for a 430's reset inside a
// receiver's hand-off). The returned context carries the new step.
func (w *Watch) BeginIn(ctx context.Context, stage string, bound time.Duration) (context.Context, *Step) {
	s := w.Begin(stage, bound)
	if parent, _ := ctx.Value(stepKey{}).(*Step); parent != nil && parent.w == w {
		w.mu.Lock()
		if _, open := w.steps[parent]; open {
			parent.children++
			s.parent = parent
		}
		w.mu.Unlock()
	}
	return WithStep(ctx, s), s
}

// Expect records progress now, and that the next is due within bound.
func (s *Step) Expect(bound time.Duration) {
	if s == nil {
		return
	}
	now := s.w.now()
	s.w.mu.Lock()
	s.since, s.due = now, now.Add(bound)
	s.w.mu.Unlock()
}

// End closes the step.
func (s *Step) End() {
	if s == nil {
		return
	}
	now := s.w.now()
	s.w.mu.Lock()
	delete(s.w.steps, s)
	if p := s.parent; p != nil {
		p.children--
		p.since, p.due = now, now // progress, and the parent is to return now
	}
	s.w.mu.Unlock()
}

// Stuck is the step longest past its due time by more than grace, if any:
// its stage and when it last made progress.
func (w *Watch) Stuck(grace time.Duration) (stage string, since time.Time, stuck bool) {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	var worst *Step
	for s := range w.steps {
		if s.children == 0 && now.Sub(s.due) > grace && (worst == nil || s.due.Before(worst.due)) {
			worst = s
		}
	}
	if worst == nil {
		return "", time.Time{}, false
	}
	return worst.stage, worst.since, true
}

type stepKey struct{}

// WithStep carries s in ctx, for Expect.
func WithStep(ctx context.Context, s *Step) context.Context {
	return context.WithValue(ctx, stepKey{}, s)
}

// Expect moves the deadline of the step ctx carries, if any.
func Expect(ctx context.Context, bound time.Duration) {
	s, _ := ctx.Value(stepKey{}).(*Step)
	s.Expect(bound)
}

// HandOff names the step of receiver id handing records to its pipelines,
// the stage its Logs or Traces wrapper is given.
func HandOff(id component.ID) string {
	return "receiver/" + id.String() + " handing records to the pipeline"
}

// Logs wraps next so that each call into it is a step of stage that must
// return within the grace: handing records to the pipeline never waits.
func (w *Watch) Logs(stage string, next consumer.Logs) consumer.Logs {
	c, _ := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		ctx, s := w.BeginIn(ctx, stage, 0)
		defer s.End()
		return next.ConsumeLogs(ctx, ld)
	}, consumer.WithCapabilities(next.Capabilities()))
	return c
}

// Traces is Logs for spans.
func (w *Watch) Traces(stage string, next consumer.Traces) consumer.Traces {
	c, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		ctx, s := w.BeginIn(ctx, stage, 0)
		defer s.End()
		return next.ConsumeTraces(ctx, td)
	}, consumer.WithCapabilities(next.Capabilities()))
	return c
}
