// Package presample connects a receiver that holds raw OTLP trace requests
// to the sampling processor that owns the rules, so spans can be decided
// before pdata is built for them. Building pdata is most of what receiving a
// span costs, and with per-operation sampling most spans are dropped.
//
// The processor registers a Filter under its component ID when it starts;
// the receiver looks it up when it starts (the collector starts processors
// before receivers) and marks the context of the batches it already
// decided, so the processor passes them through instead of deciding twice.
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
