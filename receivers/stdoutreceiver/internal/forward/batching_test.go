package forward

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream/streamtest"
)

// A client that sent one frame and the start of the next must get the
// first one delivered and acknowledged: the server may not hold lines while
// it waits for more input.
func TestDeliversBeforeWaitingForTheRestOfAFrame(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			col := streamtest.NewRecorder()
			_, addr, sock := startServer(t, network == "unix", 0, col.Sink)
			if network == "unix" {
				addr = sock
			}
			c := dial(t, network, addr)
			second := messageFrame("t", 2, "c2", kv{"log", "second"})
			half := bytes.Index(second, []byte("second")) + 3 // inside its line
			if _, err := c.Write(append(messageFrame("t", 1, "c1", kv{"log", "first"}), second[:half]...)); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // fail, not hang
			acks := msgp.NewReader(c)
			if got := readAck(t, acks); got != "c1" {
				t.Fatalf("ack %q, want c1", got)
			}
			if got := col.Lines(); len(got) != 1 || got[0].Data != "first" {
				t.Fatalf("before the rest of the second frame: %v", got)
			}
			if _, err := c.Write(second[half:]); err != nil {
				t.Fatal(err)
			}
			if got := readAck(t, acks); got != "c2" {
				t.Fatalf("ack %q, want c2", got)
			}
			if got := col.Wait(t, 2); got[1].Data != "second" {
				t.Fatalf("lines %v", got)
			}
		})
	}
}

// frameOfSize is a Message frame of exactly size bytes (256 < log < 65536).
func frameOfSize(t *testing.T, i, size int) []byte {
	t.Helper()
	build := func(n int) []byte {
		return messageFrame("t", 1767225600, "", kv{"log", fmt.Sprintf("%06d %s", i, strings.Repeat("x", n))})
	}
	f := build(300 + size - len(build(300)))
	if len(f) != size {
		t.Fatalf("frame of %d bytes, want %d", len(f), size)
	}
	return f
}

// Frames that arrived back to back are one batch, even when they fill the
// decoder's read buffer exactly: the socket, not that buffer, tells whether
// the client sent more. (Cutting a batch whenever the buffer ran dry made a
// fast client cost one Sink call per read.)
func TestBackToBackFramesAreOneBatch(t *testing.T) {
	col := streamtest.NewRecorder()
	release := col.Block()
	_, _, sock := startServer(t, true, 0, col.Sink)
	c := dial(t, "unix", sock)
	if _, err := c.Write(frameOfSize(t, 0, 512)); err != nil {
		t.Fatal(err)
	}
	<-col.Entered() // the server holds line 0 and waits for the pipeline
	// One read buffer's worth of whole frames, then more; a unix socket
	// queues all of it before the server reads again.
	const frames = readBufferSize/512 + 100
	var burst []byte
	for i := 1; i <= frames; i++ {
		burst = append(burst, frameOfSize(t, i, 512)...)
	}
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second)) // fail, not hang
	if _, err := c.Write(burst); err != nil {
		t.Fatal(err)
	}
	release()
	got := col.Wait(t, frames+1)
	for i, l := range got {
		if !strings.HasPrefix(l.Data, fmt.Sprintf("%06d ", i)) {
			t.Fatalf("line %d = %.12q", i, l.Data)
		}
	}
	batches := col.Batches()
	if batches != 2 {
		t.Fatalf("%d lines in %d Sink calls, want 2 (the first line, then the burst)", len(got), batches)
	}
}

// An idle connection's line buffer survives garbage collections for the
// next busy one: a sync.Pool, emptied by every GC, made busy connections
// allocate and zero a fresh 512 KiB buffer per GC cycle.
func TestArenaReusedAcrossGC(t *testing.T) {
	p := bufferPool{size: 1 << 10, maxIdle: maxIdleArenas}
	a := p.get()
	if cap(a) != p.size {
		t.Fatalf("arena of %d bytes, want %d", cap(a), p.size)
	}
	p.put(append(a, "line"...))
	runtime.GC()
	runtime.GC()
	b := p.get()
	if unsafe.SliceData(b) != unsafe.SliceData(a) || len(b) != 0 {
		t.Fatal("the idle arena was not reused after GC")
	}
	p.put(make([]byte, 0, 2<<10)) // not of the pool's size: dropped
	if c := p.get(); cap(c) != p.size {
		t.Fatalf("got an arena of %d bytes", cap(c))
	}
}

// Lines of the maximum size, back to back, keep the connection's buffer at
// its fixed size: nothing grows with traffic.
func TestArenaStaysFixedUnderLargeLines(t *testing.T) {
	const maxLine = 4 << 10
	col := streamtest.NewRecorder()
	s, err := New(Config{Endpoint: "127.0.0.1:0"}, Settings{MaxLineBytes: maxLine}, col.Sink)
	if err != nil {
		t.Fatal(err)
	}
	var in []byte
	const lines = 300
	for i := range lines {
		in = append(in, messageFrame("t", 1, "", kv{"log", fmt.Sprintf("%06d %s", i, strings.Repeat("y", 2*maxLine))})...)
	}
	c := newConn(s, &repeatReader{data: in, n: 1}, nil)
	var maxCap int
	s.sink = func(ctx context.Context, b stream.Batch) error {
		maxCap = max(maxCap, cap(c.arena))
		return col.Sink(ctx, b)
	}
	if err := c.serve(); err != nil {
		t.Fatal(err)
	}
	got := col.Lines()
	if len(got) != lines || !got[lines-1].Truncated || len(got[lines-1].Data) != maxLine {
		t.Fatalf("%d lines, last truncated=%v len=%d", len(got), got[lines-1].Truncated, len(got[lines-1].Data))
	}
	if maxCap != s.arenas.size || c.arena != nil {
		t.Fatalf("arena grew to %d bytes (pool size %d) or was kept after the client closed", maxCap, s.arenas.size)
	}
}

// startPausingServer is startServer on a unix socket with the pause before
// delivering replaced by pause.
func startPausingServer(t *testing.T, sink stream.Sink, pause func()) string {
	t.Helper()
	return startClockedServer(t, sink, pause, time.Now)
}

// startClockedServer is startPausingServer with the clock replaced by now.
func startClockedServer(t *testing.T, sink stream.Sink, pause func(), now func() time.Time) string {
	t.Helper()
	cfg := Config{UnixSocket: filepath.Join(shortTempDir(t), "fluent.sock")}
	s, err := New(cfg, Settings{}, sink)
	if err != nil {
		t.Fatal(err)
	}
	s.pause, s.now = pause, now
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return cfg.UnixSocket
}

// Docker's fluentd driver writes every line as its own frame and asks for
// no ack: frames that come while the connection pauses join its batch
// instead of costing a batch and a pipeline call each.
func TestFramesWrittenDuringThePauseJoinTheBatch(t *testing.T) {
	col := streamtest.NewRecorder()
	paused := make(chan struct{}, 1)
	resume := make(chan struct{})
	sock := startPausingServer(t, col.Sink, func() {
		select {
		case paused <- struct{}{}:
		default:
		}
		<-resume
	})
	c := dial(t, "unix", sock)
	if _, err := c.Write(messageFrame("docker.api", 1, "", kv{"log", "line 1"})); err != nil {
		t.Fatal(err)
	}
	select { // line 1 is decoded, nothing more was sent
	case <-paused:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection delivered line 1 without pausing") // fail, not hang
	}
	for _, l := range []string{"line 2", "line 3"} {
		if _, err := c.Write(messageFrame("docker.api", 1, "", kv{"log", l})); err != nil {
			t.Fatal(err)
		}
	}
	close(resume)
	got := col.Wait(t, 3)
	for i, l := range got {
		if want := fmt.Sprintf("line %d", i+1); l.Data != want {
			t.Fatalf("line %d = %q, want %q", i, l.Data, want)
		}
	}
	if b := col.Batches(); b != 1 {
		t.Fatalf("3 lines in %d Sink calls, want 1", b)
	}
}

// A client that asked for an ack waits for it before it sends more
// (fluent-logger's RequestAck, Fluent Bit's require_ack_response): its
// frames are delivered and acknowledged without the pause.
func TestAckedFramesAreNotHeld(t *testing.T) {
	col := streamtest.NewRecorder()
	var pauses atomic.Int64
	sock := startPausingServer(t, col.Sink, func() { pauses.Add(1) })
	c := dial(t, "unix", sock)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // fail, not hang
	acks := msgp.NewReader(c)
	for i, chunk := range []string{"c1", "c2", "c3"} {
		if _, err := c.Write(messageFrame("t", 1, chunk, kv{"log", chunk})); err != nil {
			t.Fatal(err)
		}
		if got := readAck(t, acks); got != chunk {
			t.Fatalf("ack %q, want %q", got, chunk)
		}
		if got := col.Lines(); len(got) != i+1 || got[i].Data != chunk {
			t.Fatalf("after ack %s: %v", chunk, got)
		}
	}
	if n := pauses.Load(); n != 0 {
		t.Fatalf("paused %d times while the client waited for acks", n)
	}
}

// Forward-mode frames (Fluent Bit, FireLens) come batched already: a frame
// that comes a tick or more after the last batch is delivered without a
// pause of the server's (Fluent Bit flushes once a second), one that comes
// sooner (a client writing a small frame every few ms) is held for the
// frames after it, as docker's are.
func TestForwardModeFramesAreHeldOnlyWhenFrequent(t *testing.T) {
	col := streamtest.NewRecorder()
	var pauses atomic.Int64
	var clock atomic.Int64 // ns since t0
	t0 := time.Unix(1767225600, 0)
	sock := startClockedServer(t, col.Sink, func() { pauses.Add(1) },
		func() time.Time { return t0.Add(time.Duration(clock.Load())) })
	c := dial(t, "unix", sock)
	lines := 0
	for _, step := range []struct {
		at     time.Duration
		pauses int64
	}{
		{0, 0},                              // the first frame
		{holdBatch / 4, 1},                  // a quarter tick after the first batch
		{holdBatch/4 + holdBatch, 1},        // a tick after the second
		{holdBatch/4 + 50*holdBatch, 1},     // long after
		{holdBatch/4 + 50*holdBatch + 1, 2}, // right after
	} {
		clock.Store(int64(step.at))
		if _, err := c.Write(forwardFrame("app-firelens", t0, "", "one", "two")); err != nil {
			t.Fatal(err)
		}
		lines += 2
		col.Wait(t, lines)
		if n := pauses.Load(); n != step.pauses {
			t.Fatalf("frame at %v after the first: %d pauses so far, want %d", step.at, n, step.pauses)
		}
	}
}

// While docker's driver keeps writing, the connection reads once a tick:
// after a batch that a pause made larger it pauses again instead of waking
// for the next frame, and the frames written meanwhile are the next batch,
// delivered without a pause of its own.
func TestWhileTheClientKeepsSendingTheConnectionReadsOnceATick(t *testing.T) {
	col := streamtest.NewRecorder()
	var c net.Conn
	dialed := make(chan struct{}) // c is set
	// What the client writes during each pause of the server's.
	during := [][]string{{"line 2"}, {"line 3", "line 4"}}
	var pauses atomic.Int64
	third := make(chan struct{})
	sock := startPausingServer(t, col.Sink, func() {
		i := int(pauses.Add(1) - 1)
		if i == len(during) {
			close(third)
		}
		if i >= len(during) {
			return
		}
		<-dialed
		for _, l := range during[i] {
			if _, err := c.Write(messageFrame("docker.api", 1, "", kv{"log", l})); err != nil {
				t.Error(err)
			}
		}
	})
	c = dial(t, "unix", sock)
	close(dialed)
	if _, err := c.Write(messageFrame("docker.api", 1, "", kv{"log", "line 1"})); err != nil {
		t.Fatal(err)
	}
	col.Wait(t, 4)
	if got := col.Batches(); got != 2 {
		t.Fatalf("4 lines in %d Sink calls, want 2 (lines 1-2, lines 3-4)", got)
	}
	select { // after lines 3-4 it pauses for more instead of waiting for its client
	case <-third:
	case <-time.After(10 * time.Second):
		t.Fatal("no pause after the second batch") // fail, not hang
	}
}

// Pauses end on one clock, so connections that pause together wake
// together.
func TestPausesEndOnTheTick(t *testing.T) {
	for _, now := range []time.Time{time.Unix(1767225600, 0), time.Unix(1767225600, 1), time.Unix(1767225600, int64(holdBatch)-1), time.Now()} {
		end := nextTick(now)
		if d := end.Sub(now); d <= 0 || d > holdBatch || end.UnixNano()%int64(holdBatch) != 0 {
			t.Errorf("nextTick(%v) = %v", now, end)
		}
	}
}
