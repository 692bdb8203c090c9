package axiomexporter

import (
	"context"

	"go.uber.org/zap"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/losses"
)

// inParts offers the queue, in parts, data that weighs more than it ever
// admits. A source's batch is bounded by its own measure (stdin's: 1 MiB of
// lines; an OTLP request's: max_request_body_size, 4 MiB), which weighs
// more as events (fields, a resource, each record's floor of minEvent) or
// is simply larger than the queue, while the memory queue holds one to two
// batches (budget.go): exporterhelper refuses a request larger than its
// queue on every offer ("element size too large", or as full on disk), so
// such data was never taken: a source that blocks when full blocked its app
// for good, and an OTLP client was refused on every retry. Parts of at most
// one batch always fit an empty queue, but for a record heavier than the
// queue on its own (the cut puts it alone): that one can never be queued,
// so it is dropped, counted (reason heavier_than_queue) and logged, once,
// instead of refused on every offer.
type inParts struct {
	// admits is the heaviest request the queue takes (its size in bytes);
	// 0 without a queue, which takes anything.
	admits int64
	batch  int // the weight of one batch, at most admits
}

func newInParts(cfg *Config) inParts {
	q := cfg.QueueConfig.Get()
	if q == nil {
		return inParts{}
	}
	return inParts{admits: q.QueueSize, batch: int(cfg.batchBytes())}
}

// never says whether a part the queue refused can never be queued: one
// record whose weight, by the queue's measure, is more than it admits.
func (p inParts) never(records, weight int) bool {
	return records == 1 && p.tooHeavy(int64(weight))
}

// dropHeavy drops one record (a part never says the queue cannot take),
// counted and logged.
func (b *base) dropHeavy(weight int, admits int64, err error) {
	b.drops.Record(b.signal, losses.HeavierThanQueue, 1, weight)
	b.set.Logger.Error("a record weighs more than the queue ever admits; dropped instead of refused on every retry (counted in otelcol_exporter_axiom_dropped_items{reason=\"heavier_than_queue\"})",
		zap.String("signal", b.signal), zap.Int("weight", weight), zap.Int64("queue_size", admits), zap.Error(err))
}

// tooHeavy says whether a request of the given weight, which the queue
// refused, weighs more than it ever admits.
func (p inParts) tooHeavy(weight int64) bool {
	return p.admits > 0 && weight > p.admits
}

// logs offers a copy of ld (ld is the caller's: the exporter does not
// mutate data) in parts of at most one batch by the weigher's measure.
func (p inParts) logs(ctx context.Context, b *base, w *logsWeigher, ld plog.Logs, offerOne func(context.Context, plog.Logs) error) error {
	cp := plog.NewLogs()
	ld.CopyTo(cp)
	var parts []plog.Logs
	for _, r := range w.request(cp).split(p.batch) {
		parts = append(parts, r.(*logsRequest).ld)
	}
	never := func(part plog.Logs, err error) bool {
		if part.LogRecordCount() != 1 {
			return false
		}
		weight := w.request(part).BytesSize()
		if !p.never(1, weight) {
			return false
		}
		b.dropHeavy(weight, p.admits, err)
		return true
	}
	return offerInOrder(ctx, parts, offerOne, never, func(err error, rest []plog.Logs) error {
		joined := plog.NewLogs()
		for _, left := range rest {
			left.ResourceLogs().MoveAndAppendTo(joined.ResourceLogs())
		}
		return consumererror.NewLogs(err, joined)
	})
}

// traces offers td (copied into the parts) in parts of at most one batch
// by the traces queue's measure, the protobuf size.
func (p inParts) traces(ctx context.Context, b *base, td ptrace.Traces, offerOne func(context.Context, ptrace.Traces) error) error {
	parts := cutSpans(td, spansOfAtMost(p.batch))
	never := func(part ptrace.Traces, err error) bool {
		if part.SpanCount() != 1 {
			return false
		}
		weight := tracesSizer.TracesSize(part)
		if !p.never(1, weight) {
			return false
		}
		b.dropHeavy(weight, p.admits, err)
		return true
	}
	return offerInOrder(ctx, parts, offerOne, never, func(err error, rest []ptrace.Traces) error {
		joined := ptrace.NewTraces()
		for _, left := range rest {
			left.ResourceSpans().MoveAndAppendTo(joined.ResourceSpans())
		}
		return consumererror.NewTraces(err, joined)
	})
}

// offerInOrder offers parts in order through offerOne. When a part is
// refused, what is left goes back to the caller as a partial refusal
// (partial joins it into a consumererror.Logs or Traces), which the caller
// retries alone: the parts taken are not offered again. A refusal of the
// first part is the whole data's. A refused part that the queue can never
// take is dropped by never (which says so) and counts as taken.
func offerInOrder[T any](ctx context.Context, parts []T, offerOne func(context.Context, T) error, never func(T, error) bool, partial func(error, []T) error) error {
	for i, part := range parts {
		err := offerOne(ctx, part)
		if err == nil || never(part, err) {
			continue
		}
		if i == 0 {
			return err
		}
		return partial(err, parts[i:])
	}
	return nil
}

// spansOfAtMost starts a new part before a span that would take the part
// over maxSize bytes of protobuf, as the traces queue weighs it (a span
// heavier than that goes alone). A span counts its field in its scope, and
// each resource and scope a part opens counts its own fields with the
// longest length a varint takes, since their lengths grow with their spans:
// the sum is never below the part's size.
func spansOfAtMost(maxSize int) func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) bool {
	var (
		m              ptrace.ProtoMarshaler
		size           int
		lastRS         ptrace.ResourceSpans
		lastSS         ptrace.ScopeSpans
		rsHead, ssHead int // the fields of the resource and scope the last span was in
	)
	return func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) bool {
		opens := 0
		if rs != lastRS {
			head := ptrace.NewResourceSpans()
			rs.Resource().CopyTo(head.Resource())
			head.SetSchemaUrl(rs.SchemaUrl())
			rsHead, lastSS = 1+maxVarint+m.ResourceSpansSize(head), ptrace.ScopeSpans{}
			opens += rsHead
		}
		if ss != lastSS {
			head := ptrace.NewScopeSpans()
			ss.Scope().CopyTo(head.Scope())
			head.SetSchemaUrl(ss.SchemaUrl())
			ssHead = 1 + maxVarint + m.ScopeSpansSize(head)
			opens += ssHead
		}
		lastRS, lastSS = rs, ss
		add := protoField(m.SpanSize(span))
		if size > 0 && size+opens+add > maxSize {
			size = rsHead + ssHead + add // the part opens the span's resource and scope again
			return true
		}
		size += opens + add
		return false
	}
}

// maxVarint is the longest a length below 4 GiB takes as a varint.
const maxVarint = 5

// protoField is what a message of n bytes costs as a field of its parent:
// a tag, its length as a varint, and itself.
func protoField(n int) int {
	varint := 1
	for v := n >> 7; v > 0; v >>= 7 {
		varint++
	}
	return 1 + varint + n
}
