package sampling

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
)

// refusingExporter stands for the exporter behind the processor while its
// queue is full: it refuses the first `refuse` batches of items, then, if
// partial, takes the first half of the next one (batches of one scope) and
// refuses the rest (as the axiom exporter does, consumererror.Logs/Traces),
// then takes all. Summary events always pass.
type refusingExporter struct {
	refuse  int
	partial bool
	logs    *logRecorder
	spans   *spanRecorder
}

var errQueueFull = errors.New("sending queue is full")

func (e *refusingExporter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (e *refusingExporter) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if isSummaryBatch(ld) {
		return e.logs.ConsumeLogs(ctx, ld)
	}
	if e.refuse > 0 {
		e.refuse--
		return errQueueFull
	}
	if e.partial {
		e.partial = false
		taken, rest := plog.NewLogs(), plog.NewLogs()
		ld.CopyTo(taken)
		ld.CopyTo(rest)
		half := ld.LogRecordCount() / 2
		i := 0
		taken.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(plog.LogRecord) bool { i++; return i > half })
		i = 0
		rest.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(plog.LogRecord) bool { i++; return i <= half })
		_ = e.logs.ConsumeLogs(ctx, taken)
		return consumererror.NewLogs(errQueueFull, rest)
	}
	return e.logs.ConsumeLogs(ctx, ld)
}

func (e *refusingExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if e.refuse > 0 {
		e.refuse--
		return errQueueFull
	}
	if e.partial {
		e.partial = false
		taken, rest := ptrace.NewTraces(), ptrace.NewTraces()
		td.CopyTo(taken)
		td.CopyTo(rest)
		half := td.SpanCount() / 2
		i := 0
		taken.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(ptrace.Span) bool { i++; return i > half })
		i = 0
		rest.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(ptrace.Span) bool { i++; return i <= half })
		_ = e.spans.ConsumeTraces(ctx, taken)
		return consumererror.NewTraces(errQueueFull, rest)
	}
	return e.spans.ConsumeTraces(ctx, td)
}

func isSummaryBatch(ld plog.Logs) bool {
	if ld.LogRecordCount() == 0 {
		return false
	}
	body := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body()
	if body.Type() != pcommon.ValueTypeMap {
		return false
	}
	_, ok := body.Map().Get("sampling")
	return ok
}

// offerUntilTaken offers a batch the way the stdout receiver does while the
// pipeline refuses (receiver.go, retry and unsentLogs): the same pdata
// again, or only the part a partial refusal names.
func offerUntilTaken[T any](t *testing.T, data T, consume func(context.Context, T) error, rest func(error) (T, bool)) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		err := consume(context.Background(), data)
		if err == nil {
			return
		}
		if attempt > 10 {
			t.Fatalf("still refused: %v", err)
		}
		if r, ok := rest(err); ok {
			data = r
		}
	}
}

// TestRetriedBatchIsCountedOnce offers batches to the processor in front of
// an exporter that refuses them a few times, then takes part of one and
// refuses the rest, as the stdout receiver retries them: the summaries and
// self-metrics must count each record and span once, and weight_sum must be
// the weights of what was exported, each once.
func TestRetriedBatchIsCountedOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refuse  int
		partial bool
	}{{"taken at once", 0, false}, {"refused 3 times", 3, false}, {"partly taken", 0, true}, {"refused then partly taken", 2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(
				RuleConfig{Name: "health-logs", Match: MatchConfig{Signal: "logs", Body: map[string]any{"route": "/health"}}, Probability: 1.0 / 8},
				RuleConfig{Name: "redis", Match: redisMatch, Probability: 1.0 / 8},
			)
			cfg.Summaries.Interval = time.Hour
			exp := &refusingExporter{logs: &logRecorder{}, spans: &spanRecorder{}}
			f := NewFactory()
			set := processortest.NewNopSettings(f.Type())
			logs, err := f.CreateLogs(context.Background(), set, cfg, exp)
			if err != nil {
				t.Fatal(err)
			}
			traces, err := f.CreateTraces(context.Background(), set, cfg, exp)
			if err != nil {
				t.Fatal(err)
			}
			if err := logs.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			if err := traces.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}

			// A failed request whose debug lines are rescued (kept with
			// weight 0, see holdlogs.go) when they come.
			const n, ofFailed = 2000, 100
			gen := newSpanGen(11)
			failed, rootSpans := newBatch("api")
			failedTrace := gen.traceID()
			clear(failedTrace[9:]) // randomness 0: its records are dropped, then rescued
			root := rootSpans.AppendEmpty()
			root.SetTraceID(failedTrace)
			root.SetSpanID(gen.spanID())
			root.SetKind(ptrace.SpanKindServer)
			root.Status().SetCode(ptrace.StatusCodeError)
			if err := traces.ConsumeTraces(context.Background(), failed); err != nil {
				t.Fatal(err)
			}
			ld := newLogBatch("api")
			recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
			td, spans := newBatch("api")
			for i := range n {
				rec := recs.AppendEmpty()
				if i < ofFailed {
					rec.SetTraceID(failedTrace)
				}
				rec.SetTimestamp(pcommon.Timestamp(i))
				rec.Body().SetStr(fmt.Sprintf(`{"level":"info","route":"/health","i":%d}`, i))
				gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 1000)
			}
			exp.refuse, exp.partial = tc.refuse, tc.partial
			offerUntilTaken(t, ld, logs.ConsumeLogs, func(err error) (plog.Logs, bool) {
				p, ok := errors.AsType[consumererror.Logs](err)
				return p.Data(), ok
			})
			exp.refuse, exp.partial = tc.refuse, tc.partial
			offerUntilTaken(t, td, traces.ConsumeTraces, func(err error) (ptrace.Traces, bool) {
				p, ok := errors.AsType[consumererror.Traces](err)
				return p.Data(), ok
			})
			for _, c := range []interface{ Shutdown(context.Context) error }{traces, logs} {
				if err := c.Shutdown(context.Background()); err != nil {
					t.Fatal(err)
				}
			}

			exportedWeight := map[string]float64{}
			exported := map[string]int{}
			rescued := 0
			for _, rec := range exp.logs.records {
				w, _ := rec.Attributes().Get(WeightAttribute)
				if r, _ := rec.Attributes().Get(RescuedAttribute); r.Bool() {
					rescued++
					continue
				}
				exportedWeight["health-logs"] += w.Double()
				exported["health-logs"]++
			}
			for _, sp := range exp.spans.spans {
				if sp.rule != "" {
					exportedWeight["redis"] += sp.weight
					exported["redis"]++
				}
			}
			if exported["health-logs"] == 0 || exported["redis"] == 0 || rescued == 0 {
				t.Fatalf("nothing exported: %v, %d rescued", exported, rescued)
			}
			var summaryRescued int64
			for _, s := range exp.logs.summaries {
				summaryRescued += s["rescued"].(int64)
			}
			if summaryRescued != int64(rescued) {
				t.Errorf("summaries count %d rescued; %d exported once", summaryRescued, rescued)
			}
			for _, rule := range []string{"health-logs", "redis"} {
				var seen, kept, dropped int64
				var weightSum float64
				for _, s := range exp.logs.summaries {
					if s["rule"] != rule {
						continue
					}
					seen += s["seen"].(int64)
					kept += s["kept"].(int64)
					dropped += s["dropped"].(int64)
					weightSum += s["weight_sum"].(float64)
				}
				if seen != n || kept+dropped != n {
					t.Errorf("%s: seen %d, kept %d, dropped %d; offered %d once", rule, seen, kept, dropped, n)
				}
				if kept != int64(exported[rule]) || weightSum != exportedWeight[rule] {
					t.Errorf("%s: summary kept %d weight_sum %v; exported %d with weights %v", rule, kept, weightSum, exported[rule], exportedWeight[rule])
				}
			}
		})
	}
}

// TestStampsFromElsewhereAreDecidedAgain: only what this processor writes
// on an item (a double weight and one of its rules' names) makes it pass as
// decided; a sampler upstream's stamp under another rule name, or a rule
// name without a weight, is decided and counted like any item.
func TestStampsFromElsewhereAreDecidedAgain(t *testing.T) {
	cfg := testConfig(RuleConfig{Name: "all-logs", Match: MatchConfig{Signal: "logs"}, Probability: 1})
	cfg.Summaries.Interval = time.Hour
	p := newPipeline(t, cfg, true)
	ld := newLogBatch("api")
	recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	upstream := recs.AppendEmpty().Attributes()
	upstream.PutDouble(WeightAttribute, 2)
	upstream.PutStr(RuleAttribute, "upstream")
	noWeight := recs.AppendEmpty().Attributes()
	noWeight.PutStr(RuleAttribute, "all-logs")
	ours := recs.AppendEmpty().Attributes()
	ours.PutDouble(WeightAttribute, 1)
	ours.PutStr(RuleAttribute, "all-logs")
	if err := p.logs.ConsumeLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	p.shutdown(t)
	p.traces, p.logs = nil, nil
	if len(p.logRec.summaries) != 1 || p.logRec.summaries[0]["seen"] != int64(2) {
		t.Fatalf("summaries %v: want the two records stamped elsewhere seen", p.logRec.summaries)
	}
	for _, rec := range p.logRec.records {
		w, _ := rec.Attributes().Get(WeightAttribute)
		r, _ := rec.Attributes().Get(RuleAttribute)
		if w.Double() != 1 || r.Str() != "all-logs" {
			t.Errorf("record carries weight %v rule %q, want 1 and all-logs", w.AsRaw(), r.Str())
		}
	}
}
