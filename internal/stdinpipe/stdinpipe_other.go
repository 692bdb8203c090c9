//go:build !linux

package stdinpipe

// Grow is a Linux-only optimisation (F_SETPIPE_SZ).
func Grow(any) {}
