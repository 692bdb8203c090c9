package axiomexporter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/watchdog"
)

// Backoff between retries once Shutdown has begun: short, so that what is
// held gets through a brief Axiom hiccup within shutdown_timeout.
const (
	drainInitialBackoff = 100 * time.Millisecond
	drainMaxBackoff     = 2 * time.Second
)

// deliver runs attempt and retries it as retry_on_failure says, honouring
// the reset of a 429/430, under a context that ends at the shutdown
// deadline.
//
// The retrying is ours, not exporterhelper's, because of shutdown:
// exporterhelper abandons a request that is waiting for its next retry as
// soon as Shutdown begins (an in-memory queue then drops it) and gives
// what is still queued one attempt. Here a Shutdown wakes the waiting
// request and keeps retrying until it is delivered or shutdown_timeout
// passes, so a SIGTERM'd sidecar delivers what it holds through a short
// outage. exporterhelper's retry stays configured underneath: it turns a
// request cut off by shutdown into one that a persistent queue keeps.
func (b *base) deliver(ctx context.Context, items int, attempt func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(b.abortCtx, cancel)()
	attempt = b.watched(attempt)

	err := attempt(ctx)
	rc := b.cfg.RetryConfig
	if err == nil || !rc.Enabled {
		return err
	}
	var deadline time.Time
	if rc.MaxElapsedTime > 0 {
		deadline = time.Now().Add(rc.MaxElapsedTime)
	}
	interval := rc.InitialInterval
	for err != nil && !consumererror.IsPermanent(err) {
		b.failing(err)
		draining := b.drainCtx.Err() != nil
		wait := jitter(interval, rc.RandomizationFactor)
		if draining {
			wait = min(wait, drainMaxBackoff)
		}
		var limited *limitedError
		if errors.As(err, &limited) {
			wait = max(wait, limited.wait)
		}
		if !draining && !deadline.IsZero() && time.Now().Add(wait).After(deadline) {
			return consumererror.NewPermanent(fmt.Errorf("no more retries left after %v (retry_on_failure.max_elapsed_time): %w", rc.MaxElapsedTime, err))
		}
		if b.retryLogged.allow(time.Now()) {
			b.set.Logger.Warn("Sending to Axiom failed; retrying (logged at most once a minute)",
				zap.String("dataset", b.dataset), zap.Error(err), zap.Duration("wait", wait))
		}
		watchdog.Expect(ctx, wait) // a wait of known length is progress
		ok := b.sleep(ctx, wait, draining)
		watchdog.Expect(ctx, 0)
		if !ok {
			break // shutdown_timeout passed
		}
		if !draining && b.drainCtx.Err() != nil {
			interval = drainInitialBackoff // woken by Shutdown
		} else {
			interval = min(time.Duration(float64(interval)*rc.Multiplier), rc.MaxInterval)
		}
		err = attempt(ctx)
	}
	if err != nil && b.abortCtx.Err() != nil && !consumererror.IsPermanent(err) {
		b.droppedOnShutdown(items)
	}
	return err
}

// watched tells the watchdog that each attempt may take up to the HTTP
// client's timeout; without one (timeout: 0) a slow Axiom may hold an
// attempt for ever, and only a wedge elsewhere can be told.
func (b *base) watched(attempt func(context.Context) error) func(context.Context) error {
	bound := b.cfg.Timeout
	if bound <= 0 {
		bound = unbounded
	}
	return func(ctx context.Context) error {
		watchdog.Expect(ctx, bound)
		defer watchdog.Expect(ctx, 0)
		return attempt(ctx)
	}
}

// unbounded is a bound that never passes.
const unbounded = 100 * 365 * 24 * time.Hour

// sleep waits d, or less when Shutdown begins while not yet draining; it
// reports false when ctx ended.
func (b *base) sleep(ctx context.Context, d time.Duration, draining bool) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	drain := b.drainCtx.Done()
	if draining {
		drain = nil // already draining: sleep the full wait
	}
	select {
	case <-ctx.Done():
		return false
	case <-drain:
	case <-t.C:
	}
	return ctx.Err() == nil
}

// jitter spreads d by ±factor so that many sidecars do not retry in step.
func jitter(d time.Duration, factor float64) time.Duration {
	if factor <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + factor*(2*rand.Float64()-1)))
}
