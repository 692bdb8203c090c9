package otlpreceiver

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
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
// the pipeline once. Log records have no id: they are remembered by their
// bytes (takenLogs).
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

// takenLogs is takenSpans for log records, which have no id: a record is
// known by a hash of its protobuf bytes with its resource's and scope's,
// and counted, as a request may hold identical records. Unlike a span, a
// record identical to one taken may come in another request, so each
// record a retry skips is forgotten (the retry is its one return), and
// remembered again if the retry is refused too. A record with neither a
// time nor an observed time is not remembered: identical ones in two
// requests are likely two events, so it arrives twice if its request is
// sent again. Nor is anything remembered when the rest the pipeline names
// is not records of the request as offered (a processor changed them).
type takenLogs struct {
	mu    sync.Mutex
	taken map[uint64]takenLog
	count int          // records remembered
	until atomic.Int64 // when the last remembered is forgotten; 0 when none is
	seed  maphash.Seed
	one   plog.Logs // a record with its resource and scope, to hash
}

type takenLog struct {
	n  int   // identical records remembered
	at int64 // when the last was taken, in Unix nanoseconds
}

func newTakenLogs() *takenLogs { return &takenLogs{seed: maphash.MakeSeed(), one: plog.NewLogs()} }

var logsHasher plog.ProtoMarshaler

// keys is the key of each record of ld, in order. Called with t.mu held.
func (t *takenLogs) keys(ld plog.Logs) []uint64 {
	var keys []uint64
	rl := t.one.ResourceLogs().AppendEmpty()
	sl := rl.ScopeLogs().AppendEmpty()
	lr := sl.LogRecords().AppendEmpty()
	defer t.one.ResourceLogs().RemoveIf(func(plog.ResourceLogs) bool { return true })
	for _, r := range ld.ResourceLogs().All() {
		r.Resource().CopyTo(rl.Resource())
		rl.SetSchemaUrl(r.SchemaUrl())
		for _, s := range r.ScopeLogs().All() {
			s.Scope().CopyTo(sl.Scope())
			sl.SetSchemaUrl(s.SchemaUrl())
			for _, l := range s.LogRecords().All() {
				l.CopyTo(lr)
				b, _ := logsHasher.MarshalLogs(t.one)
				keys = append(keys, maphash.Bytes(t.seed, b))
			}
		}
	}
	return keys
}

// skip removes from ld the records taken before, forgetting one
// remembered record for each, and returns their keys.
func (t *takenLogs) skip(ld plog.Logs) (skipped []uint64) {
	until := t.until.Load()
	if until == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	t.mu.Lock()
	defer t.mu.Unlock()
	if now > until { // all forgotten: let the map's memory go
		t.taken, t.count = nil, 0
		t.until.Store(0)
		return nil
	}
	keys := t.keys(ld)
	i := 0
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			sl.LogRecords().RemoveIf(func(plog.LogRecord) bool {
				k := keys[i]
				i++
				e, ok := t.taken[k]
				if !ok || now-e.at > int64(takenFor) {
					return false
				}
				if e.n--; e.n == 0 {
					delete(t.taken, k)
				} else {
					t.taken[k] = e
				}
				t.count--
				skipped = append(skipped, k)
				return true
			})
			return sl.LogRecords().Len() == 0
		})
		return rl.ScopeLogs().Len() == 0
	})
	return skipped
}

// remember notes the records of offered that are not in left as taken,
// and those skipped from it as taken still: its client sends them again.
func (t *takenLogs) remember(offered, left plog.Logs, skipped []uint64) {
	if left == offered && len(skipped) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now().UnixNano()
	if t.taken == nil {
		t.taken = map[uint64]takenLog{}
	}
	for _, k := range skipped {
		t.add(k, now)
	}
	if left != offered {
		keys := t.keys(offered)
		refused := map[uint64]int{}
		for _, k := range t.keys(left) {
			refused[k]++
		}
		if among(refused, keys) {
			i := 0
			eachLogRecord(offered, func(lr plog.LogRecord) {
				k := keys[i]
				i++
				switch {
				case refused[k] > 0:
					refused[k]--
				case lr.Timestamp() != 0 || lr.ObservedTimestamp() != 0:
					t.add(k, now)
				}
			})
		}
	}
	t.forget(now)
	if t.count > 0 {
		t.until.Store(now + int64(takenFor))
	}
}

func (t *takenLogs) add(k uint64, now int64) {
	e := t.taken[k]
	e.n++
	e.at = now
	t.taken[k] = e
	t.count++
}

// forget drops what is older than takenFor, then the oldest over maxTaken.
func (t *takenLogs) forget(now int64) {
	for k, e := range t.taken {
		if now-e.at > int64(takenFor) {
			delete(t.taken, k)
			t.count -= e.n
		}
	}
	for t.count > maxTaken {
		oldest := now
		for _, e := range t.taken {
			oldest = min(oldest, e.at)
		}
		for k, e := range t.taken {
			if e.at == oldest {
				delete(t.taken, k)
				t.count -= e.n
			}
		}
	}
}

// among says whether the records counted in part are among keys.
func among(part map[uint64]int, keys []uint64) bool {
	in := make(map[uint64]int, len(keys))
	for _, k := range keys {
		in[k]++
	}
	for k, n := range part {
		if in[k] < n {
			return false
		}
	}
	return true
}

func eachLogRecord(ld plog.Logs, fn func(plog.LogRecord)) {
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				fn(lr)
			}
		}
	}
}
