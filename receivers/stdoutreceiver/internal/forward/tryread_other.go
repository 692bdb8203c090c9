//go:build !unix

package forward

import "io"

// newTryRead is not available here: batches are then cut whenever the
// decoder's read buffer is empty.
func newTryRead(io.Reader) func(p []byte) (int, error, bool) { return nil }

// newWaitRead is not available here: the connection's own Read waits.
func newWaitRead(io.Reader) func(p []byte) (int, error) { return nil }

// newRcvLowat is not available here: a pause may wake for every frame.
func newRcvLowat(io.Reader) func(n int) { return nil }
