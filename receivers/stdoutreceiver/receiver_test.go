package stdoutreceiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sidecarhq/sidecar/internal/backpressure"
	"github.com/sidecarhq/sidecar/internal/losses"
	"github.com/sidecarhq/sidecar/internal/rawevent"
	"github.com/sidecarhq/sidecar/internal/workload"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/forward"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stdin"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/tail"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/whenfull"
)

const testSpanLine = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"shop"}}]},` +
	`"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"GET /",` +
	`"kind":2,"startTimeUnixNano":"1764504000000000000","endTimeUnixNano":"1764504000100000000"}]}]}]}`

func stdinConfig(exitOnEOF bool) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Stdin = configoptional.Some(stdin.Config{ExitOnEOF: exitOnEOF})
	cfg.Files = configoptional.None[tail.Config]()
	cfg.Forward = configoptional.None[forward.Config]()
	return cfg
}

// started is a receiver serving both signals from stdin, with the end of
// input reported on eof instead of signalling the test process.
type started struct {
	r   *stdoutReceiver
	eof chan struct{}
}

func startReceiver(t *testing.T, cfg *Config, input io.Reader, logs consumer.Logs, traces consumer.Traces) started {
	t.Helper()
	f := NewFactory()
	set := receivertest.NewNopSettings(f.Type())
	lr, err := f.CreateLogs(context.Background(), set, cfg, logs)
	if err != nil {
		t.Fatal(err)
	}
	s := started{r: lr.(*stdoutReceiver), eof: make(chan struct{})}
	if traces != nil {
		tr, err := f.CreateTraces(context.Background(), set, cfg, traces)
		if err != nil {
			t.Fatal(err)
		}
		if tr != lr {
			t.Fatal("logs and traces must share one receiver instance")
		}
	}
	s.r.stdinSrc = input
	s.r.endProcess = func(stop <-chan struct{}) { close(s.eof) }
	host := componenttest.NewNopHost()
	if err := lr.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	if err := lr.Start(context.Background(), host); err != nil { // the second signal's Start
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lr.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := lr.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestReceiverStdinToLogsAndTraces(t *testing.T) {
	input := strings.Join([]string{
		`{"level":30,"time":1764504000123,"pid":1,"hostname":"h","msg":"hello"}`,
		"Error: boom",
		"    at main (/app/index.js:1:1)",
		testSpanLine,
		`{"level":50,"time":1764504000124,"msg":"bye"}`,
	}, "\n") + "\n"
	logs, traces := new(consumertest.LogsSink), new(consumertest.TracesSink)
	s := startReceiver(t, stdinConfig(true), strings.NewReader(input), logs, traces)
	<-s.eof
	if got := logs.LogRecordCount(); got != 4 {
		t.Fatalf("log records %d, want 4", got)
	}
	if got := traces.SpanCount(); got != 1 {
		t.Fatalf("spans %d, want 1", got)
	}
	var raw, text []string
	for _, ld := range logs.AllLogs() {
		forEachRecord(ld, func(sl plog.ScopeLogs, lr plog.LogRecord) {
			if rawevent.IsRawScope(sl) {
				raw = append(raw, lr.Body().Str())
			} else {
				text = append(text, lr.Body().Str())
			}
		})
	}
	if len(raw) != 2 || len(text) != 2 {
		t.Fatalf("raw %q text %q", raw, text)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(raw[0]), &ev); err != nil {
		t.Fatal(err)
	}
	if ev["_time"] != float64(1764504000123) || ev["level"] != "info" || ev["msg"] != "hello" {
		t.Errorf("event %v", ev)
	}
}

func forEachRecord(ld plog.Logs, fn func(plog.ScopeLogs, plog.LogRecord)) {
	for i := range ld.ResourceLogs().Len() {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := range sls.Len() {
			for k := range sls.At(j).LogRecords().Len() {
				fn(sls.At(j), sls.At(j).LogRecords().At(k))
			}
		}
	}
}

// A refusing pipeline (memory limiter, full queue) is retried until it
// accepts: every line arrives exactly once.
func TestReceiverRetriesRefusedData(t *testing.T) {
	var calls atomic.Int32
	sink := new(consumertest.LogsSink)
	refusing, err := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		if calls.Add(1) <= 3 {
			return errors.New("data refused due to high memory usage")
		}
		return sink.ConsumeLogs(ctx, ld)
	})
	if err != nil {
		t.Fatal(err)
	}
	s := startReceiver(t, stdinConfig(true), strings.NewReader("a\nb\nc\n"), refusing, nil)
	<-s.eof
	if got := sink.LogRecordCount(); got != 3 {
		t.Fatalf("records %d, want 3", got)
	}
	if calls.Load() != 4 {
		t.Errorf("calls %d, want 3 refusals and 1 success", calls.Load())
	}
}

// A refusal that says when the pipeline has room again (the axiom
// exporter's memory queue) is retried then, not after the backoff: with
// the backoff an hour long, the line still arrives once room is freed,
// whether the source waits (block) or its buffer does (drop_oldest).
func TestReceiverRetriesWhenRoomIsFreed(t *testing.T) {
	for _, policy := range []whenfull.Policy{whenfull.Block, whenfull.DropOldest} {
		t.Run(string(policy), func(t *testing.T) {
			var room backpressure.Room
			var calls atomic.Int32
			refused := make(chan struct{})
			sink := new(consumertest.LogsSink)
			full, _ := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
				if calls.Add(1) == 1 {
					defer close(refused)
					return backpressure.Full(errors.New("sending queue is full"), room.Freed())
				}
				return sink.ConsumeLogs(ctx, ld)
			})
			f := NewFactory()
			cfg := stdinConfig(false)
			cfg.Stdin = configoptional.Some(stdin.Config{WhenFull: policy})
			lr, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, full)
			if err != nil {
				t.Fatal(err)
			}
			r := lr.(*stdoutReceiver)
			r.retryFirst, r.retryMax = time.Hour, time.Hour
			r.stdinSrc = strings.NewReader("a\n")
			r.endProcess = func(<-chan struct{}) {}
			if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
			<-refused
			room.Free()
			for deadline := time.Now().Add(30 * time.Second); sink.LogRecordCount() == 0; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the refused line was not retried once room was freed")
				}
			}
			if calls.Load() != 2 {
				t.Errorf("calls %d, want a refusal and a success", calls.Load())
			}
		})
	}
}

func TestReceiverPermanentErrorDropsOnce(t *testing.T) {
	var calls atomic.Int32
	rejecting, _ := consumer.NewLogs(func(context.Context, plog.Logs) error {
		calls.Add(1)
		return consumererror.NewPermanent(errors.New("bad data"))
	})
	s := startReceiver(t, stdinConfig(true), strings.NewReader("a\n"), rejecting, nil)
	<-s.eof
	if calls.Load() != 1 {
		t.Errorf("a permanent error must not be retried: %d calls", calls.Load())
	}
}

// Shutdown ends a delivery that waits out refusals; the transport is told
// the batch was not delivered and does not report end of input.
func TestReceiverShutdownWhileRefused(t *testing.T) {
	var once sync.Once
	refused := make(chan struct{})
	refusing, _ := consumer.NewLogs(func(context.Context, plog.Logs) error {
		once.Do(func() { close(refused) })
		return errors.New("queue is full")
	})
	f := NewFactory()
	lr, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), stdinConfig(true), refusing)
	if err != nil {
		t.Fatal(err)
	}
	r := lr.(*stdoutReceiver)
	r.stdinSrc = strings.NewReader("a\n")
	r.endProcess = func(<-chan struct{}) { t.Error("end of input reported for an undelivered batch") }
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	<-refused
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestReceiverAddsECSMetadata(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v4/abc/task", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"Cluster":"arn:aws:ecs:eu-west-1:1:cluster/prod","TaskARN":"arn:aws:ecs:eu-west-1:1:task/prod/t1","Family":"shop","Revision":"7"}`)
	})
	srv := httptest.NewUnstartedServer(mux)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	t.Setenv(workload.EnvECSMetadataURI, srv.URL+"/v4/abc")

	logs, traces := new(consumertest.LogsSink), new(consumertest.TracesSink)
	s := startReceiver(t, stdinConfig(true), strings.NewReader("plain line\n"+testSpanLine+"\n"), logs, traces)
	<-s.eof
	want := map[string]string{"ecs_cluster": "prod", "ecs_task_arn": "arn:aws:ecs:eu-west-1:1:task/prod/t1", "ecs_task_definition": "shop:7"}
	res := logs.AllLogs()[0].ResourceLogs().At(0).Resource().Attributes()
	for k, v := range want {
		if got, _ := res.Get(k); got.Str() != v {
			t.Errorf("log resource %s = %q, want %q", k, got.Str(), v)
		}
	}
	spanRes := traces.AllTraces()[0].ResourceSpans().At(0).Resource().Attributes()
	if got, _ := spanRes.Get("ecs_task_definition"); got.Str() != "shop:7" {
		t.Errorf("span resource misses ECS metadata: %v", spanRes.AsRaw())
	}
}

func TestReceiverECSMetadataFailureIsNotFatal(t *testing.T) {
	t.Setenv(workload.EnvECSMetadataURI, "http://127.0.0.1:1/v4/none")
	logs := new(consumertest.LogsSink)
	s := startReceiver(t, stdinConfig(true), strings.NewReader("x\n"), logs, nil)
	<-s.eof
	if logs.LogRecordCount() != 1 {
		t.Fatal("lines must flow without metadata")
	}
}

// Without exit_on_eof the receiver keeps running at end of input.
func TestReceiverStaysUpWithoutExitOnEOF(t *testing.T) {
	logs := new(consumertest.LogsSink)
	f := NewFactory()
	lr, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), stdinConfig(false), logs)
	if err != nil {
		t.Fatal(err)
	}
	r := lr.(*stdoutReceiver)
	r.stdinSrc = strings.NewReader("x\n")
	r.endProcess = func(<-chan struct{}) { t.Error("must not end the process") }
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	for logs.LogRecordCount() == 0 {
		runtime.Gosched()
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

var _ component.Component = (*stdoutReceiver)(nil)

func TestReceiverSelfMetrics(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer tel.Shutdown(context.Background())
	var calls atomic.Int32
	sink := new(consumertest.LogsSink)
	refusing, _ := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		if calls.Add(1) == 1 {
			return errors.New("data refused due to high memory usage")
		}
		return sink.ConsumeLogs(ctx, ld)
	})
	f := NewFactory()
	set := receivertest.NewNopSettings(f.Type())
	set.TelemetrySettings = tel.NewTelemetrySettings()
	lr, err := f.CreateLogs(context.Background(), set, stdinConfig(true), refusing)
	if err != nil {
		t.Fatal(err)
	}
	r := lr.(*stdoutReceiver)
	eof := make(chan struct{})
	r.stdinSrc = strings.NewReader("{\"msg\":\"a\"}\nplain\n\n" + strings.Repeat("x", stream.DefaultMaxLineBytes+1) + "\n")
	r.endProcess = func(<-chan struct{}) { close(eof) }
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	<-eof
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{
		"otelcol_receiver_stdout_lines":           4,
		"otelcol_receiver_stdout_json_records":    1,
		"otelcol_receiver_stdout_text_records":    2,
		"otelcol_receiver_stdout_truncated_lines": 1,
		"otelcol_receiver_stdout_refused_pushes":  1,
		"otelcol_receiver_accepted_log_records":   3,
	} {
		m, err := tel.GetMetric(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var got int64
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			got += dp.Value
			if v, _ := dp.Attributes.Value("receiver"); v.AsString() != set.ID.String() {
				t.Errorf("%s has receiver=%q, want the receiver's ID", name, v.AsString())
			}
		}
		if got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}

// Under a drop policy stdin is read to its end while the pipeline refuses:
// the refused batches wait in memory and all arrive, spans included, once
// the pipeline takes data again.
func TestReceiverDropPolicyReadsOnWhileRefusedAndDeliversLater(t *testing.T) {
	var open atomic.Bool
	logs, traces := new(consumertest.LogsSink), new(consumertest.TracesSink)
	gate := func() error {
		if !open.Load() {
			return errors.New("sending queue is full")
		}
		return nil
	}
	cl, _ := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		if err := gate(); err != nil {
			return err
		}
		return logs.ConsumeLogs(ctx, ld)
	})
	ct, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		if err := gate(); err != nil {
			return err
		}
		return traces.ConsumeTraces(ctx, td)
	})
	cfg := stdinConfig(true)
	cfg.Stdin = configoptional.Some(stdin.Config{ExitOnEOF: true, WhenFull: whenfull.DropOldest})
	ledger := useLedger(t)
	s := startReceiver(t, cfg, strings.NewReader("a\nb\n"+testSpanLine+"\nc\n"), cl, ct)
	<-s.eof // read to the end while everything was refused
	if logs.LogRecordCount() != 0 {
		t.Fatal("the pipeline took records while refusing")
	}
	open.Store(true)
	if err := s.r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if logs.LogRecordCount() != 3 || traces.SpanCount() != 1 {
		t.Fatalf("%d records and %d spans arrived, want 3 and 1", logs.LogRecordCount(), traces.SpanCount())
	}
	if d := lost(ledger); len(d) != 0 {
		t.Fatalf("dropped %v", d)
	}
}

// useLedger makes the losses of receivers created from now on go to a
// ledger of the test's own.
func useLedger(t *testing.T) *losses.Ledger {
	old := losses.Default
	losses.Default = &losses.Ledger{}
	t.Cleanup(func() { losses.Default = old })
	return losses.Default
}

// lost sums a ledger's records by signal and reason.
func lost(l *losses.Ledger) map[string]int64 {
	out := map[string]int64{}
	for _, loss := range l.Take() {
		out[loss.Signal+" "+string(loss.Reason)] += loss.Items
	}
	return out
}

// What a drop policy's buffer still holds when the receiver stops while
// the pipeline refuses is dropped and counted, every record of it.
func TestReceiverDropPolicyCountsWhatIsLeftAtShutdown(t *testing.T) {
	refusing, _ := consumer.NewLogs(func(context.Context, plog.Logs) error { return errors.New("sending queue is full") })
	cfg := stdinConfig(true)
	cfg.Stdin = configoptional.Some(stdin.Config{ExitOnEOF: true, WhenFull: whenfull.DropNewest})
	input := strings.Repeat("line\n", 5000)
	ledger := useLedger(t)
	s := startReceiver(t, cfg, strings.NewReader(input), refusing, nil)
	<-s.eof
	if err := s.r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := lost(ledger)
	if d["logs budget_full"]+d["logs shutdown"] != 5000 || len(d) > 2 {
		t.Fatalf("dropped %v, want 5000 log records in all", d)
	}
}
