package stdoutreceiver

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/sidecarhq/sidecar/internal/backpressure"
)

// On one P, a push the pipeline accepts once it has room yields to the
// goroutines it readied (the exporter's next send), so that the send's round
// trip passes while the source reads and decodes its next batch.
func TestRetryYieldsToWhatTheAcceptedPushReadied(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f := NewFactory()
	r, err := newReceiver(receivertest.NewNopSettings(f.Type()), stdinConfig(false))
	if err != nil {
		t.Fatal(err)
	}
	r.retryFirst, r.retryMax = time.Hour, time.Hour
	const trials = 20
	ran := 0
	for range trials {
		var room backpressure.Room
		var sent atomic.Bool
		attempts := 0
		err := r.retry(context.Background(), 1, func(context.Context) error {
			if attempts++; attempts == 1 {
				freed := room.Freed()
				room.Free()
				return backpressure.Full(errors.New("sending queue is full"), freed)
			}
			go sent.Store(true)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if sent.Load() {
			ran++
		}
	}
	// Once in 61 turns Go's scheduler looks at its global queue first, where
	// the yield put this goroutine: so not every trial, but most.
	if ran < trials/2 {
		t.Errorf("the goroutine the accepted push started ran before retry returned in %d of %d trials", ran, trials)
	}
}
