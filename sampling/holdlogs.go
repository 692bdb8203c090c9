package sampling

import (
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/rawevent"
)

// Deferred drops of log records: a record with a trace id that a rule drops
// is held like a span (see hold.go), under its trace and service, and ships,
// rescued, when that request's local root failed: a failed request brings
// its debug lines. Records without a trace id are decided at once.

// holdLogDecision is holdDecision for a log record.
func (s *sampler) holdLogDecision(v *logView, d *decision) (holdAction, holdKey) {
	if s.hold == nil || d.rule == nil || d.keep || !d.rule.hold || v.rec.TraceID().IsEmpty() {
		return holdNone, holdKey{}
	}
	key := newHoldKey(v.rec.TraceID(), v.service)
	failed, known := s.hold.verdict(key)
	switch {
	case !known:
		return holdCapture, key
	case !failed:
		return holdNone, key
	}
	d.keep, d.weight = true, 0
	s.countRescuedLog(d.rule, v.rec, v.service)
	return holdRescue, key
}

func (s *sampler) countRescuedLog(r *rule, rec plog.LogRecord, service string) {
	r.counts.rescuedLogs++
	s.summaries.stats(summaryKey{signal: signalLogs, rule: r.index, service: service, status: severityName(rec)}).rescued++
}

// markRescuedLog writes what a rescued record carries (as a rescued span).
func markRescuedLog(rec plog.LogRecord, ruleName string) {
	rec.Attributes().PutDouble(WeightAttribute, 0)
	rec.Attributes().PutStr(RuleAttribute, ruleName)
	rec.Attributes().PutBool(RescuedAttribute, true)
}

// pdataHeldLogs collects the held records of one request; reused.
type pdataHeldLogs struct {
	heldCursor
	ld plog.Logs
	rl plog.ResourceLogs
	sl plog.ScopeLogs
}

func (p *pdataHeldLogs) add(ri, si int, rl plog.ResourceLogs, sl plog.ScopeLogs, rec plog.LogRecord, key holdKey) {
	if len(p.keys) == 0 {
		p.ld = plog.NewLogs()
	}
	newResource, newScope := p.next(ri, si, key)
	if newResource {
		p.rl = p.ld.ResourceLogs().AppendEmpty()
		rl.Resource().CopyTo(p.rl.Resource())
		p.rl.SetSchemaUrl(rl.SchemaUrl())
	}
	if newScope {
		p.sl = p.rl.ScopeLogs().AppendEmpty()
		sl.Scope().CopyTo(p.sl.Scope())
		p.sl.SetSchemaUrl(sl.SchemaUrl())
	}
	rec.CopyTo(p.sl.LogRecords().AppendEmpty())
}

// holdLogs holds what p collected.
func (s *sampler) holdLogs(p *pdataHeldLogs, now time.Time) {
	if len(p.keys) == 0 {
		return
	}
	raw, err := (&plog.ProtoMarshaler{}).MarshalLogs(p.ld)
	s.holdMarshaled(raw, err, true, p.keys, now)
}

// rescueLogs adds the records of b whose traces are rescued to out.
func (s *sampler) rescueLogs(out *rescuedItems, b *heldBatch) {
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b.raw)
	if err != nil {
		return // written by ProtoMarshaler: cannot happen
	}
	v := logView{scratch: s.scratch}
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		v.resAttrs = rl.Resource().Attributes()
		v.service = serviceName(mapAttrs(v.resAttrs))
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			v.shared, _ = rawevent.Shared(sl)
			sl.LogRecords().RemoveIf(func(rec plog.LogRecord) bool {
				if !s.hold.rescued(newHoldKey(rec.TraceID(), v.service)) {
					return true
				}
				v.rec = rec
				name := ""
				for _, r := range s.rules {
					if r.match.matchLog(&v) {
						s.countRescuedLog(r, rec, v.service)
						name = r.name
						break
					}
				}
				markRescuedLog(rec, name)
				return false
			})
			return sl.LogRecords().Len() == 0
		})
		return rl.ScopeLogs().Len() == 0
	})
	s.scratch = v.scratch
	if out.ld == (plog.Logs{}) {
		out.ld = plog.NewLogs()
	}
	ld.ResourceLogs().MoveAndAppendTo(out.ld.ResourceLogs())
}
