package axiomexporter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/loadgen"
	"github.com/sidecarhq/sidecar/internal/rawevent"
)

// stdoutRecords makes n records as the stdout receiver's decoder does for
// JSON lines: a raw scope, the line as the body, its time and level, the
// read time as observed; attrs go on every record and resource on the
// batch.
func stdoutRecords(n int, line func(i int) string, attrs, resource map[string]string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	for k, v := range resource {
		rl.Resource().Attributes().PutStr(k, v)
	}
	sl := rl.ScopeLogs().AppendEmpty()
	rawevent.MarkRawScope(sl)
	now := pcommon.NewTimestampFromTime(time.Date(2026, 12, 1, 19, 0, 0, 123_456_789, time.UTC))
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(now)
		lr.SetObservedTimestamp(now)
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("info")
		lr.Body().SetStr(line(i))
		for k, v := range attrs {
			lr.Attributes().PutStr(k, v)
		}
	}
	return ld
}

// pinoLines are internal/loadgen's pino request logs (about 300 bytes, one
// in fifty an error with a stack) as read from stdin.
func pinoLines(n int) plog.Logs {
	gen := loadgen.NewPino(1)
	t := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	return stdoutRecords(n, func(int) string {
		return strings.TrimSuffix(string(gen.Append(nil, t)), "\n")
	}, nil, nil)
}

// forwardRecords are short lines from a Fluent Forward client, the stream
// on each record and the tag in the resource; fireLensRecords carry the
// container's fields too. Each of their events repeats the resource, so it
// weighs more than its protobuf.
func forwardRecords(n int) plog.Logs {
	return stdoutRecords(n, shortLine, map[string]string{"log.iostream": "stdout"}, map[string]string{"fluent.tag": "app"})
}

func fireLensRecords(n int) plog.Logs {
	return stdoutRecords(n, shortLine, map[string]string{"log.iostream": "stdout"}, map[string]string{
		"fluent.tag": "app-firelens-0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2", "container_name": "app",
		"container_id": "0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2-3141592653",
	})
}

func shortLine(i int) string {
	return `{"level":30,"time":1764615600000,"seq":` + strconv.Itoa(i) + `,"msg":"ok"}`
}

// startLogsExporter starts the logs exporter itself, without the
// exporterhelper around it.
func startLogsExporter(t *testing.T, cfg *Config) *logsExporter {
	t.Helper()
	e, err := newLogsExporter(cfg, newHarness().set)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.shutdown(context.Background()) })
	return e
}

// The batcher cuts a queued stream into batches that each go to Axiom as
// one request: pino lines and FireLens records (whose NDJSON, with the
// resource on every event, is twice their protobuf) fill a batch by bytes,
// short Forward records by Axiom's 10,000 events. A batch sent as two
// requests is what a kill between the two duplicates.
func TestBatchesAreOneRequestEach(t *testing.T) {
	for name, records := range map[string]func(int) plog.Logs{
		"pino lines": pinoLines, "forward records": forwardRecords, "firelens records": fireLensRecords,
	} {
		t.Run(name, func(t *testing.T) {
			srv := axiomtest.NewForTest(t, axiomtest.WithCountOnly())
			cfg := testConfig(srv.URL())
			e := startLogsExporter(t, cfg)
			maxSize := int(cfg.batchBytes())
			const n = 25_000
			ld := records(n)
			heaviest := 0
			e.weigher.each(ld, func(_ plog.ResourceLogs, _ plog.ScopeLogs, _ plog.LogRecord, weight int) {
				heaviest = max(heaviest, weight)
			})

			batches, err := e.weigher.request(ld).MergeSplit(context.Background(), maxSize, exporterhelper.RequestSizerTypeBytes, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(batches) < 2 {
				t.Fatalf("%d records made %d batches; the test wants full ones", n, len(batches))
			}
			for i, b := range batches {
				r := b.(*logsRequest)
				if full := r.ItemsCount() == maxEventsPerRequest || r.BytesSize()+heaviest > maxSize; i < len(batches)-1 && !full {
					t.Errorf("batch %d is not full: %d events, %d of %d bytes", i, r.ItemsCount(), r.BytesSize(), maxSize)
				}
				before := len(srv.Requests())
				if err := e.pushLogs(context.Background(), r.ld); err != nil {
					t.Fatal(err)
				}
				if got := len(srv.Requests()) - before; got != 1 {
					t.Errorf("batch %d (%d events, weighing %d bytes) went as %d requests", i, r.ItemsCount(), r.BytesSize(), got)
				}
			}
			if got := srv.EventCount(logsDS); got != n {
				t.Errorf("%d events arrived, want %d", got, n)
			}
		})
	}
}

// A batch weighs at least what its request will carry: the NDJSON
// pushLogs sends for it, records without a timestamp included (their send
// time is written at send time).
func TestBatchWeightCoversItsRequest(t *testing.T) {
	for name, ld := range map[string]plog.Logs{
		"pino lines": pinoLines(500), "forward records": forwardRecords(500), "firelens records": fireLensRecords(500),
		"text lines":    stringLogs(500),
		"no timestamps": sizedLogs(10, 200, 3000),
	} {
		r := newLogsWeigher().request(ld)
		enc := newEncoderPool().get()
		var resource []byte
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			resource = appendResource(resource[:0], rl)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				sl := rl.ScopeLogs().At(j)
				for k := 0; k < sl.LogRecords().Len(); k++ {
					enc.events = appendEvent(enc.events, sl.LogRecords().At(k), rawevent.IsRawScope(sl), resource, time.Now())
				}
			}
		}
		if r.BytesSize() < len(enc.events) {
			t.Errorf("%s: weighs %d bytes, its NDJSON is %d", name, r.BytesSize(), len(enc.events))
		}
	}
}

// Merging appends in order; a record heavier than a whole batch goes alone
// rather than being dropped (Axiom's 413 decides); by items, batches hold
// at most maxSize records.
func TestMergeSplitKeepsOrderAndEveryRecord(t *testing.T) {
	w := newLogsWeigher()
	a := w.request(sizedLogs(100, 100, 100))
	b := w.request(sizedLogs(5000, 100, 100, 100))
	got, err := a.MergeSplit(context.Background(), 1000, exporterhelper.RequestSizerTypeBytes, b)
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	var order []string
	for _, r := range got {
		lr := r.(*logsRequest)
		counts = append(counts, lr.ItemsCount())
		if lr.BytesSize() > 1000 && lr.ItemsCount() > 1 {
			t.Errorf("a batch of %d records weighs %d, over 1000", lr.ItemsCount(), lr.BytesSize())
		}
		if lr.weight != w.weigh(lr.ld) {
			t.Errorf("batch weight %d, its records weigh %d", lr.weight, w.weigh(lr.ld))
		}
		w.each(lr.ld, func(_ plog.ResourceLogs, _ plog.ScopeLogs, rec plog.LogRecord, _ int) {
			index, _, _ := strings.Cut(rec.Body().Str(), ":")
			order = append(order, index)
		})
	}
	if fmt.Sprint(counts) != "[3 1 3]" || strings.Join(order, ",") != "0,1,2,0,1,2,3" {
		t.Errorf("batches of %v records, in the order %v; want [3 1 3] and 0,1,2,0,1,2,3", counts, order)
	}
	got, err = w.request(stringLogs(25)).MergeSplit(context.Background(), 10, exporterhelper.RequestSizerTypeItems, nil)
	if err != nil || len(got) != 3 || got[2].ItemsCount() != 5 {
		t.Errorf("25 records by 10 items: %d batches, %v", len(got), err)
	}
}
