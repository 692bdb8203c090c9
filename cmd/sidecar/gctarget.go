package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The garbage collector's target is set after each cycle from the live heap
// that cycle found, unless GOGC is set (the runtime reads that itself): the
// heap may grow to the ceiling before the next cycle, within the runtime's
// default growth (100%: up to twice the live heap) and maxGCPercent. A
// small live heap (a busy log path holds ~10 MB: the records queued and in
// flight, the receiver's and the exporter's buffers) then needs fewer
// cycles. Besides the records it marks, a cycle costs the same whatever
// the load: ~6 million instructions to mark the binary's own ~2 MB of heap
// and its globals, ~40% of a cycle at max rate. So fewer cycles is what
// pays: 32 MiB instead of 24 saved ~3% of the instructions per stdin line
// (40 MiB ~6%, but its peak at 50,000 lines/s came within 1 MB of the
// goal). A live heap of half the ceiling or more gets the default growth
// (an outage filling the queue holds ~15-22 MB: 100-113%), so the heap
// never passes the larger of the ceiling and the default's, and the
// collector never runs more often than by default, as a soft memory limit
// this low would make it under an outage (bench/COMPARISON.md, 2026-12-02).
const (
	// heapCeiling is what the 50,000 lines/s peak RSS goal (64 MB) leaves
	// the heap once the executable's start-up pages are released
	// (startpages_linux.go): 32 MiB measured a 56 MB peak there, 24 MiB
	// with those pages resident 57-61 MB.
	heapCeiling  = 32 << 20
	minGCPercent = 100
	// maxGCPercent keeps an idle sidecar's few MB of live heap from
	// growing garbage up to the ceiling (idle RSS has its own goal).
	maxGCPercent = 300
)

// liveHeapMetric is the heap the last cycle marked live.
const liveHeapMetric = "/gc/heap/live:bytes"

// gcPercentFor is the GC target for a live heap of live bytes: the growth
// that reaches ceiling, within [minGCPercent, maxGCPercent].
func gcPercentFor(live, ceiling uint64) int {
	if live == 0 {
		return maxGCPercent
	}
	if live >= ceiling {
		return minGCPercent
	}
	return min(max(int((ceiling-live)*100/live), minGCPercent), maxGCPercent)
}

// gcTargeter sets the GC target after each cycle; stop ends that.
type gcTargeter struct {
	ceiling uint64
	stopped atomic.Bool
	last    int
	sample  []metrics.Sample
}

// targetGC starts setting the GC target after each cycle, unless GOGC is
// set; it returns nil then.
func targetGC() *gcTargeter {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	return startGCTargeter(ceilingUnder(debug.SetMemoryLimit(-1)))
}

// ceilingUnder is heapCeiling, or half the soft memory limit when that is
// lower: in a small container (setMemoryLimit: 90% of its limit) the
// memory_limiter processor of the shipped configs forces a collection, and
// says so, whenever the heap passes 60% of the limit, which garbage alone
// should not make it do.
func ceilingUnder(memoryLimit int64) uint64 {
	return uint64(min(heapCeiling, memoryLimit/2))
}

func startGCTargeter(ceiling uint64) *gcTargeter {
	t := &gcTargeter{ceiling: ceiling, last: -1, sample: []metrics.Sample{{Name: liveHeapMetric}}}
	t.retarget()
	t.arm()
	return t
}

func (t *gcTargeter) stop() { t.stopped.Store(true) }

// arm makes the next cycle run retarget: a cycle that finds the sentinel
// unreachable queues its finalizer, which arms a new one. (The runtime has
// no hook at the end of a cycle; the finalizer runs just after it, on the
// runtime's finalizer goroutine, one at a time.)
func (t *gcTargeter) arm() {
	runtime.SetFinalizer(&gcSentinel{t: t}, func(s *gcSentinel) {
		if s.t.stopped.Load() {
			return
		}
		s.t.retarget()
		s.t.arm()
	})
}

// gcSentinel is larger than 16 bytes and holds a pointer, so it is not a
// tiny allocation sharing a block with others, whose finalizer may never run.
type gcSentinel struct {
	t   *gcTargeter
	pad [2]uint64
}

func (t *gcTargeter) retarget() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := gcPercentFor(t.sample[0].Value.Uint64(), t.ceiling); p != t.last {
		debug.SetGCPercent(p)
		t.last = p
	}
}
