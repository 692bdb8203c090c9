//go:build !unix

package forward

import "io"

// newTryRead is not available here: batches are then cut whenever the
// decoder's read buffer is empty.
func newTryRead(io.Reader) func(p []byte) (int, error, bool) { return nil }
