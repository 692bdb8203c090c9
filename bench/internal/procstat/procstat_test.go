package procstat

import (
	"os"
	"testing"
)

func TestReadSelf(t *testing.T) {
	// Burn a little CPU so utime is very likely non-zero.
	x := 0
	for i := range 50_000_000 {
		x += i
	}
	_ = x
	s, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.RSSKB <= 0 || s.PeakRSSKB < s.RSSKB {
		t.Fatalf("memory: %+v", s)
	}
	if s.CPUSeconds < 0 {
		t.Fatalf("cpu: %+v", s)
	}
}

func TestReadMissingProcess(t *testing.T) {
	if _, err := Read(1 << 30); err == nil {
		t.Fatal("want an error for a process that does not exist")
	}
}

func TestStatusKB(t *testing.T) {
	st := []byte("Name:\tx\nVmHWM:\t  5120 kB\nVmRSS:\t  4096 kB\n")
	if got := statusKB(st, "VmRSS:"); got != 4096 {
		t.Fatalf("VmRSS = %d", got)
	}
	if got := statusKB(st, "VmHWM:"); got != 5120 {
		t.Fatalf("VmHWM = %d", got)
	}
	if got := statusKB(st, "VmSwap:"); got != 0 {
		t.Fatalf("VmSwap = %d", got)
	}
}

func TestReadSchedSelf(t *testing.T) {
	before, err := ReadSched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 50_000_000 {
		x += i
	}
	_ = x
	after, err := ReadSched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after.Ran <= before.Ran || after.Slices < before.Slices || before.Slices <= 0 {
		t.Fatalf("before %+v, after %+v", before, after)
	}
	if _, err := ReadSched(1 << 30); err == nil {
		t.Fatal("want an error for a process that does not exist")
	}
}
