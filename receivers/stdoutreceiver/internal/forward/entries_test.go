package forward

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

// chunkEntries is a Fluent Bit chunk: classic [time, record] entries with
// EventTime and integer times, the v2 [[time, metadata], record] form, a
// record with container fields, docker extras and an app's JSON line, and
// a docker partial message in two pieces.
func chunkEntries(t0 time.Time) []byte {
	b := entries(t0, `{"level":30,"msg":"classic"}`, "plain text")
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendInt64(b, t0.Unix())
	b = appendRecord(b, kv{"log", "integer time"}, kv{"source", "stderr"}, kv{"container_name", "/app"}, kv{"ecs_cluster", "prod"})
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendArrayHeader(b, 2)
	b = appendEventTime(b, t0.Add(time.Second))
	b = msgp.AppendMapHeader(b, 1)
	b = msgp.AppendString(b, "otlp")
	b = msgp.AppendMapHeader(b, 0)
	b = appendRecord(b, kv{"log", "v2 form"}, kv{"container_name", "/app"}, kv{"ecs_cluster", "prod"})
	for i, piece := range []string{"part one, ", "part two"} {
		b = msgp.AppendArrayHeader(b, 2)
		b = appendEventTime(b, t0.Add(2*time.Second))
		last := "false"
		if i == 1 {
			last = "true"
		}
		b = appendRecord(b, kv{"log", piece}, kv{"partial_message", "true"}, kv{"partial_id", "p1"}, kv{"partial_last", last})
	}
	return b
}

// A chunk read by Entries gives the lines a connection gives for the same
// entries in a PackedForward frame.
func TestEntriesReadLikeAConnection(t *testing.T) {
	t0 := time.Unix(1767225600, 5e8)
	chunk := chunkEntries(t0)

	viaConn := streamtest.NewRecorder()
	_, addr, _ := startServer(t, false, 0, viaConn.Sink)
	c := dial(t, "tcp", addr)
	frame := msgp.AppendArrayHeader(nil, 3)
	frame = msgp.AppendString(frame, "app.logs")
	frame = msgp.AppendBytes(frame, chunk)
	frame = appendOption(frame, "c1")
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	if got := readAck(t, msgp.NewReader(c)); got != "c1" {
		t.Fatalf("ack %q", got)
	}

	viaEntries := streamtest.NewRecorder()
	e := NewEntries(Settings{}, viaEntries.Sink)
	for range 2 { // a reader is reused from chunk to chunk
		if err := e.Read("app.logs", chunk); err != nil {
			t.Fatal(err)
		}
	}
	want := viaConn.Lines()
	got := viaEntries.Lines()
	if len(want) != 5 || len(got) != 10 {
		t.Fatalf("connection gave %d lines, entries %d (want 5 and twice 5)", len(want), len(got))
	}
	if !reflect.DeepEqual(got[:5], want) || !reflect.DeepEqual(got[5:], want) {
		t.Errorf("entries gave\n%+v\nconnection gave\n%+v", got, want)
	}
	if got[3].Data != "v2 form" || !got[3].Time.Equal(t0.Add(time.Second)) || got[4].Data != "part one, part two" || got[2].Attrs["ecs_cluster"] != "prod" {
		t.Errorf("lines %+v", got)
	}
	if st := e.Stats(); st.Records != 10 || st.BadRecords != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A partial message whose last piece is in the next chunk is delivered at
// the end of its chunk, marked truncated: nothing stays behind.
func TestEntriesDeliverAnIncompletePartialAtTheEnd(t *testing.T) {
	var b []byte
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendInt64(b, 1767225600)
	b = appendRecord(b, kv{"log", "first piece"}, kv{"partial_message", "true"}, kv{"partial_id", "p9"})
	rec := streamtest.NewRecorder()
	if err := NewEntries(Settings{}, rec.Sink).Read("t", b); err != nil {
		t.Fatal(err)
	}
	if l := rec.Lines(); len(l) != 1 || l[0].Data != "first piece" || !l[0].Truncated {
		t.Errorf("lines %+v", l)
	}
}

func TestEntriesStopAtAMalformedEntry(t *testing.T) {
	b := entries(time.Unix(1767225600, 0), "good")
	b = append(b, 0x92, 0xc1) // an array of two whose first byte is never-used 0xc1
	rec := streamtest.NewRecorder()
	err := NewEntries(Settings{}, rec.Sink).Read("t", b)
	if !errors.Is(err, errBadFrame) {
		t.Fatalf("err = %v, want a bad frame", err)
	}
	if l := rec.Lines(); len(l) != 1 || l[0].Data != "good" {
		t.Errorf("the records before the bad entry: %+v", l)
	}
}

// Records whose fields come in the same order with the same bytes share
// the batch without their attributes being compared one by one; a record
// laid out the same way but with another value, or the same fields in
// another order, is still told apart by its attributes (a new batch only
// when they differ).
func TestRecordsOfTheSameLayoutBatchByTheirAttributes(t *testing.T) {
	var b []byte
	entry := func(fields ...kv) {
		b = msgp.AppendArrayHeader(b, 2)
		b = msgp.AppendInt64(b, 1767225600)
		b = appendRecord(b, fields...)
	}
	entry(kv{"container_id", "aaaa"}, kv{"ecs_cluster", "prod"}, kv{"log", "1"})
	first := len(b)
	entry(kv{"container_id", "aaaa"}, kv{"ecs_cluster", "prod"}, kv{"log", "2"})
	entry(kv{"container_id", "bbbb"}, kv{"ecs_cluster", "prod"}, kv{"log", "3"}) // same layout, another id
	entry(kv{"ecs_cluster", "prod"}, kv{"log", "4"}, kv{"container_id", "bbbb"}) // another order, same attributes
	entry(kv{"ecs_cluster", "prod"}, kv{"log", "5"}, kv{"container_id", "bbbb"})
	entry(kv{"container_id", "bbbb"}, kv{"ecs_cluster", "test"}, kv{"log", "6"}) // an extra's value
	entry(kv{"container_id", "bbbb"}, kv{"ecs_region", "test"}, kv{"log", "7"})  // an extra's key
	entry(kv{"container_id", "bbbb"}, kv{"ecs_region", "test"}, kv{"log", "8"}, kv{"source", "stderr"})
	rec := streamtest.NewRecorder()
	e := NewEntries(Settings{}, rec.Sink)
	if err := e.Read("t", b); err != nil {
		t.Fatal(err)
	}
	if err := e.Read("u", b[:first]); err != nil { // the first record, under another tag
		t.Fatal(err)
	}
	want := []map[string]string{
		{"container_id": "aaaa", "ecs_cluster": "prod", "fluent.tag": "t"},
		{"container_id": "aaaa", "ecs_cluster": "prod", "fluent.tag": "t"},
		{"container_id": "bbbb", "ecs_cluster": "prod", "fluent.tag": "t"},
		{"container_id": "bbbb", "ecs_cluster": "prod", "fluent.tag": "t"},
		{"container_id": "bbbb", "ecs_cluster": "prod", "fluent.tag": "t"},
		{"container_id": "bbbb", "ecs_cluster": "test", "fluent.tag": "t"},
		{"container_id": "bbbb", "ecs_region": "test", "fluent.tag": "t"},
		{"container_id": "bbbb", "ecs_region": "test", "fluent.tag": "t"},
		{"container_id": "aaaa", "ecs_cluster": "prod", "fluent.tag": "u"},
	}
	lines := rec.Lines()
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(lines), len(want), lines)
	}
	for i, l := range lines {
		if !reflect.DeepEqual(l.Attrs, want[i]) || l.Data != fmt.Sprint(i%8+1) {
			t.Errorf("line %d: %q with %v, want %v", i, l.Data, l.Attrs, want[i])
		}
	}
	if lines[7].Stream != "stderr" {
		t.Errorf("line 8's stream %q", lines[7].Stream)
	}
	// aaaa | bbbb (3-5) | test (6) | ecs_region (7-8) | tag u
	if got := rec.Batches(); got != 5 {
		t.Errorf("%d batches, want 5", got)
	}
}
