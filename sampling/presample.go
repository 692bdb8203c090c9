package sampling

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/sampling/internal/otlpjson"
	"github.com/sidecarhq/sidecar/sampling/internal/otlpwire"
	"github.com/sidecarhq/sidecar/sampling/presample"
)

// This file decides spans while they are still protobuf (or OTLP/JSON, read
// into protobuf), for a receiver
// that names this processor in sampling_processor: dropped spans then never
// become pdata, which is most of what receiving them costs. The decisions,
// counts, summaries and what kept spans carry are the same as processTraces
// makes; the receiver marks the batch so processTraces passes it through.

var _ presample.Filter = (*sampler)(nil)

// FilterTraces implements presample.Filter.
func (s *sampler) FilterTraces(ctx context.Context, dst, req []byte) ([]byte, int, error) {
	if len(s.rules) == 0 {
		return nil, 0, presample.ErrUndecided // nothing to decide
	}
	hold := presample.HeldCountsOf(ctx)
	s.mu.Lock()
	var hc *heldCounts
	var summaries *summaryTable
	if hold != nil { // count the request's decisions aside, see heldCounts
		hc = s.newHeldCounts()
		summaries, s.summaries = s.summaries, hc.table
	}
	now := time.Now()
	var res spanResource
	pre := newWireAttrs(s.wireKeys)
	before := s.noteParent
	if s.hold != nil {
		s.hold.begin(now)
		s.capture, s.captKeys = s.capture[:0], s.captKeys[:0]
		var rootRes spanResource
		before = func(r *otlpwire.Resource, sp *otlpwire.Span) {
			s.noteParent(r, sp)
			if isLocalRoot(pcommon.SpanID(sp.ParentSpanID()).IsEmpty(), ptrace.SpanKind(sp.Kind())) {
				if r != rootRes.attrs.res {
					rootRes = newSpanResource(attrSet{res: r})
				}
				v := wireSpanView(sp, pre, rootRes)
				s.noteRootSpan(&v, now)
			}
		}
	}
	ordinal := -1
	// The captured spans are written aside from the same reading of req
	// (holdRaw), in order: a request cut across a trace (its local root
	// sent earlier) has spans captured, and reading all of it again cost
	// up to half as much as deciding it.
	var setAside func(int) bool
	next := 0
	if s.hold != nil {
		setAside = func(ordinal int) bool {
			if next < len(s.capture) && s.capture[next] == ordinal {
				next++
				return true
			}
			return false
		}
	}
	out, held, _, total, err := otlpwire.FilterAside(dst, nil, req, before, func(r *otlpwire.Resource, sp *otlpwire.Span) (bool, []byte) {
		ordinal++
		if r != res.attrs.res { // a request's spans come grouped by resource
			res = newSpanResource(attrSet{res: r})
		}
		v := wireSpanView(sp, pre, res)
		d := s.decideSpan(&v)
		if d.rule == nil {
			return true, nil
		}
		act, key := s.holdDecision(&v, &d)
		if act == holdCapture {
			s.capture = append(s.capture, ordinal)
			s.captKeys = append(s.captKeys, key)
			return false, nil
		}
		if !d.keep {
			return false, nil
		}
		s.extras = s.extras[:0] // Filter copies what keep returns
		if d.setTS {
			s.extras = otlpwire.AppendTraceState(s.extras, d.ts)
		}
		s.extras = otlpwire.AppendDoubleAttr(s.extras, WeightAttribute, d.weight)
		s.extras = otlpwire.AppendStrAttr(s.extras, RuleAttribute, d.rule.name)
		if act == holdRescue {
			s.extras = otlpwire.AppendBoolAttr(s.extras, RescuedAttribute, true)
		}
		return true, s.extras
	}, setAside)
	if hc != nil {
		s.summaries = summaries
		for i, r := range s.rules {
			hc.rules[i], r.counts = r.counts, ruleCounts{}
		}
		hold.Counts = hc
	}
	var rescued rescuedItems
	if s.hold != nil && err == nil {
		if hc != nil && len(s.capture) > 0 { // held once the request is taken, see heldCounts
			if len(held) > 0 && &held[0] == &req[0] {
				held = slices.Clone(held)
			}
			hc.held, hc.heldKeys = held, append(hc.heldKeys[:0], s.captKeys...)
		} else {
			s.holdRaw(req, held, now)
		}
		rescued = s.takeRescued()
	}
	s.flushCounts(ctx, signalTraces)
	s.mu.Unlock()
	s.emitRescued(ctx, rescued)
	return out, total, err
}

// holdRaw holds held, the spans of req that FilterTraces captured, as it
// wrote them aside.
func (s *sampler) holdRaw(req, held []byte, now time.Time) {
	if len(s.capture) == 0 {
		return
	}
	if len(held) > 0 && &held[0] == &req[0] { // every span held: held is req, which the receiver reuses
		held = slices.Clone(held)
	}
	s.hold.add(held, false, s.captKeys, now)
}

// FilterTracesJSON implements presample.Filter: the OTLP/JSON request is
// transcoded to protobuf, which costs a fraction of decoding it into pdata,
// and decided by FilterTraces.
func (s *sampler) FilterTracesJSON(ctx context.Context, dst, req []byte) ([]byte, int, error) {
	if len(s.rules) == 0 {
		return nil, 0, presample.ErrUndecided
	}
	buf := transcoded.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxPooledTranscode {
			transcoded.Put(buf)
		}
	}()
	pb, err := otlpjson.Transcode((*buf)[:0], req)
	*buf = pb
	if err != nil {
		return dst, 0, err
	}
	out, n, err := s.FilterTraces(ctx, dst, pb)
	if err == nil && len(out) > 0 && &out[0] == &pb[0] { // nothing dropped: out is the pooled buffer
		out = append(dst, pb...)
	}
	return out, n, err
}

// transcoded pools FilterTracesJSON's protobuf buffers, up to
// maxPooledTranscode bytes each so that a rare huge request is not pinned.
var transcoded = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledTranscode = 4 << 20

// noteParent records a span's parent as recently seen, for every span of a
// request before any is decided (see processTraces).
func (s *sampler) noteParent(_ *otlpwire.Resource, sp *otlpwire.Span) {
	if p := pcommon.SpanID(sp.ParentSpanID()); !p.IsEmpty() {
		s.parents.add(parentKey(pcommon.TraceID(sp.TraceID()), p))
	}
}

// spanAttrKeys are the span attribute keys the sampler reads of a raw span:
// those of the operation and the priority check, and the names every rule's
// attribute conditions and dynamic keys are written with, so that one pass
// over the attributes finds them all. Their other semantic-convention names
// are only read when the written one is absent, by a scan of their own:
// looking them up every time would cost every span a value it does not need.
func spanAttrKeys(rules []*rule) []string {
	keys := append(slices.Clone(operationAttrNames), priorityAttribute)
	add := func(names []string) {
		for _, k := range names {
			if !slices.Contains(keys, k) && len(keys) < 64 {
				keys = append(keys, k)
			}
		}
	}
	for _, r := range rules {
		for _, f := range r.match.attrs {
			add(f.names[:1])
		}
		if r.dyn != nil {
			for _, f := range r.dyn.fields {
				add(f.names[:1])
			}
		}
	}
	return keys
}

// heldCounts are what FilterTraces counted of one request, for a receiver
// that asked them held (presample.WithHeldCounts): its summary groups and
// its rules' counts, added to the sampler's when committed. Counts of held
// spans released or rescued meanwhile, which are not the request's, are
// counted at once. The spans it captured to hold (hold.go) are held when
// committed too: a request refused and sent again would hold them twice,
// and rescue them twice. A local root that failed meanwhile rescues them
// then; one that succeeded meanwhile is not known any more: they wait for
// the window, as spans that come after their root do.
type heldCounts struct {
	s        *sampler
	table    *summaryTable
	rules    []ruleCounts // by index in s.rules
	held     []byte       // the captured spans, as FilterTraces wrote them aside
	heldKeys []holdKey
}

var _ presample.Counts = (*heldCounts)(nil)

func (s *sampler) newHeldCounts() *heldCounts {
	if h, ok := s.heldCounts.Get().(*heldCounts); ok {
		return h
	}
	return &heldCounts{s: s, table: newSummaryTable(s.cfg.Summaries.MaxGroups, time.Time{}), rules: make([]ruleCounts, len(s.rules))}
}

// Commit implements presample.Counts.
func (h *heldCounts) Commit() {
	s := h.s
	s.mu.Lock()
	for k, st := range h.table.groups {
		s.summaries.stats(k).merge(st)
	}
	for i, r := range s.rules {
		r.counts.add(h.rules[i])
	}
	var rescued rescuedItems
	if s.hold != nil && len(h.heldKeys) > 0 {
		now := time.Now()
		s.hold.begin(now)
		s.hold.add(h.held, false, h.heldKeys, now)
		for _, k := range h.heldKeys {
			if failed, known := s.hold.verdict(k); known && failed {
				s.hold.rescue[k] = struct{}{}
			}
		}
		rescued = s.takeRescued()
	}
	s.flushCounts(context.Background(), signalTraces)
	s.mu.Unlock()
	h.held, h.heldKeys = nil, h.heldKeys[:0] // held keeps h.held
	h.Discard()
	s.emitRescued(context.Background(), rescued)
}

// Discard implements presample.Counts.
func (h *heldCounts) Discard() {
	clear(h.table.groups)
	clear(h.table.recent[:])
	clear(h.rules)
	h.held, h.heldKeys = nil, h.heldKeys[:0]
	h.s.heldCounts.Put(h)
}

func (c *ruleCounts) add(o ruleCounts) {
	c.seen += o.seen
	c.kept += o.kept
	c.dropped += o.dropped
	c.rescued += o.rescued
	c.rescuedLogs += o.rescuedLogs
}
