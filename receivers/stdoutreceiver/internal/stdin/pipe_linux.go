//go:build linux

package stdin

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe asks for a larger kernel buffer when stdin is a pipe: the app can
// then run further ahead of the sidecar and each read returns more lines,
// so there are fewer reads and context switches per line. It fails
// harmlessly when stdin is not a pipe or the size is over
// /proc/sys/fs/pipe-max-size.
func growPipe(src any) {
	if f, ok := src.(*os.File); ok {
		_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, pipeBuffer)
	}
}
