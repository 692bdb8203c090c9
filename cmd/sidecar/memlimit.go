package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitShare is the part of the container's memory limit the Go
// runtime aims to stay under: the rest is for the binary's own pages and
// memory outside the Go heap, so the garbage collector works harder before
// the kernel's OOM killer would act. The memory limiter processor refuses
// data from 60% on (its default soft limit), before this.
const memoryLimitShare = 0.9

// unlimited is where cgroup v1 reports "no limit" (a page-rounded MaxInt64);
// anything this large means none.
const unlimited = 1 << 60

// setMemoryLimit gives the Go runtime a soft memory limit from the
// container's cgroup memory limit, unless GOMEMLIMIT is set (the runtime
// reads that itself). Without a cgroup limit the budgets alone bound memory.
func setMemoryLimit() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	cg, _ := os.ReadFile("/proc/self/cgroup")
	if limit, ok := cgroupMemoryLimit("/sys/fs/cgroup", cg); ok {
		debug.SetMemoryLimit(int64(float64(limit) * memoryLimitShare))
	}
}

// cgroupMemoryLimit finds the memory limit of the cgroup that procCgroup
// (the content of /proc/self/cgroup) names, under the cgroup mount root:
// v2 memory.max, else v1 memory/memory.limit_in_bytes. Inside a container
// the cgroup's own directory is usually the mount's root, so the root is
// tried after the named path.
func cgroupMemoryLimit(root string, procCgroup []byte) (int64, bool) {
	var v2, v1 string
	sc := bufio.NewScanner(bytes.NewReader(procCgroup))
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), ":", 3)
		if len(fields) != 3 {
			continue
		}
		switch {
		case fields[0] == "0" && fields[1] == "":
			v2 = fields[2]
		case strings.Contains(","+fields[1]+",", ",memory,"):
			v1 = fields[2]
		}
	}
	var candidates []string
	if v2 != "" {
		candidates = append(candidates, filepath.Join(root, v2, "memory.max"), filepath.Join(root, "memory.max"))
	}
	if v1 != "" {
		candidates = append(candidates, filepath.Join(root, "memory", v1, "memory.limit_in_bytes"), filepath.Join(root, "memory", "memory.limit_in_bytes"))
	}
	for _, path := range candidates {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= unlimited {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
