//go:build unix

package forward

import (
	"io"
	"net"
	"syscall"

	"github.com/sidecarhq/sidecar/internal/rawconn"
)

// newTryRead returns a read that does not wait for r (a TCP or unix socket),
// or nil when r is not a socket. Go keeps sockets non-blocking, so a raw
// read(2) returns EAGAIN when the client has nothing buffered.
func newTryRead(r io.Reader) func(p []byte) (int, error, bool) {
	rc := rawConn(r)
	if rc == nil {
		return nil
	}
	return func(p []byte) (int, error, bool) {
		var n int
		var errno syscall.Errno
		if err := rc.Read(func(fd uintptr) bool {
			n, errno = rawconn.ReadNow(fd, p)
			return true // never wait in the poller
		}); err != nil {
			return 0, err, true // closed, or past the shutdown deadline
		}
		switch {
		case errno == syscall.EAGAIN, errno == syscall.EINTR:
			return 0, nil, false
		case errno != 0:
			return 0, errno, true
		case n == 0 && len(p) > 0:
			return 0, io.EOF, true
		}
		return n, nil, true
	}
}

// newWaitRead returns a read of r (a TCP or unix socket) that waits in the
// poller when the client has sent nothing, as r.Read does, but makes its
// read(2)s raw (rawconn.Read), unseen by the scheduler; nil when r is not a
// socket. A connection waits for its client each time it leaves the tick
// (about 40 times a second on 4 FireLens-style connections at 20k lines/s
// on a busy host), and r.Read's two read(2)s per wait each woke the
// runtime's monitor thread: with this read, 495-566 thread wake-ups a
// second there against 679-936, and 79-97 against 145-162 at 1,000 lines/s
// (bench sweeps, 3 alternated rounds).
func newWaitRead(r io.Reader) func(p []byte) (int, error) {
	rc := rawConn(r)
	if rc == nil {
		return nil
	}
	return func(p []byte) (int, error) { return rawconn.Read(rc, p) }
}

// newRcvLowat returns a setter of a TCP socket's SO_RCVLOWAT, or nil for
// other readers. While a connection pauses for more frames (holdBatch),
// a high mark keeps Linux from waking the poller for every small frame
// that arrives (each wake-up cost more than reading the frame); it is 1
// otherwise, so an idle connection wakes for its first byte. Unix sockets
// have no such mark.
func newRcvLowat(r io.Reader) func(n int) {
	tc, ok := r.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return func(n int) {
		_ = rc.Control(func(fd uintptr) {
			_ = setRcvLowat(int(fd), n)
		})
	}
}

// rawConn is r's raw connection when r is a socket (TCP or unix), else nil.
func rawConn(r io.Reader) syscall.RawConn {
	sc, ok := r.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}
