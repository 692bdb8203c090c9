//go:build !linux

package stdin

import "os"

// pollableCopy is Linux-only: elsewhere a blocking stdin delivers each read
// at once.
func pollableCopy(*os.File) deadlineReader { return nil }
