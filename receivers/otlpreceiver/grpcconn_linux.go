package otlpreceiver

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/mem"

	"github.com/sidecarhq/sidecar/internal/rawconn"
)

// grpcConn is a gRPC server connection whose reads and writes are raw (see
// rawListener), with gRPC's ReadOnReady, which gRPC's transport reads
// through when a connection has it, as it does a plain *net.TCPConn: a read
// buffer is taken from gRPC's pool only once data has arrived, so an idle
// connection pins none (through Read, it would keep a read_buffer_size
// buffer, 512 KiB by default, for its whole life).
type grpcConn struct {
	net.Conn // rawconn.Wrap's
	rc       syscall.RawConn
}

// wrapGRPC makes a TCP connection a grpcConn. gRPC sets TCP_USER_TIMEOUT
// to the keepalive timeout only on a *net.TCPConn, so it is set here.
func wrapGRPC(userTimeout time.Duration) func(net.Conn) net.Conn {
	return func(c net.Conn) net.Conn {
		w, ok := rawconn.Wrap(c).(*rawconn.Conn)
		if !ok {
			return c
		}
		rc := w.RawConn()
		_ = rc.Control(func(fd uintptr) {
			_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(userTimeout.Milliseconds()))
		})
		return &grpcConn{Conn: w, rc: rc}
	}
}

// ReadOnReady waits in the poller until the socket has data, then reads up
// to size bytes of it into a buffer from pool, which the caller puts back:
// gRPC's readyreader.Reader.
func (c *grpcConn) ReadOnReady(size int, pool mem.BufferPool) (*[]byte, int, error) {
	var (
		buf   *[]byte
		n     int
		errno syscall.Errno
	)
	err := c.rc.Read(func(fd uintptr) bool {
		buf = pool.Get(size)
		for {
			if n, errno = rawconn.ReadNow(fd, *buf); errno != syscall.EINTR {
				break
			}
		}
		if errno != 0 || n == 0 {
			pool.Put(buf)
			buf = nil
		}
		return errno != syscall.EAGAIN // nothing there yet: wait in the poller
	})
	switch {
	case err != nil:
		return nil, 0, err
	case errno != 0:
		return nil, 0, os.NewSyscallError("read", errno)
	case n == 0:
		return nil, 0, io.EOF
	}
	return buf, n, nil
}
