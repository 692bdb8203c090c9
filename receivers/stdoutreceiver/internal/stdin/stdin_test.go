package stdin

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

// runStdin reads input to its end and returns the recorder's lines and
// batch count.
func runStdin(t *testing.T, input string, maxLine int) ([]streamtest.Line, int) {
	t.Helper()
	c := streamtest.NewRecorder()
	s := New(strings.NewReader(input), Settings{MaxLineBytes: maxLine}, c.Sink)
	n, err := s.run()
	if err != nil {
		t.Fatal(err)
	}
	if int(n) != c.Len() {
		t.Fatalf("run reported %d lines, sink got %d", n, c.Len())
	}
	return c.Lines(), c.Batches()
}

func TestStdinLines(t *testing.T) {
	lines, _ := runStdin(t, "one\ntwo\r\n\nlast without newline", 1024)
	want := []string{"one", "two\r", "", "last without newline"}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d", len(lines), len(want))
	}
	for i, l := range lines {
		if l.Data != want[i] || l.Truncated {
			t.Errorf("line %d = %q (truncated %v), want %q", i, l.Data, l.Truncated, want[i])
		}
	}
	if lines, _ := runStdin(t, "", 1024); len(lines) != 0 {
		t.Errorf("empty input gave %d lines", len(lines))
	}
}

func TestStdinTruncatesLongLines(t *testing.T) {
	const read = batchBytes + readSlack // the largest read
	const limit = read + 50<<10         // lines span several reads
	long := strings.Repeat("a", 3*read)
	input := "short\n" + long + "\n" + strings.Repeat("b", limit) + "\nafter\n" + long
	lines, _ := runStdin(t, input, limit)
	if len(lines) != 5 {
		t.Fatalf("got %d lines, want 5", len(lines))
	}
	check := func(i int, data string, truncated bool) {
		t.Helper()
		l := lines[i]
		if l.Data != data || l.Truncated != truncated {
			t.Errorf("line %d: %d bytes truncated=%v, want %d bytes truncated=%v", i, len(l.Data), l.Truncated, len(data), truncated)
		}
	}
	check(0, "short", false)
	check(1, long[:limit], true)
	check(2, strings.Repeat("b", limit), false)
	check(3, "after", false)
	check(4, long[:limit], true)
}

// countingReader records how many reads its reader was asked for.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// A read asks for the rest of the batch, so that a pipe holding a batch
// (at max rate, a full one) is read at once rather than in four reads,
// each waking the app's writer; and, for short lines, only for the lines
// the batch still takes, so that the input read past it, moved to the
// front of the next batch, stays within readSlack.
func TestStdinReadsTheRestOfTheBatch(t *testing.T) {
	for _, tc := range []struct {
		lineLen, lines int
		// A read per batch, one of readSlack before the first line and one
		// at end of input.
		maxReads int
		maxArena int
	}{
		{lineLen: 330, lines: 10_000, maxReads: 10_000*330/batchBytes + 1 + 2, maxArena: batchBytes + 2*readSlack},
		{lineLen: 100, lines: 3 * batchLines, maxReads: 3 + 2, maxArena: batchLines*100 + 2*readSlack},
	} {
		line := strings.Repeat("x", tc.lineLen-1) + "\n"
		src := &countingReader{r: strings.NewReader(strings.Repeat(line, tc.lines))}
		c := streamtest.NewRecorder()
		s := New(src, Settings{MaxLineBytes: 1024}, c.Sink)
		if _, err := s.run(); err != nil {
			t.Fatal(err)
		}
		if c.Len() != tc.lines {
			t.Fatalf("%d-byte lines: sink got %d lines, want %d", tc.lineLen, c.Len(), tc.lines)
		}
		if src.reads > tc.maxReads || cap(s.arena) > tc.maxArena {
			t.Errorf("%d-byte lines: %d reads, arena of %d bytes; want at most %d and %d",
				tc.lineLen, src.reads, cap(s.arena), tc.maxReads, tc.maxArena)
		}
	}
}

func TestStdinBatchesAndOrder(t *testing.T) {
	var sb strings.Builder
	const n = 10000
	for i := range n {
		fmt.Fprintf(&sb, `{"level":30,"time":%d,"msg":"line %d"}`+"\n", 1764504000000+i, i)
	}
	lines, batches := runStdin(t, sb.String(), 1024)
	if len(lines) != n {
		t.Fatalf("got %d lines", len(lines))
	}
	for i, l := range lines {
		if !strings.HasSuffix(l.Data, fmt.Sprintf(`"msg":"line %d"}`, i)) {
			t.Fatalf("line %d out of order: %s", i, l.Data)
		}
	}
	if batches < 2 || batches > n/100 {
		t.Errorf("%d lines came in %d batches; want them batched", n, batches)
	}
}

// The lines of a batch are read in place: each line's bytes follow the
// previous line's newline in the arena, not a copy of them, also in the
// batch after one that filled up in the middle of a read.
func TestStdinReadsLinesInPlace(t *testing.T) {
	var sb strings.Builder
	const n = batchLines + 100
	for i := range n {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	var got, batches int
	sink := func(_ context.Context, b stream.Batch) error {
		batches++
		for i, l := range b.Lines {
			if want := fmt.Sprintf("line %d", got); string(l.Data) != want {
				t.Fatalf("line %d is %q, want %q", got, l.Data, want)
			}
			if i > 0 {
				prev := b.Lines[i-1].Data
				if &prev[:len(prev)+2][len(prev)+1] != &l.Data[0] {
					t.Fatalf("line %d does not follow line %d's newline in the arena", got, got-1)
				}
			}
			got++
		}
		return nil
	}
	s := New(strings.NewReader(sb.String()), Settings{MaxLineBytes: 1024}, sink)
	if _, err := s.run(); err != nil {
		t.Fatal(err)
	}
	if got != n || batches != 2 {
		t.Fatalf("%d lines in %d batches, want %d in 2 (one full)", got, batches, n)
	}
}

// A slow writer's lines are delivered as they come, without waiting for a
// batch to fill or more input: the reader flushes when nothing more is
// buffered (a source it cannot poll) or none came within the join window
// (a pipe).
func TestStdinDeliversEachLineOfASlowWriter(t *testing.T) {
	t.Run("io.Pipe", func(t *testing.T) {
		pr, pw := io.Pipe()
		testSlowWriter(t, pr, pw)
	})
	t.Run("os.Pipe", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		testSlowWriter(t, pr, pw)
	})
}

func testSlowWriter(t *testing.T, pr io.Reader, pw io.WriteCloser) {
	got := make(chan string)
	sink := func(_ context.Context, b stream.Batch) error {
		for _, l := range b.Lines {
			got <- string(l.Data)
		}
		return nil
	}
	s := New(pr, Settings{MaxLineBytes: 1024}, sink)
	eof := make(chan struct{})
	s.atEOF = func() { close(eof) }
	s.Start()
	for i := range 3 {
		want := fmt.Sprintf("line %d", i)
		if _, err := io.WriteString(pw, want+"\n"); err != nil {
			t.Fatal(err)
		}
		if l := <-got; l != want {
			t.Fatalf("got %q, want %q", l, want)
		}
	}
	pw.Close()
	<-eof
}

// chunks is a source whose reads return one chunk each.
type chunks []string

func (c *chunks) Read(p []byte) (int, error) {
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	(*c)[0] = (*c)[0][n:]
	if (*c)[0] == "" {
		*c = (*c)[1:]
	}
	return n, nil
}

// windowedChunks is a source whose reads can wait with a deadline: with
// more, every write comes within the join window; without, a read that
// has a deadline first times out (the window passes), then gets the next
// write.
type windowedChunks struct {
	chunks
	more      bool
	deadline  time.Time
	waited    bool
	deadlines int // deadlines set
}

func (c *windowedChunks) SetReadDeadline(t time.Time) error {
	if !t.IsZero() {
		c.deadlines++
	}
	c.deadline, c.waited = t, false
	return nil
}

func (c *windowedChunks) Read(p []byte) (int, error) {
	if !c.more && !c.deadline.IsZero() && !c.waited {
		c.waited = true
		return 0, os.ErrDeadlineExceeded
	}
	return c.chunks.Read(p)
}

// Lines the app writes one at a time join one batch while more input
// comes within the join window, up to the batch's size; without more
// input each read is a batch of its own.
func TestStdinJoinsWritesWithinTheWindow(t *testing.T) {
	writes := func(n int, more bool) *windowedChunks {
		c := &windowedChunks{chunks: make(chunks, n), more: more}
		for i := range c.chunks {
			c.chunks[i] = fmt.Sprintf("line %d\n", i)
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		writes  int
		more    bool
		batches int
	}{
		{"more input comes", 10, true, 1},
		{"no more input", 10, false, 10},
		{"more input than a batch holds", batchLines + 1, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := streamtest.NewRecorder()
			src := writes(tc.writes, tc.more)
			s := New(src, Settings{MaxLineBytes: 1024}, c.Sink)
			s.window = time.Hour // the test does not depend on how fast it runs
			s.deadlines = windowed(src)
			if _, err := s.run(); err != nil {
				t.Fatal(err)
			}
			if c.Len() != tc.writes || c.Batches() != tc.batches {
				t.Errorf("%d lines in %d batches, want %d in %d", c.Len(), c.Batches(), tc.writes, tc.batches)
			}
			if src.deadlines == 0 {
				t.Error("no read waited with a deadline")
			}
		})
	}
}

// A line of wholeLine bytes or more (a span request) is a batch's worth by
// itself: its batch goes once the lines already read are in it, without
// waiting out the join window for more, although more input comes.
func TestStdinDeliversAWholeLineWithoutTheWindow(t *testing.T) {
	long := `{"resourceSpans":[` + strings.Repeat(" ", wholeLine) + "]}\n"
	for _, tc := range []struct {
		name    string
		writes  []string
		batches []int // lines per batch
	}{
		{"one write", []string{"a\n" + long + "b\n", "c\n"}, []int{3, 1}},
		{"written after a line", []string{"a\n", long, "b\n", "c\n"}, []int{2, 2}},
		{"short of a whole line", []string{"a\n", long[:wholeLine-2] + "\n", "b\n"}, []int{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			sink := func(_ context.Context, b stream.Batch) error {
				got = append(got, len(b.Lines))
				return nil
			}
			src := &windowedChunks{chunks: chunks(tc.writes), more: true}
			s := New(src, Settings{}, sink)
			s.window = time.Hour // the test does not depend on how fast it runs
			s.deadlines = windowed(src)
			if _, err := s.run(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.batches) {
				t.Errorf("lines per batch %v, want %v", got, tc.batches)
			}
		})
	}
}

// Lines waiting in the join window when the sidecar is stopped were taken
// from the app: Shutdown delivers them before it returns, those read and
// those the app wrote during the window's pause (see tickReader), in one
// batch, whether stdin is a pipe Go's poller serves or, as a child process
// gets it, a blocking one (read through a pollable copy).
func TestStdinShutdownDeliversTheLinesWaitingInTheWindow(t *testing.T) {
	t.Run("os.Pipe", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		testShutdownDeliversHeldLines(t, pr, pw)
	})
	t.Run("blocking pipe", func(t *testing.T) {
		pr, pw, err := blockingPipe()
		if err != nil {
			t.Fatal(err)
		}
		if pr.SetReadDeadline(time.Time{}) == nil {
			t.Fatal("the pipe is pollable already: the test would not test the copy")
		}
		testShutdownDeliversHeldLines(t, pr, pw)
	})
}

func testShutdownDeliversHeldLines(t *testing.T, pr *os.File, pw io.WriteCloser) {
	defer pw.Close()
	c := streamtest.NewRecorder()
	s := New(pr, Settings{MaxLineBytes: 1024}, c.Sink)
	s.window = time.Hour // the lines would wait that long for more
	s.Start()
	if _, err := io.WriteString(pw, "a\n"); err != nil {
		t.Fatal(err)
	}
	for unread(t, pr) > 0 { // the first line of a batch is read when it comes
		time.Sleep(time.Millisecond)
	}
	for _, w := range []string{"b\n", "c\n"} {
		if _, err := io.WriteString(pw, w); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if n := unread(t, pr); n != 4 && ticking(s) {
		t.Errorf("%d of the 4 bytes written during the pause were left in the pipe: the reader woke for them", n)
	}
	s.Shutdown()
	if c.Len() != 3 || c.Batches() != 1 {
		t.Fatalf("%d of the 3 lines written before shutdown were delivered, in %d batches (want 1)", c.Len(), c.Batches())
	}
}

func TestStdinShutdownWhileSinkBlocks(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	entered := make(chan struct{})
	sink := func(ctx context.Context, b stream.Batch) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}
	s := New(pr, Settings{MaxLineBytes: 1024}, sink)
	s.atEOF = func() { t.Error("atEOF must not run after shutdown") }
	s.Start()
	go func() { _, _ = io.WriteString(pw, "x\n") }()
	<-entered
	s.Shutdown() // would hang if it did not wait for the in-flight batch to give up
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		t.Fatal("not stopped")
	}
}
