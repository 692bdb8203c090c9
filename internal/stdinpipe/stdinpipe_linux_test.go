//go:build linux

package stdinpipe

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestGrowGivesApipeSizeBytes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	before := pipeSize(t, w)
	Grow(r)
	if got := pipeSize(t, w); got != Size {
		t.Fatalf("pipe buffer %d bytes after Grow (%d before), want %d", got, before, Size)
	}
}

// pipeSize is the kernel buffer of the pipe f is an end of.
func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var ferr error
	if err := rc.Control(func(fd uintptr) { n, ferr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	return n
}
