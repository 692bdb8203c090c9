// Package streamtest is the transports' test double for the pipeline: a
// Recorder whose Sink keeps a copy of every line it accepts, and which a
// test can make block as a refusing pipeline does.
package streamtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// Line is a delivered line with its batch's attributes, copied out of the
// batch (stream.Line.Data is only valid during the Sink call).
type Line struct {
	Data      string
	Time      time.Time
	Stream    string
	Truncated bool
	Attrs     map[string]string
}

// Recorder keeps what its Sink accepted. While blocked (Block), each Sink
// call waits until it is admitted (Admit), released, or its ctx ends.
type Recorder struct {
	mu      sync.Mutex
	lines   []Line
	batches int
	calls   int
	gate    chan struct{}
	changed chan struct{} // signalled after every accepted batch
	entered chan struct{} // signalled when a call starts
}

// NewRecorder returns a Recorder that accepts every batch at once.
func NewRecorder() *Recorder {
	return &Recorder{changed: make(chan struct{}, 1), entered: make(chan struct{}, 1)}
}

// Sink is the stream.Sink. A transport must never deliver an empty batch:
// that is answered with an error.
func (r *Recorder) Sink(ctx context.Context, b stream.Batch) error {
	r.mu.Lock()
	r.calls++
	gate := r.gate
	r.mu.Unlock()
	select {
	case r.entered <- struct{}{}:
	default:
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if len(b.Lines) == 0 {
		return errors.New("empty batch")
	}
	attrs := make(map[string]string, len(b.Attrs))
	for _, a := range b.Attrs {
		attrs[a.Key] = a.Value
	}
	r.mu.Lock()
	for _, l := range b.Lines {
		r.lines = append(r.lines, Line{Data: string(l.Data), Time: l.Time, Stream: l.Stream, Truncated: l.Truncated, Attrs: attrs})
	}
	r.batches++
	r.mu.Unlock()
	if b.Done != nil {
		b.Done() // in the pipeline: as the block policy's Sink does
	}
	select {
	case r.changed <- struct{}{}:
	default:
	}
	return nil
}

// Block makes every later Sink call wait until it is admitted or release
// is called.
func (r *Recorder) Block() (release func()) {
	g := make(chan struct{})
	r.mu.Lock()
	r.gate = g
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.gate = nil
		r.mu.Unlock()
		close(g)
	}
}

// Admit lets one waiting Sink call of a blocked Recorder accept its batch,
// and reports whether one was waiting within d.
func (r *Recorder) Admit(d time.Duration) bool {
	r.mu.Lock()
	g := r.gate
	r.mu.Unlock()
	select {
	case g <- struct{}{}:
		return true
	case <-time.After(d):
		return false
	}
}

// Entered is signalled when a Sink call starts (it holds at most one signal).
func (r *Recorder) Entered() <-chan struct{} { return r.entered }

// Lines returns a copy of the lines accepted so far, in order.
func (r *Recorder) Lines() []Line {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Line(nil), r.lines...)
}

// Len is the number of lines accepted so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lines)
}

// Batches is the number of batches accepted so far.
func (r *Recorder) Batches() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.batches
}

// Calls is the number of Sink calls so far, accepted or not.
func (r *Recorder) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// Wait waits until at least n lines were accepted and returns them; the
// long deadline only turns a hang into a failure, it measures nothing.
func (r *Recorder) Wait(t testing.TB, n int) []Line {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for r.Len() < n {
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("got %d lines, want %d", r.Len(), n)
		}
	}
	return r.Lines()
}
