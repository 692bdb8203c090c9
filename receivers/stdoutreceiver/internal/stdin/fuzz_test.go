package stdin

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// FuzzStdinLines checks the stdin splitter against a reference: every line
// of the input, in order, cut to maxLine bytes and marked when cut, whatever
// the read and buffer sizes.
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
			for _, l := range b.Lines {
				got = append(got, stream.Line{Data: bytes.Clone(l.Data), Truncated: l.Truncated})
			}
			return nil
		}
		var src = strings.NewReader(input)
		s := New(src, Settings{MaxLineBytes: maxLine}, sink)
		s.readBuffer = 16 + int(limit)%64 // lines longer than the buffer take the ErrBufferFull path
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
			if !bytes.Equal(got[i].Data, want[i].Data) || got[i].Truncated != want[i].Truncated {
				t.Fatalf("line %d: %q (cut %v), want %q (cut %v)", i, got[i].Data, got[i].Truncated, want[i].Data, want[i].Truncated)
			}
		}
	})
}
