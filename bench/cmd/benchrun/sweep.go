package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sidecarhq/sidecar/bench/internal/procstat"
)

// A rate sweep (-sweep-rates) splits a collector's CPU into what it costs
// per second whatever comes in and what it costs per event: one collector
// per scenario stays up while its input (log lines, or spans for a span
// scenario) is offered each rate in turn (0: nothing; Fluent Forward
// connections open), and each step reports CPU ms per second
// and the times its threads were put on a CPU (wake-ups) per second, from
// /proc/<pid>/task/*/schedstat (nanoseconds, not 10 ms ticks). Repeating
// the rates (-sweep-repeat) gives medians on a noisy machine.

// sweepStep is one rate's figures.
type sweepStep struct {
	Scenario, Collector string
	Rate                int
	Events              int64 // log lines, or spans
	Seconds             float64
	CPUmsPerSecond      float64
	WakeupsPerSecond    float64
	CPUsPerMillion      float64 // CPU s per million events (0 when idle)
	// Short is set when the collector took less than 95% of the rate
	// (it pushed back, or the load generator was starved of CPU).
	Short bool `json:",omitempty"`
}

func parseRates(s string) ([]int, error) {
	var rates []int
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r < 0 {
			return nil, fmt.Errorf("bad rate %q in -sweep-rates", f)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// sweep runs the rate sweep for every selected sweepable scenario.
func sweep(o options, rates []int) error {
	var steps []sweepStep
	for _, sc := range scenarios(o) {
		if o.only != nil && !o.only[sc.name] || !sweepable(sc) {
			continue
		}
		for _, coll := range sweepCollectors(sc, o.sweepBaseline) {
			got, err := sweepOne(o, sc, coll, rates)
			if err != nil {
				return fmt.Errorf("%s / %s: %w", sc.name, coll, err)
			}
			steps = append(steps, got...)
		}
	}
	printSweep(os.Stdout, steps)
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	return writeJSON(filepath.Join(o.out, "sweep.json"), steps)
}

// sweepCollectors is who a scenario is swept for: the sidecar, and with
// -sweep-baseline the stock collector too where the scenario has one (log
// or span input).
func sweepCollectors(sc scenario, withBaseline bool) []string {
	colls := []string{collSidecar}
	if withBaseline && !sc.sidecarOnly && (sc.baseline.logs != "" || sc.baseline.spans) {
		colls = append(colls, collBaseline)
	}
	return colls
}

// sweepable reports whether a scenario's input is one kind of event, log
// lines or spans, so that a rate means one thing (mixed has both).
func sweepable(sc scenario) bool { return (sc.sidecar.logs != "") != sc.sidecar.spans }

func sweepOne(o options, sc scenario, coll string, rates []int) ([]sweepStep, error) {
	dir, err := os.MkdirTemp("", "bench-sweep-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, bin := sc.sidecar, o.sidecarBin
	if coll == collBaseline {
		in, bin = sc.baseline, o.baselineBin
	}
	sink, sinkURL, err := startSink(o.sinkBin, false, "", dir)
	if err != nil {
		return nil, err
	}
	defer stopProcess(sink)
	env := &runEnv{dir: dir, sinkURL: sinkURL, logFile: filepath.Join(dir, "app.log")}
	for _, port := range []*int{&env.forwardPort, &env.grpcPort, &env.httpPort} {
		if *port, err = freePort(); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(env.logFile, nil, 0o644); err != nil {
		return nil, err
	}
	cfg := sidecarConfig(env, in)
	if coll == collBaseline {
		cfg = baselineConfig(env, in)
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	cmd := collectorCommand(o.cpu, bin, cfgPath)
	logOut, err := os.Create(filepath.Join(dir, "collector.log"))
	if err != nil {
		return nil, err
	}
	defer logOut.Close()
	cmd.Stdout, cmd.Stderr = logOut, logOut
	var stdin io.WriteCloser
	if in.logs == inputStdin || in.stdinSpans {
		if stdin, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
		env.stdin = stdin
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		if stdin != nil {
			stdin.Close()
		}
		stopCollector(cmd, exited, 15*time.Second)
	}()
	time.Sleep(o.settle)
	if in.logs == inputForward || in.logs == inputForwardBatch {
		if err := waitListening(fmt.Sprintf("127.0.0.1:%d", env.forwardPort), 10*time.Second); err != nil {
			return nil, err
		}
	}
	if in.spans && !in.stdinSpans {
		if err := waitListening(env.httpEndpoint(), 10*time.Second); err != nil {
			return nil, err
		}
	}
	pid := cmd.Process.Pid
	var steps []sweepStep
	for range o.sweepRepeat {
		for _, rate := range rates {
			st, err := sweepStepAt(o, sc, env, in, pid, rate)
			if err != nil {
				return nil, err
			}
			st.Scenario, st.Collector = sc.name, coll
			fmt.Fprintf(os.Stderr, "   %s / %s at %d/s: %.1f CPU ms/s, %.0f wake-ups/s, %.2f CPU s per million events%s\n",
				sc.name, coll, rate, st.CPUmsPerSecond, st.WakeupsPerSecond, st.CPUsPerMillion, shortNote(st))
			steps = append(steps, st)
		}
	}
	return steps, nil
}

// sweepStepAt offers rate events/s (0: none, the input's connections open)
// for a warm-up second and then o.duration, measured.
func sweepStepAt(o options, sc scenario, env *runEnv, in inputs, pid, rate int) (sweepStep, error) {
	st := sweepStep{Rate: rate}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sent atomic.Int64
	loadDone := make(chan error, 1)
	if rate > 0 {
		go func() { loadDone <- sc.load(ctx, env, in, rate, &sent) }()
	} else if in.logs == inputForward || in.logs == inputForwardBatch {
		go func() { loadDone <- idleForward(ctx, env) }()
	} else {
		close(loadDone)
	}
	time.Sleep(time.Second)
	before, err := procstat.ReadSched(pid)
	if err != nil {
		return st, err
	}
	sentBefore, start := sent.Load(), time.Now()
	time.Sleep(o.duration)
	after, err := procstat.ReadSched(pid)
	if err != nil {
		return st, err
	}
	st.Seconds = time.Since(start).Seconds()
	st.Events = sent.Load() - sentBefore
	cancel()
	if err := <-loadDone; err != nil {
		return st, err
	}
	cpu := (after.Ran - before.Ran).Seconds()
	st.CPUmsPerSecond = cpu * 1000 / st.Seconds
	st.WakeupsPerSecond = float64(after.Slices-before.Slices) / st.Seconds
	if st.Events > 0 {
		st.CPUsPerMillion = cpu / float64(st.Events) * 1e6
	}
	st.Short = float64(st.Events) < 0.95*float64(rate)*st.Seconds
	// Let the collector ship what it holds before the next rate.
	time.Sleep(1500 * time.Millisecond)
	return st, nil
}

// idleForward holds the load generator's connections open without writing.
func idleForward(ctx context.Context, env *runEnv) error {
	var conns []io.Closer
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 4 {
		c, err := dialForward(env)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	<-ctx.Done()
	return nil
}

// printSweep writes the steps as a Markdown table, medians per scenario,
// collector and rate when repeated.
func printSweep(w io.Writer, steps []sweepStep) {
	type key struct {
		scenario, coll string
		rate           int
	}
	var order []key
	groups := map[key][]sweepStep{}
	for _, st := range steps {
		k := key{st.Scenario, st.Collector, st.Rate}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], st)
	}
	fmt.Fprintln(w, "| scenario | collector | events/s | runs | CPU ms per second (median, range) | wake-ups per second | CPU s per million events (median, range) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, k := range order {
		g := groups[k]
		cpu := medianRange(g, func(s sweepStep) float64 { return s.CPUmsPerSecond })
		wake := medianRange(g, func(s sweepStep) float64 { return s.WakeupsPerSecond })
		per := "–"
		if k.rate > 0 {
			per = medianRange(g, func(s sweepStep) float64 { return s.CPUsPerMillion })
		}
		note := ""
		for _, st := range g {
			note += shortNote(st)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %s%s |\n", k.scenario, k.coll, k.rate, len(g), cpu, wake, per, note)
	}
}

func medianRange(g []sweepStep, f func(sweepStep) float64) string {
	v := make([]float64, len(g))
	for i, s := range g {
		v[i] = f(s)
	}
	slices.Sort(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	if len(v) == 1 {
		return fmt.Sprintf("%.2f", m)
	}
	return fmt.Sprintf("%.2f (%.2f-%.2f)", m, v[0], v[len(v)-1])
}

// shortNote marks a step whose rate was not offered in full.
func shortNote(st sweepStep) string {
	if !st.Short {
		return ""
	}
	return fmt.Sprintf(" (took only %.0f events/s)", float64(st.Events)/st.Seconds)
}
