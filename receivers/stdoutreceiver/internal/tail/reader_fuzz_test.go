package tail

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

const fuzzCRIHeader = "2024-05-06T07:08:09Z stdout "

// FuzzReader runs arbitrary content through the file reader with small
// buffers, line limits and round budgets, the file growing in up to three
// chunks (mid-line too), and compares the lines with a plain model: raw
// lines split at '\n'; for cri, one physical line per input line, tagged P
// when its first byte is odd, pieces joined until F; every logical line cut
// at the limit and marked, what follows the limit kept as stream.Skimmer
// keeps it from the whole line, except the bytes of a physical line past
// the read buffer, which are lost. A last line without newline comes with
// the final read (a rotated file being let go).
func FuzzReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), uint8(2), uint8(0), uint16(3), uint16(7), false)
	f.Add([]byte("abc\ndef\nx\nyy\n"), uint8(4), uint8(3), uint16(5), uint16(1), true)
	f.Add(bytes.Repeat([]byte("a"), 300), uint8(7), uint8(1), uint16(100), uint16(200), true)
	f.Add(bytes.Repeat([]byte("abcdefghij\n"), 40), uint8(5), uint8(9), uint16(33), uint16(34), true)
	// JSON over the limit that fits the read buffer: skimmed (cri: pieces
	// starting with an odd byte are P).
	f.Add([]byte("{\"a\":\"yyyyyyyyyy\",\"b\":1}\n"), uint8(9), uint8(15), uint16(0), uint16(0), false)
	f.Add([]byte("{\"a\":\"yyyyyyyy\nyyyyyyyyyy\"\n,\"b\":\"\\u00e9\"}\n"), uint8(9), uint8(15), uint16(20), uint16(40), true)
	f.Fuzz(func(t *testing.T, data []byte, maxLine, extra uint8, cut1, cut2 uint16, cri bool) {
		limit := int(maxLine)%64 + 1
		header := 0
		if cri {
			header = len(fuzzCRIHeader) + 2
		}
		bufSize := limit + header + int(extra)%16 + 1 // small, to reach the overlong-line path
		content, want := fuzzModel(data, limit, bufSize, cri)

		r := newReader(limit)
		r.buf = make([]byte, bufSize)
		r.budget = int(extra)%5 + 1
		path := filepath.Join(t.TempDir(), "0.log")
		fd, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		format := FormatRaw
		if cri {
			format = FormatCRI
		}
		fl := &file{fd: fd, format: format}
		var lines []streamtest.Line
		sink := func(_ context.Context, b stream.Batch) error {
			if !b.OneLine {
				t.Fatal("a raw or CRI file's batch is not marked one-line")
			}
			for _, l := range b.Lines {
				if bytes.IndexByte(l.Data, '\n') >= 0 {
					t.Fatalf("line %q of a one-line batch holds a newline", l.Data)
				}
				lines = append(lines, streamtest.Line{Data: string(l.Data), Truncated: l.Truncated})
			}
			return nil
		}
		readAll := func(final bool) {
			for rounds := 0; ; rounds++ {
				if rounds > 10*len(content)+10 {
					t.Fatal("no progress")
				}
				if err := r.readFile(context.Background(), fl, sink, final); err != nil {
					t.Fatal(err)
				}
				if fl.atEOF {
					return
				}
			}
		}
		c1, c2 := int(cut1)%(len(content)+1), int(cut2)%(len(content)+1)
		if c1 > c2 {
			c1, c2 = c2, c1
		}
		for _, chunk := range [][]byte{content[:c1], content[c1:c2], content[c2:]} {
			if _, err := fd.Write(chunk); err != nil {
				t.Fatal(err)
			}
			readAll(false)
		}
		readAll(true)
		if len(lines) != len(want) {
			t.Fatalf("got %d lines %+v, want %d %+v", len(lines), lines, len(want), want)
		}
		for i := range want {
			if lines[i].Data != want[i].Data || lines[i].Truncated != want[i].Truncated {
				t.Fatalf("line %d: got %+v, want %+v", i, lines[i], want[i])
			}
		}
		if fl.offset != int64(len(content)) {
			t.Fatalf("offset %d after the final read, want %d", fl.offset, len(content))
		}
	})
}

// fuzzModel builds the file content for data and the lines it must yield
// from a reader with a read buffer of bufSize bytes.
func fuzzModel(data []byte, limit, bufSize int, cri bool) ([]byte, []streamtest.Line) {
	parts := bytes.Split(data, []byte("\n"))
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1] // data ended with a newline (or was empty)
	}
	var content []byte
	var want []streamtest.Line
	var pending []byte
	inPiece, lost := false, -1 // lost: where pending's lost bytes begin
	emit := func(b []byte, lost int) {
		if len(b) <= limit && lost < 0 {
			want = append(want, streamtest.Line{Data: string(b)})
			return
		}
		if lost < 0 {
			lost = len(b)
		}
		var skim stream.Skimmer
		kept := append([]byte(nil), b[:limit]...)
		kept = skim.Overflow(kept[:skim.Start(kept)], b[limit:lost])
		want = append(want, streamtest.Line{Data: string(kept), Truncated: true})
	}
	for i, p := range parts {
		last := i == len(parts)-1 && !bytes.HasSuffix(data, []byte("\n"))
		if !cri {
			content = append(content, p...)
			if len(p) >= bufSize {
				emit(p, bufSize)
			} else {
				emit(p, -1)
			}
		} else {
			tag := "F"
			if len(p) > 0 && p[0]&1 == 1 {
				tag = "P"
			}
			content = append(append(append(content, fuzzCRIHeader...), tag+" "...), p...)
			header := len(fuzzCRIHeader) + 2
			if header+len(p) >= bufSize && lost < 0 {
				lost = len(pending) + bufSize - header
			}
			pending = append(pending, p...)
			inPiece = true
			if tag == "F" {
				emit(pending, lost)
				pending, inPiece, lost = pending[:0], false, -1
			}
		}
		if !last {
			content = append(content, '\n')
		}
	}
	if inPiece {
		emit(pending, lost)
	}
	return content, want
}

// A docker json-file line's log may hold newlines (escaped in the file), so
// its batches are not marked one-line.
func TestDockerBatchesAreNotOneLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	content := `{"log":"a\nb\n","stream":"stdout","time":"2016-10-20T18:39:20.57606443Z"}` + "\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	var batches []stream.Batch
	var lines []string
	sink := func(_ context.Context, b stream.Batch) error {
		batches = append(batches, b)
		for _, l := range b.Lines {
			lines = append(lines, string(l.Data))
		}
		return nil
	}
	if err := newReader(1024).readFile(context.Background(), &file{fd: fd, format: FormatDocker}, sink, true); err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 || batches[0].OneLine || len(lines) != 1 || lines[0] != "a\nb" {
		t.Fatalf("got %d batches (one-line %v), lines %q; want one batch, not one-line, with \"a\\nb\"", len(batches), len(batches) > 0 && batches[0].OneLine, lines)
	}
}
