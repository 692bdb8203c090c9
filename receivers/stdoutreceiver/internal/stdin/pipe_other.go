//go:build !linux

package stdin

import (
	"os"
	"time"
)

// windowedFile returns f when Go's poller serves it. The pollable copy of
// a blocking stdin pipe is Linux-only: elsewhere a blocking stdin delivers
// each read at once.
func windowedFile(f *os.File) deadlineReader {
	if f.SetReadDeadline(time.Time{}) == nil {
		return f
	}
	return nil
}
