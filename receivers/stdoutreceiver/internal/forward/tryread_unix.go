//go:build unix

package forward

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// newTryRead returns a read that does not wait for r (a TCP or unix socket),
// or nil when r is not a socket. Go keeps sockets non-blocking, so a raw
// read(2) returns EAGAIN when the client has nothing buffered.
func newTryRead(r io.Reader) func(p []byte) (int, error, bool) {
	sc, ok := r.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func(p []byte) (int, error, bool) {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = readNow(int(fd), p)
			return true // never wait in the poller
		}); err != nil {
			return 0, err, true // closed, or past the shutdown deadline
		}
		switch {
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EINTR):
			return 0, nil, false
		case rerr != nil:
			return 0, rerr, true
		case n == 0 && len(p) > 0:
			return 0, io.EOF, true
		}
		return n, nil, true
	}
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
