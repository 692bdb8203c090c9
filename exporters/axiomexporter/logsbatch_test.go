package axiomexporter

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
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
// shared by the records of their raw scope (as the decoder writes them) and
// the tag in the resource; fireLensRecords carry the container's fields
// too. Each of their events repeats the resource, so it weighs more than
// its protobuf.
func forwardRecords(n int) plog.Logs {
	return sharedStream(stdoutRecords(n, shortLine, nil, map[string]string{"fluent.tag": "app"}))
}

func fireLensRecords(n int) plog.Logs {
	return sharedStream(stdoutRecords(n, shortLine, nil, map[string]string{
		"fluent.tag": "app-firelens-0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2", "container_name": "app",
		"container_id": "0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2-3141592653",
	}))
}

// sharedStream makes stdout the stream of every record of ld's first raw
// scope, carried by the scope (rawevent.Shared).
func sharedStream(ld plog.Logs) plog.Logs {
	ld.ResourceLogs().At(0).ScopeLogs().At(0).Scope().Attributes().PutStr("log.iostream", "stdout")
	return ld
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

// oneByOne copies each record of ld into a plog.Logs of its own, with its
// resource and scope, as a source that queues every line alone would.
func oneByOne(ld plog.Logs) []plog.Logs {
	var out []plog.Logs
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			for k := 0; k < sl.LogRecords().Len(); k++ {
				one := plog.NewLogs()
				orl := one.ResourceLogs().AppendEmpty()
				rl.Resource().CopyTo(orl.Resource())
				osl := orl.ScopeLogs().AppendEmpty()
				sl.Scope().CopyTo(osl.Scope())
				sl.LogRecords().At(k).CopyTo(osl.LogRecords().AppendEmpty())
				out = append(out, one)
			}
		}
	}
	return out
}

// A batch the batcher fills to the brim goes to Axiom as one request: pino
// lines and FireLens records (whose NDJSON, with the resource on every
// event, is twice their protobuf) fill it by bytes, short Forward records
// by Axiom's 10,000 events. So does each part of a queued request larger
// than a batch. A batch sent as two requests is what a kill between the
// two duplicates.
func TestBatchesAreOneRequestEach(t *testing.T) {
	for name, records := range map[string]func(int) plog.Logs{
		"pino lines": pinoLines, "forward records": forwardRecords, "firelens records": fireLensRecords,
	} {
		t.Run(name, func(t *testing.T) {
			srv := axiomtest.NewForTest(t, axiomtest.WithCountOnly())
			cfg := testConfig(srv.URL())
			e := startLogsExporter(t, cfg)
			maxSize := int(cfg.batchBytes())
			push := func(what string, r *logsRequest) {
				t.Helper()
				before, events := len(srv.Requests()), r.ItemsCount()
				if err := e.pushRequest(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				if got := len(srv.Requests()) - before; got != 1 {
					t.Errorf("%s (%d events, weighing %d bytes) went as %d requests", what, events, r.BytesSize(), got)
				}
			}

			// Queued one record at a time, the batch fills until the next
			// record does not fit.
			const n = 25_000
			var batch *logsRequest
			for _, one := range oneByOne(records(n)) {
				next := e.weigher.request(one)
				if batch == nil {
					batch = next
					continue
				}
				got, err := batch.MergeSplit(context.Background(), maxSize, exporterhelper.RequestSizerTypeBytes, next)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) > 1 {
					full := got[0].(*logsRequest)
					if full.ItemsCount() < maxEventsPerRequest && full.BytesSize()+next.BytesSize() <= maxSize {
						t.Fatalf("the batcher cut a batch of %d events, %d bytes, that had room for a record of %d", full.ItemsCount(), full.BytesSize(), next.BytesSize())
					}
					t.Logf("a full batch: %d events, %d of %d bytes", full.ItemsCount(), full.BytesSize(), maxSize)
					push("a full batch", full)
					break
				}
				batch = got[0].(*logsRequest)
			}
			if got := srv.EventCount(logsDS); got == 0 {
				t.Fatalf("%d records never filled a batch", n)
			}

			// One queued request of n records.
			parts, err := e.weigher.request(records(n)).MergeSplit(context.Background(), maxSize, exporterhelper.RequestSizerTypeBytes, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range parts {
				push(fmt.Sprintf("part %d of %d", i, len(parts)), p.(*logsRequest))
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
		r := newLogsWeigher(testConfig("").batchBytes()).request(ld)
		enc := newEncoderPool().get()
		var resource []byte
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			resource = appendResource(resource[:0], rl)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				sl := rl.ScopeLogs().At(j)
				for k := 0; k < sl.LogRecords().Len(); k++ {
					enc.events = appendEvent(enc.events, sl.LogRecords().At(k), scopeOf(sl, resource), new(attrsJSON), time.Now())
				}
			}
		}
		if r.BytesSize() < len(enc.events) {
			t.Errorf("%s: weighs %d bytes, its NDJSON is %d", name, r.BytesSize(), len(enc.events))
		}
	}
}

// Each record weighs the larger of its event and its protobuf as pdata
// sizes it, whether the protobuf is counted from the record's fields
// (recordsize: stdin's records, raw or text, with a resource or not; raw
// records with string attributes) or by pdata (other attributes, other
// bodies).
func TestRecordWeighsItsEventOrPdatasProtobuf(t *testing.T) {
	var sizer plog.ProtoMarshaler
	// Raw records with their stream and no resource weigh their protobuf
	// (the lines are long enough to weigh more than minEvent); every third
	// is truncated too, a bool attribute.
	longLine := func(i int) string { return `{"msg":"` + strings.Repeat("x", 300) + `","seq":` + strconv.Itoa(i) + `}` }
	streams := stdoutRecords(60, longLine, map[string]string{"log.iostream": "stdout"}, nil)
	for i, lrs := 0, streams.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords(); i < lrs.Len(); i += 3 {
		lrs.At(i).Attributes().PutBool("log.truncated", true)
	}
	// As the decoder writes them now: the stream shared by the scope.
	shared := sharedStream(stdoutRecords(60, longLine, nil, nil))
	for i, lrs := 0, shared.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords(); i < lrs.Len(); i += 3 {
		lrs.At(i).Attributes().PutBool("log.truncated", true)
	}
	for name, ld := range map[string]plog.Logs{
		"pino lines": pinoLines(500), "forward records": forwardRecords(500), "firelens records": fireLensRecords(500),
		"text lines":                     stringLogs(500),
		"no timestamps":                  sizedLogs(10, 200, 3000),
		"with a resource":                stdoutRecords(50, shortLine, nil, map[string]string{"fluent.tag": "app"}),
		"streams, some truncated":        streams,
		"shared streams, some truncated": shared,
		"shared streams, some truncated, with a resource": withResource(sharedStream(stdoutRecords(60, longLine, nil, nil))),
	} {
		w := newLogsWeigher(2 << 20)
		var resource []byte
		n := 0
		w.each(ld, func(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, weight int) {
			resource = appendResource(resource[:0], rl)
			event := len(appendEvent(nil, lr, scopeOf(sl, resource), new(attrsJSON), weighTime))
			if _, shared := rawevent.Shared(sl); rawevent.IsRawScope(sl) && lr.Attributes().Len() == 0 && len(resource) == 0 && !shared {
				event = len(lr.Body().Str()) + 1 // the raw event's bound (TestEventSizeIsTheEventsLength)
			}
			if want := max(event, sizer.LogRecordSize(lr), w.minEvent); weight != want && n < 5 {
				n++
				t.Errorf("%s: a record weighs %d, want %d (event %d, protobuf %d)", name, weight, want, event, sizer.LogRecordSize(lr))
			}
		})
	}
}

func withResource(ld plog.Logs) plog.Logs {
	ld.ResourceLogs().At(0).Resource().Attributes().PutStr("fluent.tag", "app")
	return ld
}

// A queued request is not split across batches when it fits one: the
// batch goes as it is and the request starts the next. One larger than a
// batch is cut into even parts, each over half a batch (min_size), so none
// of them waits for more; a record heavier than a batch goes alone, not
// dropped (Axiom's 413 decides). Records keep their order.
func TestMergeSplitKeepsQueuedRequestsWhole(t *testing.T) {
	w := newLogsWeigher(1000)
	batches := func(r *logsRequest, next *logsRequest) (weights, counts []int, order []string) {
		t.Helper()
		var nx xexporterhelper.Request
		if next != nil {
			nx = next
		}
		got, err := r.MergeSplit(context.Background(), 1000, exporterhelper.RequestSizerTypeBytes, nx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range got {
			lr := b.(*logsRequest)
			if lr.weight != w.weigh(lr.ld) {
				t.Errorf("batch weight %d, its records weigh %d", lr.weight, w.weigh(lr.ld))
			}
			weights, counts = append(weights, lr.BytesSize()), append(counts, lr.ItemsCount())
			w.each(lr.ld, func(_ plog.ResourceLogs, _ plog.ScopeLogs, rec plog.LogRecord, _ int) {
				index, _, _ := strings.Cut(rec.Body().Str(), ":")
				order = append(order, index)
			})
		}
		return weights, counts, order
	}
	four := func() *logsRequest { return w.request(sizedLogs(50, 50, 50, 50)) } // 4 records of ~100
	if _, counts, _ := batches(four(), four()); fmt.Sprint(counts) != "[8]" {
		t.Errorf("two requests that fit one batch made batches of %v records, want [8]", counts)
	}
	big := w.request(sizedLogs(60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60)) // over one batch
	if _, counts, order := batches(four(), big); fmt.Sprint(counts) != "[4 7 7]" || strings.Join(order[:6], ",") != "0,1,2,3,0,1" {
		t.Errorf("a batch and a request larger than one made batches of %v records (order %v), want [4 7 7]", counts, order)
	}
	weights, counts, order := batches(w.request(sizedLogs(50, 5000, 50, 50, 50)), nil)
	if fmt.Sprint(counts) != "[1 1 3]" || strings.Join(order, ",") != "0,1,2,3,4" {
		t.Errorf("a record heavier than a batch among others: batches of %v records, order %v; want [1 1 3]", counts, order)
	}
	for i, weight := range weights {
		if i != 1 && weight > 1000 {
			t.Errorf("batch %d weighs %d, over 1000", i, weight)
		}
	}
}

// The weigher counts a raw event's length without reading its body: by
// the rawevent contract (one object, nothing around it: what the stdout
// receiver writes) the weight is the event's length, or a few bytes more
// for an empty object; a body that breaks the contract weighs what an
// object of its length would. Records that are not raw weigh their event.
func TestEventSizeIsTheEventsLength(t *testing.T) {
	w := newLogsWeigher(2 << 20)
	resource := appendResource(nil, fireLensRecords(1).ResourceLogs().At(0))
	for _, body := range []string{`{"a":1}`, `{"msg":"line\nbreak"}`, `{}`, `{ }`, "  {\"a\":\n1} ", `[1]`, `not json`, ``} {
		for _, attrs := range []map[string]string{nil, {"log.iostream": "stdout", "k\"ey": "v\x01"}} {
			for _, res := range [][]byte{nil, resource} {
				for _, raw := range []bool{true, false} {
					lr := plog.NewLogRecord()
					lr.Body().SetStr(body)
					for k, v := range attrs {
						lr.Attributes().PutStr(k, v)
					}
					sc := &eventScope{raw: raw, resource: res}
					got, event := w.eventSize(lr, sc), len(appendEvent(nil, lr, sc, new(attrsJSON), weighTime))
					lo, hi := event, event
					switch object := len(body) >= 2 && body[0] == '{' && body[len(body)-1] == '}'; {
					case raw && object && strings.TrimSpace(body[1:len(body)-1]) == "":
						hi = event + len(body) - 1
					case raw && !object: // weighs as an object of its length
						const object = `{"a":1}`
						lr.Body().SetStr(object)
						lo = len(appendEvent(nil, lr, sc, new(attrsJSON), weighTime)) - len(object) + len(body)
						hi = lo
					}
					if got < lo || got > hi {
						t.Errorf("body %q, %d attributes, resource %t, raw %t: size %d, want %d to %d (the event is %d)", body, len(attrs), res != nil, raw, got, lo, hi, event)
					}
				}
			}
		}
	}
}

// A map whose JSON outgrows the buffer the encoder keeps still gets its
// JSON when a value is not a string (which ends the comparison with the
// next map): only forget, between batches, lets a large buffer go.
func TestAttrsJSONOfALargeMapWithANonStringValue(t *testing.T) {
	var c attrsJSON
	m := pcommon.NewMap()
	m.PutStr("big", strings.Repeat("x", maxPooledBuffer+1))
	m.PutInt("n", 1)
	if got, want := c.own(m), appendMap(nil, m); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes of JSON, want %d", len(got), len(want))
	}
}

// attrsJSON keeps the last attributes' JSON while the next record's are
// the same (the weigher and the encoder both use it): every map of a
// sequence that changes in each way a map can is its own encoding.
func TestAttrsJSONFollowsEachMap(t *testing.T) {
	var c attrsJSON
	maps := []func(m pcommon.Map){
		func(m pcommon.Map) { m.PutStr("log.iostream", "stdout") },
		func(m pcommon.Map) { m.PutStr("log.iostream", "stdout") },
		func(m pcommon.Map) { m.PutStr("log.iostream", "stderr") },
		func(m pcommon.Map) { m.PutStr("log.iostreaM", "stderr") },
		func(m pcommon.Map) { m.PutStr("log.iostreaM", "stderr"); m.PutBool("log.truncated", true) },
		func(m pcommon.Map) { m.PutStr("log.iostreaM", "stderr"); m.PutBool("log.truncated", false) },
		func(m pcommon.Map) { m.PutStr("log.iostreaM", "stderr"); m.PutStr("log.truncated", "true") },
		func(m pcommon.Map) { m.PutStr("log.iostreaM", "stderr"); m.PutStr("log.truncated", "true\"") },
		func(m pcommon.Map) { m.PutStr("log.truncated", "true\""); m.PutStr("log.iostreaM", "stderr") },
		func(m pcommon.Map) { m.PutInt("log.iostream", 1) },
		func(m pcommon.Map) { m.PutInt("log.iostream", 1) },
		func(m pcommon.Map) { m.PutStr("log.iostream", "1") },
		func(m pcommon.Map) { m.PutStr("", "") },
		func(m pcommon.Map) { m.PutInt("", 0) }, // its Str is "" too
	}
	for i, fill := range maps {
		m := pcommon.NewMap()
		fill(m)
		if got, want := c.own(m), appendMap(nil, m); !bytes.Equal(got, want) {
			t.Errorf("map %d %v: %s, its encoding is %s", i, m.AsRaw(), got, want)
		}
	}
}

// BenchmarkWeighPinoLines is what the queue pays per record to weigh it
// (once as it is queued, once more as a disk queue reads it back); compare
// BenchmarkEncodeRawEvents, what a push pays to encode it.
func BenchmarkWeighPinoLines(b *testing.B) {
	const batch = 4096
	ld := pinoLines(batch)
	w := newLogsWeigher(2 << 20)
	for b.Loop() {
		w.weigh(ld)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
}

// BenchmarkWeighForwardLines is BenchmarkWeighPinoLines for the records a
// Fluent Forward connection delivers: the stream on each record, the
// container's fields in the resource.
func BenchmarkWeighForwardLines(b *testing.B) {
	const batch = 4096
	gen := loadgen.NewPino(1)
	t := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	ld := stdoutRecords(batch, func(int) string {
		return strings.TrimSuffix(string(gen.Append(nil, t)), "\n")
	}, map[string]string{"log.iostream": "stdout"}, map[string]string{
		"fluent.tag": "app-firelens-0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2", "container_name": "app",
		"container_id": "0b69d5c0d0b74b8fa2f5d3f3d9a1e7c2-3141592653",
	})
	w := newLogsWeigher(2 << 20)
	for b.Loop() {
		w.weigh(ld)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
}

// BenchmarkExportLines is what the logs exporter pays per record outside
// zstd and HTTP: the queue's weighing, then pushLogs' walk and encoding,
// written to /dev/null as local_dir mode writes its file. The records are
// shaped as each source delivers them: stdin's pino lines in a one-line
// raw scope; docker's and FireLens's Forward records, the stream on each
// and the container's fields as the resource.
func BenchmarkExportLines(b *testing.B) {
	const batch = 4096
	dockerResource := map[string]string{"container_id": "4f3a2b9c1d7e", "container_name": "/api", "fluent.tag": "docker.api"}
	fireLensResource := map[string]string{"container_id": "4f3a2b9c1d7e", "container_name": "api", "fluent.tag": "api-firelens-4f3a2b9c1d7e4b1f",
		"ecs_cluster": "prod", "ecs_task_arn": "arn:aws:ecs:eu-west-1:123456789012:task/prod/4f3a2b9c1d7e4b1f", "ecs_task_definition": "api:42"}
	stream := map[string]string{"log.iostream": "stdout"}
	for _, bc := range []struct {
		name            string
		attrs, resource map[string]string
		shared          bool
	}{
		{"stdin", nil, nil, false},
		{"forward-docker", nil, dockerResource, true},
		{"forward-firelens", nil, fireLensResource, true},
		{"forward-docker-own", stream, dockerResource, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			gen := loadgen.NewPino(1)
			t := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
			ld := stdoutRecords(batch, func(int) string {
				return strings.TrimSuffix(string(gen.Append(nil, t)), "\n")
			}, bc.attrs, bc.resource)
			if bc.shared {
				sharedStream(ld)
			} else if bc.attrs == nil {
				rawevent.MarkOneLineScope(ld.ResourceLogs().At(0).ScopeLogs().At(0))
			}
			cfg := testConfig("")
			cfg.Token, cfg.LocalDir = "", b.TempDir()
			e, err := newLogsExporter(cfg, newHarness().set)
			if err != nil {
				b.Fatal(err)
			}
			if err := e.start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			defer e.shutdown(context.Background())
			devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			e.file.f.Close()
			e.file.f = devNull
			for b.Loop() {
				e.weigher.weigh(ld)
				if err := e.pushRequest(context.Background(), e.weigher.request(ld)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
		})
	}
}
