package sampling

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/sidecarhq/sidecar/sampling/internal/metadata"
	"github.com/sidecarhq/sidecar/sampling/presample"
)

// presampleConfig has a rule for every decision path: a fixed rule with
// keep_if and an operation match, a rule on resource attributes, and
// always_keep with priority.
func presampleConfig() *Config {
	cfg := testConfig(
		RuleConfig{Name: "redis", Match: redisMatch, Probability: 1.0 / 8, KeepIf: KeepConfig{MinDuration: 20 * time.Millisecond}},
		RuleConfig{Name: "internal", Match: MatchConfig{Kind: []string{"internal"}, ResourceAttributes: map[string]any{"deployment.environment": "prod"}}, Probability: 0.5},
		RuleConfig{Name: "hset", Match: MatchConfig{Operation: []string{"HSET"}}, Probability: 1.0 / 4},
	)
	cfg.AlwaysKeep.Priority = true
	cfg.Summaries.Interval = time.Hour
	return cfg
}

// presampleBatch is a request of two services with the span shapes the rules
// tell apart: roots, internal parents, Redis leaves (some slow, failed, with
// an exception event, with sampling.priority, with an incoming tracestate),
// HSET spans named by db.operation, and spans in the stable conventions
// with lower-case operations.
func presampleBatch(gen *spanGen, b int) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, svc := range []string{"shop", "cart"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		rs.Resource().Attributes().PutStr("deployment.environment", "prod")
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("ioredis")
		spans := ss.Spans()
		for r := 0; r < 6; r++ {
			requestTrace(gen, spans, (b+r)%2 == 0)
		}
		for i := 0; i < 40; i++ {
			sp := gen.redisLeaf(spans, gen.traceID(), gen.spanID(), int64(gen.rnd.IntN(int(30*time.Millisecond))))
			switch i % 10 {
			case 1:
				sp.Status().SetCode(ptrace.StatusCodeError)
			case 2: // an error with an inconsistent th (R < th, almost always): erased
				sp.Events().AppendEmpty().SetName("exception")
				if b%2 == 0 {
					sp.TraceState().FromRaw("ot=th:fff")
				} else {
					sp.TraceState().FromRaw("ot=th:fff;rv:00000000000001,vendor=x")
				}
			case 3:
				sp.Attributes().PutInt("sampling.priority", 1)
			case 4:
				sp.TraceState().FromRaw("ot=th:8;rv:" + "fffffffffffff0")
			case 5:
				sp.TraceState().FromRaw("vendor=x")
			case 6:
				sp.Attributes().PutStr("db.operation", "HSET")
				sp.Attributes().Remove("db.system")
			case 7: // sampled upstream already: the decision replaces these
				sp.Attributes().PutDouble(WeightAttribute, 2)
				sp.Attributes().PutStr(RuleAttribute, "upstream")
			case 8: // the stable conventions, as ioredis writes them
				sp.Attributes().Remove("db.system")
				sp.Attributes().PutStr("db.system.name", "redis")
				sp.Attributes().PutStr("db.operation.name", "hset")
				sp.SetName("hset")
			case 9:
				sp.SetName("get")
			}
		}
	}
	// A scope and a resource whose spans may all go.
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "batch")
	for i := 0; i < 3; i++ {
		gen.redisLeaf(rs.ScopeSpans().AppendEmpty().Spans(), gen.traceID(), gen.spanID(), 1000)
	}
	return td
}

func startSampler(t *testing.T, cfg *Config) (*sampler, *consumertest.TracesSink, func(context.Context, ptrace.Traces) error) {
	t.Helper()
	f := NewFactory()
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return sharedFor(t, cfg), sink, p.ConsumeTraces
}

// TestFilterTracesDecidesLikeProcessTraces runs the same requests through
// the pdata path and the raw path of two identical instances: what each
// keeps, the tracestate and attributes kept spans carry, and the summaries
// must be the same. The requests go to the raw path as protobuf
// (FilterTraces) and as OTLP/JSON (FilterTracesJSON).
func TestFilterTracesDecidesLikeProcessTraces(t *testing.T) {
	t.Run("protobuf", func(t *testing.T) { testFilterDecidesLikeProcess(t, false) })
	t.Run("json", func(t *testing.T) { testFilterDecidesLikeProcess(t, true) })
}

func testFilterDecidesLikeProcess(t *testing.T, asJSON bool) {
	pdataSampler, pdataSink, consumePdata := startSampler(t, presampleConfig())
	rawSampler, rawSink, consumeRaw := startSampler(t, presampleConfig())
	if f, ok := presample.Lookup(rawSampler.set.ID); !ok || f == nil {
		t.Fatal("a started sampler is not registered for presampling")
	}

	gen := newSpanGen(5)
	total := 0
	for b := 0; b < 30; b++ {
		td := presampleBatch(gen, b)
		sent := td.SpanCount()
		total += sent
		filter := rawSampler.FilterTraces
		req, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if asJSON {
			filter = rawSampler.FilterTracesJSON
			req, err = ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := consumePdata(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		out, n, err := filter(context.Background(), nil, req)
		if err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		if n != sent {
			t.Fatalf("batch %d: FilterTraces counted %d spans, the request has %d", b, n, sent)
		}
		clear(req) // summaries must not keep views into the request
		got := ptraceotlp.NewExportRequest()
		if err := got.UnmarshalProto(out); err != nil {
			t.Fatalf("batch %d: filtered request does not parse: %v", b, err)
		}
		if got.Traces().SpanCount() == 0 {
			continue
		}
		// The processor passes a batch its filter decided through untouched.
		if err := consumeRaw(presample.WithDecided(context.Background(), rawSampler), got.Traces()); err != nil {
			t.Fatal(err)
		}
	}
	want, got := pdataSink.AllTraces(), rawSink.AllTraces()
	if len(want) != len(got) {
		t.Fatalf("pdata path delivered %d batches, raw path %d", len(want), len(got))
	}
	kept := 0
	for i := range want {
		// The raw path puts replaced attributes last, pdata's Put* in place.
		sortAttributes(want[i])
		sortAttributes(got[i])
		w, _ := ptraceotlp.NewExportRequestFromTraces(want[i]).MarshalJSON()
		g, _ := ptraceotlp.NewExportRequestFromTraces(got[i]).MarshalJSON()
		if string(w) != string(g) {
			t.Fatalf("batch %d differs:\npdata path: %s\nraw path:   %s", i, w, g)
		}
		kept += want[i].SpanCount()
	}
	if kept == 0 || kept >= total {
		t.Fatalf("kept %d of %d spans: the rules did not both keep and drop", kept, total)
	}
	end := time.Unix(1700000000, 0)
	pdataSummaries := summaryRows(pdataSampler.summaries.toLogs(pdataSampler.names, end))
	rawSummaries := summaryRows(rawSampler.summaries.toLogs(rawSampler.names, end))
	if !reflect.DeepEqual(pdataSummaries, rawSummaries) {
		t.Fatalf("summaries differ:\npdata path: %v\nraw path:   %v", pdataSummaries, rawSummaries)
	}
	t.Logf("kept %d of %d spans in %d summary groups", kept, total, len(rawSummaries))
}

// summaryRows renders summary records without their interval, by group.
func summaryRows(ld plog.Logs) map[string]map[string]any {
	rows := map[string]map[string]any{}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		recs := rls.At(i).ScopeLogs().At(0).LogRecords()
		for j := 0; j < recs.Len(); j++ {
			m := recs.At(j).Body().Map().AsRaw()["sampling"].(map[string]any)
			delete(m, "interval_seconds")
			rows[fmt.Sprint(m["service"], "|", m["rule"], "|", m["operation"], "|", m["status"])] = m
		}
	}
	return rows
}

func TestFilterTracesWithoutRulesLeavesTheRequest(t *testing.T) {
	s, _, _ := startSampler(t, testConfig())
	td, spans := newBatch("shop")
	newSpanGen(1).redisLeaf(spans, pcommon.TraceID{1}, pcommon.SpanID{2}, 1000)
	req, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if _, _, err := s.FilterTraces(context.Background(), nil, req); !errors.Is(err, presample.ErrUndecided) {
		t.Fatalf("err = %v, want ErrUndecided: with no rules there is nothing to decide", err)
	}
	req, _ = ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	if _, _, err := s.FilterTracesJSON(context.Background(), nil, req); !errors.Is(err, presample.ErrUndecided) {
		t.Fatalf("JSON: err = %v, want ErrUndecided", err)
	}
}

func TestFilterTracesRejectsMalformedRequests(t *testing.T) {
	s, _, _ := startSampler(t, presampleConfig())
	td, spans := newBatch("shop")
	newSpanGen(1).redisLeaf(spans, pcommon.TraceID{1}, pcommon.SpanID{2}, 1000)
	req, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if _, _, err := s.FilterTraces(context.Background(), nil, req[:len(req)-3]); err == nil || errors.Is(err, presample.ErrUndecided) {
		t.Fatalf("truncated request: err = %v, want a parse error", err)
	}
	req, _ = ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	if _, _, err := s.FilterTracesJSON(context.Background(), nil, req[:len(req)-3]); err == nil || errors.Is(err, presample.ErrUndecided) {
		t.Fatalf("truncated JSON request: err = %v, want a parse error", err)
	}
}

// Only a processor running in a traces pipeline offers its filter: a config
// that keeps it out of the span path must not have spans sampled by it.
func TestFilterOfferedOnlyInATracesPipeline(t *testing.T) {
	f := NewFactory()
	set := processortest.NewNopSettings(f.Type())
	cfg := presampleConfig()
	logs, err := f.CreateLogs(context.Background(), set, cfg, new(consumertest.LogsSink))
	if err != nil {
		t.Fatal(err)
	}
	if err := logs.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = logs.Shutdown(context.Background()) }()
	if _, ok := presample.Lookup(set.ID); ok {
		t.Fatal("a sampling processor in a logs pipeline only offers a span filter")
	}

	traces, err := f.CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	if err != nil {
		t.Fatal(err)
	}
	if err := traces.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if _, ok := presample.Lookup(set.ID); !ok {
		t.Fatal("no filter while running in a traces pipeline")
	}
	if err := traces.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := presample.Lookup(set.ID); ok {
		t.Fatal("filter still offered after the traces pipeline shut down")
	}
}

// sortAttributes orders every span's attributes by key.
func sortAttributes(td ptrace.Traces) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				old := pcommon.NewMap()
				sp.Attributes().MoveTo(old)
				keys := slices.Sorted(maps.Keys(old.AsRaw()))
				for _, k := range keys {
					v, _ := old.Get(k)
					v.CopyTo(sp.Attributes().PutEmpty(k))
				}
			}
		}
	}
}

// FuzzFilterTracesDecidesLikeProcessTraces: for any request pdata accepts,
// the raw path keeps the same spans with the same tracestate and attributes
// as the pdata path, on two fresh instances with the same config.
func FuzzFilterTracesDecidesLikeProcessTraces(f *testing.F) {
	gen := newSpanGen(9)
	for b := range 3 {
		td := presampleBatch(gen, b)
		// Small seeds fuzz faster: a few spans of each shape per scope.
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				i := 0
				ss.Spans().RemoveIf(func(ptrace.Span) bool { i++; return i%13 != b })
			}
		}
		req, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(req)
	}
	cfg := presampleConfig()
	cfg.Structure.RecentParents = 256 // small: two instances per input
	set := processortest.NewNopSettings(metadata.Type)
	f.Fuzz(func(t *testing.T, req []byte) {
		parsed := ptraceotlp.NewExportRequest()
		if parsed.UnmarshalProto(req) != nil || hasDuplicateDecisionKeys(parsed.Traces()) {
			return
		}
		pdataSampler, err := newSampler(cfg, set)
		if err != nil {
			t.Fatal(err)
		}
		rawSampler, _ := newSampler(cfg, set)

		want, err := pdataSampler.processTraces(context.Background(), parsed.Traces())
		if err != nil && !errors.Is(err, processorhelper.ErrSkipProcessingData) {
			t.Fatal(err)
		}
		out, _, err := rawSampler.FilterTraces(context.Background(), nil, req)
		if err != nil {
			t.Fatalf("pdata accepts the request, the raw path does not: %v", err)
		}
		got := ptraceotlp.NewExportRequest()
		if err := got.UnmarshalProto(out); err != nil {
			t.Fatalf("filtered request does not parse: %v", err)
		}
		sortAttributes(want)
		sortAttributes(got.Traces())
		w, _ := ptraceotlp.NewExportRequestFromTraces(want).MarshalJSON()
		g, _ := ptraceotlp.NewExportRequestFromTraces(got.Traces()).MarshalJSON()
		if string(w) != string(g) {
			t.Fatalf("paths differ:\npdata: %s\nraw:   %s", w, g)
		}
	})
}

// hasDuplicateDecisionKeys reports a span holding a decision attribute twice:
// pdata's Put* replaces the first copy, the raw path every copy.
func hasDuplicateDecisionKeys(td ptrace.Traces) bool {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				n := 0
				for k := range sp.Attributes().All() {
					if k == WeightAttribute || k == RuleAttribute {
						n++
					}
				}
				if n > 1 {
					return true
				}
			}
		}
	}
	return false
}
