package forward

import (
	"syscall"
	"unsafe"
)

// readNow and setRcvLowat make system calls that never block (the socket
// is non-blocking) without telling the Go scheduler, as syscall.Read and
// syscall.SetsockoptInt do: that notice wakes the runtime's monitor thread
// when the process was idle, and it then polls every 20 µs while the
// process runs. A connection makes these calls each time it wakes for a
// tick (see holdBatch), so with the notice every tick cost the monitor's
// wake-ups too (at 1,000 docker-style lines/s, a third of the sidecar's
// CPU).
func readNow(fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func setRcvLowat(fd, n int) error {
	v := int32(n)
	_, _, errno := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT,
		uintptr(unsafe.Pointer(&v)), unsafe.Sizeof(v), 0)
	if errno != 0 {
		return errno
	}
	return nil
}
