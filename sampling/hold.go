package sampling

import (
	"context"
	"time"

	"go.uber.org/zap"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/sampling/internal/otlpwire"
)

// Deferred drops. A span a rule drops is held, as protobuf bytes, until its
// local root is seen: the span of the same trace and service with no parent
// in that service (a SERVER or CONSUMER span, or a root). If the local root
// failed (an error, or slow or prioritised by always_keep), the held spans
// of its trace are shipped after all ("rescued"); otherwise they are
// dropped as decided. Keep decisions are unchanged and made at arrival, so
// only drops wait, and a rescued span carries weight 0 and no th: it was
// kept by its request's outcome, not its randomness, so its probability is
// unknown, and the OpenTelemetry probability sampling spec says such a stage
// must erase th (README.md, "Deferred drops", says why the weight is not 1).

const (
	// defaultHoldWindow is two export cycles of the OpenTelemetry SDKs'
	// batch span processors (JS scheduledDelayMillis, Go, Java and Python
	// all default to 5 s): a leaf and its request's root, ended up to 5 s
	// apart, are exported in the same or the next cycle.
	defaultHoldWindow = 10 * time.Second
	// defaultHoldBytes fits beside the Axiom exporter's default budgets in
	// the 96 MB peak RSS that the sidecar keeps (its measured peaks are
	// 66 and 77 MB).
	defaultHoldBytes = 8 << 20

	// Bytes charged beyond the held protobuf: a held batch's record, and
	// for each of its traces the map entry, its reference slice and its
	// key in the batch (map buckets included: maps keep their peak size).
	heldBatchCost = 96
	heldTraceCost = 160

	// RescuedAttribute is true on spans kept because their request failed.
	RescuedAttribute = "sampling.rescued"
)

// HoldConfig bounds held spans.
type HoldConfig struct {
	// Window is how long a span waits for its local root (default 10s).
	Window time.Duration `mapstructure:"window"`
	// MaxBytes bounds the held spans' protobuf and bookkeeping (default
	// 8 MiB); 0 turns holding off.
	MaxBytes int64 `mapstructure:"max_bytes"`
}

// holdKey is one service's part of a trace.
type holdKey struct {
	trace pcommon.TraceID
	svc   uint64 // hash of service.name
}

// newHoldKey is the key of trace's part in service; items without a
// service.name (lines read from stdout, say) get svc 0, which every
// service's local root of the trace decides.
func newHoldKey(trace pcommon.TraceID, service string) holdKey {
	if service == "" {
		return holdKey{trace: trace}
	}
	return holdKey{trace: trace, svc: uint64(fnvOffset.str(service)) | 1}
}

// heldBatch is the held spans of one request, as an ExportTraceServiceRequest,
// or its held log records, as an ExportLogsServiceRequest.
type heldBatch struct {
	raw     []byte
	logs    bool
	at      time.Time
	pending int       // spans neither released nor rescued
	keys    []holdKey // its traces, each once
}

func (b *heldBatch) cost() int64 {
	return int64(len(b.raw)) + heldBatchCost + int64(len(b.keys))*heldTraceCost
}

type heldRef struct {
	b *heldBatch
	n int // spans of the trace in b
}

type releaseReason int

const (
	releasedRootOK releaseReason = iota
	releasedWindow
	releasedBudget
	releasedShutdown
	numReleaseReasons
)

var releaseReasonNames = [numReleaseReasons]string{"root_ok", "window", "budget", "shutdown"}

type holdCounts struct {
	held     int64
	released [numReleaseReasons]int64
}

type failedRoot struct {
	key holdKey
	at  time.Time
}

// holder is the held spans and the recently failed local roots. Guarded by
// the sampler's mutex.
type holder struct {
	window   time.Duration
	maxBytes int64
	bytes    int64
	queue    []*heldBatch // oldest first; released batches are skipped
	traces   map[holdKey][]heldRef
	// failed remembers failed local roots for the window, for children
	// that arrive after their root; at most maxFailed of them.
	failed    map[holdKey]time.Time
	failedQ   []failedRoot
	maxFailed int

	// Per request, reused: its local roots (true = failed), and the held
	// traces of earlier requests that its failed roots rescue.
	roots  map[holdKey]bool
	rescue map[holdKey]struct{}

	counts holdCounts
}

func newHolder(cfg HoldConfig) *holder {
	if cfg.MaxBytes <= 0 {
		return nil
	}
	return &holder{
		window: cfg.Window, maxBytes: cfg.MaxBytes,
		traces: map[holdKey][]heldRef{}, failed: map[holdKey]time.Time{},
		maxFailed: int(max(cfg.MaxBytes/1024, 16)),
		roots:     map[holdKey]bool{}, rescue: map[holdKey]struct{}{},
	}
}

// begin starts a request: what outlived the window is released.
func (h *holder) begin(now time.Time) {
	clear(h.roots)
	clear(h.rescue)
	cut := now.Add(-h.window)
	for len(h.queue) > 0 && (h.queue[0].raw == nil || h.queue[0].at.Before(cut)) {
		h.evict(h.queue[0], releasedWindow)
		h.queue[0] = nil
		h.queue = h.queue[1:]
	}
	for len(h.failedQ) > 0 && h.failedQ[0].at.Before(cut) {
		h.forgetFailed()
	}
}

func (h *holder) forgetFailed() {
	f := h.failedQ[0]
	if h.failed[f.key] == f.at {
		delete(h.failed, f.key)
	}
	h.failedQ = h.failedQ[1:]
}

// noteRoot records a local root of the request being decided, for its
// service's part of the trace and for the part without a service.
func (h *holder) noteRoot(key holdKey, failed bool, now time.Time) {
	h.note(key, failed, now)
	if key.svc != 0 {
		h.note(holdKey{trace: key.trace}, failed, now)
	}
}

func (h *holder) note(key holdKey, failed bool, now time.Time) {
	if h.roots[key] {
		return // a failed root of the trace was seen already
	}
	h.roots[key] = failed
	_, held := h.traces[key]
	if !failed {
		if held {
			h.release(key, releasedRootOK)
		}
		return
	}
	if held {
		h.rescue[key] = struct{}{}
	}
	if len(h.failedQ) >= h.maxFailed {
		h.forgetFailed()
	}
	h.failed[key] = now
	h.failedQ = append(h.failedQ, failedRoot{key, now})
}

// verdict reports whether key's local root has been seen, and if it failed.
func (h *holder) verdict(key holdKey) (failed, known bool) {
	if f, ok := h.roots[key]; ok {
		return f, true
	}
	_, ok := h.failed[key]
	return ok, ok
}

// add holds raw, the spans (or log records) of keys, one entry per item.
func (h *holder) add(raw []byte, logs bool, keys []holdKey, now time.Time) {
	b := &heldBatch{raw: raw, logs: logs, at: now, pending: len(keys)}
	for _, k := range keys {
		refs := h.traces[k]
		if n := len(refs); n > 0 && refs[n-1].b == b {
			refs[n-1].n++
			continue
		}
		h.traces[k] = append(refs, heldRef{b: b, n: 1})
		b.keys = append(b.keys, k)
	}
	h.counts.held += int64(len(keys))
	h.bytes += b.cost()
	h.queue = append(h.queue, b)
	for h.bytes > h.maxBytes && len(h.queue) > 0 {
		h.evict(h.queue[0], releasedBudget)
		h.queue[0] = nil
		h.queue = h.queue[1:]
	}
}

// evict releases every span b still holds.
func (h *holder) evict(b *heldBatch, reason releaseReason) {
	if b.raw == nil {
		return
	}
	for _, k := range b.keys {
		refs := h.traces[k]
		for i, r := range refs {
			if r.b == b {
				h.counts.released[reason] += int64(r.n)
				b.pending -= r.n
				refs = append(refs[:i], refs[i+1:]...)
				break
			}
		}
		if len(refs) == 0 {
			delete(h.traces, k)
		} else {
			h.traces[k] = refs
		}
	}
	h.free(b)
}

func (h *holder) free(b *heldBatch) {
	h.bytes -= b.cost()
	b.raw, b.keys = nil, nil
}

// release drops key's held spans.
func (h *holder) release(key holdKey, reason releaseReason) {
	for _, r := range h.traces[key] {
		h.counts.released[reason] += int64(r.n)
		h.unref(r)
	}
	delete(h.traces, key)
}

func (h *holder) unref(r heldRef) {
	r.b.pending -= r.n
	if r.b.pending == 0 && r.b.raw != nil {
		h.free(r.b)
	}
}

// rescueBatches returns the held batches with spans of rescued traces.
func (h *holder) rescueBatches() []*heldBatch {
	var out []*heldBatch
	for k := range h.rescue {
		for _, r := range h.traces[k] {
			if !containsBatch(out, r.b) {
				out = append(out, r.b)
			}
		}
	}
	return out
}

func containsBatch(bs []*heldBatch, b *heldBatch) bool {
	for _, x := range bs {
		if x == b {
			return true
		}
	}
	return false
}

// rescued reports whether a held span of key is rescued by this request.
func (h *holder) rescued(key holdKey) bool {
	_, ok := h.rescue[key]
	return ok
}

// finishRescue forgets the rescued traces once their spans were taken.
func (h *holder) finishRescue() {
	for k := range h.rescue {
		for _, r := range h.traces[k] {
			h.unref(r)
		}
		delete(h.traces, k)
	}
}

// heldSpans is the number of spans held.
func (h *holder) heldSpans() int {
	n := 0
	for _, refs := range h.traces {
		for _, r := range refs {
			n += r.n
		}
	}
	return n
}

// releaseAll releases everything held (at shutdown).
func (h *holder) releaseAll() {
	for _, b := range h.queue {
		h.evict(b, releasedShutdown)
	}
	h.queue = nil
}

func isLocalRoot(isRoot bool, kind ptrace.SpanKind) bool {
	return isRoot || kind == ptrace.SpanKindServer || kind == ptrace.SpanKindConsumer
}

// rootFailed reports whether a local root's request failed: an error, or a
// span always_keep keeps (slow, prioritised).
func (s *sampler) rootFailed(v *spanView) bool {
	v.isError = v.statusCode == ptrace.StatusCodeError || v.hasException()
	return v.isError || s.always.keepSpanFields(false, v.duration) ||
		(s.always.priority && hasPriority(v.attrs))
}

// noteRootSpan records v if it is a local root.
func (s *sampler) noteRootSpan(v *spanView, now time.Time) {
	if isLocalRoot(v.isRoot, v.kind) {
		s.hold.noteRoot(newHoldKey(v.traceID, v.res.service), s.rootFailed(v), now)
	}
}

type holdAction uint8

const (
	holdNone    holdAction = iota // decided as it is
	holdCapture                   // dropped from the request, held
	holdRescue                    // d now keeps it, rescued
)

// holdDecision defers d, a drop, when the rule holds: a span whose local
// root failed is rescued at once, one whose root succeeded is dropped, one
// whose root is not known yet is held.
func (s *sampler) holdDecision(v *spanView, d *decision) (holdAction, holdKey) {
	if s.hold == nil || d.rule == nil || d.keep || !d.rule.hold || isLocalRoot(v.isRoot, v.kind) {
		return holdNone, holdKey{}
	}
	key := newHoldKey(v.traceID, v.res.service)
	failed, known := s.hold.verdict(key)
	switch {
	case !known:
		return holdCapture, key
	case !failed:
		return holdNone, key
	}
	d.keep, d.weight, d.ts = true, 0, withoutThreshold(v.traceState)
	d.setTS = d.ts != v.traceState
	s.countRescued(d.rule, v)
	return holdRescue, key
}

// countRescued counts a rescued span in its rule's counts and summary.
func (s *sampler) countRescued(r *rule, v *spanView) {
	r.counts.rescued++
	s.spanStats(r, v).rescued++
}

// heldCursor is what collecting held items of one pdata request needs
// whatever the signal: which source resource and scope the held request's
// last resource and scope were copied from, and the keys of what it holds.
type heldCursor struct {
	ri, si int
	keys   []holdKey
}

func (c *heldCursor) reset() {
	c.keys = c.keys[:0]
	c.ri, c.si = -1, -1
}

// next records an item of the ri-th resource and si-th scope of the request
// and says whether it opens a new resource and a new scope in the held one.
func (c *heldCursor) next(ri, si int, key holdKey) (newResource, newScope bool) {
	newResource = ri != c.ri
	if newResource {
		c.ri, c.si = ri, -1
	}
	newScope = si != c.si
	c.si = si
	c.keys = append(c.keys, key)
	return newResource, newScope
}

// holdMarshaled holds a request of the held items with keys, as marshalled.
func (s *sampler) holdMarshaled(raw []byte, err error, logs bool, keys []holdKey, now time.Time) {
	if err != nil { // cannot happen for pdata built here; drop as decided
		s.hold.counts.released[releasedBudget] += int64(len(keys))
		return
	}
	s.hold.add(raw, logs, keys, now)
}

// pdataHeld collects the held spans of one pdata request; reused.
type pdataHeld struct {
	heldCursor
	td ptrace.Traces
	rs ptrace.ResourceSpans
	ss ptrace.ScopeSpans
}

// add copies sp, of the ri-th resource rs and the si-th scope ss of the
// request, into the held request.
func (p *pdataHeld) add(ri, si int, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span, key holdKey) {
	if len(p.keys) == 0 {
		p.td = ptrace.NewTraces()
	}
	newResource, newScope := p.next(ri, si, key)
	if newResource {
		p.rs = p.td.ResourceSpans().AppendEmpty()
		rs.Resource().CopyTo(p.rs.Resource())
		p.rs.SetSchemaUrl(rs.SchemaUrl())
	}
	if newScope {
		p.ss = p.rs.ScopeSpans().AppendEmpty()
		ss.Scope().CopyTo(p.ss.Scope())
		p.ss.SetSchemaUrl(ss.SchemaUrl())
	}
	sp.CopyTo(p.ss.Spans().AppendEmpty())
}

// holdPdata holds what p collected.
func (s *sampler) holdPdata(p *pdataHeld, now time.Time) {
	if len(p.keys) == 0 {
		return
	}
	raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(p.td)
	s.holdMarshaled(raw, err, false, p.keys, now)
}

// rescuedItems are held items of earlier requests that a request's failed
// roots rescued, to be sent on once the sampler's lock is released.
type rescuedItems struct {
	td ptrace.Traces
	ld plog.Logs
}

// takeRescued takes the held spans and log records of the traces this
// request's failed roots rescue out of the holder, marked as rescued.
func (s *sampler) takeRescued() rescuedItems {
	var out rescuedItems
	batches := s.hold.rescueBatches()
	if len(batches) == 0 {
		return out
	}
	pre := newWireAttrs(s.wireKeys)
	for _, b := range batches {
		if b.logs {
			s.rescueLogs(&out, b)
			continue
		}
		var res spanResource
		pb, _, _, err := otlpwire.Filter(nil, b.raw, nil, func(r *otlpwire.Resource, sp *otlpwire.Span) (bool, []byte) {
			if r != res.attrs.res {
				res = newSpanResource(attrSet{res: r})
			}
			v := wireSpanView(sp, pre, res)
			if !s.hold.rescued(newHoldKey(v.traceID, v.res.service)) {
				return false, nil
			}
			s.extras = s.extras[:0]
			name := ""
			if r := s.firstRule(&v); r != nil {
				s.countRescued(r, &v)
				name = r.name
			}
			if ts := withoutThreshold(v.traceState); ts != v.traceState {
				s.extras = otlpwire.AppendTraceState(s.extras, ts)
			}
			s.extras = otlpwire.AppendDoubleAttr(s.extras, WeightAttribute, 0)
			s.extras = otlpwire.AppendStrAttr(s.extras, RuleAttribute, name)
			s.extras = otlpwire.AppendBoolAttr(s.extras, RescuedAttribute, true)
			return true, s.extras
		})
		if err != nil {
			continue // held bytes were written by Filter or pdata: cannot happen
		}
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(pb)
		if err != nil {
			continue
		}
		if out.td == (ptrace.Traces{}) {
			out.td = ptrace.NewTraces()
		}
		td.ResourceSpans().MoveAndAppendTo(out.td.ResourceSpans())
	}
	s.hold.finishRescue()
	return out
}

// firstRule is the rule that decides v.
func (s *sampler) firstRule(v *spanView) *rule {
	for _, r := range s.rules {
		if r.match.matchSpan(v) {
			return r
		}
	}
	return nil
}

// emitRescued sends rescued items of earlier requests down their pipelines,
// as requests of their own: their own requests have passed.
func (s *sampler) emitRescued(ctx context.Context, r rescuedItems) {
	ctx = context.WithoutCancel(ctx)
	if r.td != (ptrace.Traces{}) && r.td.SpanCount() > 0 && s.tracesNext != nil {
		if err := s.tracesNext.ConsumeTraces(ctx, r.td); err != nil {
			s.set.Logger.Warn("could not emit rescued spans", zap.Int("spans", r.td.SpanCount()), zap.Error(err))
		}
	}
	if r.ld != (plog.Logs{}) && r.ld.LogRecordCount() > 0 && s.logsNext != nil {
		if err := s.logsNext.ConsumeLogs(ctx, r.ld); err != nil {
			s.set.Logger.Warn("could not emit rescued log records", zap.Int("records", r.ld.LogRecordCount()), zap.Error(err))
		}
	}
}
