package main

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"syscall"
	"time"

	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// forwardInput is lines lines sent over Fluent Forward: frames, pre-encoded
// by the benchmark's load generator (loadgen.Forward), sent over and over,
// perFrame lines each.
type forwardInput struct {
	frames   [][]byte
	perFrame int
	lines    int
}

// newForwardInput pre-encodes frames of mode holding at least lines lines
// of NewPino(seed) stamped now (fewer are sent: lines is rounded down to
// whole frames).
func newForwardInput(mode loadgen.ForwardMode, seed uint64, now time.Time, distinct, lines int) forwardInput {
	frames, per := loadgen.NewForward(mode, seed).PreEncoded(now, distinct)
	return forwardInput{frames: frames, perFrame: per, lines: lines - lines%per}
}

func (in forwardInput) writeTo(conn net.Conn) error {
	w := bufio.NewWriterSize(conn, 64<<10)
	for i, sent := 0, 0; sent < in.lines; i++ {
		if _, err := w.Write(in.frames[i%len(in.frames)]); err != nil {
			return err
		}
		sent += in.perFrame
	}
	return w.Flush()
}

// Limits of a Forward run: the sidecar's start (valgrind takes seconds),
// and a stall in the fake Axiom's count once the input is sent.
const (
	forwardStartTimeout = 2 * time.Minute
	forwardStallTimeout = 2 * time.Minute
)

// measureForward starts cmd, sends in to its Forward endpoint over one
// connection as fast as it reads (at max rate, batches as large as the
// receiver makes them), closes the connection, waits until events (the
// fake Axiom's count) reaches in.lines, and stops the sidecar with
// SIGTERM, as a container runtime would.
func measureForward(name string, cmd *exec.Cmd, endpoint string, in forwardInput, events func() int64) (result, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	peakRSS := watchPeakRSS(cmd.Process.Pid)
	err := sendForward(endpoint, in, events)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		peakRSS()
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	wall, peakKiB := time.Since(start), peakRSS()
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	return resultOf(name, cmd, wall, peakKiB), nil
}

// sendForward connects once the sidecar listens, writes in and waits for
// every line to reach the fake Axiom.
func sendForward(endpoint string, in forwardInput, events func() int64) error {
	var conn net.Conn
	for deadline := time.Now().Add(forwardStartTimeout); ; {
		var err error
		if conn, err = net.DialTimeout("tcp", endpoint, time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("forward endpoint %s not listening: %w", endpoint, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	werr := in.writeTo(conn)
	conn.Close()
	if werr != nil {
		return fmt.Errorf("sending frames: %w", werr)
	}
	last, lastChange := events(), time.Now()
	for last < int64(in.lines) {
		time.Sleep(20 * time.Millisecond)
		if n := events(); n != last {
			last, lastChange = n, time.Now()
		} else if time.Since(lastChange) > forwardStallTimeout {
			return fmt.Errorf("fake Axiom stuck at %d of %d lines", last, in.lines)
		}
	}
	return nil
}

// countForward counts the instructions per line of the sidecar reading the
// load generator's pino lines from stdin, and the same lines over Fluent
// Forward as docker's fluentd driver sends them (a Message-mode frame per
// line) and as FireLens does (Forward-mode frames of 16 lines, with the
// ecs_* fields), each at max rate over one connection, and their ratios to
// stdin.
func countForward(sidecar string, lines, procs int, keep bool) error {
	per := loadgen.ForwardBatchLines
	lines -= lines % per
	small := lines / 5
	small -= small % per
	if small < 1000 {
		return fmt.Errorf("-valgrind needs -lines of at least 5000, got %d", lines)
	}
	dir, removeDir, err := workDir("logpath-valgrind-", keep)
	if err != nil {
		return err
	}
	defer removeDir()
	// The same lines everywhere: NewPino(seed) stamped now, blockLines of
	// them distinct (more than zstd's window), as in the stdin count.
	const seed = 1
	now := time.Now().Truncate(time.Millisecond)
	n := min(lines, blockLines)
	gen := loadgen.NewPino(seed)
	var block []byte
	for range n {
		block = gen.Append(block, now)
	}
	fmt.Printf("input: %d and %d load generator pino lines, %.0f bytes/line; instructions counted by valgrind (cachegrind, no cache simulation)\n",
		lines, small, float64(len(block))/float64(n))

	forward := func(mode loadgen.ForwardMode) func(int, []string) error {
		return func(lines int, wrap []string) error {
			in := newForwardInput(mode, seed, now, n, lines)
			_, err := runSidecarOn(sidecar, "forward", "", in.lines, procs, keep, repeatedInput{}, &in, wrap)
			return err
		}
	}
	subjects := []counted{
		{fmt.Sprintf("sidecar, stdin (GOMAXPROCS=%d)", procs), "stdin", 1, func(lines int, wrap []string) error {
			in := repeatedInput{block: block, blockLines: n, lines: lines}
			_, err := runSidecar(sidecar, "stdin", "", lines, procs, keep, in, wrap)
			return err
		}},
		{"sidecar, Forward docker-style (a frame per line)", "docker", 1, forward(loadgen.ForwardMessage)},
		{fmt.Sprintf("sidecar, Forward FireLens-style (%d-line frames)", per), "firelens", 1, forward(loadgen.ForwardBatch)},
	}
	perLine, err := countPerLine(dir, subjects, small, lines)
	if err != nil {
		return err
	}
	fmt.Printf("\nForward docker-style: %.2fx stdin's instructions per line; FireLens-style: %.2fx (instructions, not CPU time)\n",
		perLine[1]/perLine[0], perLine[2]/perLine[0])
	if keep {
		fmt.Printf("cachegrind's files (cg_annotate: instructions by function and line) are in %s\n", dir)
	}
	return nil
}
