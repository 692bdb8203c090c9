package stdin

import (
	"context"
	"io"
	"os"
	"strings"
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

// A lone line waits out its join window (the pause), and no longer than
// about that: it is delivered by the tick, without more input.
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
			if waited := at.Sub(wrote); waited < window {
				t.Errorf("the line was delivered after %v, before its %v window passed", waited, window)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a lone line was not delivered: the pause did not end")
		}
	}
}

// A writer ahead of the reader is read on without pauses, so that the
// app's writes do not wait for the tick: 32 MiB through a 1 MiB pipe as
// fast as the test can write them, where a pause whenever the reader
// caught up would let the pipe fill during most of them.
func TestStdinTickReadsOnWhileTheWriterIsAhead(t *testing.T) {
	var lines, batches int
	eof := make(chan struct{})
	s, pw := tickPipe(t, joinWindow, func(_ context.Context, b stream.Batch) error {
		lines += len(b.Lines)
		batches++
		return nil
	}, func() { close(eof) })
	line := strings.Repeat("x", 1023) + "\n"
	chunk := strings.Repeat(line, 1024) // 1 MiB
	const chunks = 32
	for range chunks {
		if _, err := io.WriteString(pw, chunk); err != nil {
			t.Fatal(err)
		}
	}
	pw.Close()
	<-eof
	if want := chunks * 1024; lines != want {
		t.Errorf("%d lines delivered, want %d", lines, want)
	}
	if pauses := s.deadlines.(*tickReader).pauses; pauses > batches/4 {
		t.Errorf("the reader paused %d times in %d batches while the writer was ahead", pauses, batches)
	}
}
