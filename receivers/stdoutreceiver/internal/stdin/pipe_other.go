//go:build !linux

package stdin

import "os"

// growPipe is a Linux-only optimisation (F_SETPIPE_SZ).
func growPipe(any) {}

// pollableCopy is Linux-only: elsewhere a blocking stdin delivers each read
// at once.
func pollableCopy(*os.File) deadlineReader { return nil }
