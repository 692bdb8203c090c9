package otlpreceiver

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/backpressure"
)

// A request can be partly taken: the axiom exporter offers data heavier
// than its queue in parts and names the parts it could not queue in a
// partial refusal (internal/partial). OTLP has no answer that says "send
// these again": a client that is refused sends its whole request again,
// and partial_success would have it drop the rest. So the receiver offers
// the rest again itself while the client waits, backing off as the
// stdout receiver does, for up to restWait (or the client's deadline). A
// rest still refused then is refused to the client (503, Unavailable),
// which sends the whole request again: the spans taken from it are
// remembered (takenSpans) and skipped when they come back, so they reach
// the pipeline once. Log records have no identity to remember them by:
// a log request's rest refused after restWait comes back whole, and its
// taken part is sent twice.
const restWait = 2 * time.Second

// restBackoff is how the rest is offered again: soon, as the exporter's
// queue frees a part's room each time Axiom takes a request.
var restBackoff = backpressure.Backoff{First: 20 * time.Millisecond, Max: 250 * time.Millisecond}

// offerRest offers data through consume and, once the pipeline took part
// of it and refused the rest (rest names what it did not take), offers the
// rest again until it is taken, restWait passes or ctx ends. It returns
// what was not taken (data when nothing was, a zero T when all was) and
// the last refusal. A refusal of the whole data is returned at once.
func offerRest[T comparable](ctx context.Context, data T, consume func(context.Context, T) error, rest func(T, error) T) (T, error) {
	var none T
	whole := data
	deadline := time.Now().Add(restWait)
	backoff := restBackoff
	for {
		err := consume(ctx, data)
		if err == nil {
			return none, nil
		}
		data = rest(data, err)
		if data == whole || time.Now().After(deadline) || !backoff.Wait(ctx, err, nil, nil) {
			return data, err
		}
	}
}

// takenSpans remembers, for takenFor, the spans the pipeline took from
// requests whose rest was refused to their client, so that the client's
// retry of the whole request does not send them twice. It holds at most
// maxTaken spans (about 1 MiB at most), forgetting the oldest first, and
// nothing once takenFor has passed since the last. Spans are known by a
// hash of their trace and span ids (random: they do not collide in
// practice).
type takenSpans struct {
	mu    sync.Mutex
	at    map[uint64]int64 // when taken, in Unix nanoseconds
	until atomic.Int64     // when the last remembered is forgotten; 0 when none is
	seed  maphash.Seed
}

const (
	// maxTaken is more than an OTLP request of the smallest spans holds
	// (max_request_body_size, 4 MiB, of ~70-byte spans).
	maxTaken = 1 << 16
	// takenFor outlasts the OTLP SDKs' retries (Go, Java, JS: at most one
	// minute from the first try, by default).
	takenFor = 5 * time.Minute
)

func newTakenSpans() *takenSpans { return &takenSpans{seed: maphash.MakeSeed()} }

func (t *takenSpans) key(sp ptrace.Span) uint64 {
	var b [24]byte
	tid, sid := sp.TraceID(), sp.SpanID()
	copy(b[:16], tid[:])
	copy(b[16:], sid[:])
	return maphash.Bytes(t.seed, b[:])
}

// remember notes the spans of offered that are not in left as taken.
func (t *takenSpans) remember(offered, left ptrace.Traces) {
	refused := map[uint64]struct{}{}
	eachSpan(left, func(sp ptrace.Span) { refused[t.key(sp)] = struct{}{} })
	now := time.Now().UnixNano()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.at == nil {
		t.at = map[uint64]int64{}
	}
	eachSpan(offered, func(sp ptrace.Span) {
		if k := t.key(sp); !has(refused, k) {
			t.at[k] = now
		}
	})
	t.forget(now)
	t.until.Store(now + int64(takenFor))
}

func has(m map[uint64]struct{}, k uint64) bool { _, ok := m[k]; return ok }

// forget drops what is older than takenFor, then the oldest over maxTaken.
func (t *takenSpans) forget(now int64) {
	for len(t.at) > 0 {
		oldest := now
		for k, at := range t.at {
			if now-at > int64(takenFor) {
				delete(t.at, k)
			} else if at < oldest {
				oldest = at
			}
		}
		if len(t.at) <= maxTaken {
			return
		}
		for k, at := range t.at {
			if at == oldest {
				delete(t.at, k)
			}
		}
	}
}

// skip removes from td the spans taken before, and says how many.
func (t *takenSpans) skip(td ptrace.Traces) int {
	until := t.until.Load()
	if until == 0 {
		return 0
	}
	now := time.Now().UnixNano()
	t.mu.Lock()
	defer t.mu.Unlock()
	if now > until { // all forgotten: let the map's memory go
		t.at = nil
		t.until.Store(0)
		return 0
	}
	skipped := 0
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				at, ok := t.at[t.key(sp)]
				if ok && now-at <= int64(takenFor) {
					skipped++
					return true
				}
				return false
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	return skipped
}

func eachSpan(td ptrace.Traces, fn func(ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				fn(sp)
			}
		}
	}
}
