//go:build !linux

package stdin

import "time"

// growPipe is a Linux-only optimisation (F_SETPIPE_SZ).
func growPipe(any) {}

// pollReadable is Linux-only: elsewhere each read is delivered at once.
func pollReadable(any) func(time.Duration, func() bool) bool { return nil }
