//go:build linux

package stdin

import (
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/sidecarhq/sidecar/internal/rawconn"
	"github.com/sidecarhq/sidecar/internal/stdinpipe"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/tick"
)

// tickReader reads a pipe Go's poller serves, with read deadlines that
// pause instead of waiting in the poller. A read with a deadline (the join
// window of a held batch) sleeps until the deadline and then takes at once
// whatever the app wrote meanwhile, where a poller read would wake for
// every write: at 20k lines/s from a writer that writes every 5 ms, stdin
// woke 1,000-1,400 times a second (the runtime's monitor thread 800 of
// them), a third of its CPU in context switches; with this reader 230-350,
// and 16-35% less CPU per line (bench/COMPARISON.md, issue 14). Its
// read(2)s are raw (internal/rawconn), so that they do not wake the
// monitor thread either. A read without a deadline
// waits in the poller, so the first line after a quiet spell is read when
// it comes.
//
// The app's writes meanwhile go to the pipe's buffer, so it is used only on
// a pipe of at least stdinpipe.Size (~110 ms of a writer at 100k pino
// lines/s, against a 20 ms pause), and a pause never lets it fill: it
// sleeps in slices of pauseSlice and ends, the pipe read at once, as soon
// as the pipe holds a quarter of its size, so that a burst right after a
// quiet spell finds room (a writer blocks only if it writes three quarters
// of the pipe within one slice, and then for the rest of that slice; in
// e2e, an unbounded first pause once held a write at 100k lines/s for
// 100.7 ms). Once a writer was seen to write slowly enough (slowWriter),
// the rest of the pause is one slice. A writer that filled the last read
// is read on without a pause until the pipe is empty, and one that writes
// half the pipe or more per join window is not paused at all.
type tickReader struct {
	f  *os.File
	rc syscall.RawConn
	// full is how many bytes in the pipe end a pause: a quarter of its
	// size.
	full int

	mu       sync.Mutex
	deadline time.Time
	// kick ends a pause early: a deadline was set by another goroutine
	// (Shutdown).
	kick chan struct{}
	// fileDeadline is the deadline last set on f.
	fileDeadline time.Time
	// filled is set when the last read filled its buffer: the writer is
	// ahead, and more may be waiting.
	filled bool
	// fast is set while the app writes half the pipe or more per join
	// window: its reads then wait in the poller, with the deadline, as
	// they would without the tick, since a pause would mostly be cut short
	// by a filling pipe. read is what was read since measured.
	fast     bool
	read     int
	measured time.Time
}

// newTickReader returns a tickReader of f, a pipe Go's poller serves, or
// nil when f is not such a pipe or holds less than stdinpipe.Size.
func newTickReader(f *os.File) *tickReader {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	size := 0
	if rc.Control(func(fd uintptr) { size, _ = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }) != nil || size < stdinpipe.Size {
		return nil
	}
	return &tickReader{f: f, rc: rc, full: size / 4, kick: make(chan struct{}, 1)}
}

// SetReadDeadline sets when the next reads' pause ends; zero: they wait
// for input. A deadline that has passed (Shutdown's) is the file's at once,
// so that it also ends a read waiting in the poller; a later one only
// before a read that waits in the poller with it (a fast writer's): a
// file's deadline is a runtime timer, and each wakes the runtime's monitor
// thread (see package tick).
func (t *tickReader) SetReadDeadline(d time.Time) error {
	t.mu.Lock()
	t.deadline = d
	var err error
	if d.IsZero() || !d.After(time.Now()) {
		err = t.setFileDeadline(d)
	}
	t.mu.Unlock()
	select {
	case t.kick <- struct{}{}:
	default:
	}
	return err
}

// syncFileDeadline makes the reads' deadline the file's, before a read
// that waits in the poller; under t.mu, so that a deadline Shutdown sets
// meanwhile is never replaced by the one it replaced.
func (t *tickReader) syncFileDeadline() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.setFileDeadline(t.deadline)
}

// setFileDeadline sets the file's deadline, if it is not d already; t.mu
// is held.
func (t *tickReader) setFileDeadline(d time.Time) error {
	if d.Equal(t.fileDeadline) {
		return nil
	}
	t.fileDeadline = d
	return t.f.SetReadDeadline(d)
}

// Read waits in the poller without a deadline. With one, it pauses until
// the deadline, unless the writer is ahead, and then takes what the pipe
// holds: also once the deadline has passed, so that Shutdown, which sets a
// deadline of now, delivers what the app wrote during the pause.
func (t *tickReader) Read(p []byte) (int, error) {
	select {
	case <-t.kick: // set by this goroutine's own SetReadDeadline, or seen below
	default:
	}
	if t.until().IsZero() || t.fast {
		if err := t.syncFileDeadline(); err != nil {
			return 0, err
		}
		n, err := rawconn.Read(t.rc, p)
		t.count(n, n == len(p))
		return n, err
	}
	if !t.filled {
		t.pause()
	}
	n, err, ok := t.readReady(p)
	if !ok && time.Until(t.until()) > 0 { // the writer caught up before the deadline
		t.pause()
		n, err, ok = t.readReady(p)
	}
	if !ok {
		return 0, os.ErrDeadlineExceeded
	}
	return n, err
}

func (t *tickReader) readReady(p []byte) (int, error, bool) {
	n, err, ok := rawconn.ReadReady(t.rc, p)
	t.count(n, ok && n == len(p))
	return n, err, ok
}

// count notes a read of n bytes, and once per join window or more whether
// the app writes fast (see tickReader.fast).
func (t *tickReader) count(n int, filled bool) {
	t.filled = filled
	t.read += n
	now := time.Now()
	if since := now.Sub(t.measured); since >= joinWindow {
		t.fast = float64(t.read)*float64(joinWindow)/float64(since) >= stdinpipe.Size/2
		t.read, t.measured = 0, now
	}
}

func (t *tickReader) until() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.deadline
}

// pauseSlice is how long a pause sleeps before it looks at how full the
// pipe is: a writer must write ~150 MB/s (~470k pino lines/s) to fill the
// rest of a 1 MiB pipe within one slice (~100 MB/s within the first, up
// to one and a half). Slices end on package tick's clock, at multiples of
// pauseSlice (Fluent Forward's tick is one of them), and so does the
// pause: at the last multiple before its deadline, so that a lone line
// waits a join window less up to a slice.
const pauseSlice = 5 * time.Millisecond

// slowWriter is how many times faster than it wrote during a pause's first
// slices a writer may get without filling three quarters of the pipe by the
// pause's end: a pause sleeps the rest in one slice then (each slice is a
// wake-up: at 20k pino lines/s one instead of three), if that rest is at
// most maxRestInOneSlice. A writer that gets faster still waits for room at
// most until the pause ends.
const slowWriter = 4

// maxRestInOneSlice bounds how long a writer that got faster than its pace
// can wait for room: the join window, which a pause never outlasts in the
// product (tests make the window long, and a writer seen idle at first,
// e.g. descheduled, must not then wait for the whole of it).
const maxRestInOneSlice = joinWindow

// pause sleeps until the deadline, until another goroutine sets one, or
// until the pipe holds t.full bytes, whichever comes first.
func (t *tickReader) pause() {
	start := time.Now()
	end := t.until().Truncate(pauseSlice)
	if !start.Before(end) {
		return
	}
	// The first slice is at least half one, which shows the writer's pace.
	wake := tick.Next(start.Add(pauseSlice/2), pauseSlice)
	for {
		if wake.After(end) {
			wake = end
		}
		select {
		case <-tick.At(wake):
		case <-t.kick:
			return
		}
		n := t.buffered()
		if n >= t.full {
			return
		}
		now := time.Now()
		if !now.Before(end) {
			return
		}
		wake = tick.Next(now, pauseSlice)
		if restInOneSlice(n, now.Sub(start), end.Sub(now), t.full) {
			wake = end
		}
	}
}

// restInOneSlice reports whether a pause may sleep its rest in one slice:
// the writer wrote n bytes in the pause's first seen, rest is left of it,
// and a quarter of the pipe is full bytes.
func restInOneSlice(n int, seen, rest time.Duration, full int) bool {
	if rest > maxRestInOneSlice {
		return false
	}
	atPace := float64(n) * float64(rest) / float64(seen)
	return float64(n)+slowWriter*atPace < float64(3*full)
}

// buffered is how many bytes the pipe holds (FIONREAD, which x/sys names
// TIOCINQ on Linux), asked with a raw system call (it never blocks), which
// unlike one through the scheduler does not wake the runtime's monitor
// thread; on an error, as if full, so that a pause never outlasts what it
// cannot see.
func (t *tickReader) buffered() int {
	var n int32
	var errno syscall.Errno
	if err := t.rc.Control(func(fd uintptr) {
		_, _, errno = syscall.RawSyscall(syscall.SYS_IOCTL, fd, unix.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}); err != nil || errno != 0 {
		return t.full
	}
	return int(n)
}
