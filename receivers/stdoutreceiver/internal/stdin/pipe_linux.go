//go:build linux

package stdin

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// windowedFile returns f, or a pollable copy of it, read on a tick when it
// is a large enough pipe (see tickReader); nil when f cannot wait with a
// deadline (a terminal, a regular file).
func windowedFile(f *os.File) deadlineReader {
	p := f
	if f.SetReadDeadline(time.Time{}) != nil {
		if p = pollableCopy(f); p == nil {
			return nil
		}
	}
	if t := newTickReader(p); t != nil {
		return t
	}
	return p
}

// pollableCopy returns a copy of f (a new descriptor for the same pipe or
// socket) that Go's poller serves, so that reads can wait with a deadline
// without holding a thread in a blocking read(2); nil for anything else.
// A terminal is left alone: making it non-blocking would outlive the
// sidecar in the shell that shares it.
func pollableCopy(f *os.File) *os.File {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	dup := -1
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		if m := st.Mode & unix.S_IFMT; m != unix.S_IFIFO && m != unix.S_IFSOCK {
			return
		}
		dup, _ = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if dup < 0 {
		return nil
	}
	if unix.SetNonblock(dup, true) != nil {
		_ = unix.Close(dup)
		return nil
	}
	p := os.NewFile(uintptr(dup), f.Name()) // non-blocking: NewFile hands it to the poller
	if p.SetReadDeadline(time.Time{}) != nil {
		_ = p.Close()
		return nil
	}
	return p
}
