package sampling

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/sidecarhq/sidecar/sampling/presample"
)

// This file decides spans: matching, always-keep, structure, consistent
// thresholds and what a kept span carries.

// decideSpan is the per-span decision path. It must not allocate except
// when a kept span's existing tracestate has to be rewritten.
func (s *sampler) decideSpan(v *spanView) decision {
	var r *rule
	for _, cand := range s.rules {
		if cand.match.matchSpan(v) {
			r = cand
			break
		}
	}
	if r == nil {
		return decision{}
	}
	v.isError = v.statusCode == ptrace.StatusCodeError || v.hasException()
	dur := v.duration

	tsRaw := v.traceState
	st := parseTraceState(tsRaw)
	rnd := traceRandomness(v.traceID)
	if st.hasRv {
		rnd = st.rv
	}
	// An incoming th that R does not satisfy is inconsistent: the spec says
	// to erase it. Without a (consistent) th the span stands for
	// 1/upstream_probability spans, if the app sampled it.
	tIn, upstream := uint64(0), r.upstream
	consistent := true
	if st.hasTh {
		if st.th <= rnd {
			tIn, upstream = st.th, 1
		} else {
			consistent = false
		}
	}

	var target *thresholdInfo
	if !s.exempt(v, r, dur) {
		if r.dyn != nil {
			target = &pow2Info[r.dyn.state(r.dyn.keyHash(v)).exp]
		} else {
			target = &r.fixed
		}
	}

	d := decision{rule: r, keep: true}
	tOut := tIn
	if target != nil && target.t > tIn { // never lower an incoming threshold
		tOut = target.t
		d.keep = rnd >= tOut
	}
	if d.keep {
		switch {
		case tOut == tIn && consistent:
			// tracestate already right
		case tOut == 0: // kept with probability 1 and an inconsistent th
			d.ts, d.setTS = withoutThreshold(tsRaw), true
		case tsRaw == "" && target != nil && tOut == target.t:
			d.ts, d.setTS = target.ts, true
		default:
			d.ts, d.setTS = withThreshold(tsRaw, encodeThreshold(tOut)), true
		}
		d.weight = adjustedCount(tOut) * upstream
	}

	r.counts.seen++
	if d.keep {
		r.counts.kept++
	} else {
		r.counts.dropped++
	}
	stats := s.spanStats(r, v)
	stats.add(d.keep, v.isError, d.weight)
	stats.addDuration(dur)
	return d
}

// spanStats is the summary group of a span r decided.
func (s *sampler) spanStats(r *rule, v *spanView) *summaryStats {
	status := "unset"
	switch {
	case v.isError:
		status = "error"
	case v.statusCode == ptrace.StatusCodeOk:
		status = "ok"
	}
	return s.summaries.stats(summaryKey{signal: signalTraces, rule: r.index, service: v.res.service, operation: s.summaries.operation(v.op()), status: status})
}

// exempt reports whether sp is kept whatever its randomness: by always_keep,
// by the rule's keep_if, or by structure (roots, SERVER and CONSUMER spans,
// spans recently seen as a parent; only a rule whose kind list names SERVER
// or CONSUMER may drop spans of that kind). The checks run cheapest first:
// the span's own fields, then the attribute scan for sampling.priority, and
// last the parent window, whose lookup is a likely cache miss, so that it is
// only paid for spans that would otherwise be sampled.
func (s *sampler) exempt(v *spanView, r *rule, dur int64) bool {
	if s.always.keepSpanFields(v.isError, dur) || r.keepIf.keepSpanFields(v.isError, dur) {
		return true
	}
	kind := v.kind
	structureApplies := r.liftKind&(1<<uint(kind)) == 0
	if structureApplies && (kind == ptrace.SpanKindServer || kind == ptrace.SpanKindConsumer || v.isRoot) {
		return true
	}
	if (s.always.priority || r.keepIf.priority) && hasPriority(v.attrs) {
		return true
	}
	return structureApplies && s.parents.has(parentKey(v.traceID, v.spanID))
}

// keyHash hashes the dynamic rule's key fields of a span.
func (d *dynamicRule) keyHash(v *spanView) uint64 {
	h := fnvOffset
	for _, f := range d.fields {
		switch f.name {
		case "span.name", "name":
			h = h.str(v.name)
		case "operation":
			h = h.strUpper(v.op())
		case "service.name":
			h = h.str(v.res.service)
		case "status":
			h = h.u64(uint64(v.statusCode))
		default:
			if a, ok := v.attrs.getAny(f.names); ok {
				h = h.value(a)
			} else if a, ok := v.res.attrs.getAny(f.names); ok {
				h = h.value(a)
			} else {
				h = h.u64(0)
			}
		}
	}
	return uint64(h)
}

// processTraces decides every span of a batch. Parent ids of the whole batch
// are recorded first, so a parent is protected even when it precedes its
// children in the batch.
func (s *sampler) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	if len(s.rules) == 0 || presample.Decided(ctx) == presample.Filter(s) {
		return td, nil
	}
	s.mu.Lock()
	now := time.Now()
	if s.hold != nil {
		s.hold.begin(now)
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		var res spanResource
		if s.hold != nil {
			res = newSpanResource(mapAttrs(rss.At(i).Resource().Attributes()))
		}
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if !sp.ParentSpanID().IsEmpty() {
					s.parents.add(parentKey(sp.TraceID(), sp.ParentSpanID()))
				}
				if s.hold != nil && isLocalRoot(sp.ParentSpanID().IsEmpty(), sp.Kind()) {
					v := pdataSpanView(sp, res)
					s.noteRootSpan(&v, now)
				}
			}
		}
	}
	s.pheld.reset()
	ri, si := -1, -1
	rss.RemoveIf(func(rs ptrace.ResourceSpans) bool {
		ri++
		res := newSpanResource(mapAttrs(rs.Resource().Attributes()))
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			si++
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				if s.decidedHere(sp.Attributes()) {
					return false
				}
				v := pdataSpanView(sp, res)
				d := s.decideSpan(&v)
				if d.rule == nil {
					return false
				}
				act, key := s.holdDecision(&v, &d)
				if act == holdCapture {
					s.pheld.add(ri, si, rs, ss, sp, key)
					return true
				}
				if !d.keep {
					return true
				}
				if d.setTS {
					sp.TraceState().FromRaw(d.ts)
				}
				sp.Attributes().PutDouble(WeightAttribute, d.weight)
				sp.Attributes().PutStr(RuleAttribute, d.rule.name)
				if act == holdRescue {
					sp.Attributes().PutBool(RescuedAttribute, true)
				}
				return false
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	var rescued rescuedItems
	if s.hold != nil {
		s.holdPdata(&s.pheld, now)
		rescued = s.takeRescued()
	}
	s.flushCounts(ctx, signalTraces)
	s.mu.Unlock()
	s.emitRescued(ctx, rescued)
	if td.ResourceSpans().Len() == 0 {
		return td, processorhelper.ErrSkipProcessingData
	}
	return td, nil
}
