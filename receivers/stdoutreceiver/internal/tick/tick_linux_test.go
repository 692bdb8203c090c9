package tick

import "testing"

// On Linux the clock wakes the process through the poller (a timerfd), not
// through a runtime timer, which would wake the runtime's monitor thread
// too (see the package doc).
func TestOnLinuxTheClockIsATimerfd(t *testing.T) {
	w := newWaker(func() {})
	if _, ok := w.(*timerfdWaker); !ok {
		t.Fatalf("waker is %T, want a timerfd", w)
	}
}
