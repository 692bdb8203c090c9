package rawconn

import (
	"syscall"
	"unsafe"
)

// ReadNow makes one read(2) of fd into p with syscall.RawSyscall: on a
// non-blocking socket it never waits (EAGAIN when there is nothing), and
// the scheduler does not hear of it, so it wakes no monitor thread (see
// the package doc). Elsewhere than Linux it is syscall.Read.
func ReadNow(fd uintptr, p []byte) (int, syscall.Errno) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(ptr), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), 0
}
