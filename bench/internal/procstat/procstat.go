// Package procstat reads a process's CPU time and memory from /proc (Linux).
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// clockTicks is USER_HZ, 100 on every Linux platform Go supports.
const clockTicks = 100

// Sample is one reading of a process.
type Sample struct {
	CPUSeconds float64 // user + system time so far
	RSSKB      int64   // VmRSS
	PeakRSSKB  int64   // VmHWM, the RSS high-water mark
}

// Read samples process pid.
func Read(pid int) (Sample, error) {
	var s Sample
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// Fields after the parenthesised command name: state is field 3,
	// utime field 14 and stime field 15.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return s, fmt.Errorf("procstat: odd /proc/%d/stat", pid)
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 13 {
		return s, fmt.Errorf("procstat: short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return s, fmt.Errorf("procstat: bad cpu times in /proc/%d/stat", pid)
	}
	s.CPUSeconds = float64(utime+stime) / clockTicks

	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	s.RSSKB = statusKB(status, "VmRSS:")
	s.PeakRSSKB = statusKB(status, "VmHWM:")
	return s, nil
}

// statusKB returns the kB value of a /proc/<pid>/status line, or 0.
func statusKB(status []byte, key string) int64 {
	i := bytes.Index(status, []byte(key))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(status[i+len(key):])
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return v
}
