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
//
// The runtime sets a cycle's goal from the target in force when the cycle
// ends, and the target that cycle calls for is set only when its finalizer
// runs, which at max rate on one P can be after the next cycle: a burst
// that takes the live heap from an idle 3 MB to 20 in one cycle then got
// the idle 300%, an 80-90 MB goal, and a 99-102 MB peak RSS against 60 in the
// other runs (bench/COMPARISON.md, 2026-12-07). So while the target is
// above the default, a soft memory limit holds the heap near the ceiling
// whatever the next cycle finds; at the default it is lifted again.
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
	// limitStep is how far the memory the runtime holds besides heap
	// objects (stacks, metadata, free space in spans: 5-8 MB) may drift
	// before the limit follows it (setting it stops the world).
	limitStep = 1 << 20
)

// liveHeapMetric is the heap the last cycle marked live; the others are
// what the runtime weighs against its memory limit: its memory less what it
// released, less free pages and heap objects, is what the heap cannot use.
const (
	liveHeapMetric    = "/gc/heap/live:bytes"
	totalMemoryMetric = "/memory/classes/total:bytes"
	releasedMetric    = "/memory/classes/heap/released:bytes"
	freePagesMetric   = "/memory/classes/heap/free:bytes"
	heapObjectsMetric = "/memory/classes/heap/objects:bytes"
)

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
	// limit is the soft memory limit found at start (the container's, or
	// GOMEMLIMIT; math.MaxInt64 for none): the one the targeter restores,
	// and never raises.
	limit     int64
	stopped   atomic.Bool
	last      int
	lastLimit int64
	sample    []metrics.Sample
}

// targetGC starts setting the GC target after each cycle, unless GOGC is
// set; it returns nil then.
func targetGC() *gcTargeter {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	limit := debug.SetMemoryLimit(-1)
	return startGCTargeter(ceilingUnder(limit), limit)
}

// ceilingUnder is heapCeiling, or half the soft memory limit when that is
// lower: in a small container (setMemoryLimit: 90% of its limit) the
// memory_limiter processor of the shipped configs forces a collection, and
// says so, whenever the heap passes 60% of the limit, which garbage alone
// should not make it do.
func ceilingUnder(memoryLimit int64) uint64 {
	return uint64(min(heapCeiling, memoryLimit/2))
}

func startGCTargeter(ceiling uint64, limit int64) *gcTargeter {
	t := &gcTargeter{ceiling: ceiling, limit: limit, last: -1, lastLimit: limit, sample: []metrics.Sample{
		{Name: liveHeapMetric}, {Name: totalMemoryMetric}, {Name: releasedMetric}, {Name: freePagesMetric}, {Name: heapObjectsMetric},
	}}
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
	for _, s := range t.sample {
		if s.Value.Kind() != metrics.KindUint64 {
			return
		}
	}
	p := gcPercentFor(t.sample[0].Value.Uint64(), t.ceiling)
	if p != t.last {
		debug.SetGCPercent(p)
		t.last = p
	}
	limit := t.limit
	if p > minGCPercent {
		nonHeap := t.sample[1].Value.Uint64() - t.sample[2].Value.Uint64() - t.sample[3].Value.Uint64() - t.sample[4].Value.Uint64()
		limit = limitFor(nonHeap, t.ceiling, t.limit)
	}
	if d := limit - t.lastLimit; d != 0 && (limit == t.limit || d > limitStep || d < -limitStep) {
		debug.SetMemoryLimit(limit)
		t.lastLimit = limit
	}
}

// limitFor is the soft memory limit that lets the heap grow a quarter past
// the ceiling when the runtime holds nonHeap bytes besides it, never above
// limit (the one found at start). The target alone stops at the ceiling, so
// the limit binds only in a burst; and the scavenger, which a limit makes
// keep the runtime's memory 5% under it, then keeps no less than it does by
// default (the heap goal plus 10%).
func limitFor(nonHeap, ceiling uint64, limit int64) int64 {
	return min(int64(nonHeap+ceiling+ceiling/4), limit)
}
