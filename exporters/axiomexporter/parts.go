package axiomexporter

import (
	"context"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
)

// inParts offers the queue, in parts, logs that weigh more than it ever
// admits. A source's batch is bounded by its own measure (stdin's: 1 MiB of
// lines), which weighs more as events (fields, a resource, each record's
// floor of minEvent), while the smallest memory budget leaves a queue of
// one batch (budget.go): exporterhelper refuses a request larger than its
// queue on every offer ("element size too large", or as full on disk), so
// such a batch was never taken and a source that blocks when full blocked
// its app for good. Parts of at most one batch always fit an empty queue.
type inParts struct {
	// admits is the heaviest request the queue takes (its size in bytes);
	// 0 without a queue, which takes anything.
	admits int64
	batch  int // the weight of one batch, at most admits
	w      *logsWeigher
}

func newInParts(cfg *Config, w *logsWeigher) inParts {
	q := cfg.QueueConfig.Get()
	if q == nil {
		return inParts{}
	}
	return inParts{admits: q.QueueSize, batch: int(cfg.batchBytes()), w: w}
}

// tooHeavy says whether a request the queue refused weighed more than it
// ever admits (o.r is nil when the offer was refused before one was made).
func (p inParts) tooHeavy(o *offered) bool {
	return p.admits > 0 && o.r != nil && int64(o.r.weight) > p.admits
}

// offer offers a copy of ld (ld is the caller's: the exporter does not
// mutate data) in parts of at most one batch, in order, through offerOne.
// When a part is refused, what is left goes back to the caller as a
// partial refusal (consumererror.Logs), which the caller retries alone: the
// parts taken are not offered again.
func (p inParts) offer(ctx context.Context, ld plog.Logs, offerOne func(context.Context, plog.Logs) error) error {
	cp := plog.NewLogs()
	ld.CopyTo(cp)
	parts := p.w.request(cp).split(p.batch)
	for i, part := range parts {
		err := offerOne(ctx, part.(*logsRequest).ld)
		if err == nil {
			continue
		}
		if i == 0 {
			return err
		}
		rest := plog.NewLogs()
		for _, left := range parts[i:] {
			left.(*logsRequest).ld.ResourceLogs().MoveAndAppendTo(rest.ResourceLogs())
		}
		return consumererror.NewLogs(err, rest)
	}
	return nil
}
