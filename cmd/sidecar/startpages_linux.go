package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Starting touches most of the executable once: every package's init (the
// AWS SDK's endpoint tables, compiled regexps, protobuf registries), the
// config's parsing and the components' start. Those pages stay resident,
// counted in RSS, though the running sidecar never reads most of them
// again: ~25 of its ~35 MB idle RSS (bench/COMPARISON.md, issue 14, "The
// binary's start-up pages"). So, once started, the sidecar asks the kernel
// to reclaim the executable's read-only pages (MADV_PAGEOUT, Linux 5.4):
// a page it needs again comes back on its first touch, from the page cache
// or the file. The kernel leaves pages another process maps too (a second
// sidecar from the same image) where they are.

// startPagesDelay is how long after the process starts its start-up pages
// are released: the components start in well under a second, and a page
// released too early only comes back.
const startPagesDelay = 2 * time.Second

// releaseStartPagesLater releases the start-up pages after startPagesDelay.
func releaseStartPagesLater() {
	time.AfterFunc(startPagesDelay, func() {
		// Best effort: an older kernel (EINVAL) or a sandbox that refuses
		// the call keeps the pages, as before.
		_ = releaseStartPages()
	})
}

// releaseStartPages asks the kernel to reclaim the resident pages of the
// executable's read-only mappings (code and read-only data).
func releaseStartPages() error {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return err
	}
	for _, m := range readOnlyMappings(string(maps), exe) {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_PAGEOUT); errno != 0 {
			return errno
		}
	}
	return nil
}

type mapping struct{ start, end uintptr }

// readOnlyMappings is the address ranges /proc/self/maps (maps) lists for
// the file path without write permission. A line is "start-end perms
// offset dev inode", then spaces and the path, which may itself hold
// spaces (and ends in " (deleted)" once the file was replaced, as the
// /proc/self/exe link does too).
func readOnlyMappings(maps, path string) []mapping {
	var out []mapping
	for line := range strings.Lines(maps) {
		fields := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 6)
		if len(fields) < 6 || strings.TrimLeft(fields[5], " ") != path || strings.Contains(fields[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, mapping{uintptr(start), uintptr(end)})
	}
	return out
}
