package backpressure

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func ready(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestFreeClosesWhatFreedGaveOut(t *testing.T) {
	var r Room
	a, b := r.Freed(), r.Freed()
	if a != b || ready(a) {
		t.Fatal("before Free: one open channel for every waiter")
	}
	r.Free()
	if !ready(a) {
		t.Fatal("Free did not close the channel")
	}
	if c := r.Freed(); ready(c) {
		t.Fatal("after Free, Freed must wait for the next one")
	}
	r.Free()
	r.Free() // with nobody waiting: nothing to close
}

func TestFreedOfAnError(t *testing.T) {
	full := errors.New("sending queue is full")
	var r Room
	ch := r.Freed()
	err := fmt.Errorf("pipeline: %w", Full(full, ch))
	if !errors.Is(err, full) || err.Error() != "pipeline: sending queue is full" {
		t.Fatalf("Full must wrap the refusal as it is: %v", err)
	}
	if Freed(err) != ch {
		t.Fatal("Freed does not find the channel through wrapping")
	}
	if Freed(full) != nil || Freed(nil) != nil {
		t.Fatal("a refusal without Full has no channel")
	}
}

// A retry's context carries the refusal it retries after, and a first
// offer's none.
func TestRetryCarriesTheRefusal(t *testing.T) {
	ctx := context.Background()
	if Refusal(ctx) != nil || Retry(ctx, nil) != ctx {
		t.Fatal("a first offer carries a refusal, or Retry without one changed ctx")
	}
	first, second := errors.New("refused once"), errors.New("refused twice")
	retry := Retry(ctx, first)
	if Refusal(retry) != first {
		t.Fatalf("Refusal = %v, want %v", Refusal(retry), first)
	}
	if Refusal(Retry(retry, second)) != second {
		t.Fatal("a later retry does not carry its own refusal")
	}
}
