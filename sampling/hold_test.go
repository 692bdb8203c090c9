package sampling

import (
	"context"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sidecarhq/sidecar/sampling/internal/metadata"
)

// holdRule drops nearly every Redis GET, so that whatever of a request's
// GETs arrives was rescued (or kept at arrival, with the rule's weight).
var holdRule = RuleConfig{Name: "redis", Match: redisMatch, Probability: 1.0 / 1024}

// request is one service request: a SERVER root and its Redis GETs.
type request struct {
	root   ptrace.Span
	leaves []pcommon.SpanID
}

// addRequest appends a request with n GETs to leaves and its root to roots
// (which may be the same slice: then the root comes after its children,
// as an SDK's batch processor exports them).
func addRequest(gen *spanGen, leaves, roots ptrace.SpanSlice, n int, failed bool) request {
	tid, rootID := gen.traceID(), gen.spanID()
	var r request
	for i := 0; i < n; i++ {
		r.leaves = append(r.leaves, gen.redisLeaf(leaves, tid, rootID, 1000).SpanID())
	}
	r.root = roots.AppendEmpty()
	r.root.SetTraceID(tid)
	r.root.SetSpanID(rootID)
	r.root.SetName("GET /orders")
	r.root.SetKind(ptrace.SpanKindServer)
	if failed {
		r.root.Status().SetCode(ptrace.StatusCodeError)
	}
	return r
}

// holdPath sends batches through either path of a started sampler.
type holdPath struct {
	name string
	send func(t *testing.T, s *sampler, consume func(context.Context, ptrace.Traces) error, td ptrace.Traces) ptrace.Traces
}

var holdPaths = []holdPath{
	{"pdata", func(t *testing.T, _ *sampler, consume func(context.Context, ptrace.Traces) error, td ptrace.Traces) ptrace.Traces {
		cp := ptrace.NewTraces()
		td.CopyTo(cp)
		if err := consume(context.Background(), cp); err != nil {
			t.Fatal(err)
		}
		return ptrace.NewTraces() // what passed is in the sink
	}},
	{"raw", func(t *testing.T, s *sampler, _ func(context.Context, ptrace.Traces) error, td ptrace.Traces) ptrace.Traces {
		req, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := s.FilterTraces(context.Background(), nil, req)
		if err != nil {
			t.Fatal(err)
		}
		got := ptraceotlp.NewExportRequest()
		if err := got.UnmarshalProto(out); err != nil {
			t.Fatal(err)
		}
		clear(req) // the receiver reuses its buffer: held spans must not point into it
		return got.Traces()
	}},
}

// shipped gathers every span that left: passed in its batch or emitted later.
func shipped(sink []ptrace.Traces, passed []ptrace.Traces) map[pcommon.SpanID]ptrace.Span {
	out := map[pcommon.SpanID]ptrace.Span{}
	for _, td := range append(sink, passed...) {
		eachSpan(td, func(_ pcommon.Map, sp ptrace.Span) { out[sp.SpanID()] = sp })
	}
	return out
}

// TestFailedRequestKeepsItsLeaves sends requests as a batch span processor
// does (children first, a request's root in the same or a later batch, one
// root before its children) and checks that every GET of a failed request
// ships, rescued or kept by probability, and no other GET is rescued.
func TestFailedRequestKeepsItsLeaves(t *testing.T) {
	for _, path := range holdPaths {
		t.Run(path.name, func(t *testing.T) {
			cfg := testConfig(holdRule)
			s, sink, consume := startSampler(t, cfg)
			gen := newSpanGen(7)
			var passed []ptrace.Traces
			send := func(td ptrace.Traces) { passed = append(passed, path.send(t, s, consume, td)) }

			var failed, ok []request
			// Batch 1: leaves of four requests; the roots of two come in the
			// same batch, of the other two in batch 2.
			b1, l1 := newBatch("shop")
			b2, l2 := newBatch("shop")
			failed = append(failed, addRequest(gen, l1, l1, 20, true), addRequest(gen, l1, l2, 20, true))
			ok = append(ok, addRequest(gen, l1, l1, 20, false), addRequest(gen, l1, l2, 20, false))
			send(b1)
			send(b2)
			// A failed root that arrives before its children (batch 3, 4).
			b3, l3 := newBatch("shop")
			b4, l4 := newBatch("shop")
			failed = append(failed, addRequest(gen, l4, l3, 20, true))
			send(b3)
			send(b4)

			got := shipped(sink.AllTraces(), passed)
			rescued := 0
			for _, r := range failed {
				for _, id := range r.leaves {
					sp, ok := got[id]
					if !ok {
						t.Fatalf("a GET of a failed request is missing")
					}
					w, _ := sp.Attributes().Get(WeightAttribute)
					if resc, ok := sp.Attributes().Get(RescuedAttribute); ok && resc.Bool() {
						rescued++
						if w.Double() != 0 || sp.TraceState().AsRaw() != "" {
							t.Errorf("rescued GET carries weight %v and tracestate %q, want 0 and none", w.Double(), sp.TraceState().AsRaw())
						}
					} else if w.Double() != 1024 {
						t.Errorf("GET of a failed request neither rescued nor sampled: weight %v", w.Double())
					}
				}
			}
			if rescued == 0 {
				t.Fatal("no GET was rescued")
			}
			for _, r := range ok {
				for _, id := range r.leaves {
					if sp, ok := got[id]; ok {
						if _, resc := sp.Attributes().Get(RescuedAttribute); resc {
							t.Fatal("a GET of a successful request was rescued")
						}
					}
				}
			}

			s.mu.Lock()
			var seen, dropped, resc uint64
			for k, st := range s.summaries.groups {
				if k.rule == 0 {
					seen, dropped, resc = seen+st.seen, dropped+st.dropped, resc+st.rescued
				}
			}
			held := len(s.hold.traces)
			s.mu.Unlock()
			if seen != 100 || int(resc) != rescued {
				t.Errorf("summaries: seen %d, rescued %d; want 100 and %d", seen, resc, rescued)
			}
			if held != 0 {
				t.Errorf("%d traces still held, all roots came", held)
			}
			t.Logf("%s: %d GETs rescued, %d dropped", path.name, rescued, dropped)
		})
	}
}

// TestHoldIsBounded floods the holder with leaves whose roots never come:
// the held bytes stay within max_bytes, the oldest are released early and
// counted, and every held span is accounted for once.
func TestHoldIsBounded(t *testing.T) {
	for _, path := range holdPaths {
		t.Run(path.name, func(t *testing.T) {
			cfg := testConfig(holdRule)
			cfg.Hold.MaxBytes = 64 << 10
			s, _, consume := startSampler(t, cfg)
			gen := newSpanGen(9)
			total := 0
			for i := 0; i < 200; i++ {
				td, spans := newBatch("shop")
				for j := 0; j < 10; j++ {
					addRequest(gen, spans, ptrace.NewSpanSlice(), 10, false) // root lost
				}
				total += 100
				path.send(t, s, consume, td)
				s.mu.Lock()
				if s.hold.bytes > cfg.Hold.MaxBytes {
					t.Fatalf("held %d bytes, max_bytes is %d", s.hold.bytes, cfg.Hold.MaxBytes)
				}
				s.mu.Unlock()
			}
			s.mu.Lock()
			inHold := s.hold.heldSpans()
			s.mu.Unlock()
			if inHold == 0 || inHold >= total {
				t.Fatalf("%d of %d spans held: want the newest that fit, the oldest released early", inHold, total)
			}
			s.mu.Lock()
			s.hold.releaseAll()
			left := len(s.hold.traces)
			bytes := s.hold.bytes
			s.mu.Unlock()
			if left != 0 || bytes != 0 {
				t.Fatalf("after releasing everything: %d traces, %d bytes held", left, bytes)
			}
		})
	}
}

// TestHoldWindow: a span whose root does not come within the window is
// released, and its root, when it comes late and failed, rescues nothing.
func TestHoldWindow(t *testing.T) {
	cfg := testConfig(holdRule)
	s, sink, consume := startSampler(t, cfg)
	gen := newSpanGen(3)
	td, spans := newBatch("shop")
	late, roots := newBatch("shop")
	addRequest(gen, spans, roots, 20, true)
	holdPaths[0].send(t, s, consume, td)
	s.mu.Lock()
	held := len(s.hold.traces)
	s.hold.begin(time.Now().Add(cfg.Hold.Window + time.Second))
	after := len(s.hold.traces)
	s.mu.Unlock()
	if held != 1 || after != 0 {
		t.Fatalf("held traces: %d before the window ended, %d after; want 1 and 0", held, after)
	}
	holdPaths[0].send(t, s, consume, late)
	if n := sink.SpanCount(); n > 1+20 {
		t.Fatalf("%d spans shipped", n)
	}
	for _, td := range sink.AllTraces() {
		eachSpan(td, func(_ pcommon.Map, sp ptrace.Span) {
			if _, ok := sp.Attributes().Get(RescuedAttribute); ok {
				t.Fatal("a span released at the window's end was rescued")
			}
		})
	}
}

func TestHoldOffPerRule(t *testing.T) {
	off := false
	r := holdRule
	r.Hold = &off
	cfg := testConfig(r)
	s, _, _ := startSampler(t, cfg)
	if s.rules[0].hold {
		t.Fatal("hold: false left the rule holding")
	}
	cfg2 := testConfig(holdRule)
	cfg2.Hold.MaxBytes = 0
	if s2, _, _ := startSampler(t, cfg2); s2.hold != nil || s2.rules[0].hold {
		t.Fatal("hold.max_bytes: 0 left holding on")
	}
}

// TestHolderCountsEverySpanOnce: every held span ends exactly once: still
// held, released (for a reason) or rescued.
func TestHolderCountsEverySpanOnce(t *testing.T) {
	h := newHolder(HoldConfig{Window: time.Minute, MaxBytes: 4 << 10})
	gen := newSpanGen(5)
	now := time.Now()
	keys := make([]holdKey, 0, 64)
	var all []holdKey
	for i := 0; i < 100; i++ {
		h.begin(now)
		for k := range h.traces {
			if k.trace[0]%3 == 0 {
				h.noteRoot(k, k.trace[1]%2 == 0, now)
			}
		}
		rescued := 0
		for k := range h.rescue {
			for _, r := range h.traces[k] {
				rescued += r.n
			}
		}
		h.finishRescue()
		keys = keys[:0]
		for j := 0; j < 8; j++ {
			k := newHoldKey(gen.traceID(), "shop")
			keys = append(keys, k, k, k)
			all = append(all, k)
		}
		h.add(make([]byte, 300), false, keys, now)
		h.counts.held -= int64(rescued) // rescued spans leave the held count
		if h.bytes > h.maxBytes {
			t.Fatalf("%d bytes held over %d", h.bytes, h.maxBytes)
		}
	}
	released := int64(0)
	for _, n := range h.counts.released {
		released += n
	}
	if got := released + int64(h.heldSpans()); got != h.counts.held {
		t.Fatalf("held %d spans; released %d + still held %d = %d", h.counts.held, released, h.heldSpans(), got)
	}
	if h.counts.released[releasedBudget] == 0 || h.counts.released[releasedRootOK] == 0 {
		t.Fatalf("released: %v; want some early (budget) and some for root_ok", h.counts.released)
	}
	h.releaseAll()
	if h.bytes != 0 || len(h.traces) != 0 {
		t.Fatalf("after releaseAll: %d bytes, %d traces", h.bytes, len(h.traces))
	}
}

// TestWeightsStayUnbiasedWithHolding: over many seeds, the sum of the
// shipped GETs' weights estimates the true number of GETs within the
// variance the design implies, with a fifth of the requests failed (their
// GETs rescued). Counting a rescued GET as 1 instead of 0 is far off.
func TestWeightsStayUnbiasedWithHolding(t *testing.T) {
	const (
		seeds    = 200
		requests = 100
		leaves   = 5
		p        = 1.0 / 8
	)
	rule := RuleConfig{Name: "redis", Match: redisMatch, Probability: p}
	var sum, sumIfOne float64
	rescued := 0
	for seed := uint64(0); seed < seeds; seed++ {
		pl := newPipeline(t, testConfig(rule), false)
		gen := newSpanGen(1000 + seed)
		td, spans := newBatch("shop")
		next, nextSpans := newBatch("shop")
		for i := 0; i < requests; i++ {
			roots := spans
			if gen.rnd.IntN(2) == 0 {
				roots = nextSpans // the root in the next export
			}
			addRequest(gen, spans, roots, leaves, gen.rnd.IntN(5) == 0)
		}
		pl.consume(t, td)
		pl.consume(t, next)
		for _, ks := range pl.spans.spans {
			if ks.rule != "redis" {
				continue
			}
			sum += ks.weight
			sumIfOne += ks.weight
			if ks.weight == 0 {
				rescued++
				sumIfOne++
			}
		}
		pl.shutdown(t)
	}
	// Leaves of one request share its randomness: per request the weight
	// sum is leaves/p with probability p, else 0; its variance is
	// leaves²·(1/p - 1).
	trueCount := float64(seeds * requests * leaves)
	sd := math.Sqrt(seeds * requests * leaves * leaves * (1/p - 1))
	t.Logf("true %v, weighted sum %v (sd %.0f), %d rescued; with rescued as 1: %v", trueCount, sum, sd, rescued, sumIfOne)
	if rescued == 0 {
		t.Fatal("nothing was rescued")
	}
	if math.Abs(sum-trueCount) > 4*sd {
		t.Errorf("weighted sum %v is %.1f sd from the true count %v", sum, (sum-trueCount)/sd, trueCount)
	}
	if math.Abs(sumIfOne-trueCount) < 4*sd {
		t.Errorf("weight 1 for rescued spans would pass too (%v): the test cannot tell", sumIfOne)
	}
}

// TestFailedRequestKeepsItsLogs: debug lines with a trace id that a rule
// drops are held; the failed request's lines ship, rescued, when its root
// span comes (before or after them), lines without a service.name too, the
// successful one's do not.
func TestFailedRequestKeepsItsLogs(t *testing.T) {
	debug := RuleConfig{Name: "debug", Match: MatchConfig{Signal: "logs", Severity: []string{"debug"}}, Probability: 1.0 / 1024}
	p := newPipeline(t, testConfig(holdRule, debug), true)
	gen := newSpanGen(21)
	lines := func(tid pcommon.TraceID, n int) plog.Logs {
		ld := newLogBatch("shop")
		recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for range n {
			rec := recs.AppendEmpty()
			rec.SetTraceID(tid)
			rec.SetSeverityNumber(plog.SeverityNumberDebug)
			rec.Body().SetStr("cache miss")
		}
		return ld
	}
	consumeLogs := func(ld plog.Logs) {
		if err := p.logs.ConsumeLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
	}
	td, spans := newBatch("shop")
	failed := addRequest(gen, spans, spans, 0, true)
	okTD, okSpans := newBatch("shop")
	ok := addRequest(gen, okSpans, okSpans, 0, false)
	early, earlySpans := newBatch("shop")
	failedFirst := addRequest(gen, earlySpans, earlySpans, 0, true)

	consumeLogs(lines(failed.root.TraceID(), 20)) // held
	stdout := lines(failed.root.TraceID(), 10)    // no service.name, as stdout lines
	stdout.ResourceLogs().At(0).Resource().Attributes().Clear()
	consumeLogs(stdout)
	consumeLogs(lines(ok.root.TraceID(), 30)) // held
	p.consume(t, early)                       // a failed root before its lines
	consumeLogs(lines(failedFirst.root.TraceID(), 30))
	p.consume(t, td) // rescues the first 30
	p.consume(t, okTD)

	byTrace := map[pcommon.TraceID]int{}
	for _, rec := range p.logRec.records {
		if r, _ := rec.Attributes().Get(RescuedAttribute); !r.Bool() {
			continue
		}
		if w, _ := rec.Attributes().Get(WeightAttribute); w.Double() != 0 {
			t.Errorf("rescued line has weight %v", w.Double())
		}
		byTrace[rec.TraceID()]++
	}
	if byTrace[failed.root.TraceID()] != 30 || byTrace[failedFirst.root.TraceID()] != 30 || byTrace[ok.root.TraceID()] != 0 {
		t.Fatalf("rescued lines: failed %d, failed root first %d, succeeded %d; want 30, 30, 0",
			byTrace[failed.root.TraceID()], byTrace[failedFirst.root.TraceID()], byTrace[ok.root.TraceID()])
	}
}

// TestHoldSelfMetricsCountEverySpanOnce: every held span is counted once
// as it ends: rescued (its request failed), released for root_ok, or
// released at shutdown (its root never came).
func TestHoldSelfMetricsCountEverySpanOnce(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	p := newPipeline(t, testConfig(holdRule), false, set)
	gen := newSpanGen(13)
	leaves, _ := newBatch("shop")
	roots, rootSpans := newBatch("shop")
	l := leaves.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range 30 {
		switch i % 3 {
		case 0:
			addRequest(gen, l, rootSpans, 10, true)
		case 1:
			addRequest(gen, l, rootSpans, 10, false)
		default:
			addRequest(gen, l, ptrace.NewSpanSlice(), 10, false) // root lost
		}
	}
	p.consume(t, leaves)
	p.consume(t, roots)
	p.shutdown(t)

	sum := func(name, key, value string) int64 {
		m, err := tel.GetMetric(name)
		if err != nil {
			return 0
		}
		n := int64(0)
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			if v, _ := dp.Attributes.Value(attribute.Key(key)); key == "" || v.AsString() == value {
				n += dp.Value
			}
		}
		return n
	}
	held := sum("otelcol_processor_sampling_held_items", "", "")
	rescued := sum("otelcol_processor_sampling_rescued_items", "", "")
	rootOK := sum("otelcol_processor_sampling_released_items", "reason", "root_ok")
	shutdown := sum("otelcol_processor_sampling_released_items", "reason", "shutdown")
	dropped := sum("otelcol_processor_sampling_dropped_items", "", "")
	t.Logf("dropped %d: held %d = rescued %d + released root_ok %d + shutdown %d", dropped, held, rescued, rootOK, shutdown)
	if held != dropped || held != rescued+rootOK+shutdown || rescued == 0 || rootOK == 0 || shutdown == 0 {
		t.Fatalf("dropped %d, held %d, rescued %d, released root_ok %d, shutdown %d", dropped, held, rescued, rootOK, shutdown)
	}
}
