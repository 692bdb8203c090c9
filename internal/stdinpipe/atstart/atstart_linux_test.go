//go:build linux

package atstart

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sidecarhq/sidecar/internal/stdinpipe"
)

// A process importing the package finds the pipe on its stdin grown by the
// time any of its code runs: this test binary runs itself with a pipe as
// stdin, and the child reports the pipe's size first thing.
func TestAProcessStartsWithItsStdinPipeGrown(t *testing.T) {
	if os.Getenv("ATSTART_CHILD") == "1" {
		n, err := unix.FcntlInt(0, unix.F_GETPIPE_SZ, 0)
		fmt.Printf("stdin pipe %d %v\n", n, err)
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAProcessStartsWithItsStdinPipeGrown$")
	cmd.Env = append(os.Environ(), "ATSTART_CHILD=1")
	cmd.Stdin = r
	out, err := cmd.Output()
	r.Close()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, rest, _ := strings.Cut(string(out), "stdin pipe ")
	n, _ := strconv.Atoi(strings.Fields(rest + " ")[0])
	if n != stdinpipe.Size {
		t.Fatalf("the child's stdin pipe holds %d bytes, want %d (child said %q)", n, stdinpipe.Size, out)
	}
}
