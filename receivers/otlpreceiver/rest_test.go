package otlpreceiver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// takesInParts stands for the axiom exporter with a queue lighter than a
// request: it takes the first half of what it is offered and refuses the
// rest (consumererror.Traces), then refuses `whole` offers in a row (the
// queue full), then takes everything; or everything at once when open.
type takesInParts struct {
	mu     sync.Mutex
	whole  int // offers to refuse after a partial refusal
	open   bool
	left   int // of the refusals due
	taken  map[string]int
	offers int
}

var errQueueFull = errors.New("sending queue is full")

func (p *takesInParts) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (p *takesInParts) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.offers++
	var names []string
	eachSpan(td, func(sp ptrace.Span) { names = append(names, sp.Name()) })
	if p.open {
		p.take(names)
		return nil
	}
	if p.left > 0 {
		p.left--
		if p.left == 0 {
			p.open = p.whole < 1<<30
		}
		return errQueueFull
	}
	half := (len(names) + 1) / 2
	p.take(names[:half])
	p.left = p.whole
	rest := traces(names[half:]...)
	// The rest keeps the spans' ids: a retry of the whole request names them.
	i := 0
	eachSpan(td, func(sp ptrace.Span) {
		if i >= half {
			sp.CopyTo(rest.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(i - half))
		}
		i++
	})
	if len(names[half:]) == 0 {
		return nil
	}
	return consumererror.NewTraces(errQueueFull, rest)
}

func (p *takesInParts) take(names []string) {
	for _, n := range names {
		p.taken[n]++
	}
}

func (p *takesInParts) count(t *testing.T, n int) (arrived, duplicated int) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range n {
		c := p.taken[fmt.Sprintf("span %d", i)]
		if c > 0 {
			arrived++
		}
		if c > 1 {
			duplicated += c - 1
		}
	}
	return arrived, duplicated
}

func (r testReceiver) sumOf(t *testing.T, name string) int64 {
	t.Helper()
	m, err := r.tel.GetMetric(name)
	if err != nil {
		return 0
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

func spanNamesN(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("span %d", i)
	}
	return names
}

// A request the pipeline takes in part, refusing the rest, is offered
// again by the receiver while the client waits: the client is answered
// 200, each span arrives once, and the standard metrics say all of them
// accepted, none refused.
func TestARequestTakenInPartsIsFinishedWhileTheClientWaits(t *testing.T) {
	for _, transport := range []string{"http-proto", "http-json", "grpc"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			const n = 40
			p := &takesInParts{whole: 2, taken: map[string]int{}}
			r := start(t, testConfig(t), sinks{traces: p})
			if err := send(t, r, transport, traces(spanNamesN(n)...)); err != nil {
				t.Fatalf("refused: %v", err)
			}
			if arrived, duplicated := p.count(t, n); arrived != n || duplicated != 0 {
				t.Fatalf("%d of %d spans arrived, %d duplicated (offers %d)", arrived, n, duplicated, p.offers)
			}
			if acc, ref := r.sumOf(t, "otelcol_receiver_accepted_spans"), r.sumOf(t, "otelcol_receiver_refused_spans"); acc != n || ref != 0 {
				t.Fatalf("accepted %d, refused %d; want %d and 0", acc, ref, n)
			}
		})
	}
}

// A rest still refused after restWait is refused to the client, which
// sends the whole request again (as OTLP clients do): the spans taken from
// its first try are skipped, so each arrives once; the metrics count those
// taken as accepted once and the rest refused on the first try.
func TestARetriedRequestDoesNotSendWhatWasTakenTwice(t *testing.T) {
	for _, transport := range []string{"http-proto", "http-json", "grpc"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			const n = 40
			p := &takesInParts{whole: 1 << 30, taken: map[string]int{}}
			r := start(t, testConfig(t), sinks{traces: p})
			td := traces(spanNamesN(n)...)
			if err := send(t, r, transport, td); err == nil {
				t.Fatal("the first try was answered as taken, with its rest refused")
			}
			arrived, _ := p.count(t, n)
			if arrived != n/2 {
				t.Fatalf("%d spans taken on the first try, want %d", arrived, n/2)
			}
			p.mu.Lock()
			p.open = true
			p.mu.Unlock()
			if err := send(t, r, transport, td); err != nil {
				t.Fatalf("the retry was refused: %v", err)
			}
			if arrived, duplicated := p.count(t, n); arrived != n || duplicated != 0 {
				t.Fatalf("%d of %d spans arrived, %d duplicated", arrived, n, duplicated)
			}
			if acc, ref := r.sumOf(t, "otelcol_receiver_accepted_spans"), r.sumOf(t, "otelcol_receiver_refused_spans"); acc != n || ref != n/2 {
				t.Fatalf("accepted %d, refused %d; want %d and %d", acc, ref, n, n/2)
			}
		})
	}
}

// send sends td over transport and returns the refusal, if any.
func send(t *testing.T, r testReceiver, transport string, td ptrace.Traces) error {
	t.Helper()
	switch transport {
	case "grpc":
		return invokeRaw(dial(t, r.grpcAddr()), "/opentelemetry.proto.collector.trace.v1.TraceService/Export", tracesProto(t, td))
	case "http-json":
		return answer(post(t, r.httpURL("/v1/traces"), "application/json", tracesJSON(t, td)))
	default:
		return answer(post(t, r.httpURL("/v1/traces"), "application/x-protobuf", tracesProto(t, td)))
	}
}

func answer(resp *http.Response, body []byte) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %q", resp.Status, body)
	}
	return nil
}

// Remembered spans are forgotten after takenFor, and never more than
// maxTaken are kept.
func TestTakenSpansAreBounded(t *testing.T) {
	tk := newTakenSpans()
	big := ptrace.NewTraces()
	spans := big.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range maxTaken + 10 {
		sp := spans.AppendEmpty()
		sp.SetSpanID([8]byte{byte(i >> 16), byte(i >> 8), byte(i)})
	}
	tk.remember(traces("a", "b"), ptrace.NewTraces())
	tk.remember(big, ptrace.NewTraces())
	if len(tk.at) > maxTaken {
		t.Fatalf("%d spans remembered, at most %d", len(tk.at), maxTaken)
	}
	if got := tk.skip(traces("a", "b")); got != 0 {
		t.Fatalf("the oldest were kept over maxTaken: %d skipped", got)
	}
	tk.until.Store(1) // as if takenFor had passed
	if got := tk.skip(big); got != 0 || tk.at != nil {
		t.Fatalf("after takenFor %d skipped, %d still remembered", got, len(tk.at))
	}
}
