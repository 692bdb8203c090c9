package watchdog

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/watchdog"
)

type watchdogExtension struct {
	cfg   *Config
	log   *zap.Logger
	watch *watchdog.Watch

	host  component.Host
	stop  chan struct{}
	done  sync.WaitGroup
	fired sync.Once
}

func newExtension(cfg *Config, set extension.Settings, watch *watchdog.Watch) *watchdogExtension {
	return &watchdogExtension{cfg: cfg, log: set.Logger, watch: watch, stop: make(chan struct{})}
}

// checksPerGrace is how many times per wedged_after the watch is asked:
// a wedge is seen at most a fifth of it late.
const checksPerGrace = 5

func (w *watchdogExtension) Start(_ context.Context, host component.Host) error {
	w.host = host
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		t := time.NewTicker(w.cfg.WedgedAfter / checksPerGrace)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.check()
			}
		}
	}()
	return nil
}

// check reports a wedge once: a fatal error, which fails `sidecar health`
// (the liveness probe) and makes the collector stop. A wedged stage may
// keep the stop from finishing; the failing probe then has the platform
// restart the sidecar, and what the queue held on disk is sent by the next
// start. The goroutines' stacks go to the log, to find the wedge.
func (w *watchdogExtension) check() {
	stage, since, stuck := w.watch.Stuck(w.cfg.WedgedAfter)
	if !stuck {
		return
	}
	w.fired.Do(func() {
		var stacks bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1) // to a buffer: cannot fail
		err := fmt.Errorf("pipeline wedged: %s has made no progress since %s, longer than it can by design plus wedged_after (%s); a restart is needed",
			stage, since.UTC().Format(time.RFC3339), w.cfg.WedgedAfter)
		w.log.Error(err.Error(), zap.String("goroutines", stacks.String()))
		componentstatus.ReportStatus(w.host, componentstatus.NewFatalErrorEvent(err))
	})
}

func (w *watchdogExtension) Shutdown(context.Context) error {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.done.Wait()
	return nil
}
