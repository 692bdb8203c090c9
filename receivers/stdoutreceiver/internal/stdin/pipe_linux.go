//go:build linux

package stdin

import (
	"errors"
	"os"
	"time"

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

// pollSlice is the longest one poll waits before it looks at stop.
const pollSlice = 5 * time.Millisecond

// pollReadable returns Transport.readable for a file (a pipe, a terminal),
// or nil for any other source. It reports true once a read would not
// block: input, its end, or an error, which the read then returns.
func pollReadable(src any) func(time.Duration, func() bool) bool {
	f, ok := src.(*os.File)
	if !ok {
		return nil
	}
	fd := int(f.Fd())
	return func(timeout time.Duration, stop func() bool) bool {
		deadline := time.Now().Add(timeout)
		for !stop() {
			ms := int((min(time.Until(deadline), pollSlice) + time.Millisecond - 1) / time.Millisecond)
			if ms <= 0 {
				return false
			}
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, ms)
			if errors.Is(err, unix.EINTR) || (err == nil && n == 0) {
				continue // interrupted, or a slice passed without input
			}
			return err == nil
		}
		return false
	}
}
