package samplingprocessor

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/jsonscan"
)

const (
	// WeightAttribute carries the adjusted count (1/p as implied by the
	// encoded threshold) on kept items decided by a rule; sum() it.
	WeightAttribute = "sampling.adjusted_count"
	// RuleAttribute names the rule that decided a kept item.
	RuleAttribute = "sampling.rule"
	// priorityAttribute > 0 means "always keep" (OpenTracing convention).
	priorityAttribute = "sampling.priority"
	scopeName         = "github.com/sidecarhq/sidecar/processors/samplingprocessor"
)

// keepCond is a compiled KeepConfig.
type keepCond struct {
	errors   bool
	minDur   int64 // ns; 0 = off
	priority bool
}

func (k keepCond) keepSpan(sp ptrace.Span, isError bool, dur int64) bool {
	return (k.errors && isError) || (k.minDur > 0 && dur >= k.minDur) || (k.priority && hasPriority(sp.Attributes()))
}

func (k keepCond) keepLog(rec plog.LogRecord, isError bool) bool {
	return (k.errors && isError) || (k.priority && hasPriority(rec.Attributes()))
}

// thresholdInfo is a threshold with everything written for it, computed once.
type thresholdInfo struct {
	t      uint64
	weight float64
	ts     string // tracestate for spans that arrived without one
}

func newThresholdInfo(t uint64) thresholdInfo {
	return thresholdInfo{t: t, weight: adjustedCount(t), ts: withThreshold("", encodeThreshold(t))}
}

// pow2Info[k] describes probability 2^-k (dynamic rules).
var pow2Info = func() (out [57]thresholdInfo) {
	for k := range out {
		out[k] = newThresholdInfo(pow2Threshold(k))
	}
	return out
}()

// rule is a compiled RuleConfig plus its per-batch metric counts.
type rule struct {
	name     string
	index    int
	match    *matcher
	fixed    thresholdInfo // when dyn == nil
	dyn      *dynamicRule
	keepIf   keepCond
	liftKind uint8 // SERVER/CONSUMER bits this rule names explicitly
	counts   ruleCounts
}

type ruleCounts struct{ seen, kept, dropped int64 }

// sampler is the processor state shared by the traces and logs pipelines of
// one configured instance.
type sampler struct {
	cfg      *Config
	set      processor.Settings
	rules    []*rule
	names    []string
	always   keepCond
	metrics  *selfMetrics
	logsNext consumer.Logs // summaries go here; nil if in no logs pipeline

	mu        sync.Mutex // guards everything below and the rules' mutable state
	parents   *recentParents
	summaries *summaryTable
	scratch   []byte // body decoding buffer, see logView
	now       func() time.Time

	stop chan struct{}
	wg   sync.WaitGroup
}

func newSampler(cfg *Config, set processor.Settings) (*sampler, error) {
	s := &sampler{
		cfg:     cfg,
		set:     set,
		always:  compileKeep(cfg.AlwaysKeep),
		parents: newRecentParents(cfg.Structure.RecentParents),
		now:     time.Now,
	}
	for i := range cfg.Rules {
		rc := &cfg.Rules[i]
		m, err := compileMatch(&rc.Match)
		if err != nil {
			return nil, err
		}
		r := &rule{name: rc.Name, index: i, match: m, keepIf: compileKeep(rc.KeepIf)}
		r.liftKind = m.kinds & (1<<uint(ptrace.SpanKindServer) | 1<<uint(ptrace.SpanKindConsumer))
		if rc.TargetPerSecond > 0 {
			r.dyn = newDynamicRule(rc)
		} else {
			r.fixed = newThresholdInfo(probabilityToThreshold(rc.Probability))
		}
		s.rules = append(s.rules, r)
		s.names = append(s.names, rc.Name)
	}
	var err error
	if s.metrics, err = newSelfMetrics(set.TelemetrySettings, s.names); err != nil {
		return nil, err
	}
	s.summaries = newSummaryTable(cfg.Summaries.MaxGroups, s.now())
	return s, nil
}

func compileKeep(c KeepConfig) keepCond {
	return keepCond{errors: c.Errors, minDur: int64(c.MinDuration), priority: c.Priority}
}

func (s *sampler) start(_ context.Context, _ component.Host) error {
	if s.logsNext == nil {
		s.set.Logger.Warn("sampling processor is in no logs pipeline: summary events of sampled-out items cannot be emitted (self-metrics still count them)")
	}
	s.stop = make(chan struct{})
	s.wg.Add(1)
	go s.loop(s.cfg.Summaries.Interval, s.flushSummaries)
	for _, r := range s.rules {
		if r.dyn != nil {
			s.wg.Add(1)
			go s.loop(r.dyn.interval, s.adjuster(r.dyn))
		}
	}
	return nil
}

func (s *sampler) shutdown(ctx context.Context) error {
	if s.stop == nil {
		return nil
	}
	close(s.stop)
	s.wg.Wait()
	s.stop = nil
	s.flushSummaries(ctx)
	return nil
}

// loop runs fn every interval until shutdown.
func (s *sampler) loop(interval time.Duration, fn func(context.Context)) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			fn(context.Background())
		}
	}
}

func (s *sampler) adjuster(d *dynamicRule) func(context.Context) {
	last := s.now()
	return func(context.Context) {
		now := s.now()
		s.mu.Lock()
		d.adjust(now.Sub(last))
		s.mu.Unlock()
		last = now
	}
}

// flushSummaries emits the summaries of the interval that just ended.
func (s *sampler) flushSummaries(ctx context.Context) {
	now := s.now()
	s.mu.Lock()
	table := s.summaries
	s.summaries = newSummaryTable(s.cfg.Summaries.MaxGroups, now)
	s.mu.Unlock()
	if len(table.groups) == 0 || s.logsNext == nil {
		return
	}
	ld := table.toLogs(s.names, now)
	if err := s.logsNext.ConsumeLogs(ctx, ld); err != nil {
		s.set.Logger.Warn("could not emit sampling summaries", zap.Int("records", ld.LogRecordCount()), zap.Error(err))
	}
}

// decision is the outcome for one item.
type decision struct {
	rule   *rule // nil: no rule matched, item untouched
	keep   bool
	weight float64
	ts     string // new tracestate, "" = leave as is
}

// decideSpan is the per-span decision path. It must not allocate except
// when a kept span's existing tracestate has to be rewritten.
func (s *sampler) decideSpan(v *spanView) decision {
	sp := v.span
	var r *rule
	v.operation = spanOperation(sp)
	for _, cand := range s.rules {
		if cand.match.matchSpan(v) {
			r = cand
			break
		}
	}
	if r == nil {
		return decision{}
	}
	v.isError = spanIsError(sp)
	dur := int64(sp.EndTimestamp()) - int64(sp.StartTimestamp())

	tsRaw := sp.TraceState().AsRaw()
	st := parseTraceState(tsRaw)
	rnd := traceRandomness(sp.TraceID())
	if st.hasRv {
		rnd = st.rv
	}
	tIn := uint64(0)
	consistent := true
	if st.hasTh {
		if st.th <= rnd {
			tIn = st.th
		} else {
			consistent = false // the spec says to erase an inconsistent th
		}
	}

	var target *thresholdInfo
	exempt := s.always.keepSpan(sp, v.isError, dur) || r.keepIf.keepSpan(sp, v.isError, dur) || s.protected(sp, r)
	if !exempt {
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
		case tsRaw == "" && target != nil && tOut == target.t:
			d.ts = target.ts
		default:
			d.ts = withThreshold(tsRaw, encodeThreshold(tOut))
		}
		d.weight = adjustedCount(tOut)
	}

	r.counts.seen++
	if d.keep {
		r.counts.kept++
	} else {
		r.counts.dropped++
	}
	status := "unset"
	switch {
	case v.isError:
		status = "error"
	case sp.Status().Code() == ptrace.StatusCodeOk:
		status = "ok"
	}
	stats := s.summaries.stats(summaryKey{signal: signalTraces, rule: r.index, service: v.service, operation: v.operation, status: status})
	stats.add(d.keep, v.isError, d.weight)
	stats.addDuration(dur)
	return d
}

// protected reports whether structure forbids r to drop sp: roots, SERVER and
// CONSUMER spans, and spans recently seen as a parent. Only a rule whose kind
// list names SERVER or CONSUMER may drop spans of that kind.
func (s *sampler) protected(sp ptrace.Span, r *rule) bool {
	kind := sp.Kind()
	if r.liftKind&(1<<uint(kind)) != 0 {
		return false
	}
	return kind == ptrace.SpanKindServer || kind == ptrace.SpanKindConsumer ||
		sp.ParentSpanID().IsEmpty() || s.parents.has(parentKey(sp.TraceID(), sp.SpanID()))
}

func spanIsError(sp ptrace.Span) bool {
	if sp.Status().Code() == ptrace.StatusCodeError {
		return true
	}
	evs := sp.Events()
	for i := 0; i < evs.Len(); i++ {
		if evs.At(i).Name() == "exception" {
			return true
		}
	}
	return false
}

func hasPriority(attrs pcommon.Map) bool {
	v, ok := attrs.Get(priorityAttribute)
	if !ok {
		return false
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int() > 0
	case pcommon.ValueTypeDouble:
		return v.Double() > 0
	case pcommon.ValueTypeStr:
		f, err := strconv.ParseFloat(v.Str(), 64)
		return err == nil && f > 0
	}
	return false
}

// keyHash hashes the dynamic rule's key fields of a span.
func (d *dynamicRule) keyHash(v *spanView) uint64 {
	h := fnvOffset
	for _, f := range d.fields {
		switch f {
		case "span.name", "name":
			h = h.str(v.span.Name())
		case "operation":
			h = h.str(v.operation)
		case "service.name":
			h = h.str(v.service)
		case "status":
			h = h.u64(uint64(v.span.Status().Code()))
		default:
			if a, ok := v.span.Attributes().Get(f); ok {
				h = h.value(a)
			} else if a, ok := v.resAttrs.Get(f); ok {
				h = h.value(a)
			} else {
				h = h.u64(0)
			}
		}
	}
	return uint64(h)
}

// keyHashLog hashes the dynamic rule's key fields of a log record.
func (d *dynamicRule) keyHashLog(v *logView) uint64 {
	h := fnvOffset
	for _, f := range d.fields {
		switch f {
		case "service.name":
			h = h.str(v.service)
		case "severity":
			h = h.u64(uint64(v.rec.SeverityNumber())).str(v.rec.SeverityText())
		default:
			if a, ok := v.rec.Attributes().Get(f); ok {
				h = h.value(a)
			} else if a, ok := v.resAttrs.Get(f); ok {
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
	if len(s.rules) == 0 {
		return td, nil
	}
	s.mu.Lock()
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if !sp.ParentSpanID().IsEmpty() {
					s.parents.add(parentKey(sp.TraceID(), sp.ParentSpanID()))
				}
			}
		}
	}
	var v spanView
	rss.RemoveIf(func(rs ptrace.ResourceSpans) bool {
		v.resAttrs = rs.Resource().Attributes()
		v.service = serviceName(v.resAttrs)
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				v.span = sp
				d := s.decideSpan(&v)
				if d.rule == nil {
					return false
				}
				if !d.keep {
					return true
				}
				if d.ts != "" {
					sp.TraceState().FromRaw(d.ts)
				}
				sp.Attributes().PutDouble(WeightAttribute, d.weight)
				sp.Attributes().PutStr(RuleAttribute, d.rule.name)
				return false
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	s.flushCounts(ctx, signalTraces)
	s.mu.Unlock()
	if td.ResourceSpans().Len() == 0 {
		return td, processorhelper.ErrSkipProcessingData
	}
	return td, nil
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
	if !s.always.keepLog(rec, isError) && !r.keepIf.keepLog(rec, isError) {
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
		return isErrorLevel(t)
	}
	if b := rec.Body(); b.Type() == pcommon.ValueTypeStr { // raw events carry `level`
		if raw, ok := jsonscan.Field(b.Str(), "level"); ok && jsonscan.IsString(raw) && !jsonscan.HasEscapes(raw) {
			return isErrorLevel(raw[1 : len(raw)-1])
		}
	}
	return false
}

func isErrorLevel(s string) bool {
	for _, l := range [...]string{"error", "fatal", "critical", "panic", "emerg", "alert", "crit", "err"} {
		if strings.EqualFold(s, l) {
			return true
		}
	}
	return false
}

// severityName is the status dimension of log summaries.
func severityName(rec plog.LogRecord) string {
	switch n := rec.SeverityNumber(); {
	case n >= plog.SeverityNumberFatal:
		return "fatal"
	case n >= plog.SeverityNumberError:
		return "error"
	case n >= plog.SeverityNumberWarn:
		return "warn"
	case n >= plog.SeverityNumberInfo:
		return "info"
	case n >= plog.SeverityNumberDebug:
		return "debug"
	case n >= plog.SeverityNumberTrace:
		return "trace"
	}
	return "unspecified"
}

func (s *sampler) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	if len(s.rules) == 0 {
		return ld, nil
	}
	s.mu.Lock()
	v := logView{scratch: s.scratch}
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		v.resAttrs = rl.Resource().Attributes()
		v.service = serviceName(v.resAttrs)
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			sl.LogRecords().RemoveIf(func(rec plog.LogRecord) bool {
				v.rec = rec
				d := s.decideLog(&v)
				if d.rule == nil {
					return false
				}
				if !d.keep {
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
	s.flushCounts(ctx, signalLogs)
	s.scratch = v.scratch
	s.mu.Unlock()
	if ld.ResourceLogs().Len() == 0 {
		return ld, processorhelper.ErrSkipProcessingData
	}
	return ld, nil
}

// flushCounts adds the batch's per-rule counts to the self-metrics.
func (s *sampler) flushCounts(ctx context.Context, sig signalMask) {
	for _, r := range s.rules {
		if r.counts != (ruleCounts{}) {
			s.metrics.record(ctx, r.index, sig, r.counts)
			r.counts = ruleCounts{}
		}
	}
}

func serviceName(attrs pcommon.Map) string {
	if v, ok := attrs.Get("service.name"); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}
