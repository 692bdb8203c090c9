package axiomexporter

import (
	"bytes"
	"context"
	"encoding/hex"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/trace"

	"github.com/sidecarhq/sidecar/exporters/axiomexporter/internal/queuedlogs"
)

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
	want := stdoutRecords(2, func(i int) string { return `{"level":30,"msg":"line ` + string(rune('0'+i)) + `"}` }, nil, nil)
	enc := logsEncoding{newLogsWeigher(defaultMaxRequestBytes)}
	var bare plog.ProtoMarshaler
	bareProto, _ := bare.MarshalLogs(want) // what the queue wrote before it kept the context
	for name, b := range map[string][]byte{"request protobuf": old, "bare protobuf": bareProto} {
		_, r, err := enc.Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := r.(*logsRequest).ld; !bytes.Equal(protoOf(t, got), protoOf(t, want)) {
			t.Errorf("%s: read %d records that differ from the ones queued", name, got.LogRecordCount())
		}
	}
}

func TestPlainRecordsAreQueuedInTheCompactForm(t *testing.T) {
	enc := logsEncoding{newLogsWeigher(defaultMaxRequestBytes)}
	ld := pinoLines(50)
	b, err := enc.Marshal(context.Background(), enc.w.request(ld))
	if err != nil {
		t.Fatal(err)
	}
	if !queuedlogs.Is(b) {
		t.Fatal("stdin's records were not queued in the compact form")
	}
	_, r, err := enc.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(protoOf(t, r.(*logsRequest).ld), protoOf(t, ld)) {
		t.Error("records read back differ from the ones queued")
	}
}

func TestAContextOrARecordTheCompactFormCannotHoldGoesAsProtobuf(t *testing.T) {
	enc := logsEncoding{newLogsWeigher(defaultMaxRequestBytes)}
	span := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	withSpan := trace.ContextWithSpanContext(context.Background(), span)
	mapBody := pinoLines(3)
	mapBody.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(1).Body().SetEmptyMap().PutStr("msg", "hi")
	for name, c := range map[string]struct {
		ctx context.Context
		ld  plog.Logs
	}{
		"a context with a span": {withSpan, pinoLines(3)},
		"a map body":            {context.Background(), mapBody},
	} {
		b, err := enc.Marshal(c.ctx, enc.w.request(c.ld))
		if err != nil {
			t.Fatal(err)
		}
		if queuedlogs.Is(b) {
			t.Errorf("%s: queued in the compact form", name)
		}
		ctx, r, err := enc.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(protoOf(t, r.(*logsRequest).ld), protoOf(t, c.ld)) {
			t.Errorf("%s: records read back differ from the ones queued", name)
		}
		if got := trace.SpanContextFromContext(ctx); got.IsValid() != (name == "a context with a span") || got.IsValid() && got.TraceID() != span.TraceID() {
			t.Errorf("%s: read back with span context %v", name, got)
		}
	}
}
