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
