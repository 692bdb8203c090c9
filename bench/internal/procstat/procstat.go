// Package procstat reads a process's CPU time, memory and scheduling from
// /proc (Linux).
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
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

// Sched is a process's time on a CPU and its number of runs on one (the
// first and third schedstat fields: nanoseconds, not clock ticks), summed
// over its threads.
type Sched struct {
	Ran    time.Duration
	Slices int64
}

// ReadSched reads process pid's Sched.
func ReadSched(pid int) (Sched, error) {
	var s Sched
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return s, fmt.Errorf("no schedstat for pid %d (exited?)", pid)
	}
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that just exited
		}
		var ran, wait, n int64
		if _, err := fmt.Sscan(string(b), &ran, &wait, &n); err != nil {
			return s, fmt.Errorf("%s %q: %w", t, b, err)
		}
		s.Ran += time.Duration(ran)
		s.Slices += n
	}
	return s, nil
}

// Activity is what a process asked of the kernel so far: page faults (the
// whole process's, from /proc/<pid>/stat) and context switches summed over
// its threads (/proc/<pid>/task/*/status; a process's own status counts only
// its first thread).
type Activity struct {
	MinFlt, MajFlt int64
	// Voluntary: the thread blocked (a read that found nothing, a futex);
	// Involuntary: the scheduler took the core away.
	Voluntary, Involuntary int64
	Threads                int
}

// ReadActivity reads process pid's Activity.
func ReadActivity(pid int) (Activity, error) {
	var a Activity
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return a, err
	}
	// minflt is field 10 and majflt field 12; fields after the command
	// name start at field 3.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return a, fmt.Errorf("procstat: odd /proc/%d/stat", pid)
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 10 {
		return a, fmt.Errorf("procstat: short /proc/%d/stat", pid)
	}
	a.MinFlt, _ = strconv.ParseInt(string(f[7]), 10, 64)
	a.MajFlt, _ = strconv.ParseInt(string(f[9]), 10, 64)
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		return a, fmt.Errorf("no task status for pid %d (exited?)", pid)
	}
	for _, t := range tasks {
		st, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that just exited
		}
		a.Voluntary += statusKB(st, "\nvoluntary_ctxt_switches:")
		a.Involuntary += statusKB(st, "\nnonvoluntary_ctxt_switches:")
		a.Threads++
	}
	return a, nil
}
