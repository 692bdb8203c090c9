package procstat

import (
	"os"
	"testing"
	"time"
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

func TestReadActivitySelf(t *testing.T) {
	before, err := ReadActivity(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Touch fresh pages (minor faults) and block a few times (voluntary
	// switches).
	b := make([]byte, 8<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	for range 5 {
		time.Sleep(time.Millisecond)
	}
	after, err := ReadActivity(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after.MinFlt-before.MinFlt < 1000 {
		t.Fatalf("minor faults %d -> %d after touching 2048 pages", before.MinFlt, after.MinFlt)
	}
	if after.Voluntary-before.Voluntary < 1 {
		t.Fatalf("voluntary switches %d -> %d after sleeping", before.Voluntary, after.Voluntary)
	}
	if after.Threads < 1 {
		t.Fatalf("threads: %+v", after)
	}
}

func TestReadActivityMissingProcess(t *testing.T) {
	if _, err := ReadActivity(1 << 30); err == nil {
		t.Fatal("want an error for a process that does not exist")
	}
}
