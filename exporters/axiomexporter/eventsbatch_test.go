package axiomexporter

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/rawevent"
)

// readBack is what the disk queue reads back of ld: its events.
func readBack(t *testing.T, ld plog.Logs) *eventsRequest {
	t.Helper()
	_, r := queuedAndReadBack(t, context.Background(), newLogsEncoding(newLogsWeigher(defaultMaxRequestBytes)), ld)
	return r.(*eventsRequest)
}

// Events read back merge into one batch while they fit it, and a request
// larger than a batch is cut at event boundaries into even parts that each
// fit one, its events in order.
func TestEventsMergeAndSplitAtEventBoundaries(t *testing.T) {
	a, b := readBack(t, pinoLines(100)), readBack(t, pinoLines(50))
	all := string(a.events) + string(b.events)
	weight := a.weight + b.weight
	merged, err := a.MergeSplit(context.Background(), weight, exporterhelper.RequestSizerTypeBytes, b)
	if err != nil || len(merged) != 1 {
		t.Fatalf("merged into %d batches (%v), want 1", len(merged), err)
	}
	m := merged[0].(*eventsRequest)
	if string(m.events) != all || m.ItemsCount() != 150 || m.BytesSize() != weight || m.ends[149] != len(all) {
		t.Fatalf("merged: %d events weighing %d, want 150 weighing %d, in order", m.ItemsCount(), m.BytesSize(), weight)
	}
	const maxSize = 16 << 10
	parts, err := m.MergeSplit(context.Background(), maxSize, exporterhelper.RequestSizerTypeBytes, nil)
	if err != nil || len(parts) < 2 {
		t.Fatalf("split into %d parts (%v)", len(parts), err)
	}
	var joined strings.Builder
	count := 0
	for _, p := range parts {
		pr := p.(*eventsRequest)
		if pr.BytesSize() > maxSize || pr.BytesSize() < maxSize/3 {
			t.Errorf("a part weighs %d, want at most %d and not much less", pr.BytesSize(), maxSize)
		}
		if pr.ends[len(pr.ends)-1] != len(pr.events) || pr.events[len(pr.events)-1] != '\n' {
			t.Error("a part does not end at an event's end")
		}
		joined.Write(pr.events)
		count += pr.ItemsCount()
	}
	if joined.String() != all || count != 150 {
		t.Errorf("the parts hold %d events, want the 150 in order", count)
	}
}

// A batch merged from many small requests read back (the file tailer's)
// copies their events a few times, not once per merge: append grows a
// large buffer by a quarter, which made the batch's n-th merge copy all n.
func TestEventsMergeOfManyRequestsCopiesFewTimes(t *testing.T) {
	const requests = 8
	var parts []*eventsRequest
	for range requests {
		parts = append(parts, readBack(t, pinoLines(1000)))
	}
	total, weight := 0, 0
	for _, p := range parts {
		total += len(p.events)
		weight += p.weight
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	batch := parts[0]
	for _, p := range parts[1:] {
		merged, err := batch.MergeSplit(context.Background(), weight, exporterhelper.RequestSizerTypeBytes, p)
		if err != nil || len(merged) != 1 {
			t.Fatalf("merged into %d batches (%v), want 1", len(merged), err)
		}
		batch = merged[0].(*eventsRequest)
	}
	runtime.ReadMemStats(&after)
	if len(batch.events) != total || batch.ItemsCount() != requests*1000 {
		t.Fatalf("merged %d bytes in %d events, want %d in %d", len(batch.events), batch.ItemsCount(), total, requests*1000)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(3*total) {
		t.Errorf("merging %d requests of %d bytes in all allocated %d bytes", requests, total, allocated)
	}
}

// A request of records, read from a queue an earlier version wrote, and
// events never join one batch; both go, in order.
func TestRecordsAndEventsGoInBatchesOfTheirOwn(t *testing.T) {
	w := newLogsWeigher(defaultMaxRequestBytes)
	records, events := w.request(pinoLines(3)), readBack(t, pinoLines(4))
	for _, c := range []struct {
		first, next interface {
			MergeSplit(context.Context, int, exporterhelper.RequestSizerType, xexporterhelper.Request) ([]xexporterhelper.Request, error)
		}
		nextReq xexporterhelper.Request
	}{{records, events, events}, {events, records, records}} {
		out, err := c.first.MergeSplit(context.Background(), 1<<20, exporterhelper.RequestSizerTypeBytes, c.nextReq)
		if err != nil || len(out) != 2 || out[0] != c.first.(xexporterhelper.Request) || out[1] != c.nextReq {
			t.Errorf("merging a %T into a %T gave %d batches (%v), want the two as they are", c.nextReq, c.first, len(out), err)
		}
	}
}

// A 413 for events read back halves them, as it does records' events.
func TestEventsReadBack413SplitDownToOneEvent(t *testing.T) {
	srv := axiomtest.NewForTest(t, axiomtest.WithMaxBodyBytes(4000))
	sizes := make([]int, 60)
	for i := range sizes {
		sizes[i] = 300
	}
	sizes[37] = 5000 // over the limit by itself
	e := startLogsExporter(t, testConfig(srv.URL()))
	if err := e.pushRequest(context.Background(), readBack(t, sizedLogs(sizes...))); err == nil {
		t.Error("the push reported no loss although one event was dropped")
	}
	n := 0
	for _, ev := range srv.Events(logsDS) {
		if msg, _ := ev["message"].(string); ev["sidecar.event"] == nil {
			n++
			if strings.HasPrefix(msg, "37:") {
				t.Error("the oversized event arrived")
			}
		}
	}
	if n != 59 {
		t.Errorf("%d events arrived, want the 59 that fit", n)
	}
}

// After a 400, events read back are checked one by one: a broken raw body
// goes as a message holding its text, a newline in a one-line scope's
// becomes a space, and the other events arrive as they were.
func TestEventsReadBackAreMendedAfterA400(t *testing.T) {
	srv := axiomtest.NewForTest(t)
	srv.Fail(logsDS, axiomtest.Status(400))
	ld := rawLogs(5, false)
	sl := ld.ResourceLogs().At(0).ScopeLogs().At(0)
	rawevent.MarkOneLineScope(sl)
	sl.LogRecords().At(1).Body().SetStr("{\"msg\":\n\"two lines\"}")
	sl.LogRecords().At(3).Body().SetStr(`{"msg": oops}`)
	e := startLogsExporter(t, testConfig(srv.URL()))
	if err := e.pushRequest(context.Background(), readBack(t, ld)); err != nil {
		t.Fatal(err)
	}
	events := srv.Events(logsDS)
	if len(events) != 5 {
		t.Fatalf("got %d events, want 5", len(events))
	}
	if events[1]["msg"] != "two lines" {
		t.Errorf("mended event = %v", events[1])
	}
	if msg, _ := events[3]["message"].(string); !strings.Contains(msg, `"msg": oops}`) {
		t.Errorf("broken event = %v, want a message holding its text", events[3])
	}
	if events[4]["msg"] != "request completed" || events[0]["msg"] != "request completed" {
		t.Errorf("the other events changed: %v, %v", events[0], events[4])
	}
}

// mendEvents leaves valid events as they were.
func TestMendEventsKeepsValidEvents(t *testing.T) {
	r := readBack(t, pinoLines(20))
	enc := &encoder{}
	if broken, mended := mendEvents(enc, r.events, r.ends); broken != 0 || mended != 0 || !bytes.Equal(enc.events, r.events) {
		t.Errorf("mended %d and broke %d of 20 valid events", mended, broken)
	}
}
