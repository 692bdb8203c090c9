package otlpreceiver

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sidecarhq/sidecar/sampling/presample"
)

// dropFilter drops the spans named "drop", as a sampling processor would
// drop the spans its rules sample out.
type dropFilter struct {
	calls atomic.Int32
	err   error
}

func (f *dropFilter) FilterTraces(_ context.Context, dst, req []byte) ([]byte, int, error) {
	f.calls.Add(1)
	if f.err != nil {
		return nil, 0, f.err
	}
	r := ptraceotlp.NewExportRequest()
	if err := r.UnmarshalProto(req); err != nil {
		return nil, 0, err
	}
	n := r.Traces().SpanCount()
	for _, rs := range r.Traces().ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return s.Name() == "drop" })
		}
	}
	b, err := r.MarshalProto()
	return append(dst, b...), n, err
}

// FilterTracesJSON reads JSON as pdata does and filters it as protobuf.
func (f *dropFilter) FilterTracesJSON(ctx context.Context, dst, req []byte) ([]byte, int, error) {
	return filterJSON(ctx, f.FilterTraces, dst, req)
}

func filterJSON(ctx context.Context, filter func(context.Context, []byte, []byte) ([]byte, int, error), dst, req []byte) ([]byte, int, error) {
	r := ptraceotlp.NewExportRequest()
	if err := r.UnmarshalJSON(req); err != nil {
		return nil, 0, err
	}
	pb, err := r.MarshalProto()
	if err != nil {
		return nil, 0, err
	}
	return filter(ctx, dst, pb)
}

// presampled starts a receiver whose sampling_processor is f.
func presampled(t testing.TB, f presample.Filter) (testReceiver, *consumertest.TracesSink) {
	t.Helper()
	id := component.MustNewIDWithName("sampling", strings.ReplaceAll(t.Name(), "/", "_"))
	t.Cleanup(presample.Register(id, f))
	cfg := testConfig(t)
	cfg.SamplingProcessor = &id
	sink := new(consumertest.TracesSink)
	return start(t, cfg, sinks{traces: sink}), sink
}

func checkDecided(t *testing.T, sink *consumertest.TracesSink, want presample.Filter) {
	t.Helper()
	for _, ctx := range sink.Contexts() {
		if got := presample.Decided(ctx); got != want {
			t.Errorf("Decided(ctx) = %v, want %v", got, want)
		}
	}
}

func TestPresampleKeepsWhatTheFilterKeeps(t *testing.T) {
	f := new(dropFilter)
	r, sink := presampled(t, f)
	ctx := context.Background()

	grpcExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(r.grpcAddr()), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	defer grpcExp.Shutdown(ctx)
	if err := grpcExp.ExportSpans(ctx, sdkSpans("g1", "drop", "g2")); err != nil {
		t.Fatal(err)
	}
	httpExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(r.cfg.Protocols.HTTP.Get().NetAddr.Endpoint), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	defer httpExp.Shutdown(ctx)
	if err := httpExp.ExportSpans(ctx, sdkSpans("drop", "h1")); err != nil {
		t.Fatal(err)
	}

	if got, want := spanNames(sink), []string{"g1", "g2", "h1"}; !slices.Equal(got, want) {
		t.Errorf("spans %v, want %v", got, want)
	}
	checkDecided(t, sink, f)
	if n := f.calls.Load(); n != 2 {
		t.Errorf("filter called %d times, want 2", n)
	}
	if n := r.acceptedSpans(t); n != 5 {
		t.Errorf("accepted spans %d, want the 5 the client sent", n)
	}
}

func TestPresampleAllDropped(t *testing.T) {
	f := new(dropFilter)
	r, sink := presampled(t, f)
	_, err := ptraceotlp.NewGRPCClient(dial(t, r.grpcAddr())).Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces("drop", "drop")))
	if err != nil {
		t.Fatalf("gRPC: %v", err)
	}
	if resp, b := post(t, r.httpURL(tracesPath), protoContentType, tracesProto(t, traces("drop"))); resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP: %d %s", resp.StatusCode, b)
	}
	if len(sink.AllTraces()) != 0 {
		t.Errorf("the pipeline got %v", spanNames(sink))
	}
	if n := f.calls.Load(); n != 2 {
		t.Errorf("filter called %d times, want 2", n)
	}
	if n := r.acceptedSpans(t); n != 3 {
		t.Errorf("accepted spans %d, want 3", n)
	}
}

// JSON requests are decided by the filter too, before they become pdata.
func TestPresampleDecidesJSON(t *testing.T) {
	f := new(dropFilter)
	r, sink := presampled(t, f)
	if resp, b := post(t, r.httpURL(tracesPath), jsonContentType, tracesJSON(t, traces("drop", "a"))); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if got := spanNames(sink); !slices.Equal(got, []string{"a"}) {
		t.Errorf("spans %v", got)
	}
	checkDecided(t, sink, f)
	if n := f.calls.Load(); n != 1 {
		t.Errorf("filter called %d times", n)
	}
	if n := r.acceptedSpans(t); n != 2 {
		t.Errorf("accepted spans %d, want 2", n)
	}
}

func TestPresampleFilterError(t *testing.T) {
	f := &dropFilter{err: errors.New("truncated span")}
	r, sink := presampled(t, f)
	if resp, b := post(t, r.httpURL(tracesPath), protoContentType, tracesProto(t, traces("a"))); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("HTTP %d %s, want 400", resp.StatusCode, b)
	}
	_, err := ptraceotlp.NewGRPCClient(dial(t, r.grpcAddr())).Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces("a")))
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("gRPC %v, want InvalidArgument", err)
	}
	if len(sink.AllTraces()) != 0 {
		t.Error("a rejected request reached the pipeline")
	}
}

// A filter that hands back its input unchanged leaves the buffers apart.
func TestPresampleFilterReturnsInput(t *testing.T) {
	r, sink := presampled(t, identityFilter{})
	for range 3 {
		if resp, b := post(t, r.httpURL(tracesPath), protoContentType, tracesProto(t, traces("a", "b"))); resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	}
	if got := spanNames(sink); !slices.Equal(got, []string{"a", "b", "a", "b", "a", "b"}) {
		t.Errorf("spans %v", got)
	}
}

type identityFilter struct{}

func (identityFilter) FilterTraces(_ context.Context, _, req []byte) ([]byte, int, error) {
	r := ptraceotlp.NewExportRequest()
	err := r.UnmarshalProto(req)
	return req, r.Traces().SpanCount(), err
}

func (f identityFilter) FilterTracesJSON(ctx context.Context, dst, req []byte) ([]byte, int, error) {
	return filterJSON(ctx, f.FilterTraces, dst, req)
}

func TestPresampleMissingProcessor(t *testing.T) {
	cfg := testConfig(t)
	id := component.MustNewIDWithName("sampling", "absent")
	cfg.SamplingProcessor = &id
	r := create(t, cfg, sinks{traces: new(consumertest.TracesSink)})
	err := r.Start(context.Background(), componenttest.NewNopHost())
	if err == nil || !strings.Contains(err.Error(), `"sampling/absent"`) || !strings.Contains(err.Error(), "traces pipeline") {
		t.Fatalf("Start: %v", err)
	}

	// Without a traces pipeline there is nothing to pre-sample.
	cfg = testConfig(t)
	cfg.SamplingProcessor = &id
	start(t, cfg, sinks{logs: new(consumertest.LogsSink)})
}

// undecidedFilter leaves every request to the processor.
type undecidedFilter struct{}

func (undecidedFilter) FilterTraces(context.Context, []byte, []byte) ([]byte, int, error) {
	return nil, 0, presample.ErrUndecided
}

func (undecidedFilter) FilterTracesJSON(context.Context, []byte, []byte) ([]byte, int, error) {
	return nil, 0, presample.ErrUndecided
}

// A request the filter leaves alone reaches the pipeline whole and unmarked,
// over both transports.
func TestPresampleUndecided(t *testing.T) {
	r, sink := presampled(t, undecidedFilter{})
	_, err := ptraceotlp.NewGRPCClient(dial(t, r.grpcAddr())).Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces("drop", "a")))
	if err != nil {
		t.Fatalf("gRPC: %v", err)
	}
	if resp, b := post(t, r.httpURL(tracesPath), protoContentType, tracesProto(t, traces("drop"))); resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP: %d %s", resp.StatusCode, b)
	}
	if got := spanNames(sink); !slices.Equal(got, []string{"drop", "a", "drop"}) {
		t.Errorf("spans %v", got)
	}
	checkDecided(t, sink, nil)
	if n := r.acceptedSpans(t); n != 3 {
		t.Errorf("accepted spans %d, want 3", n)
	}
}
