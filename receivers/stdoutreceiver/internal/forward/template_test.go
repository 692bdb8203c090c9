package forward

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

// forwardRecords is a Forward-mode frame of the given records, each with
// an EventTime a millisecond after the one before.
func forwardRecords(tag string, t0 time.Time, records ...[]kv) []byte {
	b := msgp.AppendArrayHeader(nil, 2)
	b = msgp.AppendString(b, tag)
	b = msgp.AppendArrayHeader(b, uint32(len(records)))
	for i, fields := range records {
		b = msgp.AppendArrayHeader(b, 2)
		b = appendEventTime(b, t0.Add(time.Duration(i)*time.Millisecond))
		b = appendRecord(b, fields...)
	}
	return b
}

// firelens is a FireLens-shaped record: the line amid its container and
// ecs_* fields, task its ecs_task_arn (after the line).
func firelens(name, line, task string) []kv {
	return []kv{{"container_id", "4f3a2b9c1d7e"}, {"container_name", name}, {"source", "stdout"},
		{"log", line}, {"ecs_cluster", "prod"}, {"ecs_task_arn", task}, {"ecs_task_definition", "api:42"}}
}

// readBothWays reads data whole (records of a shape read before are read
// as that shape) and a byte at a time (the buffer never holds a record
// whole, so every record is read field by field), fails unless both give
// the same lines, counters and outcome, and returns the lines and counters.
func readBothWays(t *testing.T, data []byte) ([]streamtest.Line, Stats) {
	t.Helper()
	whole, wholeStats, wholeErr := readFrames(t, bytes.NewReader(data))
	bytewise, bytewiseStats, bytewiseErr := readFrames(t, iotest.OneByteReader(bytes.NewReader(data)))
	if wholeErr != nil || bytewiseErr != nil {
		t.Fatalf("read whole: %v; read a byte at a time: %v", wholeErr, bytewiseErr)
	}
	if !reflect.DeepEqual(whole, bytewise) || wholeStats != bytewiseStats {
		t.Fatalf("read whole: %+v\n%+v\nread a byte at a time: %+v\n%+v", wholeStats, whole, bytewiseStats, bytewise)
	}
	return whole, wholeStats
}

// Records that share their fields' bytes but for the line are read as the
// first of them was; a record whose other fields differ, before the line
// or after it, or that comes under another tag, gets its own attributes.
func TestShapedRecordsKeepTheirOwnAttributes(t *testing.T) {
	t0 := time.Unix(1767225600, 0)
	const taskA, taskB = "arn:aws:ecs:eu-west-1:1:task/prod/a", "arn:aws:ecs:eu-west-1:1:task/prod/b"
	data := forwardRecords("app", t0,
		firelens("api", "one", taskA), firelens("api", "two", taskA), firelens("api", "three", taskA),
		firelens("api", "four", taskB), // a field after the line differs
		firelens("web", "five", taskB), // one before it
		firelens("api", "six", taskA),  // the first shape again
	)
	data = append(data, forwardRecords("other", t0, firelens("api", "seven", taskA))...)
	// The same entries in a PackedForward frame, plain and gzipped.
	packed := func(gz bool) []byte {
		frame := forwardRecords("packed", t0, firelens("api", "p1", taskA), firelens("api", "p2", taskA), firelens("web", "p3", taskA))
		entries := frame[len(msgp.AppendString(msgp.AppendArrayHeader(nil, 2), "packed"))+1:] // past [tag and the entries' fixarray header
		if gz {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			_, _ = zw.Write(entries)
			_ = zw.Close()
			entries = z.Bytes()
		}
		b := msgp.AppendArrayHeader(nil, 2)
		b = msgp.AppendString(b, "packed")
		return msgp.AppendBytes(b, entries)
	}
	data = append(append(data, packed(false)...), packed(true)...)
	lines, st := readBothWays(t, data)
	want := []struct{ line, name, task, tag string }{
		{"one", "api", taskA, "app"}, {"two", "api", taskA, "app"}, {"three", "api", taskA, "app"},
		{"four", "api", taskB, "app"}, {"five", "web", taskB, "app"}, {"six", "api", taskA, "app"},
		{"seven", "api", taskA, "other"},
		{"p1", "api", taskA, "packed"}, {"p2", "api", taskA, "packed"}, {"p3", "web", taskA, "packed"},
		{"p1", "api", taskA, "packed"}, {"p2", "api", taskA, "packed"}, {"p3", "web", taskA, "packed"},
	}
	if len(lines) != len(want) || st.Records != int64(len(want)) || st.BadRecords != 0 {
		t.Fatalf("got %d lines, %+v; want %d", len(lines), st, len(want))
	}
	at := []int{0, 1, 2, 3, 4, 5, 0, 0, 1, 2, 0, 1, 2} // the entries' times, in ms after t0
	for i, w := range want {
		l := lines[i]
		a := l.Attrs
		if l.Data != w.line || a[AttrContainerName] != w.name || a["ecs_task_arn"] != w.task || a[AttrTag] != w.tag ||
			a[AttrContainerID] != "4f3a2b9c1d7e" || a["ecs_cluster"] != "prod" || a["ecs_task_definition"] != "api:42" ||
			len(a) != 6 || l.Stream != "stdout" || !l.Time.Equal(t0.Add(time.Duration(at[i])*time.Millisecond)) {
			t.Errorf("line %d: %+v, want %+v", i, l, w)
		}
	}
}

// Docker's fluentd driver writes a record from a Go map, so the same
// fields (here with four labels) come in rotations of one order: every
// rotation is one shape, and all of them one batch of one set of
// attributes.
func TestRotatedFieldsAreOneBatch(t *testing.T) {
	fields := []kv{{"container_id", "4f3a2b9c1d7e"}, {"container_name", "/api"}, {"source", "stderr"}, {"log", ""},
		{"env", "prod"}, {"team", "payments"}, {"version", "1.4.2"}, {"region", "eu-west-1"}}
	var data []byte
	var want []string
	for i := range 3 * len(fields) {
		rot := append(append([]kv(nil), fields[i%len(fields):]...), fields[:i%len(fields)]...)
		line := strings.Repeat("x", i) + "!"
		for j := range rot {
			if rot[j][0] == "log" {
				rot[j][1] = line
			}
		}
		data = append(data, messageFrame("docker", 1767225600, "", rot...)...)
		want = append(want, line)
	}
	// Another container's record, whose shape takes the place of one with
	// the batch's attributes (a shape per rotation: maxShapes of them).
	if len(fields) != maxShapes {
		t.Fatalf("%d rotations, want maxShapes (%d)", len(fields), maxShapes)
	}
	data = append(data, messageFrame("docker", 1767225600, "", kv{"container_id", "4f3a2b9c1d7e"},
		kv{"container_name", "/web"}, kv{"source", "stderr"}, kv{"log", "web"})...)
	rec := streamtest.NewRecorder()
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, rec.Sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := newConn(s, bytes.NewReader(data), nil).serve(); err != nil {
		t.Fatal(err)
	}
	lines := rec.Lines()
	if len(lines) != len(want)+1 || rec.Batches() != 2 {
		t.Fatalf("got %d lines in %d batches, want %d in 2", len(lines), rec.Batches(), len(want)+1)
	}
	if web := lines[len(want)]; web.Data != "web" || web.Attrs[AttrContainerName] != "/web" {
		t.Errorf("the other container's line: %+v", web)
	}
	lines = lines[:len(want)]
	for i, l := range lines {
		if l.Data != want[i] || l.Stream != "stderr" || len(l.Attrs) != 7 || l.Attrs[AttrContainerName] != "/api" ||
			l.Attrs[AttrContainerID] != "4f3a2b9c1d7e" || l.Attrs[AttrTag] != "docker" || l.Attrs["team"] != "payments" {
			t.Errorf("line %d: %+v", i, l)
		}
	}
	// A later line of a kept shape, read whole and a byte at a time.
	readBothWays(t, data)
}

// A record of a known shape whose line is over the limit, empty, or not a
// string is read as any record is: cut, kept, or counted as bad.
func TestShapedRecordsWithOtherLines(t *testing.T) {
	t0 := time.Unix(1767225600, 0)
	const task = "arn:aws:ecs:eu-west-1:1:task/prod/a"
	long := strings.Repeat("y", 100) // over readFrames's 64-byte limit
	notString := firelens("api", "", task)
	data := forwardRecords("app", t0, firelens("api", "one", task), firelens("api", long, task),
		firelens("api", "", task), firelens("api", "two", task))
	// The same shape with an integer line: msgp writes the fields in
	// order, so only the line's value differs from the shape's bytes.
	b := msgp.AppendArrayHeader(nil, 2)
	b = msgp.AppendString(b, "app")
	b = msgp.AppendArrayHeader(b, 2)
	for i, line := range []any{int64(42), "three"} {
		b = msgp.AppendArrayHeader(b, 2)
		b = appendEventTime(b, t0)
		b = msgp.AppendMapHeader(b, uint32(len(notString)))
		for _, f := range notString {
			b = msgp.AppendString(b, f[0])
			if f[0] != "log" {
				b = msgp.AppendString(b, f[1])
			} else if i == 0 {
				b = msgp.AppendInt64(b, line.(int64))
			} else {
				b = msgp.AppendString(b, line.(string))
			}
		}
	}
	data = append(data, b...)
	lines, st := readBothWays(t, data)
	var got []string
	for _, l := range lines {
		got = append(got, l.Data)
		if l.Attrs["ecs_task_arn"] != task || l.Attrs[AttrContainerName] != "api" {
			t.Errorf("line %q: attributes %v", l.Data, l.Attrs)
		}
	}
	if len(got) != 5 || got[0] != "one" || !strings.HasPrefix(got[1], "yyyy") || len(got[1]) > 64 || !lines[1].Truncated ||
		got[2] != "" || got[3] != "two" || got[4] != "three" || st.BadRecords != 1 || st.TruncatedLines != 1 {
		t.Fatalf("got %q, %+v", got, st)
	}
}

// A connection keeps shapes of bounded size only: a record with more
// bytes around its line than maxShapeBytes is not kept.
func TestShapesAreBounded(t *testing.T) {
	rec := streamtest.NewRecorder()
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, rec.Sink)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	big := strings.Repeat("v", maxAttrBytes) // a kept attribute, too long for a shape with the others
	for i := range 50 {
		fields := []kv{{"log", "l"}, {"n", strings.Repeat("k", i)}}
		if i%2 == 0 {
			fields = append(fields, kv{"a", big}, kv{"b", big})
		}
		data = append(data, messageFrame("t", 1, "", fields...)...)
	}
	c := newConn(s, bytes.NewReader(data), nil)
	if err := c.serve(); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Lines()); n != 50 {
		t.Fatalf("got %d lines, want 50", n)
	}
	for i := range c.shapes.n {
		sh := &c.shapes.s[i]
		if n := len(sh.head) + len(sh.tail); n > maxShapeBytes {
			t.Errorf("shape %d holds %d bytes, limit %d", i, n, maxShapeBytes)
		}
		if strings.Contains(string(sh.head)+string(sh.tail), big) {
			t.Errorf("shape %d kept a record over the limit", i)
		}
	}
}

// Message frames of a known shape are read at once from the buffer; one
// that asks for an ack, or has another option, is read frame by frame and
// acknowledged. Three-element frames and nil options are read as well.
func TestShapedMessageFrames(t *testing.T) {
	fields := func(line string) []kv {
		return []kv{{"container_id", "4f3a2b9c1d7e"}, {"container_name", "/api"}, {"source", "stdout"}, {"log", line}}
	}
	frame := func(elems uint32, tag string, sec uint32, line string, option func([]byte) []byte) []byte {
		b := msgp.AppendArrayHeader(nil, elems)
		b = msgp.AppendString(b, tag)
		b = appendEventTime(b, time.Unix(int64(sec), 5))
		b = appendRecord(b, fields(line)...)
		if option != nil {
			b = option(b)
		}
		return b
	}
	empty := func(b []byte) []byte { return msgp.AppendMapHeader(b, 0) }
	null := msgp.AppendNil
	withChunk := func(b []byte) []byte { return appendOption(b, "c-1") }
	other := func(b []byte) []byte { return msgp.AppendInt(b, 7) } // junk: no ack asked
	var data []byte
	for _, f := range [][]byte{
		frame(4, "docker.api", 100, "one", empty), frame(4, "docker.api", 101, "two", empty),
		frame(3, "docker.api", 102, "three", nil), frame(4, "docker.api", 103, "four", null),
		frame(4, "docker.api", 104, "five", withChunk), frame(4, "docker.api", 105, "six", other),
		frame(4, "docker.web", 106, "seven", empty),
	} {
		data = append(data, f...)
	}
	lines, st := readBothWays(t, data)
	want := []string{"one", "two", "three", "four", "five", "six", "seven"}
	if len(lines) != len(want) || st.BadRecords != 0 {
		t.Fatalf("got %d lines, %+v", len(lines), st)
	}
	for i, l := range lines {
		tag := "docker.api"
		if i == 6 {
			tag = "docker.web"
		}
		if l.Data != want[i] || !l.Time.Equal(time.Unix(int64(100+i), 5)) || l.Attrs[AttrTag] != tag ||
			l.Attrs[AttrContainerName] != "/api" || l.Stream != "stdout" {
			t.Errorf("line %d: %+v", i, l)
		}
	}
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, streamtest.NewRecorder().Sink)
	if err != nil {
		t.Fatal(err)
	}
	var acks bytes.Buffer
	if err := newConn(s, bytes.NewReader(data), &acks).serve(); err != nil {
		t.Fatal(err)
	}
	if got := readAck(t, msgp.NewReader(&acks)); got != "c-1" {
		t.Fatalf("ack %q, want c-1", got)
	}
}
