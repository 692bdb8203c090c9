package main

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadOnlyMappingsAreTheExecutablesCodeAndConstants(t *testing.T) {
	const maps = `00400000-0081c000 r--p 00000000 fd:01 1234                               /usr/local/bin/sidecar
0081c000-01a0b000 r-xp 0041c000 fd:01 1234                               /usr/local/bin/sidecar
01a0b000-0269b000 r--p 0160b000 fd:01 1234                               /usr/local/bin/sidecar
0269b000-026ad000 rw-p 0229b000 fd:01 1234                               /usr/local/bin/sidecar
026ad000-04728000 rw-p 00000000 00:00 0 
c000000000-c004000000 rw-p 00000000 00:00 0 
7f1c2a000000-7f1c2a028000 r--p 00000000 fd:01 99                         /usr/lib/x86_64-linux-gnu/libc.so.6
7f1c2b000000-7f1c2b001000 r-xp 00000000 fd:01 77                         /usr/local/bin/sidecar-old
7ffd5a1f0000-7ffd5a211000 rw-p 00000000 00:00 0                          [stack]
`
	want := []mapping{{0x400000, 0x81c000}, {0x81c000, 0x1a0b000}, {0x1a0b000, 0x269b000}}
	if got := readOnlyMappings(maps, "/usr/local/bin/sidecar"); !reflect.DeepEqual(got, want) {
		t.Errorf("readOnlyMappings = %x, want %x", got, want)
	}
	// A replaced executable's path ends in " (deleted)" in both places,
	// and a path may hold spaces.
	const replaced = "00400000-0081c000 r-xp 00000000 fd:01 1234                               /opt/my apps/sidecar (deleted)\n"
	if got := readOnlyMappings(replaced, "/opt/my apps/sidecar (deleted)"); !reflect.DeepEqual(got, []mapping{{0x400000, 0x81c000}}) {
		t.Errorf("readOnlyMappings of a replaced executable = %x", got)
	}
	if got := readOnlyMappings(maps, "/usr/local/bin/other"); got != nil {
		t.Errorf("readOnlyMappings of a file not mapped = %x, want none", got)
	}
}

// residentFileKB is the process's resident file-backed memory (RssFile).
func residentFileKB(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(status, []byte("RssFile:"))
	if !ok {
		t.Skip("no RssFile in /proc/self/status")
	}
	line, _, _ := bytes.Cut(rest, []byte("kB"))
	kb, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

func TestReleaseStartPagesLowersResidentFilePages(t *testing.T) {
	before := residentFileKB(t)
	if err := releaseStartPages(); errors.Is(err, unix.EINVAL) {
		t.Skip("the kernel has no MADV_PAGEOUT (Linux 5.4)")
	} else if err != nil {
		t.Fatal(err)
	}
	// The test binary's own pages are most of its file-backed RSS; those
	// this test touches again come back at once.
	if after := residentFileKB(t); after > before/2 {
		t.Errorf("resident file pages %d kB after releasing, %d kB before: want at most half", after, before)
	}
}
