package sampling

import (
	"context"
	"time"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/sidecarhq/sidecar/internal/jsontext"
	"github.com/sidecarhq/sidecar/internal/loglevel"
	"github.com/sidecarhq/sidecar/internal/rawevent"
)

// This file decides log records: the same rules as spans, with randomness
// from the trace id or a hash of the record.

// keyHashLog hashes the dynamic rule's key fields of a log record.
func (d *dynamicRule) keyHashLog(v *logView) uint64 {
	h := fnvOffset
	for _, f := range d.fields {
		switch f.name {
		case "service.name":
			h = h.str(v.service)
		case "severity":
			h = h.u64(uint64(v.rec.SeverityNumber())).str(v.rec.SeverityText())
		default:
			if a, ok := v.recAttrs().getAny(f.names); ok {
				h = h.value(a)
			} else if a, ok := mapAttrs(v.resAttrs).getAny(f.names); ok {
				h = h.value(a)
			} else {
				h = h.u64(0)
			}
		}
	}
	return uint64(h)
}

// decideLog is the per-record decision path.
func (s *sampler) decideLog(v *logView) decision {
	var r *rule
	for _, cand := range s.rules {
		if cand.match.matchLog(v) {
			r = cand
			break
		}
	}
	if r == nil {
		return decision{}
	}
	rec := v.rec
	isError := logIsError(rec)
	d := decision{rule: r, keep: true, weight: 1}
	if !s.always.keepLog(v, isError) && !r.keepIf.keepLog(v, isError) {
		target := &r.fixed
		if r.dyn != nil {
			target = &pow2Info[r.dyn.state(r.dyn.keyHashLog(v)).exp]
		}
		d.keep = logRandomness(rec) >= target.t
		d.weight = target.weight
	}
	r.counts.seen++
	if d.keep {
		r.counts.kept++
	} else {
		r.counts.dropped++
		d.weight = 0
	}
	status := severityName(rec)
	s.summaries.stats(summaryKey{signal: signalLogs, rule: r.index, service: v.service, status: status}).add(d.keep, isError, d.weight)
	return d
}

// logRandomness uses the trace id when the record has one, so a trace's logs
// and spans are kept together; else a deterministic hash of the record.
func logRandomness(rec plog.LogRecord) uint64 {
	if tid := rec.TraceID(); !tid.IsEmpty() {
		return traceRandomness(tid)
	}
	h := uint64(rec.Timestamp())*0x9e3779b97f4a7c15 ^ uint64(rec.ObservedTimestamp())
	if b := rec.Body(); b.Type() == pcommon.ValueTypeStr {
		h ^= xxhash.Sum64String(b.Str())
	}
	return mix56(h)
}

func logIsError(rec plog.LogRecord) bool {
	if n := rec.SeverityNumber(); n != plog.SeverityNumberUnspecified {
		return n >= plog.SeverityNumberError
	}
	if t := rec.SeverityText(); t != "" {
		return loglevel.IsError(t)
	}
	if b := rec.Body(); b.Type() == pcommon.ValueTypeStr { // raw events carry `level`
		if raw, ok := jsontext.Field(b.Str(), "level"); ok && jsontext.IsString(raw) && !jsontext.HasEscapes(raw) {
			return loglevel.IsError(raw[1 : len(raw)-1])
		}
	}
	return false
}

// severityName is the status dimension of log summaries.
func severityName(rec plog.LogRecord) string {
	if name := loglevel.Name(rec.SeverityNumber()); name != "" {
		return name
	}
	return "unspecified"
}

func (s *sampler) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	if len(s.rules) == 0 {
		return ld, nil
	}
	s.mu.Lock()
	now := time.Now()
	if s.hold != nil {
		s.hold.begin(now)
	}
	s.lheld.reset()
	ri, si := -1, -1
	v := logView{scratch: s.scratch}
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		ri++
		v.resAttrs = rl.Resource().Attributes()
		v.service = serviceName(mapAttrs(v.resAttrs))
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			si++
			v.shared, _ = rawevent.Shared(sl)
			sl.LogRecords().RemoveIf(func(rec plog.LogRecord) bool {
				if s.decidedHere(rec.Attributes()) {
					return false
				}
				v.rec = rec
				d := s.decideLog(&v)
				if d.rule == nil {
					return false
				}
				act, key := s.holdLogDecision(&v, &d)
				switch {
				case act == holdCapture:
					s.lheld.add(ri, si, rl, sl, rec, key)
					return true
				case act == holdRescue:
					markRescuedLog(rec, d.rule.name)
					return false
				case !d.keep:
					return true
				}
				rec.Attributes().PutDouble(WeightAttribute, d.weight)
				rec.Attributes().PutStr(RuleAttribute, d.rule.name)
				return false
			})
			return sl.LogRecords().Len() == 0
		})
		return rl.ScopeLogs().Len() == 0
	})
	if s.hold != nil {
		s.holdLogs(&s.lheld, now)
	}
	s.flushCounts(ctx, signalLogs)
	s.scratch = v.scratch
	s.mu.Unlock()
	if ld.ResourceLogs().Len() == 0 {
		return ld, processorhelper.ErrSkipProcessingData
	}
	return ld, nil
}
