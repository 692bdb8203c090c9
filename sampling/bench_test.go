package sampling

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/sidecarhq/sidecar/sampling/internal/metadata"
	"github.com/sidecarhq/sidecar/sampling/presample"
)

// benchConfig has the shape of a real config: a health-check rule that does
// not match, a fixed Redis GET rule and a dynamic rule for other commands.
func benchConfig() *Config {
	cfg := testConfig(
		RuleConfig{Name: "health", Match: MatchConfig{Kind: []string{"server"}, SpanName: map[string]any{"glob": "GET /health*"}}, Probability: 1.0 / 1024},
		RuleConfig{Name: "redis-get", Match: MatchConfig{Kind: []string{"client"}, Attributes: map[string]any{"db.system": "redis"}, Operation: []string{"GET", "MGET"}},
			Probability: 1.0 / 128, KeepIf: KeepConfig{MinDuration: 25 * time.Millisecond}},
		RuleConfig{Name: "redis-other", Match: MatchConfig{Attributes: map[string]any{"db.system": "redis"}}, TargetPerSecond: 20, Key: []string{"span.name"}},
	)
	cfg.AlwaysKeep.MinDuration = time.Second
	return cfg
}

// BenchmarkDecide measures the per-span decision path (rule matching,
// operation, always-keep, structure, randomness, threshold, summary and
// counters) on Redis spans; it must not allocate.
func BenchmarkDecide(b *testing.B) {
	s, err := newSampler(benchConfig(), processortest.NewNopSettings(metadata.Type))
	if err != nil {
		b.Fatal(err)
	}
	gen := newSpanGen(1)
	td, spans := newBatch("shop")
	names := []string{"GET", "SET", "MGET", "HGETALL"}
	for i := 0; i < 4096; i++ {
		sp := gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 400_000)
		sp.SetName(names[i%len(names)])
	}
	res := newSpanResource(mapAttrs(td.ResourceSpans().At(0).Resource().Attributes()))
	kept := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := pdataSpanView(spans.At(i&4095), res)
		if s.decideSpan(&v).keep {
			kept++
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkProcessTraces measures whole batches of 1000 Redis spans through
// processTraces, including removing dropped spans and writing attributes to
// kept ones (the batch copy is excluded).
func BenchmarkProcessTraces(b *testing.B) {
	s, err := newSampler(benchConfig(), processortest.NewNopSettings(metadata.Type))
	if err != nil {
		b.Fatal(err)
	}
	gen := newSpanGen(1)
	src, spans := newBatch("shop")
	for i := 0; i < 1000; i++ {
		gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 400_000)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		td := ptrace.NewTraces()
		src.CopyTo(td)
		b.StartTimer()
		_, _ = s.processTraces(b.Context(), td)
	}
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkProcessRequests measures batches shaped like an HTTP service using
// Redis: per request 8 Redis CLIENT children, then their SERVER root, 111
// requests (999 spans) per batch. Every iteration gets new trace ids, so the
// recent-parent window fills and rotates as in production.
//
// Sub-benchmarks: hold=off; hold=on (deferred drops; every root in the batch
// of its children, so its children are decided at once); hold=on,roots-late
// (each batch's roots come in a request of their own after it, so every
// dropped child is held, then released).
func BenchmarkProcessRequests(b *testing.B) {
	for _, m := range holdModes {
		b.Run(m.name, func(b *testing.B) {
			s, err := newSampler(m.config(), processortest.NewNopSettings(metadata.Type))
			if err != nil {
				b.Fatal(err)
			}
			src := requestsBatch(newSpanGen(1))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				td := ptrace.NewTraces()
				src.CopyTo(td)
				newTraceIDs(td, i)
				var roots ptrace.Traces
				if m.rootsLate {
					roots = splitRoots(td)
				}
				b.StartTimer()
				_, _ = s.processTraces(b.Context(), td)
				if m.rootsLate {
					_, _ = s.processTraces(b.Context(), roots)
				}
			}
			b.ReportMetric(float64(b.N)*999/b.Elapsed().Seconds(), "spans/s")
		})
	}
}

// holdModes are the deferred-drop settings the request benchmarks compare.
var holdModes = []holdMode{{"hold=off", false, false}, {"hold=on", true, false}, {"hold=on,roots-late", true, true}}

type holdMode struct {
	name      string
	hold      bool
	rootsLate bool
}

func (m holdMode) config() *Config {
	cfg := benchConfig()
	if !m.hold {
		cfg.Hold.MaxBytes = 0
	}
	return cfg
}

// splitRoots moves td's SERVER spans into a request of their own.
func splitRoots(td ptrace.Traces) ptrace.Traces {
	roots, rootSpans := newBatch("shop")
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool {
		if sp.Kind() != ptrace.SpanKindServer {
			return false
		}
		sp.CopyTo(rootSpans.AppendEmpty())
		return true
	})
	return roots
}

// BenchmarkFilterTraces is BenchmarkProcessRequests on the raw protobuf
// request, as the otlp receiver hands it over with sampling_processor set:
// deciding, skipping dropped spans and writing the kept ones.
// Sub-benchmarks as BenchmarkProcessRequests'.
func BenchmarkFilterTraces(b *testing.B) {
	for _, m := range holdModes {
		b.Run(m.name, func(b *testing.B) { benchmarkFilter(b, false, m, false) })
	}
}

// BenchmarkFilterTracesHeld is BenchmarkFilterTraces with the counts held
// and committed, as the otlp receiver has them (presample.WithHeldCounts).
func BenchmarkFilterTracesHeld(b *testing.B) {
	for _, m := range holdModes {
		b.Run(m.name, func(b *testing.B) { benchmarkFilter(b, false, m, true) })
	}
}

// BenchmarkFilterTracesJSON is BenchmarkFilterTraces on the OTLP/JSON
// request: reading it into protobuf, then the same.
func BenchmarkFilterTracesJSON(b *testing.B) { benchmarkFilter(b, true, holdModes[1], false) }

// BenchmarkUnmarshalJSON is what the JSON path cost before
// FilterTracesJSON: pdata's JSON decoding alone, before any deciding.
func BenchmarkUnmarshalJSON(b *testing.B) {
	reqs, _ := benchRequests(b, true, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(reqs[i%len(reqs)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*999/b.Elapsed().Seconds(), "spans/s")
}

func benchmarkFilter(b *testing.B, asJSON bool, m holdMode, held bool) {
	s, err := newSampler(m.config(), processortest.NewNopSettings(metadata.Type))
	if err != nil {
		b.Fatal(err)
	}
	reqs, roots := benchRequests(b, asJSON, m.rootsLate)
	filter := s.FilterTraces
	if asJSON {
		filter = s.FilterTracesJSON
	}
	var dst []byte
	// run filters req into dst, which is reused unless out is req itself
	// (nothing dropped, as in a request of roots only).
	var counts presample.HeldCounts
	ctx := b.Context()
	if held {
		ctx = presample.WithHeldCounts(ctx, &counts)
	}
	run := func(req []byte) {
		out, _, err := filter(ctx, dst[:0], req)
		if err != nil {
			b.Fatal(err)
		}
		counts.Settle(true)
		if len(out) > 0 && &out[0] != &req[0] {
			dst = out
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(reqs[i%len(reqs)])
		if m.rootsLate {
			run(roots[i%len(roots)])
		}
	}
	b.ReportMetric(float64(b.N)*999/b.Elapsed().Seconds(), "spans/s")
}

// benchRequests is 64 requestsBatch requests with distinct trace ids.
// With rootsLate, each request's SERVER spans are taken out into a request
// of their own (roots[i]).
func benchRequests(b *testing.B, asJSON, rootsLate bool) (reqs, roots [][]byte) {
	src := requestsBatch(newSpanGen(1))
	marshal := func(td ptrace.Traces) []byte {
		req, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if asJSON {
			req, err = ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		}
		if err != nil {
			b.Fatal(err)
		}
		return req
	}
	for i := range 64 {
		td := ptrace.NewTraces()
		src.CopyTo(td)
		newTraceIDs(td, i)
		if rootsLate {
			roots = append(roots, marshal(splitRoots(td)))
		}
		reqs = append(reqs, marshal(td))
	}
	return reqs, roots
}

// requestsBatch is 111 requests of a service using Redis: 8 client spans
// with semantic-convention attributes, then their SERVER span (999 spans).
func requestsBatch(gen *spanGen) ptrace.Traces {
	src, spans := newBatch("shop")
	names := []string{"GET", "SET", "MGET", "HGETALL"}
	for r := 0; r < 111; r++ {
		tid, rootID := gen.traceID(), gen.spanID()
		for c := 0; c < 8; c++ {
			sp := gen.redisLeaf(spans, tid, rootID, 400_000)
			sp.SetName(names[c%len(names)])
			sp.Attributes().PutStr("db.statement", names[c%len(names)]+" user:session:4f3a2b")
			sp.Attributes().PutStr("server.address", "redis.internal")
			sp.Attributes().PutInt("server.port", 6379)
		}
		root := spans.AppendEmpty()
		root.SetTraceID(tid)
		root.SetSpanID(rootID)
		root.SetName("GET /api/orders/:id")
		root.SetKind(ptrace.SpanKindServer)
		root.SetStartTimestamp(1_000_000_000)
		root.SetEndTimestamp(1_005_000_000)
		root.Attributes().PutStr("http.request.method", "GET")
		root.Attributes().PutStr("http.route", "/api/orders/:id")
		root.Attributes().PutInt("http.response.status_code", 200)
	}
	return src
}

// newTraceIDs gives every span of td a trace id of iteration i, so the
// recent-parent window fills and rotates as in production.
func newTraceIDs(td ptrace.Traces, i int) {
	batch := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for k := 0; k < batch.Len(); k++ {
		sp := batch.At(k)
		tid := sp.TraceID()
		tid[8] ^= byte(i)
		tid[9] ^= byte(i >> 8)
		tid[10] ^= byte(i >> 16)
		sp.SetTraceID(tid)
	}
}

// BenchmarkDecideLog measures the per-record decision path on raw JSON
// stdout lines: a body-field rule for health checks, then an unmatched line.
func BenchmarkDecideLog(b *testing.B) {
	cfg := benchConfig()
	cfg.Rules = append(cfg.Rules, RuleConfig{Name: "health-logs", Match: MatchConfig{Signal: "logs", Body: map[string]any{"route": []any{"/health", "/ready"}}}, Probability: 1.0 / 1024})
	s, err := newSampler(cfg, processortest.NewNopSettings(metadata.Type))
	if err != nil {
		b.Fatal(err)
	}
	ld := newLogBatch("api")
	recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i, body := range []string{
		`{"_time":"2026-11-30T12:00:00.000Z","level":"info","msg":"request completed","route":"/health","status":200,"duration_ms":0.4}`,
		`{"_time":"2026-11-30T12:00:00.001Z","level":"info","msg":"request completed","route":"/orders/:id","status":200,"duration_ms":12.5}`,
	} {
		rec := recs.AppendEmpty()
		rec.SetTimestamp(pcommon.Timestamp(i))
		rec.Body().SetStr(body)
	}
	v := logView{resAttrs: ld.ResourceLogs().At(0).Resource().Attributes(), service: "api"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.rec = recs.At(i & 1)
		s.decideLog(&v)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
