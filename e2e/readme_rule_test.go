package e2e

import (
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// readmeSampling is the Sampling section's YAML of README.md, as a user
// copies it into sampling.yaml, with the figures the checks below assume.
func readmeSampling(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Sampling\n")
	_, block, _ := strings.Cut(section, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	for _, want := range []string{"db.system.name: redis", "operation: [GET, MGET]", "probability: 0.01", "min_duration: 25ms", "min_duration: 1s"} {
		if !strings.Contains(block, want) {
			t.Fatalf("README's sampling rule changed (no %q): update this test\n%s", want, block)
		}
	}
	return block
}

// TestReadmeRuleSamplesACurrentNodeAppsRedisGets is issue 11's first finding
// turned around: with the README's rule copied as it stands, the spans a
// current Node app's ioredis instrumentation writes (recorded in
// sampling/testdata/ioredis.json: db.system.name redis, db.operation.name
// get) are sent over OTLP/HTTP to the real binary on its embedded default
// config, many times over with new trace ids, and the GETs are sampled:
// exactly the ones the spec's arithmetic keeps arrive at the fake Axiom
// with their weight, and the summaries count every GET.
func TestReadmeRuleSamplesACurrentNodeAppsRedisGets(t *testing.T) {
	overlay := filepath.Join(t.TempDir(), "sampling.yaml")
	if err := os.WriteFile(overlay, []byte(readmeSampling(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := axiomtest.NewForTest(t)
	env := embeddedEnv(t, fake)
	httpAddr := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SIDECAR_OTLP_HTTP_ENDPOINT="); ok {
			httpAddr = v
		}
	}
	s := StartSidecar(t, "", WithArgs("--config", "embedded:default", "--config", "file:"+overlay),
		WithEnv(append(env, "AXIOM_DATASET=app-logs", "AXIOM_TRACES_DATASET=app-traces")...))
	s.WaitListening(t, httpAddr)

	b, err := os.ReadFile("../sampling/testdata/ioredis.json")
	if err != nil {
		t.Fatal(err)
	}
	rec := ptraceotlp.NewExportRequest()
	if err := rec.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}

	const runs = 40
	const th = uint64(0xfd70a) << 36 // 1%
	rnd := rand.New(rand.NewPCG(11, 12))
	gets, wantSpans, sampled := 0, 0, 0
	for range runs {
		td := withNewIDs(rec.Traces(), rnd)
		forSpans(td, func(sp ptrace.Span) {
			wantSpans++
			if !isGet(sp) {
				return
			}
			gets++
			tid := sp.TraceID()
			dur := time.Duration(sp.EndTimestamp() - sp.StartTimestamp())
			switch {
			case sp.Status().Code() == ptrace.StatusCodeError, dur >= 25*time.Millisecond:
			case binary.BigEndian.Uint64(tid[8:])&(1<<56-1) >= th:
				sampled++
			default:
				wantSpans-- // dropped
			}
		})
		postTraces(t, httpAddr, td)
	}
	if sampled == 0 || sampled > gets/20 {
		t.Fatalf("the traffic has %d GETs kept by probability of %d: nothing to observe", sampled, gets)
	}
	if err := fake.WaitSpans("app-traces", wantSpans, 180*time.Second); err != nil {
		names := map[string]int{}
		forSpans(fake.Traces("app-traces"), func(sp ptrace.Span) { names[sp.Name()]++ })
		t.Fatalf("%v; arrived by name: %v", err, names)
	}
	summaries := waitSummaries(t, fake, gets)

	got := fake.Traces("app-traces")
	arrivedGets, weighted := 0, 0
	forSpans(got, func(sp ptrace.Span) {
		if !isGet(sp) {
			return
		}
		arrivedGets++
		if w, ok := sp.Attributes().Get("sampling.adjusted_count"); ok && w.Double() > 99.99 && w.Double() < 100 {
			weighted++
		}
	})
	if got.SpanCount() != wantSpans || weighted != sampled {
		t.Errorf("%d spans arrived, want %d; %d GETs weighted ~100, want %d", got.SpanCount(), wantSpans, weighted, sampled)
	}
	var seen int64
	for _, s := range summaries {
		if s["rule"] != "redis-get" || (s["operation"] != "GET" && s["operation"] != "MGET") {
			t.Errorf("summary of %v/%v", s["rule"], s["operation"])
		}
		n, _ := s["seen"].(json.Number).Int64()
		seen += n
	}
	if seen != int64(gets) {
		t.Errorf("summaries saw %d GETs, %d were sent", seen, gets)
	}
	t.Logf("%d of %d GETs arrived (%d by the rule's 1%%), summaries saw %d", arrivedGets, gets, sampled, seen)
}

// isGet reports a GET or MGET command span as ioredis writes it:
// db.operation.name get, or PIPELINE get (MULTI get) in a batch.
func isGet(sp ptrace.Span) bool {
	op, _ := sp.Attributes().Get("db.operation.name")
	words := strings.Fields(op.Str())
	if sp.Kind() != ptrace.SpanKindClient || len(words) == 0 || len(words) > 2 {
		return false
	}
	cmd := words[len(words)-1]
	return strings.EqualFold(cmd, "get") || strings.EqualFold(cmd, "mget")
}

func forSpans(td ptrace.Traces, fn func(ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				fn(sss.At(j).Spans().At(k))
			}
		}
	}
}

// withNewIDs copies td with new trace and span ids, as another run of the
// recorded requests.
func withNewIDs(td ptrace.Traces, rnd *rand.Rand) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	traces := map[pcommon.TraceID]pcommon.TraceID{}
	spans := map[pcommon.SpanID]pcommon.SpanID{}
	spanID := func(id pcommon.SpanID) pcommon.SpanID {
		if id.IsEmpty() {
			return id
		}
		if _, ok := spans[id]; !ok {
			var n pcommon.SpanID
			binary.BigEndian.PutUint64(n[:], rnd.Uint64()|1)
			spans[id] = n
		}
		return spans[id]
	}
	forSpans(out, func(sp ptrace.Span) {
		if _, ok := traces[sp.TraceID()]; !ok {
			var n pcommon.TraceID
			binary.BigEndian.PutUint64(n[:8], rnd.Uint64())
			binary.BigEndian.PutUint64(n[8:], rnd.Uint64())
			traces[sp.TraceID()] = n
		}
		sp.SetTraceID(traces[sp.TraceID()])
		sp.SetSpanID(spanID(sp.SpanID()))
		sp.SetParentSpanID(spanID(sp.ParentSpanID()))
	})
	return out
}
