//go:build !linux

package stdoutreceiver

// growPipe is a Linux-only optimisation (F_SETPIPE_SZ).
func growPipe(any) {}
