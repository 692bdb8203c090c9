package stdoutreceiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/backpressure"
	"github.com/sidecarhq/sidecar/internal/losses"
	"github.com/sidecarhq/sidecar/internal/outcome"
	"github.com/sidecarhq/sidecar/internal/partial"
	"github.com/sidecarhq/sidecar/internal/sharedinstance"
	"github.com/sidecarhq/sidecar/internal/workload"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/decode"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/forward"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/metadata"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stdin"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/tail"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/whenfull"
	"github.com/sidecarhq/sidecar/sampling/presample"
)

// Backoff while the pipeline refuses data (memory limiter, full queue). A
// refusal that says when the consumer has room again (backpressure.Full,
// the axiom exporter's memory queue) is retried then, sooner if it comes
// sooner.
const (
	retryFirst = 10 * time.Millisecond
	retryMax   = time.Second
)

// pauseWorthLogging is how long the pipeline must have refused a batch
// before the source's pause is logged. At max rate the queue refuses for a
// few milliseconds whenever the source outruns the request in flight: that
// is flow control, counted in refused_pushes. A second means Axiom is slow
// or down, and the source's writer (the app, for stdin) may be waiting.
const pauseWorthLogging = time.Second

// whenFullBytes is how much a source with a when_full drop policy holds in
// memory while the pipeline refuses: its lines' bytes plus recordCost per
// line, about what a decoded record adds.
const (
	whenFullBytes = 2 << 20
	recordCost    = 256
)

// whenFullDrain is how long Shutdown keeps offering the batches a when_full
// buffer still holds before it drops (and counts) them.
const whenFullDrain = 2 * time.Second

type stdoutReceiver struct {
	sharedinstance.Member // one instance serves all its pipelines

	cfg     *Config
	set     receiver.Settings
	logs    consumer.Logs   // nil when no logs pipeline uses the receiver
	traces  consumer.Traces // nil when no traces pipeline uses the receiver
	obs     *receiverhelper.ObsReport
	metrics *selfMetrics
	losses  *losses.Recorder // what the when_full policies drop and the pipeline refuses for good
	// decoders are pooled decode.Decoders; lineDecoders those that keep
	// each record's line length, for a drop policy's exact lost bytes.
	decoders, lineDecoders sync.Pool
	// filter is the sampling processor's pre-sampling filter that decides
	// span lines; nil without sampling_processor. Set in Start.
	filter presample.Filter

	// identity is the workload's (ECS task, Kubernetes pod), and resource
	// the same as the attributes added to every record's resource; both
	// written in Start before any transport runs.
	identity []workload.Attr
	resource []stream.Attr

	// stdinSrc and endProcess are os.Stdin and stdin.EndProcess; tests
	// replace them.
	stdinSrc   io.Reader
	endProcess func(stop <-chan struct{})

	// retryFirst and retryMax are the backoff's bounds, and pauseLogAfter
	// pauseWorthLogging (the constants; tests change them).
	retryFirst, retryMax, pauseLogAfter time.Duration
	// stop is closed by Shutdown; a Sink waiting out a refusal gives up.
	stop                    chan struct{}
	startOnce, shutdownOnce sync.Once
	stdin                   *stdin.Transport
	tailer                  *tail.Tailer
	storage                 storage.Client
	forward                 *forward.Server
	// buffers are the when_full buffers of sources with a drop policy.
	buffers []*whenfull.Buffer
}

func newReceiver(set receiver.Settings, cfg *Config) (*stdoutReceiver, error) {
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              "stdout",
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	metrics, err := newSelfMetrics(set)
	if err != nil {
		return nil, err
	}
	lost, err := losses.NewRecorder(set.TelemetrySettings, metadata.ScopeName, component.KindReceiver, set.ID, losses.Default)
	if err != nil {
		return nil, err
	}
	return &stdoutReceiver{
		cfg: cfg, set: set, obs: obs, metrics: metrics, losses: lost,
		stdinSrc: os.Stdin, endProcess: stdin.EndProcess,
		retryFirst: retryFirst, retryMax: retryMax, pauseLogAfter: pauseWorthLogging,
		stop: make(chan struct{}),
	}, nil
}

// Start fetches ECS metadata (when running in ECS), then starts every
// configured transport. It runs once for both signals.
func (r *stdoutReceiver) Start(ctx context.Context, host component.Host) error {
	var err error
	r.startOnce.Do(func() { err = r.start(ctx, host) })
	return err
}

func (r *stdoutReceiver) start(ctx context.Context, host component.Host) error {
	log := r.set.Logger
	if r.logs == nil {
		log.Warn("the stdout receiver is in no logs pipeline: log lines will be dropped (and counted)")
	}
	r.identity = workload.Detect(ctx, log)
	r.resource = streamAttrs(r.identity)
	if id := r.cfg.SamplingProcessor; id != nil && r.traces != nil {
		f, ok := presample.Lookup(*id)
		if !ok {
			return fmt.Errorf("sampling_processor %q has no pre-sampling filter: it must name a `sampling` processor in a traces pipeline of this config", id.String())
		}
		r.filter = f
	}

	if fc := r.cfg.Files.Get(); fc != nil {
		if r.cfg.Storage != nil {
			client, err := storageClient(ctx, host, *r.cfg.Storage, r.set.ID)
			if err != nil {
				return err
			}
			r.storage = client
		}
		t, err := tail.New(*fc, tail.Settings{Logger: log.Named("files"), Storage: r.storage, MaxLineBytes: r.cfg.MaxLineBytes}, r.consume)
		if r.tailer, err = startTransport(ctx, "files", t, err); err != nil {
			return err
		}
	}
	if fc := r.cfg.Forward.Get(); fc != nil {
		s, err := forward.New(*fc, forward.Settings{Logger: log.Named("forward"), MaxLineBytes: r.cfg.MaxLineBytes}, r.sink(fc.WhenFull))
		if r.forward, err = startTransport(ctx, "forward", s, err); err != nil {
			return err
		}
	}
	if sc := r.cfg.Stdin.Get(); sc != nil {
		set := stdin.Settings{Logger: log.Named("stdin"), MaxLineBytes: r.cfg.MaxLineBytes}
		if sc.ExitOnEOF {
			set.AtEOF = func() {
				outcome.ReportAtExit()
				r.endProcess(r.stop)
			}
		}
		r.stdin = stdin.New(r.stdinSrc, set, r.sink(sc.WhenFull))
		r.stdin.Start()
	}
	return nil
}

// startTransport starts a transport that New made, or passes on New's error,
// naming the transport in the error. The transport outlives Start's ctx.
func startTransport[T interface{ Start(context.Context) error }](ctx context.Context, name string, t T, err error) (T, error) {
	if err == nil {
		err = t.Start(context.WithoutCancel(ctx))
	}
	if err != nil {
		var none T
		return none, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

func storageClient(ctx context.Context, host component.Host, id, self component.ID) (storage.Client, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("storage: extension %q not found", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not a storage extension", id)
	}
	return se.GetClient(ctx, component.KindReceiver, self, "files")
}

// Shutdown stops every transport (each waits for its in-flight batch, which
// gives up at once if the pipeline is refusing) and checkpoints file offsets.
func (r *stdoutReceiver) Shutdown(ctx context.Context) error {
	var errs []error
	r.shutdownOnce.Do(func() {
		close(r.stop)
		if r.stdin != nil {
			r.stdin.Shutdown()
		}
		if r.forward != nil {
			errs = append(errs, r.forward.Shutdown(ctx))
		}
		if r.tailer != nil {
			errs = append(errs, r.tailer.Shutdown(ctx))
		}
		dctx, cancel := context.WithTimeout(ctx, whenFullDrain)
		for _, b := range r.buffers {
			b.Close(dctx)
		}
		cancel()
		if r.storage != nil {
			errs = append(errs, r.storage.Close(ctx))
		}
		r.Release()
	})
	return errors.Join(errs...)
}

// sink is the stream.Sink of a source with the given when_full policy:
// consume for block; for a drop policy, one that decodes the batch and
// hands it to a whenfull.Buffer, which never waits for the pipeline.
func (r *stdoutReceiver) sink(policy whenfull.Policy) stream.Sink {
	if !policy.Drops() {
		return r.consume
	}
	buf := whenfull.New(whenfull.Settings{
		Policy: policy, Limit: whenFullBytes,
		Refused:    func(error) { r.metrics.recordRefused(context.Background()) },
		RetryFirst: r.retryFirst, RetryMax: r.retryMax,
	})
	r.buffers = append(r.buffers, buf)
	return func(ctx context.Context, b stream.Batch) error {
		out := r.decode(ctx, b, true)
		p := &pending{r: r, out: out, spans: out.Stats.Spans}
		buf.Put(ctx, whenfull.Batch{Bytes: lineBytes(b) + recordCost*len(b.Lines), Push: p.push, Dropped: p.dropped, Done: b.Done})
		return nil
	}
}

func lineBytes(b stream.Batch) int {
	n := 0
	for _, l := range b.Lines {
		n += len(l.Data)
	}
	return n
}

// pending is a decoded batch a when_full buffer holds: its spans and its
// log records are pushed separately, so spans already taken are not pushed
// again while the logs are refused. Of log records partly taken, the rest
// is the last of them (the axiom exporter takes parts in order), so
// out.LineBytes keeps the rest's line lengths.
type pending struct {
	r         *stdoutReceiver
	out       decode.Output
	spans     int // to count on the next offer (pushTracesOnce)
	spansDone bool
}

// dropped records what of the batch was not pushed as lost.
func (p *pending) dropped(why whenfull.Reason) {
	reason := losses.BudgetFull
	if why == whenfull.Undelivered {
		reason = losses.Shutdown
	}
	if p.out.Stats.SpanLines > 0 && !p.spansDone {
		p.r.losses.Record("traces", reason, p.out.Traces.SpanCount(), 0)
	}
	lost := 0
	for _, n := range p.out.LineBytes {
		lost += int(n)
	}
	p.r.losses.Record("logs", reason, p.out.Logs.LogRecordCount(), lost)
}

func (p *pending) push(ctx context.Context) error {
	if p.out.Stats.SpanLines > 0 && !p.spansDone {
		rest, err := p.r.pushTracesOnce(ctx, p.out, p.spans)
		if err != nil {
			p.out.Traces, p.spans = rest, rest.SpanCount()
			return err
		}
		p.spansDone = true
	}
	if p.out.Logs.LogRecordCount() > 0 {
		rest, err := p.r.pushLogsOnce(ctx, p.out.Logs)
		if err != nil && rest != p.out.Logs {
			p.out.Logs, p.out.LineBytes = rest, p.out.LineBytes[len(p.out.LineBytes)-rest.LogRecordCount():]
		}
		return err
	}
	return nil
}

func (r *stdoutReceiver) decode(ctx context.Context, b stream.Batch, lineBytes bool) decode.Output {
	pool := &r.decoders
	if lineBytes {
		pool = &r.lineDecoders
	}
	d, _ := pool.Get().(*decode.Decoder)
	if d == nil {
		opts := decode.Options{Traces: r.traces != nil, LineBytes: lineBytes}
		if r.filter != nil {
			opts.ReadSpans = r.readSpans
		}
		d = decode.New(opts)
	}
	out := d.Decode(b, r.resourceOf(b), time.Now())
	pool.Put(d)
	r.metrics.record(ctx, out.Stats)
	return out
}

// consume is the stream.Sink of a source that blocks when full: it decodes
// the batch and pushes it on, retrying while the pipeline refuses, so that
// a transport blocked here stops reading its source.
func (r *stdoutReceiver) consume(ctx context.Context, b stream.Batch) error {
	out := r.decode(ctx, b, false)
	if out.Stats.SpanLines > 0 {
		n := out.Stats.Spans
		err := r.retry(ctx, out.Traces.SpanCount(), func(ctx context.Context) error {
			rest, err := r.pushTracesOnce(ctx, out, n)
			if err != nil {
				out.Traces, n = rest, rest.SpanCount()
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	if logs := out.Logs; logs.LogRecordCount() > 0 {
		err := r.retry(ctx, logs.LogRecordCount(), func(ctx context.Context) error {
			rest, err := r.pushLogsOnce(ctx, logs)
			if err != nil {
				logs = rest
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	if b.Done != nil {
		b.Done()
	}
	return nil
}

// resourceOf is the resource of a batch's records: the workload's identity
// and, for a kubelet log file, its container's (k8s.container.name,
// k8s.container.restart_count).
func (r *stdoutReceiver) resourceOf(b stream.Batch) []stream.Attr {
	for _, a := range b.Attrs {
		if a.Key != stream.AttrFilePath {
			continue
		}
		if k8s, ok := workload.KubernetesFromLogPath(a.Value); ok {
			return streamAttrs(workload.Merge(r.identity, k8s))
		}
	}
	return r.resource
}

func streamAttrs(attrs []workload.Attr) []stream.Attr {
	out := make([]stream.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = stream.Attr(a)
	}
	return out
}

var (
	logsSizer   plog.ProtoMarshaler
	tracesSizer ptrace.ProtoMarshaler
)

// pushLogsOnce offers log records to the pipeline once: nil when it took
// them (or they were dropped for good and counted), else its refusal and
// the rest to offer again (all of ld, or what a partial refusal names).
func (r *stdoutReceiver) pushLogsOnce(ctx context.Context, ld plog.Logs) (rest plog.Logs, err error) {
	n := ld.LogRecordCount()
	if r.logs == nil {
		r.metrics.recordDropped(ctx, n)
		return rest, nil
	}
	ctx = r.obs.StartLogsOp(ctx)
	err = r.logs.ConsumeLogs(ctx, ld)
	rest = partial.Logs(ld, err)
	left := rest.LogRecordCount()
	partial.EndOp(ctx, r.obs.EndLogsOp, "stdout", n, left, err)
	return rest, r.dropPermanent(ctx, "logs", left, func() int { return logsSizer.LogsSize(rest) }, err)
}

// pushTracesOnce offers a batch's spans to the pipeline once, counted as n
// spans: on the first offer those of its lines (spans a pre-sampling
// filter dropped count as accepted, as the otlp receiver counts them),
// then those offered again. It returns as pushLogsOnce does.
func (r *stdoutReceiver) pushTracesOnce(ctx context.Context, out decode.Output, n int) (rest ptrace.Traces, err error) {
	td := out.Traces
	if out.Decided {
		ctx = presample.WithDecided(ctx, r.filter)
	}
	ctx = r.obs.StartTracesOp(ctx)
	if td.SpanCount() > 0 {
		err = r.traces.ConsumeTraces(ctx, td)
	}
	rest = partial.Traces(td, err)
	left := rest.SpanCount()
	partial.EndOp(ctx, r.obs.EndTracesOp, "otlp_json", n, left, err)
	return rest, r.dropPermanent(ctx, "traces", left, func() int { return tracesSizer.TracesSize(rest) }, err)
}

// dropPermanent turns a permanent pipeline error into a counted drop of
// the n records it refused (of a partial refusal, only its rest: the
// pipeline took the others): retrying cannot help, and the transport must
// go on. The drop is a loss of accepted records, so it is also reported
// as one (dropped_items, the data_loss event), weighed as protobuf: the
// lines' bytes are not kept past decoding.
func (r *stdoutReceiver) dropPermanent(ctx context.Context, signal string, n int, size func() int, err error) error {
	if err == nil || !consumererror.IsPermanent(err) {
		return err
	}
	r.metrics.recordDropped(ctx, n)
	r.losses.Record(signal, losses.PipelineRejected, n, size())
	r.set.Logger.Error("pipeline rejected records permanently; dropped", zap.Int("records", n), zap.Error(err))
	return nil
}

// retry runs push until it succeeds or fails permanently, backing off while
// the pipeline refuses (memory limiter, full queue), or until the refusal
// says there is room again: the transport waiting on it stops reading its
// source meanwhile. It gives up only at shutdown. A pause is logged once it
// has lasted pauseLogAfter, and then its end.
func (r *stdoutReceiver) retry(ctx context.Context, records int, push func(context.Context) error) error {
	backoff := backpressure.Backoff{First: r.retryFirst, Max: r.retryMax}
	var since time.Time
	logged := false
	var refused error // the last refusal, which the next push retries after
	for attempt := 0; ; attempt++ {
		err := push(backpressure.Retry(ctx, refused))
		if err == nil || consumererror.IsPermanent(err) {
			if attempt > 0 && err == nil {
				if logged {
					r.set.Logger.Info("pipeline accepts records again; source resumed",
						zap.Int("retries", attempt), zap.Duration("paused", time.Since(since)))
				}
				// The pipeline took the batch as soon as it had room: at
				// max rate, when the exporter finished a request. Yield, so
				// that the goroutines the push readied (the queue's
				// consumer, the exporter's next send) run before this source
				// reads and decodes its next batch: on one P the request's
				// round trip then passes during that work, where the P
				// otherwise went idle for it and woke again.
				runtime.Gosched()
			}
			return err
		}
		refused = err
		r.metrics.recordRefused(ctx)
		if attempt == 0 {
			since = time.Now()
		}
		if paused := time.Since(since); !logged && paused >= r.pauseLogAfter {
			logged = true
			r.set.Logger.Warn("pipeline refuses records; the source stays paused until it takes them",
				zap.Int("records", records), zap.Duration("paused", paused), zap.Error(err))
		}
		if !backoff.Wait(ctx, err, nil, r.stop) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return stream.ErrStopped
		}
	}
}
