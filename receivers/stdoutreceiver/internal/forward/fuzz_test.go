package forward

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

// FuzzReadFrames feeds a byte stream to one connection's decoder. Whatever
// the input, it must not panic or hang, every delivered line must respect
// the line limit, and the counters must match what the Sink got. The same
// bytes read one at a time (where the decoder's buffer never holds a
// record's fields whole, so readBufferedFields leaves every field to the
// field-by-field reads) must give the same lines, counters and outcome.
func FuzzReadFrames(f *testing.F) {
	t0 := time.Unix(1767225600, 42)
	long := strings.Repeat("L", 200)
	seeds := [][]byte{
		messageFrame("app", 1767225600, "c1", kv{"log", "hello"}, kv{"source", "stderr"}, kv{"container_name", "/a"}),
		forwardFrame("fw", t0, "c2", "one", long, "three"),
		packedFrame("pk", t0, "", "a", "b"),
		compressedFrame("gz", t0, "c4", "zipped", long),
		append(messageFrame("app", 1, "", partialRecord("p", 1, false, long)...), messageFrame("app", 1, "", partialRecord("p", 2, true, "end")...)...),
		messageFrame("app", 1, "", partialRecord("q", 1, false, "never finished")...),
		msgp.AppendNil(nil),
		{0xc1},
		{0x93, 0xa1, 't', 0xd7, 0x00, 1, 2, 3, 4, 0, 0, 0, 5, 0x81, 0xa3, 'l', 'o', 'g', 0xa1, 'x'},
		[]byte("[\"tag\", 1, {\"log\": \"json is not msgpack\"}]\n"),
		messageFrame("app", 1767225600, "", kv{"log", "x"})[:7],
		// Records of one shape (template.go), its fields after the line changed, another tag.
		append(forwardRecords("fl", t0, firelens("a", "one", "t1"), firelens("a", long, "t1"), firelens("a", "three", "t2")),
			forwardRecords("fm", t0, firelens("a", "four", "t2"), firelens("b", "five", "t2"))...),
		append(messageFrame("d", 1, "", kv{"source", "stdout"}, kv{"log", "r1"}, kv{"container_name", "/a"}),
			append(messageFrame("d", 1, "", kv{"log", "r2"}, kv{"container_name", "/a"}, kv{"source", "stdout"}),
				messageFrame("d", 1, "", kv{"source", "stdout"}, kv{"log", "r3"}, kv{"container_name", "/a"})...)...),
		append(messageFrame("d", 1, "", kv{"source", "stdout"}, kv{"log", "r1"}),
			append(messageFrame("d", 1, "c", kv{"source", "stdout"}, kv{"log", "r2"}),
				messageFrame("e", 1, "", kv{"source", "stdout"}, kv{"log", long})...)...),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, wholeStats, wholeErr := readFrames(t, bytes.NewReader(data))
		bytewise, bytewiseStats, bytewiseErr := readFrames(t, iotest.OneByteReader(bytes.NewReader(data)))
		if !reflect.DeepEqual(whole, bytewise) || wholeStats != bytewiseStats {
			t.Fatalf("read whole: %d lines, %+v\n%+v\nread a byte at a time: %d lines, %+v\n%+v",
				len(whole), wholeStats, whole, len(bytewise), bytewiseStats, bytewise)
		}
		if (wholeErr == nil) != (bytewiseErr == nil) || errors.Is(wholeErr, errBadFrame) != errors.Is(bytewiseErr, errBadFrame) {
			t.Fatalf("read whole: %v; read a byte at a time: %v", wholeErr, bytewiseErr)
		}
	})
}

// readFrames decodes r on one connection with a 64-byte line limit and
// returns the lines the Sink got (with their batch's attributes), the
// counters and how the connection ended.
func readFrames(t *testing.T, r io.Reader) ([]streamtest.Line, Stats, error) {
	const maxLine = 64
	var lines []streamtest.Line
	sink := func(_ context.Context, b stream.Batch) error {
		for _, l := range b.Lines {
			if len(l.Data) > maxLine {
				t.Fatalf("line of %d bytes, limit %d", len(l.Data), maxLine)
			}
			if l.Stream != "" && l.Stream != "stdout" && l.Stream != "stderr" {
				t.Fatalf("stream %q", l.Stream)
			}
			attrs := map[string]string{}
			for _, a := range b.Attrs {
				attrs[a.Key] = a.Value
			}
			lines = append(lines, streamtest.Line{Data: string(l.Data), Time: l.Time, Stream: l.Stream, Truncated: l.Truncated, Attrs: attrs})
		}
		return nil
	}
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{MaxLineBytes: maxLine}, sink)
	if err != nil {
		t.Fatal(err)
	}
	s.arenas.size = 2 * maxLine // small, so that batches flush mid-frame too
	err = newConn(s, r, io.Discard).serve()
	st := s.Stats()
	if st.Records != int64(len(lines)) {
		t.Fatalf("stats say %d records, sink got %d", st.Records, len(lines))
	}
	return lines, st, err
}
