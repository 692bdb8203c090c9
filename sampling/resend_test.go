package sampling

import (
	"bytes"
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sidecarhq/sidecar/internal/freeport"
	"github.com/sidecarhq/sidecar/receivers/otlpreceiver"
)

// shutAfterPartial is a refusingExporter that, once it took part of a
// batch, refuses everything until opened: the otlp receiver's offers of the
// rest run out and the client is refused, then sends the whole request again.
type shutAfterPartial struct {
	*refusingExporter
	shutOnPart bool
	shut       atomic.Bool
	rescued    atomic.Int64 // spans marked rescued taken whole
}

func (e *shutAfterPartial) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if e.shut.Load() {
		return errQueueFull
	}
	wasPartial := e.partial
	err := e.refusingExporter.ConsumeTraces(ctx, td)
	if e.shutOnPart && wasPartial && !e.partial {
		e.shut.Store(true)
	}
	if err == nil {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if v, ok := sp.Attributes().Get(RescuedAttribute); ok && v.Bool() {
						e.rescued.Add(1)
					}
				}
			}
		}
	}
	return err
}

// TestOTLPResendIsCountedOnce sends spans to the otlp receiver, which has
// them decided by this processor before decoding (sampling_processor),
// while the exporter behind refuses them: the client (here, a loop that
// POSTs the same request again, as the OTLP SDKs do on 503) sends the whole
// request again, and the filter decides it again. The summaries must count
// each span once, kept or dropped, with the weights of what was exported.
func TestOTLPResendIsCountedOnce(t *testing.T) {
	for _, tc := range []struct {
		name       string
		refuse     int
		partial    bool
		shutOnPart bool
	}{
		{"taken at once", 0, false, false},
		{"refused twice", 2, false, false},
		{"partly taken, rest taken while the client waits", 0, true, false},
		{"partly taken, rest refused to the client", 0, true, true},
		{"refused, then partly taken, rest refused to the client", 1, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := &shutAfterPartial{refusingExporter: &refusingExporter{refuse: tc.refuse, partial: tc.partial, logs: &logRecorder{}, spans: &spanRecorder{}}, shutOnPart: tc.shutOnPart}
			url, stop := presampledPipeline(t, exp)
			const n = 400
			gen := newSpanGen(17)
			td, spans := newBatch("api")
			for range n {
				gen.redisLeaf(spans, gen.traceID(), gen.spanID(), 1000)
			}
			refusals := postUntilTaken(t, url, td, func() { exp.shut.Store(false) }) // the client backs off: the queue frees up
			if want := tc.refuse; tc.shutOnPart && refusals != want+1 || !tc.shutOnPart && refusals != want {
				t.Fatalf("%d refusals", refusals)
			}
			stop()

			exported := 0
			var exportedWeight float64
			for _, sp := range exp.spans.spans {
				if sp.rule != "" {
					exportedWeight += sp.weight
					exported++
				}
			}
			if exported == 0 || exported == n {
				t.Fatalf("%d of %d spans exported", exported, n)
			}
			var seen, kept, dropped int64
			var weightSum float64
			for _, s := range exp.logs.summaries {
				seen += s["seen"].(int64)
				kept += s["kept"].(int64)
				dropped += s["dropped"].(int64)
				weightSum += s["weight_sum"].(float64)
			}
			if seen != n || dropped != int64(n-exported) {
				t.Errorf("summaries: seen %d, dropped %d; %d sent, %d dropped, each once (%d sends)", seen, dropped, n, n-exported, refusals+1)
			}
			if kept != int64(exported) || weightSum != exportedWeight {
				t.Errorf("summaries: kept %d, weight_sum %v; exported %d with weights %v", kept, weightSum, exported, exportedWeight)
			}
		})
	}
}

// presampledPipeline starts a sampling processor (rule redis, 1/8) in front
// of exp and an otlp receiver whose sampling_processor it is; it returns
// the receiver's HTTP traces URL and what shuts all down.
func presampledPipeline(t *testing.T, exp interface {
	consumer.Traces
	consumer.Logs
}) (url string, stop func()) {
	t.Helper()
	cfg := testConfig(RuleConfig{Name: "redis", Match: redisMatch, Probability: 1.0 / 8})
	cfg.Summaries.Interval = time.Hour
	f := NewFactory()
	set := processortest.NewNopSettings(f.Type())
	set.ID = component.MustNewIDWithName("sampling", "resend")
	ctx := context.Background()
	logs, err := f.CreateLogs(ctx, set, cfg, exp)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := f.CreateTraces(ctx, set, cfg, exp)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{logs, traces} {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}
	rf := otlpreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig().(*otlpreceiver.Config)
	rcfg.Protocols.HTTP.GetOrInsertDefault().NetAddr.Endpoint = freeport.Addr(t)
	rcfg.SamplingProcessor = &set.ID
	recv, err := rf.CreateTraces(ctx, receivertest.NewNopSettings(rf.Type()), rcfg, traces)
	if err != nil {
		t.Fatal(err)
	}
	if err := recv.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return "http://" + rcfg.Protocols.HTTP.Get().NetAddr.Endpoint + "/v1/traces", func() {
		for _, c := range []component.Component{recv, traces, logs} {
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// postUntilTaken POSTs td until the receiver answers 200, as a client
// retrying on 503 does, calling refused after each refusal, and says how
// many times it was refused. It reports failures with t.Error, not
// t.Fatal, as a test may call it from a goroutine of its own.
func postUntilTaken(t *testing.T, url string, td ptrace.Traces, refused func()) (refusals int) {
	t.Helper()
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Error(err)
		return refusals
	}
	for {
		resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			t.Error(err)
			return refusals
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return refusals
		case resp.StatusCode != http.StatusServiceUnavailable:
			t.Errorf("status %d", resp.StatusCode)
			return refusals
		case refusals == 10:
			t.Error("still refused")
			return refusals
		}
		refusals++
		refused()
	}
}

// TestOTLPResendIsHeldOnce: the spans a refused request's rule would drop
// wait for their local root (hold.go); when the client sends the request
// again they must not be held twice, or a failed root rescues (ships) each
// of them once per try.
func TestOTLPResendIsHeldOnce(t *testing.T) {
	exp := &shutAfterPartial{refusingExporter: &refusingExporter{refuse: 2, logs: &logRecorder{}, spans: &spanRecorder{}}}
	url, stop := presampledPipeline(t, exp)
	gen := newSpanGen(23)
	trace, rootID := gen.traceID(), gen.spanID()
	clear(trace[9:]) // randomness 0: every leaf dropped, so held
	const leaves = 50
	td := heldLeaves(gen, trace, rootID, leaves) // and a span no rule matches: kept, so the request is offered and refused
	if n := postUntilTaken(t, url, td, func() {}); n != 2 {
		t.Fatalf("%d refusals, want 2", n)
	}
	postUntilTaken(t, url, failedRootRequest(trace, rootID), func() {})
	stop()

	seen, rescued := seenAndRescued(exp.logs.summaries)
	if got := exp.rescued.Load(); got != leaves || rescued != leaves || seen != leaves {
		t.Errorf("%d rescued spans shipped, summaries seen %d rescued %d; want the %d leaves once", got, seen, rescued, leaves)
	}
}

// heldLeaves is a request of n Redis leaves of trace under rootID, which
// the rule drops and holds when trace's randomness is 0, and one span no
// rule matches, which is kept.
func heldLeaves(gen *spanGen, trace pcommon.TraceID, rootID pcommon.SpanID, n int) ptrace.Traces {
	td, spans := newBatch("api")
	for range n {
		gen.redisLeaf(spans, trace, rootID, 1000)
	}
	other := spans.AppendEmpty()
	other.SetTraceID(gen.traceID())
	other.SetSpanID(gen.spanID())
	other.SetName("unmatched")
	return td
}

// failedRootRequest is a request of trace's local root, failed: its held spans
// are rescued.
func failedRootRequest(trace pcommon.TraceID, rootID pcommon.SpanID) ptrace.Traces {
	td, spans := newBatch("api")
	root := spans.AppendEmpty()
	root.SetTraceID(trace)
	root.SetSpanID(rootID)
	root.SetKind(ptrace.SpanKindServer)
	root.Status().SetCode(ptrace.StatusCodeError)
	return td
}

// seenAndRescued sums the summaries' seen and rescued counts.
func seenAndRescued(summaries []map[string]any) (seen, rescued int64) {
	for _, s := range summaries {
		seen += s["seen"].(int64)
		rescued += s["rescued"].(int64)
	}
	return seen, rescued
}

// gateFirst blocks the first batch it is given until gate is closed,
// telling entered when it is there.
type gateFirst struct {
	*shutAfterPartial
	gated         atomic.Bool
	entered, gate chan struct{}
}

func (e *gateFirst) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if e.gated.CompareAndSwap(false, true) {
		close(e.entered)
		<-e.gate
	}
	return e.shutAfterPartial.ConsumeTraces(ctx, td)
}

// TestOTLPRootFailedBeforeCommitRescues: a request's dropped spans are held
// when the pipeline has taken its kept spans (its counts committed), not
// when it is decided. Their local root, failed, comes in another request
// while the pipeline still has the first: the held spans must be rescued
// at the commit, once, as if the root had come after them.
func TestOTLPRootFailedBeforeCommitRescues(t *testing.T) {
	inner := &shutAfterPartial{refusingExporter: &refusingExporter{logs: &logRecorder{}, spans: &spanRecorder{}}}
	exp := &gateFirst{shutAfterPartial: inner, entered: make(chan struct{}), gate: make(chan struct{})}
	url, stop := presampledPipeline(t, exp)
	gen := newSpanGen(29)
	trace, rootID := gen.traceID(), gen.spanID()
	clear(trace[9:]) // randomness 0: every leaf dropped, so held
	const leaves = 30
	td := heldLeaves(gen, trace, rootID, leaves) // and a span no rule matches: kept, so the request is offered, and waits at the gate
	done := make(chan int)
	go func() { done <- postUntilTaken(t, url, td, func() {}) }()
	<-exp.entered // decided, its counts and captured spans not committed

	postUntilTaken(t, url, failedRootRequest(trace, rootID), func() {})
	if got := inner.rescued.Load(); got != 0 {
		t.Fatalf("%d spans rescued before their request was taken", got)
	}
	close(exp.gate)
	if n := <-done; n != 0 {
		t.Fatalf("%d refusals", n)
	}
	stop()

	seen, rescued := seenAndRescued(inner.logs.summaries)
	if got := inner.rescued.Load(); got != leaves || rescued != leaves || seen != leaves {
		t.Errorf("%d rescued spans shipped, summaries seen %d rescued %d; want the %d leaves", got, seen, rescued, leaves)
	}
}
