package main

import (
	"runtime"
	"testing"
)

func TestStopHeapProfileTurnsTheProfileOff(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	t.Setenv("GODEBUG", "cpu.rdtscp=off")
	runtime.MemProfileRate = 512 << 10
	stopHeapProfile()
	if runtime.MemProfileRate != 0 {
		t.Errorf("MemProfileRate = %d, want 0", runtime.MemProfileRate)
	}
}

func TestStopHeapProfileLeavesAUsersRate(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	t.Setenv("GODEBUG", "gctrace=1,memprofilerate=4096")
	runtime.MemProfileRate = 4096 // as the runtime set it from GODEBUG
	stopHeapProfile()
	if runtime.MemProfileRate != 4096 {
		t.Errorf("MemProfileRate = %d, want the user's 4096", runtime.MemProfileRate)
	}
}
