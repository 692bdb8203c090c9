//go:build !linux

package tick

// newWaker is a runtime timer where there is no timerfd.
func newWaker(wake func()) waker { return newAfterFuncWaker(wake) }
