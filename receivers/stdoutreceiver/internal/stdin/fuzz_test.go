package stdin

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// FuzzStdinLines checks the stdin splitter against a reference: every line
// of the input, in order, cut to maxLine bytes and marked when cut, whatever
// the read and buffer sizes. A cut line that starts as a JSON object keeps
// (nearly all of) those bytes and what the skimmer keeps after them, which
// TestStdinSkimsLongJSONLines checks exactly.
func FuzzStdinLines(f *testing.F) {
	f.Add("a\nb\n", uint16(10), false)
	f.Add("no newline at end", uint16(4), true)
	f.Add("\n\n\r\n", uint16(1), false)
	f.Add(strings.Repeat("x", 1000)+"\nshort\n", uint16(999), true)
	f.Fuzz(func(t *testing.T, input string, limit uint16, oneByteReads bool) {
		maxLine := int(limit)%2048 + 1
		var want []stream.Line
		rest := input
		for rest != "" {
			line, after, found := strings.Cut(rest, "\n")
			l := stream.Line{Data: []byte(line)}
			if len(line) > maxLine {
				l = stream.Line{Data: []byte(line[:maxLine]), Truncated: true}
			}
			want = append(want, l)
			if !found {
				break
			}
			rest = after
		}

		var got []stream.Line
		sink := func(_ context.Context, b stream.Batch) error {
			if !b.OneLine {
				t.Fatal("a stdin batch is not marked one-line")
			}
			for _, l := range b.Lines {
				if bytes.IndexByte(l.Data, '\n') >= 0 {
					t.Fatalf("line %q of a one-line batch holds a newline", l.Data)
				}
				got = append(got, stream.Line{Data: bytes.Clone(l.Data), Truncated: l.Truncated})
			}
			return nil
		}
		var src = strings.NewReader(input)
		s := New(src, Settings{MaxLineBytes: maxLine}, sink)
		s.readBuffer = 16 + int(limit)%64 // lines longer than a read arrive in pieces
		if oneByteReads {
			s.src = iotest.OneByteReader(src)
		}
		if _, err := s.run(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range want {
			if w := want[i]; w.Truncated && bytes.HasPrefix(bytes.TrimLeft(w.Data, " \t\r"), []byte("{")) {
				head := w.Data[:max(0, len(w.Data)-utf8.UTFMax-5)] // an escape or a character may be dropped whole
				if !got[i].Truncated || !bytes.HasPrefix(got[i].Data, head) || len(got[i].Data) > maxLine+stream.SkimOverflowBytes {
					t.Fatalf("line %d: %q (cut %v), want %q and what the skimmer keeps", i, got[i].Data, got[i].Truncated, w.Data)
				}
				continue
			}
			if !bytes.Equal(got[i].Data, want[i].Data) || got[i].Truncated != want[i].Truncated {
				t.Fatalf("line %d: %q (cut %v), want %q (cut %v)", i, got[i].Data, got[i].Truncated, want[i].Data, want[i].Truncated)
			}
		}
	})
}
