//go:build linux

package stdin

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// blockingPipe is a pipe whose read end Go's poller does not serve, as a
// child process's stdin is.
func blockingPipe() (*os.File, *os.File, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "pipe-r"), os.NewFile(uintptr(fds[1]), "pipe-w"), nil
}

// unread is how many bytes the pipe holds that nobody has read yet.
func unread(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ticking reports whether s reads its pipe on a tick (tickReader).
func ticking(s *Transport) bool {
	_, ok := s.deadlines.(*tickReader)
	return ok
}
