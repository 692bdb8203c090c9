package sampling

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
)

// keptSpan is what a test remembers of a span that left the processor.
type keptSpan struct {
	id, parent pcommon.SpanID
	trace      pcommon.TraceID
	name       string
	weight     float64
	hasWeight  bool
	rule       string
	traceState string
}

// spanRecorder is a consumer.Traces that keeps only what tests check, so
// that a million spans do not pile up in memory.
type spanRecorder struct {
	mu    sync.Mutex
	spans map[pcommon.SpanID]keptSpan
}

func (r *spanRecorder) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r *spanRecorder) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spans == nil {
		r.spans = map[pcommon.SpanID]keptSpan{}
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				ks := keptSpan{id: sp.SpanID(), trace: sp.TraceID(), parent: sp.ParentSpanID(), name: sp.Name(), traceState: sp.TraceState().AsRaw()}
				if w, ok := sp.Attributes().Get(WeightAttribute); ok {
					ks.weight, ks.hasWeight = w.Double(), true
				}
				if v, ok := sp.Attributes().Get(RuleAttribute); ok {
					ks.rule = v.Str()
				}
				r.spans[sp.SpanID()] = ks
			}
		}
	}
	return nil
}

// logRecorder keeps summary bodies and ordinary records apart.
type logRecorder struct {
	mu        sync.Mutex
	summaries []map[string]any
	records   []plog.LogRecord
}

func (r *logRecorder) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r *logRecorder) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			recs := sls.At(j).LogRecords()
			for k := 0; k < recs.Len(); k++ {
				rec := recs.At(k)
				if rec.Body().Type() == pcommon.ValueTypeMap {
					if s, ok := rec.Body().Map().Get("sampling"); ok {
						r.summaries = append(r.summaries, s.Map().AsRaw())
						continue
					}
				}
				cp := plog.NewLogRecord()
				rec.CopyTo(cp)
				r.records = append(r.records, cp)
			}
		}
	}
	return nil
}

// pipeline is one configured sampling instance in a traces and (optionally)
// a logs pipeline.
type pipeline struct {
	traces processor.Traces
	logs   processor.Logs
	spans  *spanRecorder
	logRec *logRecorder
}

func newPipeline(t testing.TB, cfg *Config, withLogs bool, settings ...processor.Settings) *pipeline {
	t.Helper()
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	f := NewFactory()
	set := processortest.NewNopSettings(f.Type())
	if len(settings) > 0 {
		set = settings[0]
	}
	p := &pipeline{spans: &spanRecorder{}, logRec: &logRecorder{}}
	var err error
	if p.traces, err = f.CreateTraces(context.Background(), set, cfg, p.spans); err != nil {
		t.Fatal(err)
	}
	comps := []component.Component{p.traces}
	if withLogs {
		if p.logs, err = f.CreateLogs(context.Background(), set, cfg, p.logRec); err != nil {
			t.Fatal(err)
		}
		comps = append(comps, p.logs)
	}
	for _, c := range comps {
		if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { p.shutdown(t) })
	return p
}

func (p *pipeline) shutdown(t testing.TB) {
	for _, c := range []component.Component{p.traces, p.logs} {
		if c != nil {
			if err := c.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (p *pipeline) consume(t testing.TB, td ptrace.Traces) {
	t.Helper()
	if err := p.traces.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
}

func testConfig(rules ...RuleConfig) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Rules = rules
	return cfg
}

var redisMatch = MatchConfig{Kind: []string{"client"}, Attributes: map[string]any{"db.system": "redis"}}

// spanGen makes reproducible spans from a seeded PCG.
type spanGen struct{ rnd *rand.Rand }

func newSpanGen(seed uint64) *spanGen { return &spanGen{rand.New(rand.NewPCG(seed, seed^0x5eed))} }

func (g *spanGen) traceID() (id pcommon.TraceID) {
	binary.BigEndian.PutUint64(id[:8], g.rnd.Uint64())
	binary.BigEndian.PutUint64(id[8:], g.rnd.Uint64())
	return id
}

func (g *spanGen) spanID() (id pcommon.SpanID) {
	binary.BigEndian.PutUint64(id[:], g.rnd.Uint64()|1)
	return id
}

// redisLeaf appends a Redis GET client span (a leaf with a parent).
func (g *spanGen) redisLeaf(spans ptrace.SpanSlice, trace pcommon.TraceID, parent pcommon.SpanID, durNs int64) ptrace.Span {
	sp := spans.AppendEmpty()
	sp.SetTraceID(trace)
	sp.SetSpanID(g.spanID())
	sp.SetParentSpanID(parent)
	sp.SetName("GET")
	sp.SetKind(ptrace.SpanKindClient)
	sp.SetStartTimestamp(1_000_000_000)
	sp.SetEndTimestamp(pcommon.Timestamp(1_000_000_000 + durNs))
	sp.Attributes().PutStr("db.system", "redis")
	return sp
}

// newBatch returns an empty batch of one service and its span slice.
func newBatch(service string) (ptrace.Traces, ptrace.SpanSlice) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	return td, rs.ScopeSpans().AppendEmpty().Spans()
}

// newLogBatch returns an empty log batch of one service.
func newLogBatch(service string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", service)
	rl.ScopeLogs().AppendEmpty()
	return ld
}
