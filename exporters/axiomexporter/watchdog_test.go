package axiomexporter

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/watchdog"
)

// A 430 whose reset is an hour away is no wedge: the push says how long it
// waits before the next attempt (maxThrottleWait, a minute), so the
// watchdog stays quiet through that wait plus wedged_after, even with the
// push inside a receiver's hand-off (no queue), and speaks only once the
// wait is past by more than that.
func TestA430WaitIsNoWedge(t *testing.T) {
	const grace = 5 * time.Minute
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := t0
	watch := watchdog.New(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	at := func(d time.Duration) { mu.Lock(); now = t0.Add(d); mu.Unlock() }
	saved := watchdog.Default
	watchdog.Default = watch
	defer func() { watchdog.Default = saved }()

	srv := axiomtest.NewForTest(t)
	srv.Outage(logsDS, axiomtest.IngestLimited(time.Now().Add(time.Hour)))
	cfg := testConfig(srv.URL())
	cfg.RetryConfig.MaxElapsedTime = 0 // wait for the reset, however far
	exp, err := NewFactory().CreateLogs(context.Background(), newHarness().set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	handOff := watch.Logs("receiver/stdout handing records to the pipeline", exp)
	done := make(chan struct{})
	go func() { _ = handOff.ConsumeLogs(context.Background(), stringLogs(3)); close(done) }()

	// Until the push waits, some step is due sooner than the wait ends: an
	// attempt within timeout (30 s), encoding at once.
	deadline := time.Now().Add(waitWindow) // only bounds a failing test
	for {
		if time.Now().After(deadline) {
			stage, _, _ := watch.Stuck(-maxThrottleWait + time.Second)
			t.Fatalf("%s never said it waits out the 430", stage)
		}
		if _, _, stuck := watch.Stuck(-maxThrottleWait + time.Second); !stuck && len(srv.Requests()) > 0 {
			break
		}
		select {
		case <-done:
			t.Fatal("the push ended instead of waiting for the reset")
		case <-time.After(10 * time.Millisecond):
		}
	}
	at(maxThrottleWait + grace)
	if stage, _, stuck := watch.Stuck(grace); stuck {
		t.Fatalf("%s counted as wedged while waiting out Axiom's 430", stage)
	}
	at(maxThrottleWait + grace + time.Second)
	if _, _, stuck := watch.Stuck(grace); !stuck {
		t.Fatal("not wedged though the wait is past by more than wedged_after: the push is not watched")
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-done
}
