package otlpreceiver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"

	"github.com/sidecarhq/sidecar/internal/freeport"
	"github.com/sidecarhq/sidecar/receivers/otlpreceiver/internal/metadata"
)

// testConfig turns both transports on, on free ports.
func testConfig(t testing.TB) *Config {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = freeport.Addr(t)
	cfg.Protocols.HTTP.GetOrInsertDefault().NetAddr.Endpoint = freeport.Addr(t)
	return cfg
}

// sinks are the pipelines a test receiver feeds; a nil one is left out.
type sinks struct {
	traces  consumer.Traces
	logs    consumer.Logs
	metrics consumer.Metrics
}

type testReceiver struct {
	*otlpReceiver
	tel *componenttest.Telemetry
}

// create builds the receiver for each pipeline in s, without starting it.
func create(t testing.TB, cfg *Config, s sinks) testReceiver {
	t.Helper()
	f := NewFactory()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	ctx := context.Background()
	var c component.Component
	var err error
	if s.traces != nil {
		if c, err = f.CreateTraces(ctx, set, cfg, s.traces); err != nil {
			t.Fatal(err)
		}
	}
	if s.logs != nil {
		if c, err = f.CreateLogs(ctx, set, cfg, s.logs); err != nil {
			t.Fatal(err)
		}
	}
	if s.metrics != nil {
		if c, err = f.CreateMetrics(ctx, set, cfg, s.metrics); err != nil {
			t.Fatal(err)
		}
	}
	r := c.(*otlpReceiver)
	t.Cleanup(func() {
		if err := r.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return testReceiver{r, tel}
}

// start builds and starts the receiver for each pipeline in s.
func start(t testing.TB, cfg *Config, s sinks) testReceiver {
	t.Helper()
	r := create(t, cfg, s)
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r testReceiver) grpcAddr() string { return r.cfg.Protocols.GRPC.Get().NetAddr.Endpoint }
func (r testReceiver) httpURL(path string) string {
	return "http://" + r.cfg.Protocols.HTTP.Get().NetAddr.Endpoint + path
}

// acceptedSpans sums otelcol_receiver_accepted_spans over transports.
func (r testReceiver) acceptedSpans(t *testing.T) int64 {
	t.Helper()
	m, err := r.tel.GetMetric("otelcol_receiver_accepted_spans")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// sdkSpans are finished SDK spans with the given names.
func sdkSpans(names ...string) []sdktrace.ReadOnlySpan {
	stubs := make(tracetest.SpanStubs, len(names))
	for i, name := range names {
		stubs[i] = tracetest.SpanStub{
			Name: name,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: trace.TraceID{1, byte(i + 1)}, SpanID: trace.SpanID{2, byte(i + 1)},
			}),
			StartTime: time.Unix(1, 0),
			EndTime:   time.Unix(2, 0),
		}
	}
	return stubs.Snapshots()
}

// traces is one resource and scope with spans of the given names.
func traces(names ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i, name := range names {
		s := spans.AppendEmpty()
		s.SetName(name)
		s.SetTraceID([16]byte{1, byte(i + 1)})
		s.SetSpanID([8]byte{2, byte(i + 1)})
	}
	return td
}

func tracesProto(t testing.TB, td ptrace.Traces) []byte {
	t.Helper()
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tracesJSON(t testing.TB, td ptrace.Traces) []byte {
	t.Helper()
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// spanNames lists the names of every span the sink got, in order.
func spanNames(sink *consumertest.TracesSink) []string {
	var names []string
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					names = append(names, s.Name())
				}
			}
		}
	}
	return names
}

// post sends body to url and returns the response with its body read.
func post(t testing.TB, url, contentType string, body []byte, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

func do(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// bytesCodec lets a test client send any bytes as a gRPC request.
type bytesCodec struct{}

func (bytesCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (bytesCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (bytesCodec) Name() string { return "proto" }

// invokeRaw calls method with body as the request's bytes.
func invokeRaw(conn *grpc.ClientConn, method string, body []byte) error {
	var resp []byte
	return conn.Invoke(context.Background(), method, &body, &resp, grpc.ForceCodecV2(bytesCodec{}))
}
