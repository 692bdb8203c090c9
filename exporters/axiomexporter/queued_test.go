package axiomexporter

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"testing"

	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/trace"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/queuedevents"
)

// queuedCompact is the same request as queuedlogs' compact form stored it
// (written by main at ee4774e, the last version that wrote it).
const queuedCompact = "007371011a0a1812140a120a10736964656361722f7261776576656e740a000215ad1b285d36ed1815ad1b285d36ed180900000004696e666f001b7b226c6576656c223a33302c226d7367223a226c696e652030227d0015ad1b285d36ed1815ad1b285d36ed180900000004696e666f001b7b226c6576656c223a33302c226d7367223a226c696e652031227d00"

// queuedByAnEarlierVersion is a request of two stdin records, {"level":30,
// "msg":"line 0"} and "line 1", as the persistent queue stored it before
// the compact form (pdata's request protobuf with its context, written by
// main at 6147aa0).
const queuedByAnEarlierVersion = "0d010000001a9a010a9701129201123d52004a002a1d0a1b7b226c6576656c223a33302c226d7367223a226c696e652030227d1a04696e666f10095915ad1b285d36ed180915ad1b285d36ed18123d52004a002a1d0a1b7b226c6576656c223a33302c226d7367223a226c696e652031227d1a04696e666f10095915ad1b285d36ed180915ad1b285d36ed180a120a10736964656361722f7261776576656e740a001200"

func protoOf(t *testing.T, ld plog.Logs) []byte {
	t.Helper()
	var m plog.ProtoMarshaler
	b, err := m.MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAQueueWrittenByAnEarlierVersionIsRead(t *testing.T) {
	old, err := hex.DecodeString(queuedByAnEarlierVersion)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := hex.DecodeString(queuedCompact)
	if err != nil {
		t.Fatal(err)
	}
	want := stdoutRecords(2, func(i int) string { return `{"level":30,"msg":"line ` + string(rune('0'+i)) + `"}` }, nil, nil)
	enc := newLogsEncoding(newLogsWeigher(defaultMaxRequestBytes))
	var bare plog.ProtoMarshaler
	bareProto, _ := bare.MarshalLogs(want) // what the queue wrote before it kept the context
	for name, b := range map[string][]byte{"request protobuf": old, "bare protobuf": bareProto, "compact form": compact} {
		_, r, err := enc.Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := r.(*logsRequest).ld; !bytes.Equal(protoOf(t, got), protoOf(t, want)) {
			t.Errorf("%s: read %d records that differ from the ones queued", name, got.LogRecordCount())
		}
		if again, err := enc.Marshal(context.Background(), r); err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: written again (the queue's move at start) in another form (%v)", name, err)
		}
	}
}

// queuedAndReadBack is what the disk queue reads back of ld, queued with ctx.
func queuedAndReadBack(t *testing.T, ctx context.Context, enc logsEncoding, ld plog.Logs) ([]byte, xexporterhelper.Request) {
	t.Helper()
	b, err := enc.Marshal(ctx, enc.w.request(ld))
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := enc.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, r
}

// Requests are queued as the events they are sent as: read back, they go
// to Axiom as the same events a request sent from memory makes, and weigh
// and count what their records did, so the queue takes back what it
// counted.
func TestRequestsAreQueuedAsTheirEvents(t *testing.T) {
	for name, ld := range map[string]plog.Logs{
		"stdin's pino lines":       pinoLines(50),
		"Forward's":                forwardRecords(20),
		"FireLens'":                fireLensRecords(20),
		"raw, with a resource":     rawLogs(10, true),
		"mapped, with timestamps":  stringLogs(10),
		"two resources and scopes": twoResources(),
	} {
		enc := newLogsEncoding(newLogsWeigher(defaultMaxRequestBytes))
		weight := enc.w.weigh(ld)
		b, r := queuedAndReadBack(t, context.Background(), enc, ld)
		if !queuedevents.Is(b) {
			t.Fatalf("%s: not queued as events", name)
		}
		er, ok := r.(*eventsRequest)
		if !ok {
			t.Fatalf("%s: read back as %T", name, r)
		}
		// The queue's move at start writes what it read again: dir_storage
		// tells the move by the same bytes.
		if again, err := enc.Marshal(context.Background(), er); err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: written again as other bytes (%v)", name, err)
		}
		if name == "FireLens'" && len(b) > len(er.events)/2 { // its resource and stream, on every event
			t.Errorf("%s: stored in %d bytes for %d of events: the head is stored on every one", name, len(b), len(er.events))
		}
		if er.BytesSize() != weight || er.ItemsCount() != ld.LogRecordCount() {
			t.Errorf("%s: read back weighing %d for %d events, queued weighing %d for %d records",
				name, er.BytesSize(), er.ItemsCount(), weight, ld.LogRecordCount())
		}
		fromMemory, fromDisk := sentTo(t, func(e *logsExporter) error { return e.pushRequest(context.Background(), e.weigher.request(ld)) }),
			sentTo(t, func(e *logsExporter) error { return e.pushRequest(context.Background(), er) })
		if !bytes.Equal(fromDisk, fromMemory) || bytes.Count(fromMemory, []byte("\n")) != ld.LogRecordCount() {
			t.Errorf("%s: the events sent from the disk queue differ from the ones sent from memory:\n%s\n%s", name, fromDisk, fromMemory)
		}
	}
}

// sentTo is what push makes the logs exporter send, written to a file
// (local_dir) instead of Axiom.
func sentTo(t *testing.T, push func(*logsExporter) error) []byte {
	t.Helper()
	cfg := testConfig("http://127.0.0.1:1")
	cfg.Token, cfg.LocalDir = "", t.TempDir()
	e := startLogsExporter(t, cfg)
	if err := push(e); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(e.localPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func twoResources() plog.Logs {
	ld := pinoLines(3)
	stringLogs(4).ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	rawLogs(2, false).ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	return ld
}

func TestAContextThatCarriesSomethingIsQueuedAsProtobuf(t *testing.T) {
	enc := newLogsEncoding(newLogsWeigher(defaultMaxRequestBytes))
	span := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	withSpan := trace.ContextWithSpanContext(context.Background(), span)
	ld := pinoLines(3)
	b, err := enc.Marshal(withSpan, enc.w.request(ld))
	if err != nil {
		t.Fatal(err)
	}
	if queuedevents.Is(b) {
		t.Error("queued as events, without its context")
	}
	ctx, r, err := enc.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(protoOf(t, r.(*logsRequest).ld), protoOf(t, ld)) {
		t.Error("records read back differ from the ones queued")
	}
	if got := trace.SpanContextFromContext(ctx); got.TraceID() != span.TraceID() {
		t.Errorf("read back with span context %v", got)
	}
}
