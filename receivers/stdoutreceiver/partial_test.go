package stdoutreceiver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stdin"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/whenfull"
)

// takesHalf is a pipeline that takes the first half of the first batch
// and refuses the rest as a partial refusal (what the axiom exporter does
// with a batch heavier than its queue), then takes what comes after,
// unless refuseRest.
type takesHalf struct {
	mu         sync.Mutex
	refuseRest bool
	bodies     []string // of every record taken, in order
	offers     []int    // records of each offer
}

func (p *takesHalf) offerCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.offers)
}

func (p *takesHalf) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.offers = append(p.offers, ld.LogRecordCount())
	var all []string
	forEachRecord(ld, func(_ plog.ScopeLogs, lr plog.LogRecord) { all = append(all, lr.Body().Str()) })
	if len(p.offers) > 1 && p.refuseRest {
		return errors.New("sending queue is full")
	}
	if len(p.offers) > 1 || len(all) < 2 {
		p.bodies = append(p.bodies, all...)
		return nil
	}
	half := len(all) / 2
	p.bodies = append(p.bodies, all[:half]...)
	rest := plog.NewLogs()
	lrs := rest.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, b := range all[half:] {
		lrs.AppendEmpty().Body().SetStr(b)
	}
	return consumererror.NewLogs(errors.New("sending queue is full"), rest)
}

// Of a batch partly taken, only the rest is offered again, whether the
// source waits (block) or its buffer does (drop_oldest): every line
// arrives once. When the rest is never taken, a drop policy counts exactly
// the rest as dropped.
func TestReceiverOffersOnlyTheRestOfAPartlyTakenBatch(t *testing.T) {
	const n = 10
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	input := strings.Join(lines, "\n") + "\n"
	for _, policy := range []whenfull.Policy{whenfull.Block, whenfull.DropOldest} {
		for _, refuseRest := range []bool{false, true} {
			if refuseRest && policy == whenfull.Block {
				continue // a blocking source waits for good, by design
			}
			t.Run(fmt.Sprintf("%s, rest refused %v", policy, refuseRest), func(t *testing.T) {
				p := &takesHalf{refuseRest: refuseRest}
				logs, _ := consumer.NewLogs(p.ConsumeLogs)
				cfg := stdinConfig(true)
				cfg.Stdin = configoptional.Some(stdin.Config{ExitOnEOF: true, WhenFull: policy})
				ledger := useLedger(t)
				s := startReceiver(t, cfg, strings.NewReader(input), logs, nil)
				<-s.eof
				for deadline := time.Now().Add(10 * time.Second); p.offerCount() < 2 && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				if err := s.r.Shutdown(context.Background()); err != nil {
					t.Fatal(err)
				}
				p.mu.Lock()
				defer p.mu.Unlock()
				if len(p.offers) < 2 || p.offers[0] != n || p.offers[1] != n-n/2 {
					t.Fatalf("offers of %v records, want %d then the rest, %d", p.offers, n, n-n/2)
				}
				want := lines
				if refuseRest {
					want = lines[:n/2]
				}
				if strings.Join(p.bodies, ",") != strings.Join(want, ",") {
					t.Errorf("took %q, want %q", p.bodies, want)
				}
				d := lost(ledger)
				if wantLost := int64(n - len(want)); d["logs budget_full"]+d["logs shutdown"] != wantLost {
					t.Errorf("dropped %v, want %d log records", d, wantLost)
				}
			})
		}
	}
}

// takesHalfSpans is takesHalf for spans: it takes the first half of the
// first offer and refuses the rest (consumererror.Traces), then takes what
// comes after, unless refuseRest.
type takesHalfSpans struct {
	mu         sync.Mutex
	refuseRest bool
	names      []string // of every span taken, in order
	offers     []int
}

func (p *takesHalfSpans) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.offers = append(p.offers, td.SpanCount())
	var all []string
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				all = append(all, sp.Name())
			}
		}
	}
	if len(p.offers) > 1 && p.refuseRest {
		return errors.New("sending queue is full")
	}
	if len(p.offers) > 1 {
		p.names = append(p.names, all...)
		return nil
	}
	half := len(all) / 2
	p.names = append(p.names, all[:half]...)
	rest := ptrace.NewTraces()
	spans := rest.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for _, name := range all[half:] {
		spans.AppendEmpty().SetName(name)
	}
	return consumererror.NewTraces(errors.New("sending queue is full"), rest)
}

// Span lines work as log lines: of a batch's spans partly taken, only the
// rest is offered again, and a drop policy counts exactly the rest.
func TestReceiverOffersOnlyTheRestOfPartlyTakenSpans(t *testing.T) {
	const n = 10
	var lines, names []string
	for i := range n {
		names = append(names, fmt.Sprintf("span %d", i))
		lines = append(lines, fmt.Sprintf(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b1%02x","name":"span %d","kind":2,"startTimeUnixNano":"1764504000000000000","endTimeUnixNano":"1764504000100000000"}]}]}]}`, i, i))
	}
	input := strings.Join(lines, "\n") + "\n"
	for _, policy := range []whenfull.Policy{whenfull.Block, whenfull.DropOldest} {
		for _, refuseRest := range []bool{false, true} {
			if refuseRest && policy == whenfull.Block {
				continue // a blocking source waits for good, by design
			}
			t.Run(fmt.Sprintf("%s, rest refused %v", policy, refuseRest), func(t *testing.T) {
				p := &takesHalfSpans{refuseRest: refuseRest}
				traces, _ := consumer.NewTraces(p.ConsumeTraces)
				logs, _ := consumer.NewLogs(func(context.Context, plog.Logs) error { return nil })
				cfg := stdinConfig(true)
				cfg.Stdin = configoptional.Some(stdin.Config{ExitOnEOF: true, WhenFull: policy})
				ledger := useLedger(t)
				s := startReceiver(t, cfg, strings.NewReader(input), logs, traces)
				<-s.eof
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
					p.mu.Lock()
					offers := len(p.offers)
					p.mu.Unlock()
					if offers >= 2 {
						break
					}
				}
				if err := s.r.Shutdown(context.Background()); err != nil {
					t.Fatal(err)
				}
				p.mu.Lock()
				defer p.mu.Unlock()
				if len(p.offers) < 2 || p.offers[0] != n || p.offers[1] != n-n/2 {
					t.Fatalf("offers of %v spans, want %d then the rest, %d", p.offers, n, n-n/2)
				}
				want := names
				if refuseRest {
					want = names[:n/2]
				}
				if strings.Join(p.names, ",") != strings.Join(want, ",") {
					t.Errorf("took %q, want %q", p.names, want)
				}
				d := lost(ledger)
				if wantLost := int64(n - len(want)); d["traces budget_full"]+d["traces shutdown"] != wantLost {
					t.Errorf("dropped %v, want %d spans", d, wantLost)
				}
			})
		}
	}
}

// Of a batch partly taken and its rest refused for good, only the rest is
// dropped: dropped_records counts the records lost, not the batch, for log
// lines and span lines alike.
func TestReceiverPermanentRefusalOfARestDropsOnlyTheRest(t *testing.T) {
	const n = 10
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b1%02x","name":"span %d","kind":2,"startTimeUnixNano":"1764504000000000000","endTimeUnixNano":"1764504000100000000"}]}]}]}`, i, i))
	}
	for i := range n {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	bad := errors.New("rejected for good")
	logs, _ := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		rest := plog.NewLogs()
		ld.CopyTo(rest)
		kept := 0
		rest.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(plog.LogRecord) bool { kept++; return kept <= n/2 })
		return consumererror.NewLogs(consumererror.NewPermanent(bad), rest)
	})
	traces, _ := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		rest := ptrace.NewTraces()
		td.CopyTo(rest)
		kept := 0
		rest.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
			rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
				ss.Spans().RemoveIf(func(ptrace.Span) bool { kept++; return kept <= n/2 })
				return ss.Spans().Len() == 0
			})
			return rs.ScopeSpans().Len() == 0
		})
		return consumererror.NewTraces(consumererror.NewPermanent(bad), rest)
	})
	for _, policy := range []whenfull.Policy{whenfull.Block, whenfull.DropOldest} {
		t.Run(string(policy), func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			defer tel.Shutdown(context.Background())
			ledger := useLedger(t)
			f := NewFactory()
			set := receivertest.NewNopSettings(f.Type())
			set.TelemetrySettings = tel.NewTelemetrySettings()
			cfg := stdinConfig(true)
			cfg.Stdin = configoptional.Some(stdin.Config{ExitOnEOF: true, WhenFull: policy})
			lr, err := f.CreateLogs(context.Background(), set, cfg, logs)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.CreateTraces(context.Background(), set, cfg, traces); err != nil {
				t.Fatal(err)
			}
			r := lr.(*stdoutReceiver)
			eof := make(chan struct{})
			r.stdinSrc = strings.NewReader(strings.Join(lines, "\n") + "\n")
			r.endProcess = func(<-chan struct{}) { close(eof) }
			if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			<-eof
			if err := r.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			m, err := tel.GetMetric("otelcol_receiver_stdout_dropped_records")
			if err != nil {
				t.Fatal(err)
			}
			var dropped int64
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				dropped += dp.Value
			}
			if want := int64(2 * (n - n/2)); dropped != want {
				t.Errorf("dropped_records = %d, want %d: the rests of %d spans and %d log records", dropped, want, n, n)
			}
			// A drop of accepted records is a loss: reported like the others.
			d := lost(ledger)
			if want := int64(n - n/2); d["logs pipeline_rejected"] != want || d["traces pipeline_rejected"] != want || len(d) != 2 {
				t.Errorf("losses %v, want %d log records and %d spans rejected by the pipeline", d, want, want)
			}
		})
	}
}

// A drop policy that drops the rest of a partly taken batch counts the
// bytes of exactly the rest's lines (as read, a CR included), whatever
// the records' bodies hold: JSON records come first in the batch's logs.
func TestReceiverDropPolicyCountsTheRestsLineBytes(t *testing.T) {
	var lines, rest []string
	for i := range 6 {
		text, js := fmt.Sprintf("text %d\r", i), fmt.Sprintf(`{"level":30,"time":1764504000000,"msg":"json %d"}`, i)
		lines = append(lines, text, js)
		rest = append(rest, text) // the JSON records are the first half
	}
	p := &takesHalf{refuseRest: true}
	logs, _ := consumer.NewLogs(p.ConsumeLogs)
	cfg := stdinConfig(true)
	cfg.Stdin = configoptional.Some(stdin.Config{ExitOnEOF: true, WhenFull: whenfull.DropOldest})
	ledger := useLedger(t)
	s := startReceiver(t, cfg, strings.NewReader(strings.Join(lines, "\n")+"\n"), logs, nil)
	<-s.eof
	for deadline := time.Now().Add(10 * time.Second); p.offerCount() < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if err := s.r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var items, bytes int64
	for _, loss := range ledger.Take() {
		if loss.Signal == "logs" {
			items, bytes = items+loss.Items, bytes+loss.Bytes
		}
	}
	want := len(strings.Join(rest, ""))
	if items != int64(len(rest)) || bytes != int64(want) {
		t.Errorf("lost %d records of %d bytes, want the rest: %d of %d bytes", items, bytes, len(rest), want)
	}
}
