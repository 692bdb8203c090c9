package rawconn

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Wrap returns c with Read and Write made raw when c is a TCP connection,
// otherwise c itself. Its other methods (Close, deadlines, addresses) are
// c's.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &Conn{Conn: tc, rc: rc}
}

// Conn is a TCP connection whose Read and Write are raw (see Wrap). It
// embeds net.Conn, not *net.TCPConn, so that io.Copy cannot reach
// TCPConn's ReadFrom and WriteTo, which would go around them.
type Conn struct {
	net.Conn
	rc syscall.RawConn
}

// RawConn is the connection's file descriptor access, for socket options
// and reads of its own (gRPC's ReadOnReady).
func (c *Conn) RawConn() syscall.RawConn { return c.rc }

func (c *Conn) Read(p []byte) (int, error) {
	n, err := Read(c.rc, p)
	if err != nil && err != io.EOF {
		err = c.opError("read", err)
	}
	return n, err
}

// CloseWrite shuts down the sending side, as *net.TCPConn's does: an HTTP
// server half-closes with it before closing a connection whose request it
// did not read to the end, so that its response is not lost to a reset.
func (c *Conn) CloseWrite() error { return c.Conn.(*net.TCPConn).CloseWrite() }

func (c *Conn) Write(p []byte) (int, error) {
	n, err := Write(c.rc, p)
	if err != nil {
		err = c.opError("write", err)
	}
	return n, err
}

// opError wraps err as net.Conn's Read and Write do: an errno in an
// os.SyscallError, all in a net.OpError. RawConn's own errors (deadline
// exceeded, closed) already come in a net.OpError, named "raw-read" or
// "raw-write".
func (c *Conn) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		oe.Op = op
		return oe
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// ReadReady reads into p what the descriptor under rc (a non-blocking
// socket or pipe) holds now, without waiting and whatever rc's read
// deadline: ok is false when it holds nothing (EAGAIN). A reader that
// pauses on its own clock reads with it when the pause ends (see the stdin
// transport); io.EOF once the writer has closed.
func ReadReady(rc syscall.RawConn, p []byte) (n int, err error, ok bool) {
	if len(p) == 0 {
		return 0, nil, true
	}
	if len(p) > maxRW {
		p = p[:maxRW]
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		for {
			if n, errno = ReadNow(fd, p); errno != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return 0, err, true
	}
	switch {
	case errno == syscall.EAGAIN:
		return 0, nil, false
	case errno != 0:
		return 0, errno, true
	case n == 0:
		return 0, io.EOF, true
	}
	return n, nil, true
}

// Write writes all of p to the stream socket under rc, waiting in the
// poller while its send buffer is full, as net.Conn's Write does. It
// returns how much was written before an error (rc's, such as a write
// deadline, or a bare syscall.Errno such as EPIPE).
func Write(rc syscall.RawConn, p []byte) (int, error) {
	var written int
	var errno syscall.Errno
	var eof bool
	err := rc.Write(func(fd uintptr) bool {
		for written < len(p) {
			n, e := writeNow(fd, p[written:min(len(p), written+maxRW)])
			switch e {
			case 0:
				if n == 0 { // a socket takes at least a byte or says why not
					eof = true
					return true
				}
				written += n
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // send buffer full: wait in the poller
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return written, err
	case errno != 0:
		return written, errno
	case eof:
		return written, io.ErrUnexpectedEOF
	}
	return written, nil
}

// writeNow sends with MSG_NOSIGNAL: a peer that has gone makes it fail with
// EPIPE, without a SIGPIPE.
func writeNow(fd uintptr, p []byte) (int, syscall.Errno) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, errno := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(ptr), uintptr(len(p)), syscall.MSG_NOSIGNAL, 0, 0)
	return int(n), errno
}
