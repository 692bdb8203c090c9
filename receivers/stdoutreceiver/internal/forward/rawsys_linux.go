package forward

import (
	"syscall"
	"unsafe"
)

// setRcvLowat makes a system call that never blocks without telling the Go
// scheduler, as syscall.SetsockoptInt does: that notice wakes the runtime's
// monitor thread when the process was idle, and it then polls every 20 µs
// while the process runs. A connection makes this call, and its reads
// (rawconn.ReadNow, for the same reason), each time it wakes for a tick
// (see holdBatch), so with the notice every tick cost the monitor's
// wake-ups too (at 1,000 docker-style lines/s, a third of the sidecar's
// CPU).
func setRcvLowat(fd, n int) error {
	v := int32(n)
	_, _, errno := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT,
		uintptr(unsafe.Pointer(&v)), unsafe.Sizeof(v), 0)
	if errno != 0 {
		return errno
	}
	return nil
}
