package stdin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sidecarhq/sidecar/internal/stdinpipe"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// tickPipe is a pipe grown as the transport grows stdin, with a Transport
// reading it on a tick of window and sink taking its batches.
func tickPipe(t *testing.T, window time.Duration, sink stream.Sink, atEOF func()) (*Transport, *os.File) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close() })
	s := New(pr, Settings{MaxLineBytes: 1024, AtEOF: atEOF}, sink)
	s.window = window
	s.Start()
	if !ticking(s) {
		t.Fatalf("a pipe of %d bytes or more is not read on a tick", stdinpipe.Size)
	}
	return s, pw
}

// A lone line waits out its join window (the pause, which ends on the
// tick's clock, at the last multiple of pauseSlice in the window), and no
// longer than about that: it is delivered by the tick, without more input.
func TestStdinTickDeliversALoneLineAfterItsWindow(t *testing.T) {
	const window = 50 * time.Millisecond
	got := make(chan time.Time, 10)
	s, pw := tickPipe(t, window, func(_ context.Context, b stream.Batch) error {
		for range b.Lines {
			got <- time.Now()
		}
		return nil
	}, nil)
	defer s.Shutdown()
	for range 3 { // each after a quiet spell: its first read waits in the poller
		wrote := time.Now()
		if _, err := io.WriteString(pw, "lone\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case at := <-got:
			if waited := at.Sub(wrote); waited < window-pauseSlice {
				t.Errorf("the line was delivered after %v, before its %v window (less a %v slice) passed", waited, window, pauseSlice)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a lone line was not delivered: the pause did not end")
		}
	}
}

// A writer ahead of the reader is read on without a pause, so that the
// app's writes do not wait for the tick: here the app has written two and
// a half reads' worth before the first read, which fills its buffer. The
// rest is read on at once; a reader that paused after a full read would
// leave it in the pipe, less than a quarter of it, for the (hour-long)
// join window.
func TestStdinTickReadsOnWhileTheWriterIsAhead(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	stdinpipe.Grow(pw)
	s := New(pr, Settings{MaxLineBytes: 1024}, func(context.Context, stream.Batch) error { return nil })
	s.window, s.readBuffer = time.Hour, 64<<10
	line := strings.Repeat("x", 1023) + "\n"
	if _, err := io.WriteString(pw, strings.Repeat(line, 160)); err != nil { // 2.5 reads, under a quarter of the pipe
		t.Fatal(err)
	}
	s.Start()
	defer s.Shutdown()
	if !ticking(s) {
		t.Fatalf("a pipe of %d bytes or more is not read on a tick", stdinpipe.Size)
	}
	for give := time.Now().Add(30 * time.Second); unread(t, pr) > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(give) {
			t.Fatalf("%d bytes left in the pipe: the reader paused while the writer was ahead", unread(t, pr))
		}
	}
}

// A writer that fills the pipe fast while a batch is held in its join
// window (here right after a lone line, before the reader has seen it
// write much) is not held for the window: the pause ends once the pipe is
// a quarter full, so that a write waits for room at most about a slice
// (pauseSlice), where a pause until the window's end held it for all of
// it. The bound is far above a slice and far below the window: it tells
// blocking from not, whatever the machine's speed. A writer that starts
// only after the pause's first slice (seen idle, as a descheduled one is)
// is not held either: a pause sleeps its rest in one slice only within
// the product's join window.
func TestStdinTickNeverHoldsAWriterThatFillsThePipe(t *testing.T) {
	for _, idle := range []time.Duration{0, 4 * pauseSlice} {
		t.Run(fmt.Sprintf("writer idle for %v first", idle), func(t *testing.T) { neverHoldsAWriterThatFillsThePipe(t, idle) })
	}
}

func neverHoldsAWriterThatFillsThePipe(t *testing.T, idle time.Duration) {
	const window = 5 * time.Second
	var lines atomic.Int64
	eof := make(chan struct{})
	s, pw := tickPipe(t, window, func(_ context.Context, b stream.Batch) error {
		lines.Add(int64(len(b.Lines)))
		return nil
	}, func() { close(eof) })
	tr := s.deadlines.(*tickReader)
	line := strings.Repeat("x", 1023) + "\n"
	if _, err := io.WriteString(pw, line); err != nil {
		t.Fatal(err)
	}
	for unread(t, tr.f) > 0 { // read: its batch is held, and the reader pauses
		time.Sleep(time.Millisecond)
	}
	if lines.Load() != 0 {
		t.Fatal("the lone line went before its join window: there is no pause to test")
	}
	time.Sleep(idle)
	chunk := strings.Repeat(line, 64) // 64 KiB
	const chunks = 128                // 8 pipes' worth
	var longest time.Duration
	for range chunks {
		start := time.Now()
		if _, err := io.WriteString(pw, chunk); err != nil {
			t.Fatal(err)
		}
		longest = max(longest, time.Since(start))
	}
	pw.Close()
	<-eof
	if want := int64(1 + chunks*64); lines.Load() != want {
		t.Errorf("%d lines delivered, want %d", lines.Load(), want)
	}
	if longest > window/5 {
		t.Errorf("a write waited %v for room in the pipe (the join window is %v, a pause's slice %v)", longest, window, pauseSlice)
	}
}

// A read with a deadline returns once the deadline passed with nothing
// written, whether it pauses (a slow writer's) or waits in the poller (a
// fast writer's, which gets the file's deadline only just before it
// waits: see tickReader.SetReadDeadline), and a read written to meanwhile
// returns the bytes.
func TestStdinTickReadWithADeadlineEndsAtTheDeadline(t *testing.T) {
	for _, fast := range []bool{false, true} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pw.Close()
		defer pr.Close()
		stdinpipe.Grow(pr)
		tr := newTickReader(pr)
		if tr == nil {
			t.Fatalf("a pipe of %d bytes or more is not read on a tick", stdinpipe.Size)
		}
		p := make([]byte, 64)
		for range 2 {
			// fast is measured once per join window: it stays as set here
			// until an hour has passed.
			tr.fast, tr.measured = fast, time.Now().Add(time.Hour)
			deadline := time.Now().Add(30 * time.Millisecond)
			if err := tr.SetReadDeadline(deadline); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := tr.Read(p); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("fast %v: read returned %v, want the deadline passed", fast, err)
				}
				if now := time.Now(); now.Before(deadline.Truncate(pauseSlice)) {
					t.Errorf("fast %v: read returned %v before its deadline", fast, deadline.Sub(now))
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("fast %v: a read with a deadline 30 ms away still waits after 10 s", fast)
			}
		}
		if err := tr.SetReadDeadline(time.Now().Add(30 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(pw, "x\n"); err != nil {
			t.Fatal(err)
		}
		if n, err := tr.Read(p); n != 2 || err != nil {
			t.Errorf("fast %v: read %d bytes (%v) of the 2 written", fast, n, err)
		}
	}
}

// A pause sleeps its rest in one slice (one wake-up instead of one every
// pauseSlice) only for a writer that, four times faster, would still leave
// a quarter of the pipe free by the pause's end: pino lines (~330 bytes)
// at 20k a second are such a writer, at 100k a second not; and a writer
// that wrote nothing yet is, for a rest up to the join window.
func TestStdinTickSleepsTheRestOfAPauseInOneSliceOnlyForASlowWriter(t *testing.T) {
	const quarter = stdinpipe.Size / 4
	perSecond := func(lines int, d time.Duration) int { return int(float64(lines*330) * d.Seconds()) }
	for _, c := range []struct {
		name       string
		n          int
		seen, rest time.Duration
		oneSlice   bool
	}{
		{"nothing written", 0, 5 * time.Millisecond, 15 * time.Millisecond, true},
		{"20k lines/s", perSecond(20_000, 5*time.Millisecond), 5 * time.Millisecond, 15 * time.Millisecond, true},
		{"100k lines/s", perSecond(100_000, 5*time.Millisecond), 5 * time.Millisecond, 15 * time.Millisecond, false},
		{"20k lines/s with a long rest", perSecond(20_000, 3*time.Millisecond), 3 * time.Millisecond, 100 * time.Millisecond, false},
		{"nearly a quarter full in a slice", quarter - 1, 5 * time.Millisecond, 5 * time.Millisecond, false},
		{"nothing written, a rest longer than the join window", 0, 5 * time.Millisecond, joinWindow + time.Millisecond, false},
	} {
		if got := restInOneSlice(c.n, c.seen, c.rest, quarter); got != c.oneSlice {
			t.Errorf("%s (%d bytes in %v, %v left): rest in one slice %v, want %v", c.name, c.n, c.seen, c.rest, got, c.oneSlice)
		}
	}
}
