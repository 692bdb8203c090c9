package axiomexporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

// minimumMemory is the smallest memory budget Validate accepts.
const minimumMemory = (requestCost + 1) * signalShare * ByteSize(minRequestBytes)

// withQueue is cfg with the default sending queue (in memory, or on disk
// with storage) derived from its budgets.
func withQueue(cfg *Config) *Config {
	cfg.QueueConfig = createDefaultConfig().(*Config).QueueConfig
	cfg.QueueConfig = cfg.queueConfig()
	return cfg
}

// Whatever budgets the config accepts, the queue admits a batch: the parts
// a too heavy request is offered in always fit the empty queue.
func TestEveryAcceptedBudgetsQueueAdmitsABatch(t *testing.T) {
	for _, memory := range []ByteSize{minimumMemory, minimumMemory + 1<<20, 9 << 20, 12 << 20, defaultMemoryBudget, 64 << 20} {
		for _, maxRequest := range []ByteSize{minRequestBytes, 2 << 20, defaultMaxRequestBytes, 16 << 20} {
			for _, onDisk := range []bool{false, true} {
				cfg := withQueue(testConfig("http://localhost:1"))
				cfg.Memory, cfg.MaxRequestBytes = memory, maxRequest
				cfg.Disk = signalShare * ByteSize(cfg.batchBytes()) // the smallest disk budget
				if onDisk {
					storage := component.MustNewID("file_storage")
					cfg.QueueConfig.Get().StorageID = &storage
				}
				cfg.QueueConfig = cfg.queueConfig()
				if err := cfg.Validate(); err != nil {
					t.Fatalf("memory %s, max_request_bytes %s: %v", memory, maxRequest, err)
				}
				p := newInParts(cfg)
				if p.admits != cfg.QueueConfig.Get().QueueSize || int64(p.batch) > p.admits || p.batch < minRequestBytes {
					t.Errorf("memory %s, max_request_bytes %s, on disk %v: parts of %d for a queue admitting %d (queue_size %d)",
						memory, maxRequest, onDisk, p.batch, p.admits, cfg.QueueConfig.Get().QueueSize)
				}
			}
		}
	}
	if p := newInParts(testConfig("http://localhost:1")); p.admits != 0 {
		t.Errorf("without a queue the exporter admits at most %d", p.admits)
	}
}

// At the smallest budget the memory queue holds one batch, less than one
// stdin batch of pino lines weighs. Such logs are taken in parts: the first
// at once, the rest as a partial refusal (consumererror.Logs) that, offered
// again, is taken as the queue frees room; each record reaches Axiom once,
// and the caller's logs are left as they were.
func TestLogsHeavierThanTheQueueGoInParts(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fake.Fail(logsDS, axiomtest.Slow(300*time.Millisecond), axiomtest.Slow(300*time.Millisecond))
	cfg := testConfig(fake.URL())
	cfg.Memory = minimumMemory
	cfg = withQueue(cfg)
	exp := startLogs(t, newHarness(), cfg)

	const n = 6000
	ld := pinoLines(n)
	w := newLogsWeigher(cfg.batchBytes())
	if weight, queue := int64(w.weigh(ld)), cfg.QueueConfig.Get().QueueSize; weight <= queue {
		t.Fatalf("test needs logs (%d) heavier than the queue (%d)", weight, queue)
	}
	first := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str()

	err := exp.ConsumeLogs(context.Background(), ld)
	partial, ok := errors.AsType[consumererror.Logs](err)
	if !ok || !errors.Is(err, exporterhelper.ErrQueueIsFull) {
		t.Fatalf("ConsumeLogs returned %v, want the queue full for the rest (consumererror.Logs)", err)
	}
	rest := partial.Data()
	if taken := n - rest.LogRecordCount(); taken <= 0 || rest.LogRecordCount() <= 0 {
		t.Fatalf("%d records taken, %d left: want a part taken and a part left", taken, rest.LogRecordCount())
	}
	if ld.LogRecordCount() != n || ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str() != first {
		t.Fatalf("the caller's logs changed: %d records", ld.LogRecordCount())
	}
	deadline := time.Now().Add(waitWindow)
	for err != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the rest was still refused after %s: %v", waitWindow, err)
		}
		time.Sleep(20 * time.Millisecond)
		err = exp.ConsumeLogs(context.Background(), rest)
		if partial, ok := errors.AsType[consumererror.Logs](err); ok {
			rest = partial.Data()
		}
	}
	for fake.EventCount(logsDS) < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fake.EventCount(logsDS); got != n {
		t.Fatalf("%d events in Axiom, want %d", got, n)
	}
}

// Validate names the smallest memory budget, and accepts it.
func TestValidateSaysTheSmallestMemoryBudget(t *testing.T) {
	cfg := withQueue(testConfig("http://localhost:1"))
	cfg.Memory = minimumMemory - 1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "memory must be at least 8704KiB (8.5 MiB)") {
		t.Fatalf("memory %d: Validate returned %v, want the least budget said", cfg.Memory, err)
	}
	cfg.Memory = minimumMemory
	if err := cfg.Validate(); err != nil {
		t.Fatalf("memory %s: %v", cfg.Memory, err)
	}
}

// manySpans makes n spans of about size bytes each (an attribute pads
// them), under two resources of two scopes each, named "span 0".."span n-1".
func manySpans(n, size int) ptrace.Traces {
	td := ptrace.NewTraces()
	pad := strings.Repeat("x", size)
	var ss ptrace.ScopeSpans
	for i := range n {
		if i%(n/4+1) == 0 {
			rs := td.ResourceSpans()
			var r ptrace.ResourceSpans
			if i < n/2 || rs.Len() == 0 {
				r = rs.AppendEmpty()
				r.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", rs.Len()))
			} else {
				r = rs.At(rs.Len() - 1)
			}
			ss = r.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(fmt.Sprintf("scope-%d", i))
		}
		sp := ss.Spans().AppendEmpty()
		sp.SetName(fmt.Sprintf("span %d", i))
		sp.SetTraceID(pcommon.TraceID{byte(i >> 8), byte(i), 1})
		sp.SetSpanID(pcommon.SpanID{byte(i >> 8), byte(i), 2})
		sp.Attributes().PutStr("pad", pad)
	}
	return td
}

// Cut by bytes, each part weighs at most a batch as the queue weighs it,
// and the parts hold every span once, in order, under its resource and
// scope.
func TestSpansOfAtMostABatchFitTheQueue(t *testing.T) {
	td := manySpans(3000, 1000)
	where := spanPlaces(td)
	for _, batch := range []int{minRequestBytes, 2 << 20, 3000, 1500} {
		parts := cutSpans(td, spansOfAtMost(batch))
		var got []string
		for i, part := range parts {
			if size := tracesSizer.TracesSize(part); size > batch && part.SpanCount() > 1 {
				t.Errorf("batch %d: part %d of %d spans weighs %d", batch, i, part.SpanCount(), size)
			}
			got = append(got, spanPlaces(part)...)
		}
		if !slices.Equal(got, where) {
			t.Fatalf("batch %d: the parts hold %d spans of %d, or not in order under their resource and scope", batch, len(got), len(where))
		}
		if batch > 1<<20 && len(parts) != 1+tracesSizer.TracesSize(td)/batch {
			t.Errorf("batch %d: %d parts for %d bytes", batch, len(parts), tracesSizer.TracesSize(td))
		}
	}
}

// spanPlaces names each span of td, in order, with its resource and scope.
func spanPlaces(td ptrace.Traces) []string {
	var out []string
	for _, rs := range td.ResourceSpans().All() {
		svc, _ := rs.Resource().Attributes().Get("service.name")
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				out = append(out, svc.Str()+"/"+ss.Scope().Name()+"/"+sp.Name())
			}
		}
	}
	return out
}

// At the default budget the memory queue holds 2 MiB, less than an OTLP
// request may (max_request_body_size 4 MiB). Such traces are taken in
// parts: the first at once, the rest as a partial refusal
// (consumererror.Traces) that, offered again, is taken as the queue frees
// room; each span reaches Axiom once, and the caller's traces are left as
// they were.
func TestTracesHeavierThanTheQueueGoInParts(t *testing.T) {
	fake := axiomtest.NewForTest(t)
	fake.Fail(tracesDS, axiomtest.Slow(300*time.Millisecond), axiomtest.Slow(300*time.Millisecond))
	cfg := withQueue(testConfig(fake.URL()))
	exp := startTraces(t, newHarness(), cfg)

	const n = 3200
	td := manySpans(n, 1000)
	if weight, queue := int64(tracesSizer.TracesSize(td)), cfg.QueueConfig.Get().QueueSize; weight <= queue {
		t.Fatalf("test needs traces (%d) heavier than the queue (%d)", weight, queue)
	}
	before, _ := tracesSizer.MarshalTraces(td)

	err := exp.ConsumeTraces(context.Background(), td)
	partial, ok := errors.AsType[consumererror.Traces](err)
	if !ok || !errors.Is(err, exporterhelper.ErrQueueIsFull) {
		t.Fatalf("ConsumeTraces returned %v, want the queue full for the rest (consumererror.Traces)", err)
	}
	rest := partial.Data()
	if taken := n - rest.SpanCount(); taken <= 0 || rest.SpanCount() <= 0 {
		t.Fatalf("%d spans taken, %d left: want a part taken and a part left", taken, rest.SpanCount())
	}
	if after, _ := tracesSizer.MarshalTraces(td); !bytes.Equal(after, before) {
		t.Fatal("the caller's traces changed")
	}
	deadline := time.Now().Add(waitWindow)
	for err != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the rest was still refused after %s: %v", waitWindow, err)
		}
		time.Sleep(20 * time.Millisecond)
		err = exp.ConsumeTraces(context.Background(), rest)
		if partial, ok := errors.AsType[consumererror.Traces](err); ok {
			rest = partial.Data()
		}
	}
	if err := fake.WaitSpans(tracesDS, n, waitWindow); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, sp := range fake.Spans(tracesDS) {
		seen[fmt.Sprint(sp["name"])]++
	}
	for i := range n {
		if c := seen[fmt.Sprintf("span %d", i)]; c != 1 {
			t.Errorf("span %d arrived %d times", i, c)
		}
	}
}
