package axiomexporter

import (
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/losses"
)

// maxThrottleWait caps how long one 429/430 makes us wait. A 430 (monthly
// ingest limit) can name a reset days away; we retry at least every minute
// instead, until retry_on_failure.max_elapsed_time gives up.
const maxThrottleWait = time.Minute

// retryError wraps err for exporterhelper: a throttle delay until reset
// (capped), or a plain error for exponential backoff when reset is unknown.
func retryError(err error, reset time.Time) error {
	if reset.IsZero() {
		return err
	}
	wait := min(max(time.Until(reset), 0), maxThrottleWait)
	return exporterhelper.NewThrottleRetry(&limitedError{err: err, wait: wait}, wait)
}

// limitedError keeps the throttle wait readable for our own retries during
// shutdown (exporterhelper's throttle error type is unexported).
type limitedError struct {
	err  error
	wait time.Duration
}

func (e *limitedError) Error() string { return e.err.Error() }
func (e *limitedError) Unwrap() error { return e.err }

// rejected handles a permanent rejection: it counts the items, logs once
// per status and dataset (Axiom answers every request the same way until
// the configuration is fixed) and returns the error exporterhelper drops.
func (b *base) rejected(status, items, bytes int, err error) error {
	b.drops.Record(b.signal, losses.Rejected, items, bytes)
	if b.rejectedOnce.first(strconv.Itoa(status)) {
		b.set.Logger.Error("Axiom rejected a request; dropping its data without retrying (logged once per status and dataset, counted in otelcol_exporter_axiom_dropped_items{reason=\"rejected\"})",
			zap.String("dataset", b.dataset), zap.Int("status", status), zap.Error(err), zap.Int("items", items))
	}
	return consumererror.NewPermanent(fmt.Errorf("dataset %q: %w", b.dataset, err))
}

// tooLarge drops one record (event or span) that Axiom refused as too large
// (413) even alone in its request: recorded as a loss (counted, logged,
// reported).
func (b *base) tooLarge(items, bytes int) error {
	b.drops.Record(b.signal, losses.TooLarge, items, bytes)
	return consumererror.NewPermanent(fmt.Errorf("dataset %q: a record of %d bytes is too large for Axiom (413)", b.dataset, bytes))
}
