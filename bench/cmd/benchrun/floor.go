package main

import (
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// collZstd is the compression floor's row in the results: `zstd -1 -T1` on
// the bytes of logs-stdin's max phase, pinned like the collectors. Any
// shipper that compresses what it sends pays at least this per line; the
// issue's stdin goal is within 3x of it.
const collZstd = "zstd"

// floorLines is how many lines the floor compresses.
const floorLines = 1_000_000

// zstdFloor measures the floor: the max-rate writer's block, repeated to
// floorLines lines, piped through zstd; its CPU comes from its rusage.
func zstdFloor(o options) result {
	r := result{Scenario: "logs-stdin", Collector: collZstd, Phase: phaseMax}
	args := []string{"zstd", "-1", "-T1", "-q", "-c"}
	if o.cpu != "" {
		args = append([]string{"taskset", "-c", o.cpu}, args...)
	}
	if _, err := exec.LookPath("zstd"); err != nil {
		r.Skipped = "zstd is not installed (apt-get install zstd)"
		return r
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if err := cmd.Start(); err != nil {
		r.Error = err.Error()
		return r
	}
	block := lineBlock(loadgen.NewPino(1), plainLine, time.Now())
	start := time.Now()
	var werr error
	for sent := 0; sent < floorLines && werr == nil; sent += blockLines {
		_, werr = in.Write(block)
	}
	in.Close()
	if err := cmd.Wait(); err != nil || werr != nil {
		r.Error = fmt.Sprint("zstd: ", err, werr)
		return r
	}
	r.LoadSeconds = time.Since(start).Seconds()
	r.Sent = floorLines
	r.CPUSeconds = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	r.CPUPerMillion = r.CPUSeconds / floorLines * 1e6
	r.PerCPUSecond = floorLines / r.CPUSeconds
	return r
}
