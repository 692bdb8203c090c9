package whenfull

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/backpressure"
)

// pipeline is a fake pipeline that refuses while closed and records the
// ids of the batches it took.
type pipeline struct {
	mu    sync.Mutex
	open  bool
	taken []int
}

var errRefused = errors.New("refused")

func (p *pipeline) setOpen(open bool) {
	p.mu.Lock()
	p.open = open
	p.mu.Unlock()
}

func (p *pipeline) takenIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.taken...)
}

// ledger records how each batch ended: pushed, or dropped with a reason.
type ledger struct {
	mu      sync.Mutex
	done    map[int]int
	dropped map[Reason]int
}

func newBuffer(t *testing.T, policy Policy, limit int) *Buffer {
	t.Helper()
	return New(Settings{
		Policy: policy, Limit: limit,
		Refused:    func(error) {},
		RetryFirst: time.Millisecond, RetryMax: 5 * time.Millisecond,
	})
}

func (l *ledger) batch(p *pipeline, id int) Batch {
	return Batch{
		Bytes: 100,
		Dropped: func(why Reason) {
			l.mu.Lock()
			l.dropped[why]++
			l.mu.Unlock()
		},
		Push: func(context.Context) error {
			p.mu.Lock()
			defer p.mu.Unlock()
			if !p.open {
				return errRefused
			}
			p.taken = append(p.taken, id)
			return nil
		},
		Done: func() {
			l.mu.Lock()
			l.done[id]++
			l.mu.Unlock()
		},
	}
}

// run puts 100 batches of 100 bytes into a buffer of limit 1000 while the
// pipeline refuses, then opens it and closes the buffer.
func run(t *testing.T, policy Policy) (taken []int, l *ledger) {
	l = &ledger{done: map[int]int{}, dropped: map[Reason]int{}}
	p := &pipeline{}
	b := newBuffer(t, policy, 1000)
	for id := range 100 {
		b.Put(context.Background(), l.batch(p, id))
	}
	if _, bytes := b.Len(); bytes > 1000 {
		t.Errorf("buffer holds %d bytes, limit 1000", bytes)
	}
	p.setOpen(true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.Close(ctx)
	taken = p.takenIDs()
	for id := range 100 {
		if l.done[id] != 1 {
			t.Errorf("batch %d ended %d times, want once", id, l.done[id])
		}
	}
	if len(taken)+l.dropped[Full] != 100 || l.dropped[Undelivered] != 0 {
		t.Errorf("%d taken + %v dropped != 100", len(taken), l.dropped)
	}
	return taken, l
}

func TestDropOldestKeepsTheLatestBatches(t *testing.T) {
	taken, _ := run(t, DropOldest)
	if len(taken) != 10 {
		t.Fatalf("took %v, want the 10 that fit", taken)
	}
	// The first batch may be in flight when room is made; the rest are
	// the newest, in order.
	for i, id := range taken[len(taken)-9:] {
		if id != 91+i {
			t.Fatalf("took %v, want the newest batches in order", taken)
		}
	}
}

func TestDropNewestKeepsTheFirstBatches(t *testing.T) {
	taken, _ := run(t, DropNewest)
	for i, id := range taken {
		if id != i {
			t.Fatalf("took %v, want 0..9 in order", taken)
		}
	}
	if len(taken) != 10 {
		t.Fatalf("took %v, want the 10 that fit", taken)
	}
}

// A batch the pipeline never takes is dropped as undelivered at Close,
// and a batch Put after Close is offered once.
func TestCloseDropsWhatThePipelineStillRefuses(t *testing.T) {
	l := &ledger{done: map[int]int{}, dropped: map[Reason]int{}}
	p := &pipeline{}
	b := newBuffer(t, DropOldest, 1000)
	for id := range 3 {
		b.Put(context.Background(), l.batch(p, id))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	b.Close(ctx)
	b.Put(context.Background(), l.batch(p, 3))
	if l.dropped[Undelivered] != 4 || len(p.takenIDs()) != 0 {
		t.Fatalf("dropped %v, taken %v; want 4 undelivered", l.dropped, p.takenIDs())
	}
	for id := range 4 {
		if l.done[id] != 1 {
			t.Errorf("batch %d ended %d times", id, l.done[id])
		}
	}
}

func TestPolicyNames(t *testing.T) {
	var p Policy
	for _, name := range []string{"drop_oldest", "drop_newest", "block"} {
		if err := p.UnmarshalText([]byte(name)); err != nil || string(p) != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := p.UnmarshalText([]byte("drop")); err == nil {
		t.Error("unknown policy accepted")
	}
}

// The buffer's push of its head after a refusal carries that refusal
// (backpressure.Refusal); a push of another batch carries none.
func TestPushAfterARefusalCarriesIt(t *testing.T) {
	b := newBuffer(t, DropNewest, 1000)
	refused := errors.New("refused")
	var mu sync.Mutex
	var carried []error
	pushes := 0
	push := func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		carried = append(carried, backpressure.Refusal(ctx))
		if pushes++; pushes == 1 {
			return refused
		}
		return nil
	}
	done := make(chan struct{}, 2)
	b.Put(context.Background(), Batch{Bytes: 100, Push: push, Dropped: func(Reason) {}, Done: func() { done <- struct{}{} }})
	<-done
	b.Put(context.Background(), Batch{Bytes: 100, Push: push, Dropped: func(Reason) {}, Done: func() { done <- struct{}{} }})
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.Close(ctx)
	mu.Lock()
	defer mu.Unlock()
	if want := []error{nil, refused, nil}; !slices.Equal(carried, want) {
		t.Errorf("pushes carried %v, want %v", carried, want)
	}
}
