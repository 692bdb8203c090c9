package otlpreceiver

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
)

// The OTLP services, registered with hand-written descriptors so that the
// handlers get each request's bytes (rawCodec) instead of a decoded message.
const (
	traceService   = "opentelemetry.proto.collector.trace.v1.TraceService"
	logsService    = "opentelemetry.proto.collector.logs.v1.LogsService"
	metricsService = "opentelemetry.proto.collector.metrics.v1.MetricsService"
)

// rawRequest is a request's bytes, copied out of gRPC's buffers (freed when
// the codec returns) into a pooled buffer.
type rawRequest struct{ buf *[]byte }

// emptyResponse is an empty Export*ServiceResponse: zero bytes on the wire.
type emptyResponse struct{}

// rawCodec is forced on the receiver's server: requests stay bytes and
// responses are always empty.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if _, ok := v.(*emptyResponse); !ok {
		return nil, fmt.Errorf("otlp receiver codec: cannot marshal %T", v)
	}
	return nil, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*rawRequest)
	if !ok {
		return fmt.Errorf("otlp receiver codec: cannot unmarshal into %T", v)
	}
	req.buf = getBuf(data.Len())
	*req.buf = (*req.buf)[:data.Len()]
	data.CopyTo(*req.buf)
	return nil
}

// Name is the content-subtype clients send ("application/grpc+proto" or
// plain "application/grpc").
func (rawCodec) Name() string { return "proto" }

type consumeFunc func(ctx context.Context, obs *receiverhelper.ObsReport, enc encoding, body []byte) error

// exportService describes service with its one unary method, Export.
func exportService(service string, consume consumeFunc, obs *receiverhelper.ObsReport) *grpc.ServiceDesc {
	export := func(ctx context.Context, req any) (any, error) {
		buf := req.(*rawRequest).buf
		defer putBuf(buf)
		if err := consume(ctx, obs, encProto, *buf); err != nil {
			return nil, errorStatus(err).Err()
		}
		return &emptyResponse{}, nil
	}
	info := &grpc.UnaryServerInfo{FullMethod: "/" + service + "/Export"}
	return &grpc.ServiceDesc{
		ServiceName: service,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Export",
			Handler: func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
				req := &rawRequest{}
				if err := dec(req); err != nil {
					return nil, err
				}
				if interceptor == nil {
					return export(ctx, req)
				}
				return interceptor(ctx, req, info, export)
			},
		}},
	}
}

func (r *otlpReceiver) startGRPC(ctx context.Context, host component.Host) error {
	cfg := r.cfg.Protocols.GRPC.Get()
	if cfg == nil {
		return nil
	}
	var err error
	r.serverGRPC, err = cfg.ToServer(ctx, host.GetExtensions(), r.set.TelemetrySettings,
		configgrpc.WithGrpcServerOption(grpc.ForceServerCodecV2(rawCodec{})),
		// Exports run on reused goroutines, whose stacks have grown to what
		// a request needs: a goroutine per stream grew (copied) its stack
		// on every export, 3-4% of the CPU at 20,000 spans/s.
		configgrpc.WithGrpcServerOption(grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0)))))
	if err != nil {
		return fmt.Errorf("otlp receiver: gRPC server: %w", err)
	}
	if r.nextTraces != nil {
		r.serverGRPC.RegisterService(exportService(traceService, r.consumeTraces, r.obsGRPC), nil)
	}
	if r.nextLogs != nil {
		r.serverGRPC.RegisterService(exportService(logsService, r.consumeLogs, r.obsGRPC), nil)
	}
	if r.nextMetrics != nil {
		r.serverGRPC.RegisterService(exportService(metricsService, r.consumeMetrics, r.obsGRPC), nil)
	}
	ln, err := cfg.NetAddr.Listen(ctx)
	if err != nil {
		return fmt.Errorf("otlp receiver: gRPC listener on %s: %w", cfg.NetAddr.Endpoint, err)
	}
	r.logListening("grpc", ln.Addr())
	raw := rawListener{Listener: ln, wrap: wrapGRPC(keepaliveTimeout(cfg))}
	r.serve(host, func() error { return r.serverGRPC.Serve(raw) }, grpc.ErrServerStopped)
	return nil
}

// keepaliveTimeout is the server's keepalive timeout: configured, or gRPC's
// default.
func keepaliveTimeout(cfg *configgrpc.ServerConfig) time.Duration {
	if cfg.Keepalive.HasValue() && cfg.Keepalive.Get().ServerParameters.HasValue() {
		if t := cfg.Keepalive.Get().ServerParameters.Get().Timeout; t > 0 {
			return t
		}
	}
	return 20 * time.Second
}
