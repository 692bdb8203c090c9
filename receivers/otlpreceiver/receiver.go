package otlpreceiver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/sidecarhq/sidecar/internal/partial"
	"github.com/sidecarhq/sidecar/internal/sharedinstance"
	"github.com/sidecarhq/sidecar/internal/workload"
	"github.com/sidecarhq/sidecar/sampling/presample"
)

type otlpReceiver struct {
	sharedinstance.Member // one instance serves all its pipelines

	cfg         *Config
	set         receiver.Settings
	nextTraces  consumer.Traces // nil when no traces pipeline uses the receiver
	nextMetrics consumer.Metrics
	nextLogs    consumer.Logs
	// identity is the workload's (ECS task, Kubernetes pod), added to the
	// resource of every span and log record that does not say it already.
	identity []workload.Attr
	obsGRPC  *receiverhelper.ObsReport
	obsHTTP  *receiverhelper.ObsReport

	// filter decides protobuf trace requests; set in Start, before any
	// request is served, when sampling_processor is configured.
	filter presample.Filter
	// taken and takenLogs are what the pipeline took of requests refused
	// in part (rest.go).
	taken     *takenSpans
	takenLogs *takenLogs

	serverGRPC              *grpc.Server
	serverHTTP              *http.Server
	serving                 sync.WaitGroup
	startOnce, shutdownOnce sync.Once
	startErr                error
}

func newReceiver(set receiver.Settings, cfg *Config) (*otlpReceiver, error) {
	r := &otlpReceiver{cfg: cfg, set: set, taken: newTakenSpans(), takenLogs: newTakenLogs()}
	var err error
	if r.obsGRPC, err = newObsReport(set, "grpc"); err != nil {
		return nil, err
	}
	if r.obsHTTP, err = newObsReport(set, "http"); err != nil {
		return nil, err
	}
	return r, nil
}

func newObsReport(set receiver.Settings, transport string) (*receiverhelper.ObsReport, error) {
	return receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              transport,
		ReceiverCreateSettings: set,
	})
}

// Start finds the sampling processor's filter and starts the listeners. It
// runs once for every pipeline the receiver is in.
func (r *otlpReceiver) Start(ctx context.Context, host component.Host) error {
	r.startOnce.Do(func() { r.startErr = r.start(ctx, host) })
	return r.startErr
}

func (r *otlpReceiver) start(ctx context.Context, host component.Host) error {
	r.identity = workload.Detect(ctx, r.set.Logger)
	if id := r.cfg.SamplingProcessor; id != nil && r.nextTraces != nil {
		f, ok := presample.Lookup(*id)
		if !ok {
			return fmt.Errorf("sampling_processor %q has no pre-sampling filter: it must name a `sampling` processor in a traces pipeline of this config", id.String())
		}
		r.filter = f
	}
	if err := r.startGRPC(ctx, host); err != nil {
		return err
	}
	if err := r.startHTTP(ctx, host); err != nil {
		return errors.Join(err, r.stop(ctx))
	}
	return nil
}

// Shutdown stops accepting requests and waits for those in flight.
func (r *otlpReceiver) Shutdown(ctx context.Context) error {
	var err error
	r.shutdownOnce.Do(func() {
		err = r.stop(ctx)
		r.Release()
	})
	return err
}

func (r *otlpReceiver) stop(ctx context.Context) error {
	var err error
	if r.serverHTTP != nil {
		err = r.serverHTTP.Shutdown(ctx)
	}
	if r.serverGRPC != nil {
		r.serverGRPC.GracefulStop()
	}
	r.serving.Wait()
	return err
}

// serve runs a server until it is stopped; any other end is fatal.
func (r *otlpReceiver) serve(host component.Host, run func() error, stopped error) {
	r.serving.Go(func() {
		if err := run(); err != nil && !errors.Is(err, stopped) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	})
}

func (r *otlpReceiver) logListening(transport string, addr fmt.Stringer) {
	r.set.Logger.Info("otlp receiver listening", zap.String("transport", transport), zap.Stringer("endpoint", addr),
		zap.Bool("presampling", r.filter != nil))
}

// consumeTraces decodes a trace request and hands it to the pipeline. With
// a filter, the request (protobuf or JSON) is first cut down to the spans the
// sampling processor keeps, and what is left reaches the pipeline marked as
// decided.
func (r *otlpReceiver) consumeTraces(ctx context.Context, obs *receiverhelper.ObsReport, enc encoding, body []byte) error {
	var (
		td      ptrace.Traces
		n       int // spans the client sent
		decided presample.Filter
		err     error
		// held are what the filter counted of the request (the sampling
		// summaries), counted only once the pipeline has all its kept
		// spans: a client refused sends the whole request again, and it is
		// decided and counted again.
		held presample.HeldCounts
	)
	if r.filter != nil {
		td, n, decided, err = r.presample(presample.WithHeldCounts(ctx, &held), enc, body)
	} else {
		req := ptraceotlp.NewExportRequest()
		err = enc.unmarshal(req, body)
		td = req.Traces()
		n = td.SpanCount()
	}
	if err != nil {
		held.Settle(false)
		return err
	}
	n -= r.taken.skip(td) // spans a retried request's first try gave the pipeline
	err = operation(ctx, enc, n, obs.StartTracesOp, obs.EndTracesOp, func(ctx context.Context) (int, error) {
		kept := td.SpanCount()
		if kept == 0 {
			return 0, nil // the filter dropped them all, or they were taken before
		}
		if decided != nil {
			ctx = presample.WithDecided(ctx, decided)
		}
		for i := range td.ResourceSpans().Len() {
			workload.AddMissing(td.ResourceSpans().At(i).Resource().Attributes(), r.identity)
		}
		left, err := offerRest(ctx, td, r.nextTraces.ConsumeTraces, partial.Traces)
		if err == nil {
			return 0, nil
		}
		if left != td {
			r.taken.remember(td, left)
		}
		// The client sends again all but what the pipeline took.
		return n - (kept - left.SpanCount()), err
	})
	// Taken, whole or its rest (the part taken before skipped): the
	// decisions of this try are the ones counted. Partly taken and refused:
	// none, the client's next try counts its spans, those taken now too.
	held.Settle(err == nil)
	return err
}

// presample runs the filter over a request and decodes the spans it keeps
// (protobuf, whatever the request's encoding); n counts the spans of the
// request. decided is the filter, or nil when it left the request to the
// processor.
func (r *otlpReceiver) presample(ctx context.Context, enc encoding, body []byte) (td ptrace.Traces, n int, decided presample.Filter, err error) {
	dst := getBuf(len(body))
	defer putBuf(dst)
	filter := r.filter.FilterTraces
	if enc == encJSON {
		filter = r.filter.FilterTracesJSON
	}
	out, n, err := filter(ctx, *dst, body)
	req := ptraceotlp.NewExportRequest()
	switch {
	case errors.Is(err, presample.ErrUndecided):
		if err = enc.unmarshal(req, body); err != nil {
			return td, 0, nil, err
		}
		return req.Traces(), req.Traces().SpanCount(), nil, nil
	case err != nil:
		return td, 0, nil, malformedError{err}
	}
	if cap(out) > cap(*dst) && !sameArray(out, body) {
		*dst = out // the filter grew dst: pool the larger buffer
	}
	if err = encProto.unmarshal(req, out); err != nil {
		return td, n, nil, err
	}
	return req.Traces(), n, r.filter, nil
}

func (r *otlpReceiver) consumeLogs(ctx context.Context, obs *receiverhelper.ObsReport, enc encoding, body []byte) error {
	req := plogotlp.NewExportRequest()
	if err := enc.unmarshal(req, body); err != nil {
		return err
	}
	ld := req.Logs()
	for i := range ld.ResourceLogs().Len() {
		workload.AddMissing(ld.ResourceLogs().At(i).Resource().Attributes(), r.identity)
	}
	skipped := r.takenLogs.skip(ld) // records a retried request's first try gave the pipeline
	return operation(ctx, enc, ld.LogRecordCount(), obs.StartLogsOp, obs.EndLogsOp, func(ctx context.Context) (int, error) {
		left, err := offerRest(ctx, ld, r.nextLogs.ConsumeLogs, partial.Logs)
		if err != nil {
			r.takenLogs.remember(ld, left, skipped)
			return left.LogRecordCount(), err
		}
		return 0, nil
	})
}

func (r *otlpReceiver) consumeMetrics(ctx context.Context, obs *receiverhelper.ObsReport, enc encoding, body []byte) error {
	req := pmetricotlp.NewExportRequest()
	if err := enc.unmarshal(req, body); err != nil {
		return err
	}
	md := req.Metrics()
	return operation(ctx, enc, md.DataPointCount(), obs.StartMetricsOp, obs.EndMetricsOp, func(ctx context.Context) (int, error) {
		err := r.nextMetrics.ConsumeMetrics(ctx, md)
		if err != nil {
			return md.DataPointCount(), err
		}
		return 0, nil
	})
}

// operation hands a request of n items to the pipeline with consume, as one
// of obs's operations for the signal (start and end): consume says how
// many of them the client must send again (refused), the others are
// accepted. A request with no items is not passed on.
func operation(ctx context.Context, enc encoding, n int, start func(context.Context) context.Context,
	end func(context.Context, string, int, error), consume func(context.Context) (int, error),
) error {
	if n == 0 {
		return nil
	}
	ctx = start(ctx)
	left, err := consume(ctx)
	partial.EndOp(ctx, end, enc.format(), n, left, err)
	return err
}
