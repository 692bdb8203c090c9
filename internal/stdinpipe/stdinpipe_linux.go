//go:build linux

package stdinpipe

import (
	"os"

	"golang.org/x/sys/unix"
)

// Grow asks for a Size kernel buffer when src is a pipe. It fails
// harmlessly when src is not a pipe or Size is over
// /proc/sys/fs/pipe-max-size.
func Grow(src any) {
	if f, ok := src.(*os.File); ok {
		// Through SyscallConn, not Fd: Fd would make a pollable file blocking.
		if rc, err := f.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, Size) })
		}
	}
}
