package forward

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluent/fluent-logger-golang/fluent"
	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

const containerID = "4e4a1ec9d0c57bf1e5ac2f0e3a63e8d8f1c2d3b4a5968778695a4b3c2d1e0f9a"

// dockerRecord is what docker's fluentd driver posts for one line.
func dockerRecord(name, source, line string) map[string]string {
	return map[string]string{"container_id": containerID, "container_name": name, "source": source, "log": line}
}

func TestFluentLoggerTCPSyncWithAck(t *testing.T) {
	col := streamtest.NewRecorder()
	_, addr, _ := startServer(t, false, 0, col.Sink)
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	logger, err := fluent.New(fluent.Config{FluentHost: host, FluentPort: p, RequestAck: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer logger.Close()
	t0 := time.Unix(1767225600, 0)
	for i := range 50 {
		src := "stdout"
		if i%10 == 9 {
			src = "stderr"
		}
		// Post returns only after the server's ack for this message.
		if err := logger.PostWithTime("app-firelens-1234", t0.Add(time.Duration(i)*time.Second),
			dockerRecord("/ecs-app-1", src, fmt.Sprintf(`{"level":30,"time":1767225600000,"msg":"line %d"}`, i))); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
	}
	// Every Post got its ack, so every record was accepted by the Sink already.
	got := col.Lines()
	if len(got) != 50 {
		t.Fatalf("got %d lines after 50 acked posts", len(got))
	}
	for i, l := range got {
		if want := fmt.Sprintf(`{"level":30,"time":1767225600000,"msg":"line %d"}`, i); l.Data != want {
			t.Fatalf("line %d = %q, want %q", i, l.Data, want)
		}
		if !l.Time.Equal(t0.Add(time.Duration(i) * time.Second)) {
			t.Errorf("line %d time %v", i, l.Time)
		}
		wantStream := "stdout"
		if i%10 == 9 {
			wantStream = "stderr"
		}
		if l.Stream != wantStream {
			t.Errorf("line %d stream %q, want %q", i, l.Stream, wantStream)
		}
		wantAttrs := map[string]string{"container_name": "/ecs-app-1", "container_id": containerID, "fluent.tag": "app-firelens-1234"}
		if fmt.Sprint(l.Attrs) != fmt.Sprint(wantAttrs) {
			t.Errorf("line %d attrs %v", i, l.Attrs)
		}
	}
}

func TestFluentLoggerUnixAsyncSubSecond(t *testing.T) {
	col := streamtest.NewRecorder()
	_, _, sock := startServer(t, true, 0, col.Sink)
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != os.FileMode(DefaultSocketMode) {
		t.Errorf("socket mode %v, want %v", fi.Mode().Perm(), os.FileMode(DefaultSocketMode))
	}
	var ackErrs atomic.Int64
	logger, err := fluent.New(fluent.Config{
		FluentNetwork: "unix", FluentSocketPath: sock,
		Async: true, RequestAck: true, SubSecondPrecision: true,
		AsyncResultCallback: func(_ []byte, err error) {
			if err != nil {
				ackErrs.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1767225600, 123456789)
	const n = 500
	for i := range n {
		if err := logger.PostWithTime("web", t0.Add(time.Duration(i)*time.Microsecond),
			dockerRecord("/web", "stdout", "plain text line "+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	got := col.Wait(t, n)
	if err := logger.Close(); err != nil { // waits for the pending acks
		t.Fatal(err)
	}
	if ackErrs.Load() != 0 {
		t.Fatalf("%d async writes failed (no ack?)", ackErrs.Load())
	}
	if len(got) != n {
		t.Fatalf("got %d lines, want %d", len(got), n)
	}
	for i, l := range got {
		if l.Data != "plain text line "+strconv.Itoa(i) {
			t.Fatalf("line %d = %q (order or loss)", i, l.Data)
		}
		if want := t0.Add(time.Duration(i) * time.Microsecond); !l.Time.Equal(want) {
			t.Fatalf("line %d time %v, want %v (EventTime nanoseconds)", i, l.Time, want)
		}
	}
}

func TestAckOnlyAfterSinkAccepted(t *testing.T) {
	col := streamtest.NewRecorder()
	release := col.Block()
	_, addr, _ := startServer(t, false, 0, col.Sink)
	c := dial(t, "tcp", addr)
	if _, err := c.Write(messageFrame("app", 1767225600, "Y2h1bmstMQ==", kv{"log", "hello"})); err != nil {
		t.Fatal(err)
	}
	<-col.Entered() // the Sink holds the batch
	var released atomic.Bool
	ackc := make(chan string, 1)
	go func() {
		ackc <- readAck(t, msgp.NewReader(c))
		if !released.Load() {
			t.Error("ack arrived before the Sink accepted the batch")
		}
	}()
	time.Sleep(100 * time.Millisecond) // give a premature ack the chance to show
	released.Store(true)
	release()
	if got := <-ackc; got != "Y2h1bmstMQ==" {
		t.Fatalf("ack %q", got)
	}
	if l := col.Lines(); len(l) != 1 || l[0].Data != "hello" {
		t.Fatalf("lines %v", l)
	}
}

func TestAllFourModes(t *testing.T) {
	col := streamtest.NewRecorder()
	_, addr, _ := startServer(t, false, 0, col.Sink)
	c := dial(t, "tcp", addr)
	r := msgp.NewReader(c)
	t0 := time.Unix(1767225600, 5e8)

	send := func(frame []byte, chunk string) {
		t.Helper()
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		if got := readAck(t, r); got != chunk {
			t.Fatalf("ack %q, want %q", got, chunk)
		}
	}
	send(messageFrame("m", 1767225600, "c1", kv{"log", "message mode"}), "c1")
	send(forwardFrame("f", t0, "c2", "forward 1", "forward 2", "forward 3"), "c2")
	send(packedFrame("p", t0, "c3", "packed 1", "packed 2"), "c3")
	send(compressedFrame("z", t0, "c4", "gzip 1", "gzip 2", "gzip 3"), "c4")

	got := col.Lines()
	var data, tags []string
	for _, l := range got {
		data = append(data, l.Data)
		tags = append(tags, l.Attrs["fluent.tag"])
	}
	want := "message mode|forward 1|forward 2|forward 3|packed 1|packed 2|gzip 1|gzip 2|gzip 3"
	if strings.Join(data, "|") != want {
		t.Fatalf("lines %q\nwant  %q", strings.Join(data, "|"), want)
	}
	if strings.Join(tags, ",") != "m,f,f,f,p,p,z,z,z" {
		t.Fatalf("tags %v", tags)
	}
	if !got[2].Time.Equal(t0.Add(time.Millisecond)) || !got[8].Time.Equal(t0.Add(2*time.Millisecond)) {
		t.Fatalf("EventTime not decoded: %v %v", got[2].Time, got[8].Time)
	}
	if !got[0].Time.Equal(time.Unix(1767225600, 0)) {
		t.Fatalf("integer time: %v", got[0].Time)
	}
}

func TestTimeFormsHeartbeatAndBinLog(t *testing.T) {
	col := streamtest.NewRecorder()
	_, addr, _ := startServer(t, false, 0, col.Sink)
	c := dial(t, "tcp", addr)

	var b []byte
	b = msgp.AppendNil(b) // heartbeat on the stream
	// Forward mode with a float time and a v1.5 [EventTime, metadata] entry.
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendString(b, "t")
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendFloat64(b, 1767225600.25)
	b = appendRecord(b, kv{"log", "float time"})
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendArrayHeader(b, 2)
	b = appendEventTime(b, time.Unix(1767225601, 7))
	b = msgp.AppendMapHeader(b, 1)
	b = msgp.AppendString(b, "otlp")
	b = msgp.AppendMapHeader(b, 0)
	b = appendRecord(b, kv{"log", "v1.5 entry"})
	// Message mode, no option, log as bin, "message" ignored when "log" is there.
	b = msgp.AppendArrayHeader(b, 3)
	b = msgp.AppendString(b, "t")
	b = msgp.AppendUint64(b, 1767225602)
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(b, "message")
	b = msgp.AppendString(b, "not this one")
	b = msgp.AppendString(b, "log")
	b = msgp.AppendBytes(b, []byte("bin log"))
	// Only "message".
	b = append(b, messageFrame("t", 1767225603, "", kv{"message", "from message"}, kv{"level", "info"})...)
	// "log" first, then "message".
	b = append(b, messageFrame("t", 1767225604, "", kv{"log", "log wins"}, kv{"message", "ignored"})...)
	// EventTime written as ext8 with length 8 rather than fixext8.
	b = msgp.AppendArrayHeader(b, 3)
	b = msgp.AppendString(b, "t")
	b = append(b, 0xc7, 8, 0)
	b = binary.BigEndian.AppendUint32(b, 1767225605)
	b = binary.BigEndian.AppendUint32(b, 9)
	b = appendRecord(b, kv{"log", "ext8 time"})
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	got := col.Wait(t, 6)
	want := []struct {
		data string
		t    time.Time
	}{
		{"float time", time.Unix(1767225600, 25e7)},
		{"v1.5 entry", time.Unix(1767225601, 7)},
		{"bin log", time.Unix(1767225602, 0)},
		{"from message", time.Unix(1767225603, 0)},
		{"log wins", time.Unix(1767225604, 0)},
		{"ext8 time", time.Unix(1767225605, 9)},
	}
	for i, w := range want {
		if got[i].Data != w.data || !got[i].Time.Equal(w.t) {
			t.Errorf("line %d = %q at %v, want %q at %v", i, got[i].Data, got[i].Time, w.data, w.t)
		}
	}
	if got[3].Attrs["level"] != "info" {
		t.Errorf("extra string field not kept as attribute: %v", got[3].Attrs)
	}
}

// partialRecord is one piece of a line docker split at 16 KiB.
func partialRecord(id string, ordinal int, last bool, piece string) []kv {
	return []kv{
		{"partial_last", strconv.FormatBool(last)},
		{"container_id", containerID},
		{"log", piece},
		{"partial_message", "true"},
		{"partial_ordinal", strconv.Itoa(ordinal)},
		{"container_name", "/app"},
		{"partial_id", id},
		{"source", "stdout"},
	}
}

func TestPartialMessagesJoined(t *testing.T) {
	col := streamtest.NewRecorder()
	_, addr, _ := startServer(t, false, 40000, col.Sink)
	c := dial(t, "tcp", addr)
	r := msgp.NewReader(c)
	a := strings.Repeat("a", 16384)
	b := strings.Repeat("b", 16384)
	var frames [][]byte
	// A 16 KiB + 16 KiB + 5 byte line; an ordinary line from another
	// container between its pieces; then a line too long for the limit.
	frames = append(frames, messageFrame("app", 1767225600, "p1", partialRecord("id1", 1, false, a)...))
	frames = append(frames, messageFrame("other", 1767225601, "o1", kv{"log", "between"}, kv{"container_name", "/other"}))
	frames = append(frames, messageFrame("app", 1767225600, "p2", partialRecord("id1", 2, false, b)...))
	frames = append(frames, messageFrame("app", 1767225600, "p3", partialRecord("id1", 3, true, "c-end")...))
	for i := 1; i <= 3; i++ {
		frames = append(frames, messageFrame("app", 1767225605, "q"+strconv.Itoa(i), partialRecord("id2", i, i == 3, a)...))
	}
	for _, f := range frames {
		if _, err := c.Write(f); err != nil {
			t.Fatal(err)
		}
		readAck(t, r) // docker waits for each ack before the next piece
	}
	got := col.Lines()
	if len(got) != 3 {
		t.Fatalf("got %d lines, want 3", len(got))
	}
	if got[0].Data != "between" || got[0].Attrs["container_name"] != "/other" {
		t.Errorf("line 0 = %.20q %v", got[0].Data, got[0].Attrs)
	}
	if got[1].Data != a+b+"c-end" || got[1].Truncated || got[1].Attrs["container_name"] != "/app" ||
		!got[1].Time.Equal(time.Unix(1767225600, 0)) || got[1].Stream != "stdout" {
		t.Errorf("joined line: len %d truncated %v attrs %v time %v", len(got[1].Data), got[1].Truncated, got[1].Attrs, got[1].Time)
	}
	if len(got[2].Data) != 40000 || !got[2].Truncated || got[2].Data != (a + a + a)[:40000] {
		t.Errorf("over-long joined line: len %d truncated %v", len(got[2].Data), got[2].Truncated)
	}
	for _, l := range got {
		if _, ok := l.Attrs["partial_id"]; ok {
			t.Errorf("partial_* fields leaked into attributes: %v", l.Attrs)
		}
	}
}

func TestPartialDeliveredWhenConnectionEnds(t *testing.T) {
	col := streamtest.NewRecorder()
	srv, addr, _ := startServer(t, false, 0, col.Sink)
	c := dial(t, "tcp", addr)
	if _, err := c.Write(messageFrame("app", 1767225600, "", partialRecord("x", 1, false, "first half")...)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	got := col.Wait(t, 1)
	if got[0].Data != "first half" || !got[0].Truncated {
		t.Fatalf("got %+v", got[0])
	}
	if srv.Stats().TruncatedLines != 1 {
		t.Fatalf("stats %+v", srv.Stats())
	}
}

func TestHugeLogTruncated(t *testing.T) {
	col := streamtest.NewRecorder()
	srv, addr, _ := startServer(t, false, 1000, col.Sink)
	c := dial(t, "tcp", addr)
	huge := strings.Repeat("x", 5<<20)
	var b []byte
	b = append(b, forwardFrame("t", time.Unix(1767225600, 0), "", huge, "after")...)
	b = append(b, messageFrame("t", 1767225600, "", kv{"log", huge})...)
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	got := col.Wait(t, 3)
	if len(got[0].Data) != 1000 || !got[0].Truncated || got[1].Data != "after" || got[1].Truncated ||
		len(got[2].Data) != 1000 || !got[2].Truncated {
		t.Fatalf("lines: %d/%v %q/%v %d/%v", len(got[0].Data), got[0].Truncated, got[1].Data, got[1].Truncated, len(got[2].Data), got[2].Truncated)
	}
	// Records are counted once the Sink has returned, after the recorder
	// has the lines: the connection's goroutine is done counting only when
	// Shutdown has waited for it.
	c.Close()
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := srv.Stats(); s.TruncatedLines != 2 || s.Records != 3 {
		t.Fatalf("stats %+v", s)
	}
}

func TestMalformedFrameClosesOnlyThatConnection(t *testing.T) {
	col := streamtest.NewRecorder()
	srv, addr, _ := startServer(t, false, 0, col.Sink)
	good := dial(t, "tcp", addr)
	bad := dial(t, "tcp", addr)
	goodR := msgp.NewReader(good)

	// The bad client first sends a valid frame, then garbage.
	frame := messageFrame("bad", 1767225600, "ok-before", kv{"log", "before garbage"})
	if _, err := bad.Write(append(frame, 0xc1, 0x00, 0x01)); err != nil { // 0xc1 is never valid msgpack
		t.Fatal(err)
	}
	badR := msgp.NewReader(bad)
	if got := readAck(t, badR); got != "ok-before" {
		t.Fatalf("ack %q", got)
	}
	if _, err := badR.ReadMapHeader(); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("bad connection not closed: %v", err)
	}
	for i := range 3 {
		chunk := "g" + strconv.Itoa(i)
		if _, err := good.Write(messageFrame("good", 1767225600, chunk, kv{"log", "good " + strconv.Itoa(i)})); err != nil {
			t.Fatal(err)
		}
		if got := readAck(t, goodR); got != chunk {
			t.Fatalf("ack %q", got)
		}
	}
	got := col.Lines()
	if len(got) != 4 || got[0].Data != "before garbage" || got[3].Data != "good 2" {
		t.Fatalf("lines %v", got)
	}
	if s := srv.Stats(); s.BadFrames != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

func TestMalformedFrames(t *testing.T) {
	cases := map[string][]byte{
		"not an array":       msgp.AppendString(nil, "hello"),
		"array of 5":         msgp.AppendArrayHeader(nil, 5),
		"tag not a string":   append(msgp.AppendArrayHeader(nil, 3), 0x01, 0x02, 0x80),
		"message w/o record": append(msgp.AppendString(msgp.AppendArrayHeader(nil, 2), "t"), 0x01),
		"cut short":          messageFrame("t", 1, "", kv{"log", "x"})[:10],
		"packed garbage":     append(msgp.AppendBytes(msgp.AppendString(msgp.AppendArrayHeader(nil, 2), "t"), []byte{0x92, 0xc1, 0xc1}), 0x80),
		"bad gzip":           msgp.AppendBytes(msgp.AppendString(msgp.AppendArrayHeader(nil, 2), "t"), []byte{0x1f, 0x8b, 0, 0, 0}),
		// [tag, payload] with no option, cut right after the first entry.
		"packed cut short": msgp.AppendBytes(msgp.AppendString(msgp.AppendArrayHeader(nil, 2), "t"),
			entries(time.Unix(1, 0), "a", "b"))[:5+len(entries(time.Unix(1, 0), "a"))],
		"huge tag": msgp.AppendString(msgp.AppendArrayHeader(nil, 2), strings.Repeat("t", 2000)),
	}
	// [tag, [], {"chunk": 5}]
	f := msgp.AppendArrayHeader(nil, 3)
	f = msgp.AppendString(f, "t")
	f = msgp.AppendArrayHeader(f, 0)
	f = msgp.AppendMapHeader(f, 1)
	f = msgp.AppendString(f, "chunk")
	cases["chunk is a number"] = msgp.AppendInt(f, 5)

	for name, frame := range cases {
		t.Run(name, func(t *testing.T) {
			col := streamtest.NewRecorder()
			srv, addr, _ := startServer(t, false, 0, col.Sink)
			c := dial(t, "tcp", addr)
			if _, err := c.Write(frame); err != nil {
				t.Fatal(err)
			}
			if name == "cut short" || name == "packed cut short" {
				c.(*net.TCPConn).CloseWrite()
			}
			if _, err := io.ReadAll(c); err != nil && !isReset(err) { // returns when the server closes
				t.Fatal(err)
			}
			if s := srv.Stats(); s.BadFrames != 1 {
				t.Fatalf("stats %+v", s)
			}
		})
	}
}

func TestBadRecordsSkippedAndCounted(t *testing.T) {
	col := streamtest.NewRecorder()
	srv, addr, _ := startServer(t, false, 0, col.Sink)
	c := dial(t, "tcp", addr)
	b := msgp.AppendArrayHeader(nil, 3)
	b = msgp.AppendString(b, "t")
	b = msgp.AppendArrayHeader(b, 6)
	b = append(b, entries(time.Unix(1767225600, 0), "first")...)
	b = msgp.AppendArrayHeader(b, 2) // record is not a map
	b = msgp.AppendInt(b, 1)
	b = msgp.AppendString(b, "not a map")
	b = msgp.AppendArrayHeader(b, 3) // entry of three
	b = msgp.AppendInt(b, 1)
	b = msgp.AppendMapHeader(b, 0)
	b = msgp.AppendNil(b)
	b = msgp.AppendArrayHeader(b, 2) // time is a string
	b = msgp.AppendString(b, "yesterday")
	b = appendRecord(b, kv{"log", "x"})
	b = msgp.AppendArrayHeader(b, 2) // no log, no message; log is a number
	b = msgp.AppendInt(b, 1)
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(b, "log")
	b = msgp.AppendInt(b, 7)
	b = msgp.AppendString(b, "nested")
	b = msgp.AppendMapHeader(b, 1)
	b = msgp.AppendString(b, "a")
	b = msgp.AppendArrayHeader(b, 0)
	b = append(b, entries(time.Unix(1767225600, 0), "last")...)
	b = appendOption(b, "bad-records")
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	if got := readAck(t, msgp.NewReader(c)); got != "bad-records" {
		t.Fatalf("ack %q", got)
	}
	got := col.Lines()
	if len(got) != 2 || got[0].Data != "first" || got[1].Data != "last" {
		t.Fatalf("lines %v", got)
	}
	if s := srv.Stats(); s.BadRecords != 4 || s.BadFrames != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestBatchesGroupEqualAttributes(t *testing.T) {
	col := streamtest.NewRecorder()
	_, addr, _ := startServer(t, false, 0, col.Sink)
	c := dial(t, "tcp", addr)
	var b []byte
	for i := range 6 {
		name := "/a"
		if i >= 3 {
			name = "/b"
		}
		// Field order varies as it does in docker's Go map encoding.
		fields := []kv{{"container_name", name}, {"log", strconv.Itoa(i)}, {"env", "prod"}, {"app", "x"}}
		if i%2 == 1 {
			fields = []kv{{"app", "x"}, {"log", strconv.Itoa(i)}, {"env", "prod"}, {"container_name", name}}
		}
		b = append(b, messageFrame("tag", 1767225600, "", fields...)...)
	}
	b = append(b, messageFrame("tag", 1767225600, "end", kv{"log", "6"}, kv{"container_name", "/b"}, kv{"app", "x"}, kv{"env", "prod"})...)
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	readAck(t, msgp.NewReader(c))
	got := col.Lines()
	if len(got) != 7 {
		t.Fatalf("got %d lines", len(got))
	}
	for i, l := range got {
		want := map[string]string{"container_name": "/a", "fluent.tag": "tag", "env": "prod", "app": "x"}
		if i >= 3 {
			want["container_name"] = "/b"
		}
		if l.Data != strconv.Itoa(i) || fmt.Sprint(l.Attrs) != fmt.Sprint(want) {
			t.Errorf("line %d %q attrs %v", i, l.Data, l.Attrs)
		}
	}
	batches := col.Batches()
	if batches != 2 { // all 7 frames were written at once: /a x3, /b x4
		t.Errorf("%d batches, want 2", batches)
	}
}

// A Sink that blocks stops the server reading: the client's writes block
// once the socket buffers are full, and nothing is lost when it resumes.
func TestBlockedSinkBackpressure(t *testing.T) {
	col := streamtest.NewRecorder()
	release := col.Block()
	_, addr, _ := startServer(t, false, 0, col.Sink)
	c := dial(t, "tcp", addr)
	line := strings.Repeat("p", 300)
	n := 0
	var frame []byte
	var rest []byte
	for written := 0; ; n++ {
		frame = messageFrame("t", 1767225600, "", kv{"log", fmt.Sprintf("%08d %s", n, line)})
		_ = c.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
		k, err := c.Write(frame)
		written += k
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal(err)
			}
			rest = frame[k:]
			break
		}
		if written > 512<<20 {
			t.Fatal("wrote 512 MiB into a server whose Sink is blocked: it is not applying backpressure")
		}
	}
	n++ // the frame cut by the deadline is completed below
	if len(col.Lines()) != 0 {
		t.Fatal("lines accepted while the Sink was blocked")
	}
	release()
	_ = c.SetWriteDeadline(time.Time{})
	if _, err := c.Write(rest); err != nil {
		t.Fatal(err)
	}
	got := col.Wait(t, n)
	if len(got) != n {
		t.Fatalf("got %d lines, want %d", len(got), n)
	}
	for i, l := range got {
		if !strings.HasPrefix(l.Data, fmt.Sprintf("%08d ", i)) {
			t.Fatalf("line %d = %.12q: lost, duplicated or reordered", i, l.Data)
		}
	}
	t.Logf("%d frames (%d KiB) were in flight while the Sink was blocked", n, n*len(frame)>>10)
}

func TestShutdownWithBlockedSinkSendsNoAck(t *testing.T) {
	col := streamtest.NewRecorder()
	col.Block() // never released
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, col.Sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := dial(t, "tcp", s.Addrs()[0].String())
	if _, err := c.Write(messageFrame("t", 1, "never", kv{"log", "x"})); err != nil {
		t.Fatal(err)
	}
	<-col.Entered()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown: %v", err)
	}
	rest, err := io.ReadAll(c)
	if len(rest) != 0 {
		t.Fatalf("got %q after a refused batch, want no ack", rest)
	}
	if err != nil && !isReset(err) {
		t.Fatal(err)
	}
}

func TestShutdownDeliversWhatWasSent(t *testing.T) {
	col := streamtest.NewRecorder()
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, col.Sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := dial(t, "tcp", s.Addrs()[0].String())
	r := msgp.NewReader(c)
	if _, err := c.Write(messageFrame("t", 1, "a", kv{"log", "acked"})); err != nil {
		t.Fatal(err)
	}
	readAck(t, r)
	// The client keeps its connection open, as docker does.
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadMapHeader(); err == nil {
		t.Fatal("connection still open after shutdown")
	}
	if l := col.Lines(); len(l) != 1 || l[0].Data != "acked" {
		t.Fatalf("lines %v", l)
	}
}

func TestUnixSocketLifecycle(t *testing.T) {
	dir := shortTempDir(t)
	sock := dir + "/run/fluent.sock" // parent directory does not exist yet
	col := streamtest.NewRecorder()

	// A stale socket from a crashed run is replaced.
	if err := os.MkdirAll(dir+"/run", 0o755); err != nil {
		t.Fatal(err)
	}
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	s, err := New(Config{UnixSocket: sock}, Settings{}, col.Sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("start over a stale socket: %v", err)
	}
	// A second server must not steal a live socket.
	s2, _ := New(Config{UnixSocket: sock}, Settings{}, col.Sink)
	if err := s2.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second server on a live socket: %v", err)
	}
	c := dial(t, "unix", sock)
	if _, err := c.Write(messageFrame("t", 1, "u", kv{"log", "over unix"})); err != nil {
		t.Fatal(err)
	}
	readAck(t, msgp.NewReader(c))
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind after shutdown: %v", err)
	}

	// A regular file at the path is not deleted.
	if err := os.WriteFile(sock, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	s3, _ := New(Config{UnixSocket: sock}, Settings{}, col.Sink)
	if err := s3.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("start over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(sock); !bytes.Equal(b, []byte("keep me")) {
		t.Fatal("regular file was touched")
	}
}

func TestStartFailsWhenPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s, err := New(Config{Endpoint: ln.Addr().String()}, Settings{}, streamtest.NewRecorder().Sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err == nil {
		t.Fatal("want a bind error")
	}
}

func TestConfigValidate(t *testing.T) {
	def := NewDefaultConfig()
	if def.Endpoint != "127.0.0.1:24224" || def.UnixSocket != "" {
		t.Fatalf("default %+v", def)
	}
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Config{{}, {Endpoint: "24224"}, {UnixSocket: "fluent.sock"}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
	if err := (&Config{UnixSocket: "/var/run/fluent.sock"}).Validate(); err != nil {
		t.Error(err)
	}
}

// Repeated keys must not make a record's attribute buffer grow without
// bound: a hostile record repeating container_name is still one line.
func TestRepeatedKeysBounded(t *testing.T) {
	col := streamtest.NewRecorder()
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{}, col.Sink)
	if err != nil {
		t.Fatal(err)
	}
	const repeats = 1000
	b := msgp.AppendArrayHeader(nil, 3)
	b = msgp.AppendString(b, "t")
	b = msgp.AppendInt(b, 1)
	b = msgp.AppendMapHeader(b, repeats+1)
	for range repeats {
		b = msgp.AppendString(b, "container_name")
		b = msgp.AppendString(b, strings.Repeat("n", 4000))
	}
	b = msgp.AppendString(b, "log")
	b = msgp.AppendString(b, "still here")
	c := newConn(s, bytes.NewReader(b), io.Discard)
	if err := c.serve(); err != nil {
		t.Fatal(err)
	}
	if got := col.Lines(); len(got) != 1 || got[0].Data != "still here" {
		t.Fatalf("lines %v", got)
	}
	if cap(c.rec.scratch) > 2*maxScratch {
		t.Fatalf("record scratch grew to %d bytes", cap(c.rec.scratch))
	}
}

// A JSON line over the limit, in one record or joined from docker's partial
// messages, keeps its members after the cut (stream.Skimmer, as on stdin):
// only the value being written at the limit loses its rest.
func TestHugeJSONLogKeepsItsLaterMembers(t *testing.T) {
	const limit = 1000
	col := streamtest.NewRecorder()
	srv, addr, _ := startServer(t, false, limit, col.Sink)
	c := dial(t, "tcp", addr)
	r := msgp.NewReader(c)
	prefix := `{"level":50,"stack":"`
	line := prefix + strings.Repeat("x", 3<<20) + `","msg":"boom","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`
	want := prefix + strings.Repeat("x", limit-len(prefix)) + `","msg":"boom","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`
	if _, err := c.Write(messageFrame("t", 1767225600, "one", kv{"log", line})); err != nil {
		t.Fatal(err)
	}
	readAck(t, r)
	for i, off := 0, 0; off < len(line); i, off = i+1, off+16384 {
		end := min(off+16384, len(line))
		if _, err := c.Write(messageFrame("t", 1767225600, "p", partialRecord("big", i+1, end == len(line), line[off:end])...)); err != nil {
			t.Fatal(err)
		}
		readAck(t, r)
	}
	got := col.Wait(t, 2)
	for i, l := range got {
		if l.Data != want || !l.Truncated {
			t.Errorf("line %d (truncated %v): %d bytes, ends %q", i, l.Truncated, len(l.Data), l.Data[max(0, len(l.Data)-60):])
		}
	}
	if s := srv.Stats(); s.TruncatedLines != 2 {
		t.Fatalf("stats %+v", s)
	}
}
