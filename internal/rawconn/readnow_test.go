//go:build unix

package rawconn

import (
	"syscall"
	"testing"
)

// ReadNow never waits: EAGAIN on an empty non-blocking socket, what is
// there when something is, 0 once the peer has closed.
func TestReadNow(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	fd := uintptr(fds[0])
	p := make([]byte, 8)
	if n, errno := ReadNow(fd, p); n != 0 || errno != syscall.EAGAIN {
		t.Fatalf("empty socket: %d, %v; want EAGAIN", n, errno)
	}
	if _, err := syscall.Write(fds[1], []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if n, errno := ReadNow(fd, p[:0]); n != 0 || errno != 0 {
		t.Fatalf("empty p: %d, %v", n, errno)
	}
	if n, errno := ReadNow(fd, p); errno != 0 || string(p[:n]) != "abc" {
		t.Fatalf("read %q, %v; want \"abc\"", p[:n], errno)
	}
	syscall.Close(fds[1])
	if n, errno := ReadNow(fd, p); n != 0 || errno != 0 {
		t.Fatalf("after the peer closed: %d, %v; want 0 and no error", n, errno)
	}
}
