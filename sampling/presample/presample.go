// Package presample is the one contract between the `otlp` receiver
// (receivers/otlpreceiver) and the `sampling` processor (sampling/), which
// lets the receiver have spans decided while they are still raw protobuf:
// building pdata is most of what receiving a span costs, and with
// per-operation sampling most spans are dropped. Every party of it:
//
//   - The config key: the receiver's `sampling_processor` names the
//     component ID of a `sampling` processor (otlpreceiver.Config).
//   - The registry: the processor, when it starts in a traces pipeline,
//     registers its Filter under its component ID (Register) and removes it
//     at Shutdown. The receiver, when it starts in a traces pipeline, looks
//     the named ID up (Lookup) and fails to start if it is not there.
//   - The start order: this works because the collector starts processors
//     before receivers and shuts receivers down first, so the filter is
//     registered before the receiver looks for it and stays registered while
//     the receiver serves requests.
//   - The filter: for each protobuf trace request the receiver calls
//     FilterTraces, for each OTLP/JSON one FilterTracesJSON, from many
//     goroutines at once, and turns only the kept spans into pdata.
//     ErrUndecided leaves a request to the processor.
//   - The context marker: the receiver consumes a batch the filter decided
//     with WithDecided, and the processor passes a batch through untouched
//     when Decided names its own filter, so no span is decided twice.
//   - The held counts: a client whose request is refused sends all of it
//     again, and the filter decides it again. So the receiver calls the
//     filter with WithHeldCounts, the filter leaves what it would count of
//     the request (the sampling summaries and self-metrics) in the
//     HeldCounts instead of counting it, and the receiver commits them once
//     the pipeline has taken all of the request's kept spans, or discards
//     them when the client is told to send the request again.
package presample

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Filter decides the spans of a raw OTLP ExportTraceServiceRequest.
type Filter interface {
	// FilterTraces appends to dst req with only the kept spans, kept spans
	// already carrying what the processor adds to them, and returns it with
	// the number of spans req held. The result may be req itself when
	// nothing changes; callers treat it as read-only. ErrUndecided means the
	// filter leaves this request to the processor: the receiver consumes it
	// as it came, without the WithDecided mark.
	FilterTraces(ctx context.Context, dst, req []byte) (out []byte, spans int, err error)
	// FilterTracesJSON is FilterTraces for an OTLP/JSON request: out is
	// protobuf all the same, and never req.
	FilterTracesJSON(ctx context.Context, dst, req []byte) (out []byte, spans int, err error)
}

// ErrUndecided is returned by a Filter for a request it does not decide.
var ErrUndecided = errors.New("presample: request left to the processor")

var (
	mu      sync.Mutex
	filters = map[component.ID]Filter{}
)

// Register makes f the filter of the processor id until the returned
// function is called.
func Register(id component.ID, f Filter) (unregister func()) {
	mu.Lock()
	defer mu.Unlock()
	filters[id] = f
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if filters[id] == f {
			delete(filters, id)
		}
	}
}

// Lookup returns the filter registered for the processor id.
func Lookup(id component.ID) (Filter, bool) {
	mu.Lock()
	defer mu.Unlock()
	f, ok := filters[id]
	return f, ok
}

type decidedKey struct{}

// WithDecided marks ctx as carrying spans that f already decided.
func WithDecided(ctx context.Context, f Filter) context.Context {
	return context.WithValue(ctx, decidedKey{}, f)
}

// Decided returns the filter that decided the spans consumed with ctx, or nil.
func Decided(ctx context.Context) Filter {
	f, _ := ctx.Value(decidedKey{}).(Filter)
	return f
}

// Counts are what a filter counted of one request, not counted yet.
type Counts interface {
	// Commit counts them: the pipeline took the request's kept spans.
	Commit()
	// Discard forgets them: the client sends the request again, and it is
	// decided and counted again.
	Discard()
}

// HeldCounts is where a filter leaves a request's Counts (nil when it
// decided nothing).
type HeldCounts struct{ Counts Counts }

// Settle commits the held counts when taken, discards them otherwise.
func (h *HeldCounts) Settle(taken bool) {
	switch {
	case h.Counts == nil:
	case taken:
		h.Counts.Commit()
	default:
		h.Counts.Discard()
	}
	h.Counts = nil
}

type heldKey struct{}

// WithHeldCounts asks the filter called with ctx to leave what it counts of
// the request in h rather than count it.
func WithHeldCounts(ctx context.Context, h *HeldCounts) context.Context {
	return context.WithValue(ctx, heldKey{}, h)
}

// HeldCountsOf returns where the caller asked ctx's request's counts be
// left, or nil: count them at once.
func HeldCountsOf(ctx context.Context) *HeldCounts {
	h, _ := ctx.Value(heldKey{}).(*HeldCounts)
	return h
}
