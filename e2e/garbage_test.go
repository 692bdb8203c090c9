package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// Garbage, truncated and oversized requests at every listener of the ECS
// config: OTLP over gRPC and HTTP, Fluent Forward over TCP and the health
// check. Each gets 400 or 413 (gRPC: InvalidArgument, ResourceExhausted) or
// a closed connection; the sidecar stays up with its peak RSS within the
// 96 MB budget; and afterwards real clients are served: the OpenTelemetry
// Go SDK's exporters over gRPC and HTTP, a forward client waiting for acks,
// and the health check.
func TestGarbageAtEveryListenerLeavesRealClientsServed(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fwd := FreeAddr(t)
	env := append(embeddedEnv(t, fake), "SIDECAR_STATE_DIR="+t.TempDir(),
		"SIDECAR_FORWARD_ENDPOINT="+fwd, "SIDECAR_FORWARD_SOCKET="+socketPath(t))
	grpcAddr := envValue(env, "SIDECAR_OTLP_GRPC_ENDPOINT")
	httpAddr := envValue(env, "SIDECAR_OTLP_HTTP_ENDPOINT")
	healthAddr := envValue(env, "SIDECAR_HEALTH_ENDPOINT")
	s := StartSidecar(t, "", WithArgs("--config", "embedded:default", "--config", "embedded:ecs"), WithEnv(env...))
	for _, addr := range []string{grpcAddr, httpAddr, fwd, healthAddr} {
		s.WaitListening(t, addr)
	}
	peakRSS := watchPeakRSS(s)

	rng := rand.New(rand.NewPCG(7, 7))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}

	// Raw bytes at every port: random, and the start of a well-formed
	// request cut short.
	truncated := map[string][]byte{
		grpcAddr:   []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x12\x04"),
		httpAddr:   []byte("POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 100000\r\n\r\n\x0a\x05"),
		fwd:        msgp.AppendArrayHeader(msgp.AppendString(msgp.AppendArrayHeader(nil, 3), "app"), 1<<31),
		healthAddr: []byte("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\nab"),
	}
	for addr, cut := range truncated {
		for round := range 20 {
			rawExchange(t, addr, random(1+rng.IntN(64<<10)), fmt.Sprintf("random bytes, round %d", round))
		}
		rawExchange(t, addr, cut, "a truncated request")
	}

	// OTLP/HTTP: bodies that are not OTLP, compressed or only said to be,
	// over the body limit, and a gzip bomb.
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write(make([]byte, 64<<20))
	_ = zw.Close()
	var gzipped bytes.Buffer
	zw = gzip.NewWriter(&gzipped)
	_, _ = zw.Write(random(4096))
	_ = zw.Close()
	for _, path := range []string{"/v1/traces", "/v1/logs"} {
		for _, ct := range []string{"application/json", "application/x-protobuf"} {
			for _, r := range []struct {
				what, encoding string
				body           []byte
				want           int
			}{
				{"random bytes", "", random(8 << 10), http.StatusBadRequest},
				{"gzip'd random bytes", "gzip", gzipped.Bytes(), http.StatusBadRequest},
				{"random bytes said to be gzip", "gzip", random(8 << 10), http.StatusBadRequest},
				{"random bytes said to be zstd", "zstd", random(8 << 10), http.StatusBadRequest},
				{"a body over the 4 MiB limit", "", make([]byte, 5<<20), http.StatusRequestEntityTooLarge},
				{"a gzip bomb (64 MiB of zeros)", "gzip", bomb.Bytes(), http.StatusRequestEntityTooLarge},
			} {
				req, err := http.NewRequest(http.MethodPost, "http://"+httpAddr+path, bytes.NewReader(r.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", ct)
				if r.encoding != "" {
					req.Header.Set("Content-Encoding", r.encoding)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("%s %s as %s: %v", path, r.what, ct, err)
				}
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != r.want {
					t.Errorf("%s %s as %s: %d %q, want %d", path, r.what, ct, resp.StatusCode, answer, r.want)
				}
			}
		}
	}

	// OTLP/gRPC: a request that is not protobuf, and one over the 4 MiB
	// message limit.
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, r := range []struct {
		what string
		body []byte
		want codes.Code
	}{
		{"random bytes", append([]byte{0x0a, 0xff, 0xff, 0xff, 0x0f}, random(1024)...), codes.InvalidArgument},
		{"a message over 4 MiB", make([]byte, 5<<20), codes.ResourceExhausted},
	} {
		var out []byte
		err := conn.Invoke(context.Background(), "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
			&r.body, &out, grpc.ForceCodecV2(rawCodec{}))
		if status.Code(err) != r.want {
			t.Errorf("gRPC %s: %v, want %v", r.what, err, r.want)
		}
	}

	// Real clients, served.
	grpcExp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	httpExp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	spans := len(emitSpans(t, grpcExp, "grpc-after-garbage", 5)) + len(emitSpans(t, httpExp, "http-after-garbage", 5))
	client := &forwardClient{t: t, addr: fwd}
	stop := make(chan struct{})
	time.AfterFunc(200*time.Millisecond, func() { close(stop) })
	records := client.run(0, stop)
	for seq := range records {
		if !client.acked[seq] {
			t.Fatalf("forward record %d of a good client was not acknowledged", seq)
		}
	}
	if err := fake.WaitSpans("traces", spans, 60*time.Second); err != nil {
		t.Fatalf("spans of the SDK's exporters after the garbage: %v", err)
	}
	if err := fake.WaitEvents("logs", records, 60*time.Second); err != nil {
		t.Fatalf("records of the forward client after the garbage: %v", err)
	}
	resp, err := http.Get("http://" + healthAddr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("health after the garbage: %d", resp.StatusCode)
	}
	if code := s.Stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	rss := peakRSS()
	t.Logf("%d spans and %d forward records served after the garbage; peak RSS %.1f MB", spans, records, float64(rss)/1e6)
	if rss > 96e6 {
		t.Errorf("peak RSS %.1f MB over the 96 MB budget", float64(rss)/1e6)
	}
}

// rawExchange writes payload on a new connection to addr, says it has no
// more, and reads until the server closes the connection: it must, within
// 30 s, whatever it answered.
func rawExchange(t *testing.T, addr string, payload []byte, what string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("%s: %s: %v", addr, what, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	_, _ = c.Write(payload) // the server may close before reading it all
	_ = c.(*net.TCPConn).CloseWrite()
	if _, err := io.Copy(io.Discard, c); err != nil && !isReset(err) && !strings.Contains(err.Error(), "broken pipe") {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: %s: the connection was neither answered nor closed", addr, what)
		}
	}
}

// rawCodec sends a gRPC request's bytes as they are.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }
