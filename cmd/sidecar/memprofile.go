package main

import (
	"os"
	"runtime"
	"strings"
)

// stopHeapProfile turns the runtime's heap profile off, unless
// GODEBUG=memprofilerate=N asks for one. By default the runtime samples an
// allocation every 512 KiB, each with a walk of the allocating goroutine's
// stack and a record in the profile's table, but the sidecar serves no
// heap profile (no pprof endpoint; the watchdog writes goroutine stacks
// only): the samples were ~25 instructions per stdin line at max rate,
// where a line allocates ~490 bytes (bench/COMPARISON.md, 2026-12-07).
// The runtime asks for the rate to change once, as early as possible.
func stopHeapProfile() {
	if !strings.Contains(os.Getenv("GODEBUG"), "memprofilerate=") {
		runtime.MemProfileRate = 0
	}
}
