package sampling

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"
)

const (
	// WeightAttribute carries the adjusted count (1/p as implied by the
	// encoded threshold) on kept items decided by a rule; sum() it.
	WeightAttribute = "sampling.adjusted_count"
	// RuleAttribute names the rule that decided a kept item.
	RuleAttribute = "sampling.rule"
	// priorityAttribute > 0 means "always keep" (OpenTracing convention).
	priorityAttribute = "sampling.priority"
)

// keepCond is a compiled KeepConfig.
type keepCond struct {
	errors   bool
	minDur   int64 // ns; 0 = off
	priority bool
}

// keepSpanFields is keepCond for spans without the priority attribute,
// which costs an attribute scan and is checked separately (see exempt).
func (k keepCond) keepSpanFields(isError bool, dur int64) bool {
	return (k.errors && isError) || (k.minDur > 0 && dur >= k.minDur)
}

func (k keepCond) keepLog(v *logView, isError bool) bool {
	return (k.errors && isError) || (k.priority && hasPriority(v.recAttrs()))
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
	// upstream is 1/upstream_probability: what a span that arrives without
	// th stood for before the app sampled it.
	upstream float64
	hold     bool // its drops wait for the local root, see hold.go
	counts   ruleCounts
}

// ruleCounts are a batch's counts; rescued spans are among the dropped.
// rescuedLogs are log records rescued by a traces request (see holdlogs.go).
type ruleCounts struct{ seen, kept, dropped, rescued, rescuedLogs int64 }

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
	// tracesNext takes rescued spans of requests that have passed; nil if
	// in no traces pipeline.
	tracesNext consumer.Traces
	// heldCounts pools FilterTraces' held counts (presample.go).
	heldCounts sync.Pool

	mu        sync.Mutex // guards everything below and the rules' mutable state
	parents   *recentParents
	summaries *summaryTable
	scratch   []byte   // body decoding buffer, see logView
	extras    []byte   // fields appended to kept raw spans, see FilterTraces
	wireKeys  []string // see spanAttrKeys
	hold      *holder  // nil: holding off
	pheld     pdataHeld
	lheld     pdataHeldLogs
	capture   []int     // ordinals of a raw request's spans to hold
	captKeys  []holdKey // and their traces

	stop chan struct{}
	wg   sync.WaitGroup
}

func newSampler(cfg *Config, set processor.Settings) (*sampler, error) {
	s := &sampler{
		cfg:     cfg,
		set:     set,
		always:  compileKeep(cfg.AlwaysKeep),
		parents: newRecentParents(cfg.Structure.RecentParents),
		hold:    newHolder(cfg.Hold),
	}
	for i := range cfg.Rules {
		rc := &cfg.Rules[i]
		m, err := compileMatch(&rc.Match)
		if err != nil {
			return nil, err
		}
		r := &rule{name: rc.Name, index: i, match: m, keepIf: compileKeep(rc.KeepIf), upstream: 1 / cfg.UpstreamProbability}
		if rc.UpstreamProbability != 0 {
			r.upstream = 1 / rc.UpstreamProbability
		}
		r.liftKind = m.kinds & (1<<uint(ptrace.SpanKindServer) | 1<<uint(ptrace.SpanKindConsumer))
		// Holding is for rules that drop: on unless the rule says hold: false.
		r.hold = s.hold != nil && (rc.Hold == nil || *rc.Hold) && (rc.TargetPerSecond > 0 || rc.Probability < 1)
		if rc.TargetPerSecond > 0 {
			r.dyn = newDynamicRule(rc)
		} else {
			r.fixed = newThresholdInfo(probabilityToThreshold(rc.Probability))
		}
		s.rules = append(s.rules, r)
		s.names = append(s.names, rc.Name)
	}
	s.wireKeys = spanAttrKeys(s.rules)
	var err error
	if s.metrics, err = newSelfMetrics(set, s.names); err != nil {
		return nil, err
	}
	s.summaries = newSummaryTable(cfg.Summaries.MaxGroups, time.Now())
	return s, nil
}

func compileKeep(c KeepConfig) keepCond {
	return keepCond{errors: c.Errors, minDur: int64(c.MinDuration), priority: c.Priority}
}

// Start starts the summary and adjustment timers.
func (s *sampler) Start(_ context.Context, _ component.Host) error {
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

// Shutdown stops the timers and emits the last summaries.
func (s *sampler) Shutdown(ctx context.Context) error {
	if s.stop == nil {
		return nil
	}
	close(s.stop)
	s.wg.Wait()
	s.stop = nil
	if s.hold != nil {
		// No local root will come: held spans are dropped as decided.
		s.mu.Lock()
		s.hold.releaseAll()
		s.flushCounts(ctx, signalTraces)
		s.mu.Unlock()
	}
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
	last := time.Now()
	return func(context.Context) {
		now := time.Now()
		s.mu.Lock()
		d.adjust(now.Sub(last))
		s.mu.Unlock()
		last = now
	}
}

// flushSummaries emits the summaries of the interval that just ended.
func (s *sampler) flushSummaries(ctx context.Context) {
	now := time.Now()
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
	ts     string // the new tracestate when setTS
	setTS  bool
}

// decidedHere reports whether an item carries what this processor writes on
// the items it keeps or rescues: a weight and the name of one of its rules.
// Such an item was decided and counted when it first passed: a batch that
// the pipeline refused after this processor (a full exporter queue) comes
// back from its receiver, the same pdata again or the part not taken, and
// it is left as it is so that the summaries count it once. An item stamped
// by a sampler upstream under another rule name is decided again.
func (s *sampler) decidedHere(attrs pcommon.Map) bool {
	name, ok := attrs.Get(RuleAttribute)
	if !ok || name.Type() != pcommon.ValueTypeStr {
		return false
	}
	if w, ok := attrs.Get(WeightAttribute); !ok || w.Type() != pcommon.ValueTypeDouble {
		return false
	}
	return slices.Contains(s.names, name.Str())
}

func hasPriority(attrs attrSet) bool {
	v, ok := attrs.get(priorityAttribute)
	if !ok {
		return false
	}
	switch v.typ {
	case pcommon.ValueTypeInt:
		return v.int() > 0
	case pcommon.ValueTypeDouble:
		return v.double() > 0
	case pcommon.ValueTypeStr:
		f, err := strconv.ParseFloat(v.str, 64)
		return err == nil && f > 0
	}
	return false
}

// flushCounts adds the batch's per-rule counts to the self-metrics.
func (s *sampler) flushCounts(ctx context.Context, sig signalMask) {
	for _, r := range s.rules {
		if r.counts != (ruleCounts{}) {
			s.metrics.record(ctx, r.index, sig, r.counts)
			r.counts = ruleCounts{}
		}
	}
	if s.hold != nil && s.hold.counts != (holdCounts{}) {
		s.metrics.recordHold(ctx, s.hold.counts)
		s.hold.counts = holdCounts{}
	}
}

func serviceName(attrs attrSet) string {
	if v, ok := attrs.get("service.name"); ok && v.typ == pcommon.ValueTypeStr {
		return v.str
	}
	return ""
}
