package stdin

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalTick is how often EndProcess repeats SIGTERM until the collector
// listens for it.
const signalTick = 200 * time.Millisecond

// EndProcess ends the sidecar the way `kill -TERM` does, so the
// collector shuts down gracefully: receivers stop, exporters flush their
// queues, and the process exits 0. The collector only listens for SIGTERM
// once every component has started, so until the receiver's Shutdown
// closes stop the signal is repeated, and this function holds its own
// signal subscription meanwhile so that an early SIGTERM cannot kill the
// process by the default action.
func EndProcess(stop <-chan struct{}) {
	held := make(chan os.Signal, 1)
	signal.Notify(held, syscall.SIGTERM)
	defer signal.Stop(held)
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		return // cannot happen on Unix: FindProcess always succeeds there
	}
	tick := time.NewTicker(signalTick)
	defer tick.Stop()
	for {
		_ = self.Signal(syscall.SIGTERM)
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}
