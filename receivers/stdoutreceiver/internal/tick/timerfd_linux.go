package tick

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/sidecarhq/sidecar/internal/rawconn"
)

// newWaker is a timerfd read by a goroutine of its own, waiting in the
// poller: its expiry wakes the process as a socket's data does. Its reads
// and settings are raw system calls (they never block), which the
// scheduler does not hear about, as a call through it would wake sysmon.
// Without a timerfd (an old kernel, a sandbox), a runtime timer.
func newWaker(wake func()) waker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newAfterFuncWaker(wake)
	}
	f := os.NewFile(uintptr(fd), "tick")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return newAfterFuncWaker(wake)
	}
	w := &timerfdWaker{f: f, fd: fd}
	go w.run(rc, wake)
	return w
}

type timerfdWaker struct {
	f  *os.File // keeps fd open
	fd int
}

func (w *timerfdWaker) run(rc syscall.RawConn, wake func()) {
	var expirations [8]byte
	for {
		if _, err := rawconn.Read(rc, expirations[:]); err != nil {
			// The timerfd is never closed and its reads do not fail;
			// should one, the clock looks at its moments every
			// millisecond rather than never.
			time.Sleep(time.Millisecond)
		}
		wake()
	}
}

func (w *timerfdWaker) arm(d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(d, 1).Nanoseconds())}
	_, _, _ = syscall.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(w.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}
