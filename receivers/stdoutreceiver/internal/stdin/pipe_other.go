//go:build !linux

package stdin

// growPipe is a Linux-only optimisation (F_SETPIPE_SZ).
func growPipe(any) {}
