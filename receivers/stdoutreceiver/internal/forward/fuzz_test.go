package forward

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// FuzzReadFrames feeds a byte stream to one connection's decoder. Whatever
// the input, it must not panic or hang, every delivered line must respect
// the line limit, and the counters must match what the Sink got.
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
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxLine = 64
		var lines int
		sink := func(_ context.Context, b stream.Batch) error {
			for _, l := range b.Lines {
				if len(l.Data) > maxLine {
					t.Fatalf("line of %d bytes, limit %d", len(l.Data), maxLine)
				}
				if l.Stream != "" && l.Stream != "stdout" && l.Stream != "stderr" {
					t.Fatalf("stream %q", l.Stream)
				}
			}
			lines += len(b.Lines)
			return nil
		}
		s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{MaxLineBytes: maxLine}, sink)
		if err != nil {
			t.Fatal(err)
		}
		s.arenas.size = 2 * maxLine // small, so that batches flush mid-frame too
		_ = newConn(s, bytes.NewReader(data), io.Discard).serve()
		if st := s.Stats(); st.Records != int64(lines) {
			t.Fatalf("stats say %d records, sink got %d", st.Records, lines)
		}
	})
}
