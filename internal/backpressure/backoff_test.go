package backpressure

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitFor runs b.Wait and returns what it returned, failing the test if it
// did not return within a minute (the waits it is given last an hour).
func waitFor(t *testing.T, b *Backoff, ctx context.Context, err error, wake, stop <-chan struct{}) bool {
	t.Helper()
	done := make(chan bool, 1)
	go func() { done <- b.Wait(ctx, err, wake, stop) }()
	select {
	case ok := <-done:
		return ok
	case <-time.After(time.Minute):
		t.Fatal("Wait did not return")
		return false
	}
}

var refused = errors.New("refused")

func TestBackoffWaitsOutADoublingDelayUpToMax(t *testing.T) {
	const first = 20 * time.Millisecond
	b := Backoff{First: first, Max: 3 * first}
	for i, want := range []time.Duration{first, 2 * first, 3 * first, 3 * first} {
		start := time.Now()
		if !b.Wait(context.Background(), refused, nil, nil) {
			t.Fatalf("wait %d: stopped with nothing to stop it", i)
		}
		if took := time.Since(start); took < want {
			t.Fatalf("wait %d took %v, before its delay of %v", i, took, want)
		}
	}
	b.Reset()
	if b.Wait(context.Background(), refused, nil, nil); b.wait != 2*first {
		t.Fatalf("after Reset the delays start again from First: the one after is %v, want %v", b.wait, 2*first)
	}
}

func TestBackoffEndsWhenRoomIsFreedOrWakeIsReady(t *testing.T) {
	b := Backoff{First: time.Hour, Max: time.Hour}
	var r Room
	err := Full(refused, r.Freed())
	r.Free()
	if !waitFor(t, &b, context.Background(), err, nil, nil) {
		t.Fatal("room freed: Wait must return true")
	}
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	if !waitFor(t, &b, context.Background(), refused, wake, nil) {
		t.Fatal("woken: Wait must return true")
	}
}

func TestBackoffStopsAtStopOrWhenTheContextEnds(t *testing.T) {
	b := Backoff{First: time.Hour, Max: time.Hour}
	stop := make(chan struct{})
	close(stop)
	if waitFor(t, &b, context.Background(), refused, nil, stop) {
		t.Fatal("stop closed: Wait must return false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if waitFor(t, &b, ctx, refused, nil, nil) {
		t.Fatal("context ended: Wait must return false")
	}
}
