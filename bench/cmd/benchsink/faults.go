package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// Axiom behaviours the sink can play, for the peak-RSS-under-outage
// scenarios.
const (
	axiomUp   = "up"   // answers at once
	axiomSlow = "slow" // holds every request for a while, then takes it
	axiomDown = "down" // answers 503 to every request
)

// faults plays a slow or unavailable Axiom in front of the fake.
type faults struct {
	mode string
	// pause holds a request in slow mode; it returns early with the
	// request's context when the client gives up.
	pause   func(ctx context.Context) error
	refused atomic.Int64 // requests answered 503 in down mode
}

func newFaults(mode string, delay time.Duration) (*faults, error) {
	switch mode {
	case axiomUp, axiomSlow, axiomDown:
	default:
		return nil, fmt.Errorf("-axiom %q: want %s, %s or %s", mode, axiomUp, axiomSlow, axiomDown)
	}
	return &faults{mode: mode, pause: func(ctx context.Context) error {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}}, nil
}

// wrap applies the mode to data requests (POST); stats are never delayed.
func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		switch f.mode {
		case axiomDown:
			// Read the body as a server that is up but failing would, so
			// the client sees an answer, not a reset connection.
			_, _ = io.Copy(io.Discard, r.Body)
			f.refused.Add(1)
			http.Error(w, `{"message":"service unavailable"}`, http.StatusServiceUnavailable)
			return
		case axiomSlow:
			// The whole request arrives first, then the answer is late; with
			// the body read, the server notices a client that gives up.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if f.pause(r.Context()) != nil {
				return // the client gave up; nothing was taken
			}
		}
		next.ServeHTTP(w, r)
	})
}
