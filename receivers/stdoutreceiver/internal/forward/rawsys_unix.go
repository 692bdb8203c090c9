//go:build unix && !linux

package forward

import "syscall"

// setRcvLowat: see rawsys_linux.go; elsewhere the ordinary call.
func setRcvLowat(fd, n int) error {
	return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
}
