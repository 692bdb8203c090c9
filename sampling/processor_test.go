package sampling

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sidecarhq/sidecar/internal/sharedinstance"
	"github.com/sidecarhq/sidecar/sampling/internal/metadata"
)

// requestTrace appends a SERVER root, an internal child and 50 Redis leaf
// children of the internal span, children first (as SDKs export them).
func requestTrace(gen *spanGen, spans ptrace.SpanSlice, parentsFirst bool) (root, mid ptrace.Span) {
	tid := gen.traceID()
	rootID, midID := gen.spanID(), gen.spanID()
	addParents := func() {
		root = spans.AppendEmpty()
		root.SetTraceID(tid)
		root.SetSpanID(rootID)
		root.SetName("GET /orders")
		root.SetKind(ptrace.SpanKindServer)
		mid = spans.AppendEmpty()
		mid.SetTraceID(tid)
		mid.SetSpanID(midID)
		mid.SetParentSpanID(rootID)
		mid.SetName("loadOrders")
		mid.SetKind(ptrace.SpanKindInternal)
	}
	if parentsFirst {
		addParents()
	}
	for i := 0; i < 50; i++ {
		gen.redisLeaf(spans, tid, midID, 1000)
	}
	if !parentsFirst {
		addParents()
	}
	return root, mid
}

// TestTracesStayWhole drops (almost) everything with a rule that matches
// every span and checks that roots, SERVER spans and parents survive, in one
// batch either way round and across batches.
func TestTracesStayWhole(t *testing.T) {
	everything := RuleConfig{Name: "all", Probability: math.Ldexp(1, -56)}
	for _, tc := range []struct {
		name   string
		layout func(gen *spanGen, p *pipeline) (parents []pcommon.SpanID)
	}{
		{"one batch, children first", func(gen *spanGen, p *pipeline) []pcommon.SpanID {
			td, spans := newBatch("shop")
			r, m := requestTrace(gen, spans, false)
			ids := []pcommon.SpanID{r.SpanID(), m.SpanID()}
			p.consume(t, td)
			return ids
		}},
		{"one batch, parents first", func(gen *spanGen, p *pipeline) []pcommon.SpanID {
			td, spans := newBatch("shop")
			r, m := requestTrace(gen, spans, true)
			ids := []pcommon.SpanID{r.SpanID(), m.SpanID()}
			p.consume(t, td)
			return ids
		}},
		{"children in an earlier batch", func(gen *spanGen, p *pipeline) []pcommon.SpanID {
			td, spans := newBatch("shop")
			r, m := requestTrace(gen, spans, false)
			ids := []pcommon.SpanID{r.SpanID(), m.SpanID()}
			parents, parentSpans := newBatch("shop")
			spans.RemoveIf(func(sp ptrace.Span) bool {
				if sp.SpanID() == ids[0] || sp.SpanID() == ids[1] {
					sp.CopyTo(parentSpans.AppendEmpty())
					return true
				}
				return false
			})
			p.consume(t, td)
			p.consume(t, parents)
			return ids
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPipeline(t, testConfig(everything), false)
			gen := newSpanGen(11)
			var parents []pcommon.SpanID
			for i := 0; i < 20; i++ {
				parents = append(parents, tc.layout(gen, p)...)
			}
			for _, id := range parents {
				if _, ok := p.spans.spans[id]; !ok {
					t.Fatalf("parent span %v was dropped", id)
				}
			}
			if len(p.spans.spans) != len(parents) {
				t.Fatalf("kept %d spans, want only the %d parents", len(p.spans.spans), len(parents))
			}
			for _, ks := range p.spans.spans {
				if !ks.parent.IsEmpty() {
					if _, ok := p.spans.spans[ks.parent]; !ok {
						t.Fatalf("span %s kept without its parent", ks.name)
					}
				}
			}
		})
	}

	t.Run("a rule naming kind server may drop server spans", func(t *testing.T) {
		p := newPipeline(t, testConfig(RuleConfig{Name: "health", Match: MatchConfig{Kind: []string{"server"}}, Probability: math.Ldexp(1, -56)}), false)
		td, spans := newBatch("shop")
		root, mid := requestTrace(newSpanGen(5), spans, false)
		rootID, midID := root.SpanID(), mid.SpanID()
		p.consume(t, td)
		if _, ok := p.spans.spans[rootID]; ok {
			t.Fatal("server root kept although the rule names kind server")
		}
		if _, ok := p.spans.spans[midID]; !ok {
			t.Fatal("unmatched internal span dropped")
		}
	})
}

func TestRecentParentsWindow(t *testing.T) {
	r := newRecentParents(100)
	for k := uint64(1); k <= 150; k++ {
		r.add(k)
	}
	for k := uint64(1); k <= 150; k++ {
		if !r.has(k) {
			t.Fatalf("id %d forgotten within the window", k)
		}
	}
	for k := uint64(151); k <= 300; k++ {
		r.add(k)
	}
	if r.has(1) || r.has(100) {
		t.Fatal("ids older than two generations are still remembered")
	}
	if !r.has(300) || !r.has(201) {
		t.Fatal("recent ids forgotten")
	}
}

// TestRecentParentsModel checks the table (and the filter in front of it)
// against two plain sets, with repeated keys and many generation turns:
// every remembered id is found and no other is.
func TestRecentParentsModel(t *testing.T) {
	const limit = 300
	r := newRecentParents(limit)
	cur, old := map[uint64]bool{}, map[uint64]bool{}
	rnd := newSpanGen(3).rnd
	for i := 0; i < 20*limit; i++ {
		k := rnd.Uint64N(4*limit) + 1 // small key space: repeats, also across generations
		if rnd.IntN(4) == 0 {
			k = rnd.Uint64() | 1
		}
		for rep := rnd.IntN(3); rep >= 0; rep-- { // siblings add the same parent in a row
			r.add(k)
		}
		if !cur[k] {
			if len(cur) >= limit {
				cur, old = map[uint64]bool{}, cur
			}
			cur[k] = true
		}
		for j := 0; j < 4; j++ {
			q := rnd.Uint64N(4*limit) + 1
			if want := cur[q] || old[q]; r.has(q) != want {
				t.Fatalf("step %d: has(%d) = %v, want %v", i, q, !want, want)
			}
		}
		if !r.has(k) {
			t.Fatalf("step %d: %d forgotten right after adding it", i, k)
		}
	}
}

// TestSummaries sends a known mix through spans and logs rules with short
// summary intervals and checks that the summary events add up exactly.
func TestSummaries(t *testing.T) {
	cfg := testConfig(
		RuleConfig{Name: "redis-get", Match: MatchConfig{Kind: []string{"client"}, Operation: []string{"GET"}}, Probability: 1.0 / 16},
		RuleConfig{Name: "health-logs", Match: MatchConfig{Signal: "logs", Body: map[string]any{"route": "/health"}}, Probability: 1.0 / 16},
	)
	cfg.Summaries.Interval = time.Hour // intervals end by hand below, not by the clock
	p := newPipeline(t, cfg, true)
	s := sharedFor(t, cfg)
	gen := newSpanGen(99)
	const batches, perBatch = 40, 500
	wantErrors := 0
	var minDur, maxDur int64 = math.MaxInt64, 0
	for b := 0; b < batches; b++ {
		td, spans := newBatch("shop")
		for i := 0; i < perBatch; i++ {
			dur := int64(gen.rnd.IntN(int(20 * time.Millisecond)))
			minDur, maxDur = min(minDur, dur), max(maxDur, dur)
			sp := gen.redisLeaf(spans, gen.traceID(), gen.spanID(), dur)
			if i%50 == 0 {
				sp.Status().SetCode(ptrace.StatusCodeError)
				wantErrors++
			}
		}
		p.consume(t, td)
		ld := newLogBatch("shop")
		recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := 0; i < perBatch; i++ {
			rec := recs.AppendEmpty()
			rec.SetTimestamp(pcommon.Timestamp(b*perBatch + i))
			rec.Body().SetStr(`{"route":"/health"}`)
		}
		if err := p.logs.ConsumeLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
		if b%10 == 9 && b < batches-1 { // the last interval ends at shutdown
			s.flushSummaries(context.Background())
		}
	}
	p.shutdown(t) // flushes the last interval
	p.traces, p.logs = nil, nil

	type totals struct{ seen, kept, dropped, errors, hist int64 }
	got := map[string]*totals{}
	var durMin, durMax = math.Inf(1), 0.0
	for _, s := range p.logRec.summaries {
		if s["summary"] != true || s["service"] != "shop" {
			t.Fatalf("bad summary %v", s)
		}
		if s["status"] != "error" && s["status"] != "unset" && s["status"] != "unspecified" {
			t.Fatalf("bad status in %v", s)
		}
		rule := s["rule"].(string)
		tt := got[rule]
		if tt == nil {
			tt = &totals{}
			got[rule] = tt
		}
		tt.seen += s["seen"].(int64)
		tt.kept += s["kept"].(int64)
		tt.dropped += s["dropped"].(int64)
		tt.errors += s["errors"].(int64)
		if s["seen"].(int64) != s["kept"].(int64)+s["dropped"].(int64) {
			t.Fatalf("summary with seen != kept + dropped: %v", s)
		}
		if rule == "redis-get" {
			if s["operation"] != "GET" || s["signal"] != "traces" {
				t.Fatalf("bad span summary %v", s)
			}
			for _, n := range s["duration_histogram_ms"].(map[string]any) {
				tt.hist += n.(int64)
			}
			d := s["duration_ms"].(map[string]any)
			durMin, durMax = math.Min(durMin, d["min"].(float64)), math.Max(durMax, d["max"].(float64))
		}
	}
	keptSpans := int64(len(p.spans.spans))
	keptLogs := int64(len(p.logRec.records))
	const sent = batches * perBatch
	if g := got["redis-get"]; g == nil || g.seen != sent || g.kept != keptSpans || g.dropped != sent-keptSpans || g.errors != int64(wantErrors) || g.hist != sent {
		t.Fatalf("span totals %+v; sent %d, kept %d, errors %d", g, sent, keptSpans, wantErrors)
	}
	if g := got["health-logs"]; g == nil || g.seen != sent || g.kept != keptLogs || g.dropped != sent-keptLogs {
		t.Fatalf("log totals %+v; sent %d, kept %d", g, sent, keptLogs)
	}
	if durMin != float64(minDur)/1e6 || durMax != float64(maxDur)/1e6 {
		t.Fatalf("duration min/max %v/%v ms, want %v/%v", durMin, durMax, float64(minDur)/1e6, float64(maxDur)/1e6)
	}
	// Four intervals (three ended by hand, the last by shutdown), each with a
	// span group per status (error, unset) and a log group.
	if len(p.logRec.summaries) != 4*3 {
		t.Fatalf("%d summary records, want 12", len(p.logRec.summaries))
	}
}

func TestHistogramBuckets(t *testing.T) {
	st := &summaryStats{durMin: -1}
	for _, d := range []time.Duration{0, time.Millisecond, time.Millisecond + 1, 10 * time.Second, 11 * time.Second} {
		st.addDuration(int64(d))
	}
	want := map[int]uint64{0: 2, 1: 1, 12: 1, 13: 1}
	for i, n := range st.hist {
		if n != want[i] {
			t.Fatalf("bucket %s has %d, want %d (hist %v)", histLabels[i], n, want[i], st.hist)
		}
	}
}

// TestDynamicRule checks the power-of-two probability computed from the last
// interval, the weights it gives, the key bound and idle-key expiry.
func TestDynamicRule(t *testing.T) {
	d := newDynamicRule(&RuleConfig{TargetPerSecond: 20, MaxKeys: 2})
	for i := 0; i < 10000; i++ {
		d.state(1)
	}
	for i := 0; i < 100; i++ {
		d.state(2)
	}
	for i := 0; i < 5000; i++ {
		d.state(3) // over max_keys: overflow
	}
	d.adjust(10 * time.Second)
	// 200 wanted per 10 s: 200/10000 = 2^-5.6 -> 2^-6; 200/100 -> 1; 200/5000 = 2^-4.6 -> 2^-5.
	if d.keys[1].exp != 6 || d.keys[2].exp != 0 || d.overflow.exp != 5 || len(d.keys) != 2 {
		t.Fatalf("exps %d %d overflow %d keys %d", d.keys[1].exp, d.keys[2].exp, d.overflow.exp, len(d.keys))
	}
	d.state(1)
	d.adjust(10 * time.Second)
	if _, ok := d.keys[2]; ok {
		t.Fatal("idle key not forgotten")
	}

	cfg := testConfig(RuleConfig{Name: "redis-dyn", Match: redisMatch, TargetPerSecond: 20, Key: []string{"span.name"}, Interval: time.Hour})
	p := newPipeline(t, cfg, false)
	gen := newSpanGen(1)
	send := func(n int) {
		td, spans := newBatch("shop")
		for i := 0; i < n; i++ {
			gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 1000)
		}
		p.consume(t, td)
	}
	send(20000)
	if len(p.spans.spans) != 20000 {
		t.Fatalf("first interval kept %d of 20000, want all (probability 1 before any count)", len(p.spans.spans))
	}
	s := sharedFor(t, cfg)
	s.mu.Lock()
	s.rules[0].dyn.adjust(10 * time.Second) // 200/20000 = 2^-6.6 -> 2^-7
	s.mu.Unlock()
	p.spans.spans = nil
	send(20000)
	sd := math.Sqrt(20000.0 / 128 * 127 / 128)
	if k := float64(len(p.spans.spans)); math.Abs(k-20000.0/128) > 4*sd {
		t.Fatalf("kept %v, want about %v", k, 20000.0/128)
	}
	for _, ks := range p.spans.spans {
		if ks.weight != 128 || ks.traceState != "ot=th:fe" {
			t.Fatalf("weight %v tracestate %q, want 128 and ot=th:fe", ks.weight, ks.traceState)
		}
	}
}

func sharedFor(t *testing.T, cfg *Config) *sampler {
	sh, err := sharedinstance.GetCounted(&instances, cfg, func() (*sampler, error) { return nil, errors.New("no shared instance") })
	if err != nil {
		t.Fatal(err)
	}
	return sh.Instance
}

func TestSelfMetricsAndWarning(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	core, logs := observer.New(zap.WarnLevel)
	set.Logger = zap.New(core)
	cfg := testConfig(RuleConfig{Name: "redis", Match: redisMatch, Probability: 1.0 / 4})
	p := newPipeline(t, cfg, false, set)
	if logs.FilterMessageSnippet("no logs pipeline").Len() != 1 {
		t.Fatalf("want one warning about the missing logs pipeline, got %v", logs.All())
	}
	gen := newSpanGen(2)
	td, spans := newBatch("shop")
	for i := 0; i < 1000; i++ {
		gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 1000)
	}
	p.consume(t, td)
	kept := int64(len(p.spans.spans))
	for name, want := range map[string]int64{
		"otelcol_processor_sampling_seen_items":    1000,
		"otelcol_processor_sampling_kept_items":    kept,
		"otelcol_processor_sampling_dropped_items": 1000 - kept,
	} {
		m, err := tel.GetMetric(name)
		if err != nil {
			t.Fatal(err)
		}
		dps := m.Data.(metricdata.Sum[int64]).DataPoints
		if len(dps) != 1 || dps[0].Value != want {
			t.Fatalf("%s = %+v, want %d", name, dps, want)
		}
		if v, _ := dps[0].Attributes.Value("rule"); v.AsString() != "redis" {
			t.Fatalf("%s has rule %q", name, v.AsString())
		}
		if v, _ := dps[0].Attributes.Value("processor"); v.AsString() != set.ID.String() {
			t.Fatalf("%s has processor %q, want %q", name, v.AsString(), set.ID)
		}
	}
}
