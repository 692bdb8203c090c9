//go:build unix && !linux

package rawconn

import "syscall"

// ReadNow makes one read(2) of fd into p: see readnow_linux.go; here the
// ordinary call.
func ReadNow(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	if err != nil {
		errno, ok := err.(syscall.Errno)
		if !ok {
			errno = syscall.EIO
		}
		return 0, errno
	}
	return n, 0
}
