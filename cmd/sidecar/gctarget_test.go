package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, maxGCPercent},
		{1 << 20, maxGCPercent},         // 32x would be allowed: capped
		{8 << 20, maxGCPercent},         // reaches the ceiling exactly at 300%
		{10 << 20, 220},                 // 10 + 22 = 32 MiB
		{12 << 20, 166},                 // 12 + 20
		{16 << 20, minGCPercent},        // the default growth reaches the ceiling
		{20 << 20, minGCPercent},        // past half the ceiling: never below the default
		{heapCeiling * 2, minGCPercent}, // past the ceiling
	} {
		if got := gcPercentFor(tc.live, heapCeiling); got != tc.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}

func TestCeilingStaysUnderHalfASmallContainersLimit(t *testing.T) {
	if got := ceilingUnder(math.MaxInt64); got != heapCeiling {
		t.Errorf("without a memory limit: ceiling %d MiB, want %d", got>>20, heapCeiling>>20)
	}
	limit := int64(64<<20) * 9 / 10 // setMemoryLimit in a 64 MiB container
	if got := ceilingUnder(limit); got != uint64(limit/2) {
		t.Errorf("under a %d MiB limit: ceiling %d MiB, want half the limit", limit>>20, got>>20)
	}
}

// gcPercent is the runtime's current GC target.
func gcPercent(t *testing.T) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// keepGCPercent restores the GC target and the memory limit the test found.
func keepGCPercent(t *testing.T) {
	orig := debug.SetGCPercent(100)
	debug.SetGCPercent(orig)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(orig)
		debug.SetMemoryLimit(limit)
	})
}

func TestTargetGCLeavesAUsersGOGC(t *testing.T) {
	keepGCPercent(t)
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150) // what the runtime read from it at start
	if tg := targetGC(); tg != nil {
		tg.stop()
		t.Fatal("targetGC started with GOGC set")
	}
	runtime.GC()
	runtime.GC()
	if got := gcPercent(t); got != 150 {
		t.Fatalf("GC target %d after two cycles with GOGC=150 set, want 150", got)
	}
}

// TestTargetGCFollowsTheLiveHeap holds a live heap past the ceiling and
// lets it go: the target drops to the default growth and comes back, set
// by the cycles themselves. The ceiling is relative to the heap the test
// binary holds already (other tests leave some).
func TestTargetGCFollowsTheLiveHeap(t *testing.T) {
	keepGCPercent(t)
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	if tg := targetGC(); tg == nil {
		t.Fatal("targetGC did not start without GOGC")
	} else {
		tg.stop()
	}

	base := max(liveHeap(), 1<<20)
	tg := startGCTargeter(10*base, math.MaxInt64)
	t.Cleanup(tg.stop)
	waitGCPercent(t, maxGCPercent)
	if got := debug.SetMemoryLimit(-1); got == math.MaxInt64 {
		t.Error("no memory limit while the target is above the default")
	}

	held := make([]byte, 10*base)
	waitGCPercent(t, minGCPercent)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d MiB at the default target, want none", got>>20)
	}
	runtime.KeepAlive(held)

	waitGCPercent(t, maxGCPercent)
}

// TestABurstStaysNearTheCeiling lets the live heap jump from a few MB to
// half the ceiling between two cycles, before the target that would follow
// it is set (the targeter is stopped): the cycle's goal stays within a
// quarter past the ceiling, where the idle target alone (300%) would give
// it twice the ceiling and more.
func TestABurstStaysNearTheCeiling(t *testing.T) {
	keepGCPercent(t)
	base := max(liveHeap(), 1<<20)
	ceiling := 16 * base
	tg := startGCTargeter(ceiling, math.MaxInt64)
	waitGCPercent(t, maxGCPercent)
	tg.stop()

	held := make([]byte, ceiling/2)
	runtime.GC()
	goal := heapGoal()
	runtime.KeepAlive(held)
	if limit := ceiling + ceiling/4; goal > limit {
		t.Errorf("heap goal %d MiB after a burst to %d MiB live, want at most %d MiB (ceiling %d MiB)", goal>>20, (base+ceiling/2)>>20, limit>>20, ceiling>>20)
	}
}

func TestTheLimitKeepsAContainersLimit(t *testing.T) {
	if got := limitFor(8<<20, heapCeiling, math.MaxInt64); got != 8<<20+heapCeiling+heapCeiling/4 {
		t.Errorf("limit %d MiB with 8 MiB besides the heap, want 48", got>>20)
	}
	if got := limitFor(8<<20, heapCeiling, 40<<20); got != 40<<20 {
		t.Errorf("limit %d MiB under a 40 MiB limit, want 40", got>>20)
	}
}

// heapGoal is the heap the runtime lets grow before its next cycle ends.
func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// liveHeap is the heap a full cycle finds live.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: liveHeapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitGCPercent runs cycles until the target is want (the finalizer that
// sets it runs just after a cycle).
func waitGCPercent(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent(t) != uint64(want) {
		if time.Now().After(deadline) {
			t.Fatalf("GC target %d with %d MiB live, want %d", gcPercent(t), liveHeap()>>20, want)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
