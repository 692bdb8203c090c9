//go:build unix && !linux

package forward

import "syscall"

// readNow and setRcvLowat: see rawsys_linux.go; elsewhere the ordinary
// calls.
func readNow(fd int, p []byte) (int, error) { return syscall.Read(fd, p) }

func setRcvLowat(fd, n int) error {
	return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
}
