// Command logpath measures the sidecar's log hot path as a whole process:
// ~300-byte pino lines piped into `sidecar` stdin, through the stdout
// receiver and the axiom exporter (zstd NDJSON) to a count-only fake Axiom
// on loopback, with GOMAXPROCS=1 for the sidecar. It reports lines/s, CPU
// seconds per million lines (the sidecar's rusage) and peak RSS, next to a
// baseline measured in the same run on the same bytes: `cat` into
// /dev/null, the least any stdin consumer can cost.
//
//	go run ./bench/logpath -sidecar ./sidecar [-lines 2000000] [-gomaxprocs 1] [-cpu 1] [-keep] [-disk=false] [-valgrind [-valgrind-disk] [-forward]]
//
// With -cpu, the sidecar and the baselines run pinned to that core (taskset),
// as bench/run.sh pins its collectors. A second baseline is the compression
// floor: `zstd -1 -T1` over the same bytes (skipped when zstd is missing).
//
// With -valgrind it counts instructions instead of timing (valgrind.go):
// a figure that does not depend on the host's speed or load. With
// -forward too it counts the sidecar's Fluent Forward input beside stdin,
// on the load generator's lines (forward.go).
//
// bench/run-logpath.sh builds the binary and runs this.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/sidecarhq/sidecar/bench/internal/loopback"
	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

func main() {
	sidecar := flag.String("sidecar", "", "path of the sidecar binary (required)")
	lines := flag.Int("lines", 2_000_000, "pino lines to pipe through")
	procs := flag.Int("gomaxprocs", 1, "GOMAXPROCS of the sidecar")
	keep := flag.Bool("keep", false, "keep the work directory (config, sidecar log)")
	disk := flag.Bool("disk", true, "also run the sidecar with its queue on disk")
	vg := flag.Bool("valgrind", false, "count instructions per line under valgrind (the memory queue and zstd) instead of timing")
	vgDisk := flag.Bool("valgrind-disk", false, "with -valgrind: count the sidecar with its queue on disk too (user-space instructions only: the kernel's share of the file writes is not counted)")
	forward := flag.Bool("forward", false, "with -valgrind: count stdin, docker-style and FireLens-style Fluent Forward on the load generator's lines")
	flag.IntVar(&pinCPU, "cpu", -1, "pin the measured processes to this core (taskset); -1: not pinned")
	flag.Parse()
	if *sidecar == "" || *forward && !*vg {
		fmt.Fprintln(os.Stderr, "logpath: -sidecar is required, and -forward needs -valgrind")
		os.Exit(2)
	}
	var err error
	switch {
	case *forward:
		err = countForward(*sidecar, *lines, *procs, *keep)
	case *vg:
		err = countInstructions(*sidecar, *lines, *procs, *keep, *vgDisk)
	default:
		err = run(*sidecar, *lines, *procs, *keep, *disk)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "logpath:", err)
		os.Exit(1)
	}
}

// pinCPU is the core the measured processes run on; -1 leaves them unpinned.
var pinCPU = -1

// command is exec.Command, pinned to pinCPU when it is set.
func command(name string, args ...string) *exec.Cmd {
	if pinCPU < 0 {
		return exec.Command(name, args...)
	}
	return exec.Command("taskset", append([]string{"-c", strconv.Itoa(pinCPU), name}, args...)...)
}

// result is one process's run over the input.
type result struct {
	name    string
	wall    time.Duration
	cpu     time.Duration // user + system
	sys     time.Duration // system (kernel) part of cpu
	peakRSS int64         // KiB
}

func run(sidecar string, lines, procs int, keep, disk bool) error {
	block, avg := pinoBlock(min(lines, blockLines))
	input := repeatedInput{block: block, blockLines: min(lines, blockLines), lines: lines}
	fmt.Printf("input: %d pino lines, %.0f bytes/line, %.1f MiB\n", lines, avg, avg*float64(lines)/(1<<20))

	base, err := measure("cat", command("cat"), input)
	if err != nil {
		return err
	}
	results := []result{base}
	var floor result
	if _, err := exec.LookPath("zstd"); err == nil {
		if floor, err = measure("zstd -1 -T1 (compression floor)", command("zstd", "-1", "-T1", "-c"), input); err != nil {
			return err
		}
		results = append(results, floor)
	}

	baselines := len(results)
	var side result
	variants := []struct{ name, state string }{{"memory queue", ""}, {"disk buffer", "state"}}
	if !disk {
		variants = variants[:1]
	}
	for _, variant := range variants {
		r, err := runSidecar(sidecar, variant.name, variant.state, lines, procs, keep, input, nil)
		if err != nil {
			return err
		}
		results = append(results, r)
		side = r
	}

	fmt.Printf("\n%-36s %12s %10s %14s %10s %8s %12s\n", "process", "lines/s", "wall s", "CPU s/M lines", "CPU s", "sys s", "peak RSS MiB")
	for _, r := range results {
		fmt.Printf("%-36s %12.0f %10.2f %14.3f %10.2f %8.2f %12.1f\n", r.name,
			float64(lines)/r.wall.Seconds(), r.wall.Seconds(),
			r.cpu.Seconds()/(float64(lines)/1e6), r.cpu.Seconds(), r.sys.Seconds(), float64(r.peakRSS)/1024)
	}
	fmt.Println()
	if disk {
		mem := results[baselines]
		fmt.Printf("disk buffer/memory queue: %.2fx the CPU, %.2fx the peak RSS\n",
			side.cpu.Seconds()/max(mem.cpu.Seconds(), 1e-3), float64(side.peakRSS)/float64(max(mem.peakRSS, 1)))
		fmt.Printf("sidecar/cat (disk buffer): %.1fx the CPU, %.1fx the wall time\n",
			side.cpu.Seconds()/max(base.cpu.Seconds(), 1e-3), side.wall.Seconds()/base.wall.Seconds())
	}
	for _, r := range results[baselines:] {
		fmt.Printf("%s: %.2f µs CPU per line, %.0f lines per CPU-second (goal ≥ 1000000)\n",
			r.name, r.cpu.Seconds()*1e6/float64(lines), float64(lines)/r.cpu.Seconds())
		if floor.cpu > 0 {
			fmt.Printf("%s: %.2fx the CPU of zstd -1 -T1 (goal ≤ 3x)\n", r.name, r.cpu.Seconds()/floor.cpu.Seconds())
		}
	}
	return nil
}

// runSidecar measures one sidecar run over input against a fresh count-only
// fake Axiom; with state set, the exporter's queue is on disk (dir_storage in
// the work directory's state), as every shipped config runs it. wrap, if
// set, is the command the sidecar runs under (valgrind).
func runSidecar(sidecar, name, state string, lines, procs int, keep bool, input repeatedInput, wrap []string) (result, error) {
	return runSidecarOn(sidecar, name, state, lines, procs, keep, input, nil, wrap)
}

// runSidecarOn is runSidecar with its input from stdin, or, when frames is
// set, over Fluent Forward: the sidecar then listens on a free loopback
// port instead of reading stdin, and lines is how many the frames hold.
func runSidecarOn(sidecar, name, state string, lines, procs int, keep bool, input repeatedInput, frames *forwardInput, wrap []string) (result, error) {
	fake, err := axiomtest.New(axiomtest.WithCountOnly())
	if err != nil {
		return result{}, err
	}
	defer fake.Close()
	dir, removeDir, err := workDir("logpath-", keep)
	if err != nil {
		return result{}, err
	}
	defer removeDir()
	if state != "" {
		state = filepath.Join(dir, state)
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	endpoint := ""
	if frames != nil {
		if endpoint, err = loopback.FreeAddr(); err != nil {
			return result{}, err
		}
	}
	if err := os.WriteFile(cfgPath, []byte(config(fake.URL(), state, endpoint)), 0o600); err != nil {
		return result{}, err
	}
	logFile, err := os.Create(filepath.Join(dir, "sidecar.log"))
	if err != nil {
		return result{}, err
	}
	defer logFile.Close()
	args := append(slices.Clone(wrap), sidecar, "--config", "file:"+cfgPath)
	cmd := command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	var r result
	if frames != nil {
		r, err = measureForward(name, cmd, endpoint, *frames, func() int64 { return fake.Stats().Datasets["logs"].Events })
	} else {
		r, err = measure(fmt.Sprintf("sidecar, %s (GOMAXPROCS=%d)", name, procs), cmd, input)
	}
	if err != nil {
		return result{}, fmt.Errorf("%w (log in %s)", err, logFile.Name())
	}
	if got := fake.Stats().Datasets["logs"].Events; got != int64(lines) {
		return result{}, fmt.Errorf("%s: fake Axiom counted %d events, want %d (log in %s)", name, got, lines, logFile.Name())
	}
	return r, nil
}

// measure runs cmd with input on its stdin until it exits by itself (the
// sidecar exits at end of input). CPU time comes from its rusage; peak RSS
// from polling /proc/<pid>/status VmHWM, because the rusage's maxrss of a
// child started with vfork also counts this (much larger) parent.
func measure(name string, cmd *exec.Cmd, input repeatedInput) (result, error) {
	if cmd.Stdout == nil {
		cmd.Stdout = io.Discard
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	peakRSS := watchPeakRSS(cmd.Process.Pid)
	werr := input.writeTo(stdin)
	stdin.Close()
	err = cmd.Wait()
	wall, peakKiB := time.Since(start), peakRSS()
	if werr != nil {
		return result{}, fmt.Errorf("%s: writing input: %w", name, werr)
	}
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	return resultOf(name, cmd, wall, peakKiB), nil
}

// resultOf is the figures of cmd's finished run: its CPU time from the
// kernel's accounting, wall and peak RSS as measured.
func resultOf(name string, cmd *exec.Cmd, wall time.Duration, peakKiB int64) result {
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return result{name: name, wall: wall, cpu: cpu, sys: time.Duration(ru.Stime.Nano()), peakRSS: peakKiB}
}

// watchPeakRSS polls pid's resident-set high-water mark every 20 ms until
// the returned function is called, which returns the highest seen, in KiB.
func watchPeakRSS(pid int) func() int64 {
	stop, peak := make(chan struct{}), make(chan int64)
	go func() {
		var hwm int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, ok := readVmHWM(pid); ok {
				hwm = max(hwm, v)
			}
			select {
			case <-stop:
				peak <- hwm
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 { close(stop); return <-peak }
}

// workDir makes a fresh folder for a run and returns it with what removes
// it, which does nothing when keep is set.
func workDir(prefix string, keep bool) (string, func(), error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil || keep {
		return dir, func() {}, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// readVmHWM returns the process's resident-set high-water mark in KiB.
func readVmHWM(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	_, rest, ok := bytes.Cut(b, []byte("VmHWM:"))
	if !ok {
		return 0, false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	v, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))), 10, 64)
	return v, err == nil
}

// config is stdin -> memory_limiter -> axiom, as a FireLens-less `app |
// sidecar` deployment runs it, with the queue in dir_storage at state when
// state is set; self-metrics off so nothing else listens. stdin blocks when
// the exporter's budget is full (the default drops the oldest lines) so
// that every line is measured going through the whole path. With
// forward set, the receiver listens for Fluent Forward there instead of
// reading stdin, blocking in the same way.
func config(url, state, forward string) string {
	storage, queue, ext := "", "", ""
	if state != "" {
		storage = "extensions:\n  dir_storage:\n    directory: " + state + "\n"
		queue = "    sending_queue: {storage: dir_storage}\n"
		ext = "  extensions: [dir_storage]\n"
	}
	transport := "    stdin: {when_full: block}"
	if forward != "" {
		transport = "    forward: {endpoint: \"" + forward + "\", when_full: block}"
	}
	return storage + `
receivers:
  stdout:
` + transport + `
processors:
  memory_limiter:
    check_interval: 1s
    limit_mib: 512
    spike_limit_mib: 128
exporters:
  axiom:
    url: ` + url + `
    token: xaat-bench
    logs_dataset: logs
    traces_dataset: traces
` + queue + `service:
` + ext + `  pipelines:
    logs: {receivers: [stdout], processors: [memory_limiter], exporters: [axiom]}
  telemetry:
    logs: {level: warn}
    metrics: {level: none}
`
}

// blockLines distinct lines are generated and written over and over: 64Ki
// lines are ~20 MB, more than zstd's window, so repetition does not make
// compression cheaper than real logs would.
const blockLines = 1 << 16

// repeatedInput is lines lines: block (blockLines lines) repeated, then a
// prefix of it.
type repeatedInput struct {
	block             []byte
	blockLines, lines int
}

func (in repeatedInput) writeTo(w io.Writer) error {
	for left := in.lines; left > 0; left -= in.blockLines {
		chunk := in.block
		if left < in.blockLines {
			chunk = prefixLines(in.block, left)
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	return nil
}

func prefixLines(b []byte, n int) []byte {
	end := 0
	for range n {
		end += bytes.IndexByte(b[end:], '\n') + 1
	}
	return b[:end]
}

// pinoBlock returns n request-log lines as pino writes them, ~300 bytes
// each, and their average length.
func pinoBlock(n int) ([]byte, float64) {
	var b bytes.Buffer
	b.Grow(n * 320)
	methods := [...]string{"GET", "POST", "PUT", "DELETE"}
	for i := range n {
		fmt.Fprintf(&b, `{"level":%d,"time":%d,"pid":4242,"hostname":"ip-10-0-1-17.ec2.internal",`+
			`"req":{"id":"req-%08d","method":"%s","url":"/api/orders/%d?include=items","remoteAddress":"10.0.3.4"},`+
			`"res":{"statusCode":200},"responseTime":%d.25,"trace_id":"%032x","msg":"request completed"}`+"\n",
			30+10*(i%7/6), 1764504000000+int64(i), i, methods[i%len(methods)], i%1000, i%300, uint64(i)*0x9e3779b97f4a7c15)
	}
	return b.Bytes(), float64(b.Len()) / float64(n)
}
