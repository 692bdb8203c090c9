//go:build unix

package rawconn

import (
	"io"
	"syscall"
)

// maxRW bounds one system call, as internal/poll does: some kernels refuse
// larger counts.
const maxRW = 1 << 30

// Read reads into p from the stream socket under rc, waiting in the poller
// while it has nothing, as net.Conn's Read does: io.EOF once the peer has
// closed, 0 and no error for an empty p. Errors are rc's (closed, deadline
// exceeded) or a bare syscall.Errno.
func Read(rc syscall.RawConn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) > maxRW {
		p = p[:maxRW]
	}
	var n int
	var errno syscall.Errno
	err := rc.Read(func(fd uintptr) bool {
		for {
			n, errno = ReadNow(fd, p)
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // nothing there yet: wait in the poller
			}
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
