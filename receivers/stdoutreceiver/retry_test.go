package stdoutreceiver

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

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

// A pause is logged only once it has lasted pauseLogAfter, then once more
// when it ends: the queue's refusals of a few milliseconds at max rate are
// flow control (counted in refused_pushes), and would otherwise log two
// lines per batch.
func TestRetryLogsOnlyAPauseThatLasts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		logAfter time.Duration
		refuse   time.Duration // how long the pipeline refuses
		logged   []string
	}{
		{"short", time.Hour, 30 * time.Millisecond, nil},
		{"long", 20 * time.Millisecond, 60 * time.Millisecond, []string{
			"pipeline refuses records; the source stays paused until it takes them",
			"pipeline accepts records again; source resumed",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFactory()
			core, logs := observer.New(zap.InfoLevel)
			set := receivertest.NewNopSettings(f.Type())
			set.Logger = zap.New(core)
			r, err := newReceiver(set, stdinConfig(false))
			if err != nil {
				t.Fatal(err)
			}
			r.retryFirst, r.retryMax, r.pauseLogAfter = time.Millisecond, time.Millisecond, tc.logAfter
			start, attempts := time.Now(), 0
			err = r.retry(context.Background(), 1, func(context.Context) error {
				if attempts++; time.Since(start) < tc.refuse {
					return errors.New("data refused due to high memory usage")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if attempts < 3 {
				t.Fatalf("%d attempts: the pipeline did not refuse several times", attempts)
			}
			var got []string
			for _, e := range logs.All() {
				got = append(got, e.Message)
			}
			if !slices.Equal(got, tc.logged) {
				t.Errorf("after %d attempts logged %q, want %q", attempts, got, tc.logged)
			}
		})
	}
}

// Each push after a refusal carries that refusal (backpressure.Refusal):
// the consumer may have left there what it found out about the data, and
// nothing of it is kept past the retry.
func TestRetryCarriesTheLastRefusal(t *testing.T) {
	f := NewFactory()
	r, err := newReceiver(receivertest.NewNopSettings(f.Type()), stdinConfig(false))
	if err != nil {
		t.Fatal(err)
	}
	r.retryFirst, r.retryMax = time.Millisecond, time.Millisecond
	refusals := []error{errors.New("refused 1"), errors.New("refused 2")}
	var carried []error
	err = r.retry(context.Background(), 1, func(ctx context.Context) error {
		carried = append(carried, backpressure.Refusal(ctx))
		if n := len(carried); n <= len(refusals) {
			return refusals[n-1]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []error{nil, refusals[0], refusals[1]}; !slices.Equal(carried, want) {
		t.Errorf("pushes carried %v, want %v", carried, want)
	}
}
