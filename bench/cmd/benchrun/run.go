package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sidecarhq/sidecar/bench/internal/procstat"
)

const (
	collSidecar  = "sidecar"
	collBaseline = "baseline"
	phaseFixed   = "fixed" // fixed rate: CPU per million, RSS, latency
	phaseMax     = "max"   // as fast as possible: sustained events/s
)

// idleWindow is how long idle CPU is measured (CPU times tick at 10 ms).
const idleWindow = 4 * time.Second

// sampleEvery is the time-series resolution.
const sampleEvery = 250 * time.Millisecond

// runEnv is what a scenario's configs and loads need to know about one run.
type runEnv struct {
	dir                             string
	sinkURL                         string
	logFile                         string
	grpcPort, httpPort, forwardPort int
	stdin                           io.Writer

	sinkLogs            atomic.Int64 // last seen at the sink, for backlog bounds
	sentLogs, sentSpans atomic.Int64 // per signal, for the mixed scenario
}

func (e *runEnv) sunk() int64          { return e.sinkLogs.Load() }
func (e *runEnv) httpEndpoint() string { return fmt.Sprintf("127.0.0.1:%d", e.httpPort) }
func (e *runEnv) grpcEndpoint() string { return fmt.Sprintf("127.0.0.1:%d", e.grpcPort) }

// point is one time-series sample, relative to the start of the load.
type point struct {
	T          float64 // seconds
	Sent       int64
	SinkLogs   int64
	SinkSpans  int64
	CPUSeconds float64
	RSSKB      int64
}

// result is one collector's figures in one phase of one scenario.
type result struct {
	Scenario, Collector, Phase string
	Run                        int    // which of -repeat runs, from 0
	Skipped                    string `json:",omitempty"`
	Error                      string `json:",omitempty"`

	Rate          int     // offered events/s (0: as fast as possible)
	Sent          int64   // events the collector accepted
	SinkLogs      int64   // log events that reached the sink
	SinkSpans     int64   // spans that reached the sink
	LoadSeconds   float64 // time the load ran
	CPUSeconds    float64 // collector CPU from load start until drained
	CPUPerMillion float64
	// SteadyCPUPerMillion (fixed phase) is the CPU per million events from
	// steadyFrom into the load until it stopped, over the events sent
	// meanwhile: without the one-time cost of a fresh process's first
	// load (first-touch page faults as its heap grows, buffers sized) and
	// the drain, which weigh on a short phase.
	SteadyCPUPerMillion float64 `json:",omitempty"`
	Throughput          float64 // events/s sustained, wall clock (max phase)
	// PerCPUSecond is events handled per second of collector CPU in the max
	// phase: what one core sustains when it gets all of its time, which a
	// shared, busy machine does not give the wall-clock figure.
	PerCPUSecond float64
	IdleRSSKB    int64
	IdleCPUms    float64 // CPU ms per second while idle
	PeakRSSKB    int64
	LatencyP50ms float64
	LatencyP99ms float64
	LatencyCount int64
	// WireBytesPerEvent is request body bytes as sent (compressed) per event
	// that reached the sink: what shipping costs in egress.
	WireBytesPerEvent float64
	// Per million events, from load start until drained (the collector's
	// process): page faults, context switches summed over its threads
	// (voluntary: it blocked; involuntary: preempted), and GC cycles when
	// benchrun runs with GODEBUG=gctrace=1 (read from the collector's log).
	MinFltPerMillion   float64 `json:",omitempty"`
	MajFlt             int64   `json:",omitempty"`
	VolCtxPerMillion   float64 `json:",omitempty"`
	InvolCtxPerMillion float64 `json:",omitempty"`
	Threads            int     `json:",omitempty"`
	GCCycles           int     `json:",omitempty"`
	GCPerMillion       float64 `json:",omitempty"`
	SinkCPUPct         float64 // sink CPU, % of one core, while loaded
	LoadCPUPct         float64 // this process (load generators) CPU, % of one core
	Series             string  // CSV file name
	Note               string  `json:",omitempty"`
}

func (r result) summary() string {
	if r.Error != "" {
		return "error: " + r.Error
	}
	s := fmt.Sprintf("sent=%d sink(logs=%d spans=%d) cpu=%.2fs (%.2f s/M) idle=%.1fMB peak=%.1fMB sinkCPU=%.0f%% loadCPU=%.0f%%",
		r.Sent, r.SinkLogs, r.SinkSpans, r.CPUSeconds, r.CPUPerMillion, float64(r.IdleRSSKB)/1024, float64(r.PeakRSSKB)/1024, r.SinkCPUPct, r.LoadCPUPct)
	if r.SteadyCPUPerMillion > 0 {
		s += fmt.Sprintf(" steady=%.2f s/M", r.SteadyCPUPerMillion)
	}
	if r.Phase == phaseMax {
		s += fmt.Sprintf(" throughput=%.0f/s per-cpu-second=%.0f", r.Throughput, r.PerCPUSecond)
	} else {
		s += fmt.Sprintf(" latency p50=%.0fms p99=%.0fms (n=%d)", r.LatencyP50ms, r.LatencyP99ms, r.LatencyCount)
	}
	if r.MinFltPerMillion > 0 {
		s += fmt.Sprintf(" minflt=%.0f/M majflt=%d ctxsw=%.0f+%.0f/M threads=%d", r.MinFltPerMillion, r.MajFlt, r.VolCtxPerMillion, r.InvolCtxPerMillion, r.Threads)
	}
	if r.GCCycles > 0 {
		s += fmt.Sprintf(" gc=%d (%.1f/M)", r.GCCycles, r.GCPerMillion)
	}
	if r.Note != "" {
		s += " note: " + r.Note
	}
	return s
}

func runOne(o options, sc scenario, coll, phase string, rep int) result {
	r := result{Scenario: sc.name, Collector: coll, Phase: phase, Run: rep}
	if phase == phaseFixed {
		r.Rate = sc.fixedRate
	}
	if err := runPhase(o, sc, coll, phase, &r); err != nil {
		r.Error = err.Error()
	}
	return r
}

func runPhase(o options, sc scenario, coll, phase string, r *result) error {
	dir, err := os.MkdirTemp("", "bench-"+sc.name+"-"+coll+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in := sc.sidecar
	if coll == collBaseline {
		in = sc.baseline
	}

	sink, sinkURL, err := startSink(o.sinkBin, phase == phaseFixed, sc.axiom, dir)
	if err != nil {
		return err
	}
	defer stopProcess(sink)

	env := &runEnv{dir: dir, sinkURL: sinkURL, logFile: filepath.Join(dir, "app.log")}
	if env.grpcPort, err = freePort(); err != nil {
		return err
	}
	if env.httpPort, err = freePort(); err != nil {
		return err
	}
	if env.forwardPort, err = freePort(); err != nil {
		return err
	}
	if err := os.WriteFile(env.logFile, nil, 0o644); err != nil {
		return err
	}
	cfg, bin := sidecarConfig(env, in), o.sidecarBin
	if coll == collBaseline {
		cfg, bin = baselineConfig(env, in), o.baselineBin
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	// Keep the exact config next to the results, for anyone checking fairness.
	kept := filepath.Join(o.out, "configs", fmt.Sprintf("%s-%s.yaml", sc.name, coll))
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(kept, []byte(cfg), 0o644); err != nil {
		return err
	}

	cmd := collectorCommand(o.cpu, bin, cfgPath)
	logPath := filepath.Join(o.out, "logs", fmt.Sprintf("%s-%s-%s.log", sc.name, coll, phase))
	_ = os.MkdirAll(filepath.Dir(logPath), 0o755)
	logOut, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logOut.Close()
	cmd.Stdout, cmd.Stderr = logOut, logOut
	var stdin io.WriteCloser
	if in.logs == inputStdin || in.stdinSpans {
		if stdin, err = cmd.StdinPipe(); err != nil {
			return err
		}
		env.stdin = stdin
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", coll, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	// Against a sink that is down or slow a collector spends its whole
	// shutdown timeout retrying; the figures are taken by then.
	grace := 15 * time.Second
	if sc.axiom != "" {
		grace = 2 * time.Second
	}
	defer func() {
		if stdin != nil {
			stdin.Close()
		}
		stopCollector(cmd, exited, grace)
	}()
	pid := cmd.Process.Pid
	started := time.Now()

	// Idle: started, listening, nothing offered yet.
	select {
	case <-exited:
		return fmt.Errorf("%s exited during start-up; see %s", coll, logPath)
	case <-time.After(o.settle):
	}
	if in.spans && !in.stdinSpans {
		if err := waitListening(env.grpcEndpoint(), 10*time.Second); err != nil {
			return err
		}
	}
	if in.logs == inputForward || in.logs == inputForwardBatch {
		if err := waitListening(fmt.Sprintf("127.0.0.1:%d", env.forwardPort), 10*time.Second); err != nil {
			return err
		}
	}
	// Idle CPU: what the collector burns with nothing to do (timers, GC,
	// polling), over idleWindow; it weighs on every fixed-rate figure.
	before, err := procstat.Read(pid)
	if err != nil {
		return err
	}
	time.Sleep(idleWindow)
	idle, err := procstat.Read(pid)
	if err != nil {
		return fmt.Errorf("%s died while idle; see %s", coll, logPath)
	}
	r.IdleRSSKB = idle.RSSKB
	idleAct, _ := procstat.ReadActivity(pid)
	r.IdleCPUms = (idle.CPUSeconds - before.CPUSeconds) * 1000 / idleWindow.Seconds()

	rate := 0
	if phase == phaseFixed {
		rate = sc.fixedRate
	}
	var sent atomic.Int64
	var series []point
	var seriesMu sync.Mutex
	start := time.Now()
	loadFrom := start.Sub(started).Seconds()
	sinkBefore, _ := procstat.Read(sink.Process.Pid)
	selfBefore := selfCPU()

	// Sampler: CPU, RSS and sink counters every sampleEvery.
	samplerCtx, stopSampler := context.WithCancel(context.Background())
	defer stopSampler()
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			st, _ := sinkStats(sinkURL)
			env.sinkLogs.Store(st.Logs)
			ps, _ := procstat.Read(pid)
			seriesMu.Lock()
			series = append(series, point{T: time.Since(start).Seconds(), Sent: sent.Load(), SinkLogs: st.Logs, SinkSpans: st.Spans, CPUSeconds: ps.CPUSeconds - idle.CPUSeconds, RSSKB: ps.RSSKB})
			seriesMu.Unlock()
			select {
			case <-samplerCtx.Done():
				return
			case <-t.C:
			}
		}
	}()

	loadCtx, stopLoad := context.WithTimeout(context.Background(), o.phaseDuration(phase))
	loadErr := sc.load(loadCtx, env, in, rate, &sent)
	stopLoad()
	r.LoadSeconds = time.Since(start).Seconds()
	selfAfter := selfCPU()
	sinkAfterLoad, _ := procstat.Read(sink.Process.Pid)
	if loadErr != nil {
		r.Note = "load: " + loadErr.Error()
	}

	// Drain: wait until everything sent reached the sink (logs) or the
	// sink stops changing (spans are sampled). At max rate a slow collector
	// may hold a large backlog; it is not waited for, since only what
	// reached the sink counts there.
	drainFor := 20 * time.Second
	if phase == phaseMax {
		drainFor = 3 * time.Second
	}
	drainUntil := time.Now().Add(drainFor)
	var last sinkState
	stableSince := time.Now()
	for time.Now().Before(drainUntil) {
		time.Sleep(250 * time.Millisecond)
		st, err := sinkStats(sinkURL)
		if err != nil {
			continue
		}
		if st.Logs != last.Logs || st.Spans != last.Spans {
			last, stableSince = st, time.Now()
		}
		logsDone := !hasLogs(in) || st.Logs >= logsSent(env, in, &sent)
		if logsDone && (!in.spans || time.Since(stableSince) > 2*time.Second) {
			break
		}
	}
	after, err := procstat.Read(pid)
	if err != nil {
		return fmt.Errorf("%s died during the run; see %s", coll, logPath)
	}
	afterAct, actErr := procstat.ReadActivity(pid)
	loadTo := time.Since(started).Seconds()
	stopSampler()
	<-samplerDone

	final, err := sinkStats(sinkURL)
	if err != nil {
		return err
	}
	r.Sent = sent.Load()
	r.SinkLogs, r.SinkSpans = final.Logs, final.Spans
	r.CPUSeconds = after.CPUSeconds - idle.CPUSeconds
	// Log events count once they reach the sink; spans, mostly sampled
	// away, once the collector accepted them.
	events := r.Sent
	if hasLogs(in) && !in.spans {
		events = min(r.Sent, r.SinkLogs)
	}
	if events > 0 {
		r.CPUPerMillion = r.CPUSeconds / float64(events) * 1e6
	}
	r.PeakRSSKB = after.PeakRSSKB
	if actErr == nil && events > 0 {
		perM := 1e6 / float64(events)
		r.MinFltPerMillion = float64(afterAct.MinFlt-idleAct.MinFlt) * perM
		r.MajFlt = afterAct.MajFlt - idleAct.MajFlt
		r.VolCtxPerMillion = float64(afterAct.Voluntary-idleAct.Voluntary) * perM
		r.InvolCtxPerMillion = float64(afterAct.Involuntary-idleAct.Involuntary) * perM
		r.Threads = afterAct.Threads
		if logText, err := os.ReadFile(logPath); err == nil {
			r.GCCycles = gcCycles(logText, loadFrom, loadTo)
			r.GCPerMillion = float64(r.GCCycles) * perM
		}
	}
	if delivered := final.Logs + final.Spans; delivered > 0 {
		r.WireBytesPerEvent = float64(final.Wire) / float64(delivered)
	}
	r.LatencyP50ms, r.LatencyP99ms, r.LatencyCount = final.Latency.P50ms, final.Latency.P99ms, final.Latency.Count
	r.SinkCPUPct = 100 * (sinkAfterLoad.CPUSeconds - sinkBefore.CPUSeconds) / r.LoadSeconds
	r.LoadCPUPct = 100 * (selfAfter - selfBefore) / r.LoadSeconds
	if hasLogs(in) && final.Logs < logsSent(env, in, &sent) {
		r.addNote(fmt.Sprintf("only %d of %d log lines had reached the sink %v after the load stopped", final.Logs, logsSent(env, in, &sent), drainFor))
	}
	if offered := int64(float64(rate) * o.phaseDuration(phase).Seconds()); rate > 0 && r.Sent < offered*95/100 {
		r.addNote(fmt.Sprintf("took only %d of the %d events offered (the load generator waits for each export: the collector pushed back)", r.Sent, offered))
	}
	if final.Rejected > 0 {
		r.addNote(fmt.Sprintf("sink rejected %d requests", final.Rejected))
	}
	if final.Refused > 0 {
		r.addNote(fmt.Sprintf("sink (Axiom down) answered 503 to %d requests", final.Refused))
	}
	if phase == phaseFixed {
		r.SteadyCPUPerMillion = steadyCPUPerMillion(series, r.LoadSeconds, rate, hasLogs(in) && !in.spans)
	}
	if phase == phaseMax {
		r.Throughput = sustained(series, in, r.LoadSeconds)
		if r.CPUSeconds > 0 {
			r.PerCPUSecond = float64(events) / r.CPUSeconds
		}
	}
	r.Series = fmt.Sprintf("%s-%s-%s.csv", sc.name, coll, phase)
	if r.Run > 0 {
		r.Series = fmt.Sprintf("%s-%s-%s-run%d.csv", sc.name, coll, phase, r.Run+1)
	}
	return writeSeries(filepath.Join(o.out, r.Series), series)
}

// gcCycles counts the runtime's gctrace lines ("gc 12 @3.456s ...", seconds
// since the process started) in a collector's log that fall within [from,
// to] seconds of its start: 0 without GODEBUG=gctrace=1.
func gcCycles(log []byte, from, to float64) int {
	n := 0
	for _, line := range bytes.Split(log, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) < 3 || string(f[0]) != "gc" || !bytes.HasPrefix(f[2], []byte("@")) || !bytes.HasSuffix(f[2], []byte("s")) {
			continue
		}
		t, err := strconv.ParseFloat(string(f[2][1:len(f[2])-1]), 64)
		if err == nil && t >= from && t <= to {
			n++
		}
	}
	return n
}

// addNote appends one remark to the result's note.
func (r *result) addNote(s string) {
	if r.Note != "" {
		r.Note += "; "
	}
	r.Note += s
}

func hasLogs(in inputs) bool { return in.logs != "" }

// logsSent is how many log lines were offered in total.
func logsSent(env *runEnv, in inputs, sent *atomic.Int64) int64 {
	if in.spans { // mixed: logs are counted separately
		return env.sentLogs.Load()
	}
	return sent.Load()
}

// sustained is the events/s over the load's steady part, from 2 s after
// it started until it stopped. Logs are counted at the sink (end to end);
// spans, which are mostly sampled away, as accepted by the collector.
func sustained(series []point, in inputs, loadSeconds float64) float64 {
	count := func(p point) int64 {
		if hasLogs(in) && !in.spans {
			return p.SinkLogs
		}
		return p.Sent
	}
	var first, last *point
	for i := range series {
		p := &series[i]
		if p.T < 2 || p.T > loadSeconds {
			continue
		}
		if first == nil {
			first = p
		}
		last = p
	}
	if first == nil || last.T <= first.T {
		return 0
	}
	return float64(count(*last)-count(*first)) / (last.T - first.T)
}

// steadyFrom is where a fixed-rate phase's steady state starts: a fresh
// collector's first second of load costs several times a later one
// (sidecar at 20k lines/s: 0.08-0.11 CPU s in the first 250 ms, ~0.07 a
// second after).
const steadyFrom = 2.0

// steadyCPUPerMillion is the collector's CPU per million events sent from
// steadyFrom seconds into the load until it stopped; 0 when the phase was
// too short to tell, or when logs lagged at the sink by more than two
// seconds of the rate when the load stopped (the collector fell behind:
// the CPU for what it accepted then was spent in the drain).
func steadyCPUPerMillion(series []point, loadSeconds float64, rate int, logs bool) float64 {
	var first, last *point
	for i := range series {
		p := &series[i]
		if p.T < steadyFrom || p.T > loadSeconds {
			continue
		}
		if first == nil {
			first = p
		}
		last = p
	}
	if first == nil || last.T-first.T < 1 || last.Sent <= first.Sent {
		return 0
	}
	if logs && last.Sent-last.SinkLogs > 2*int64(rate) {
		return 0
	}
	return (last.CPUSeconds - first.CPUSeconds) / float64(last.Sent-first.Sent) * 1e6
}

func collectorCommand(cpu, bin, cfgPath string) *exec.Cmd {
	args := []string{bin, "--config", "file:" + cfgPath}
	if cpu != "" {
		args = append([]string{"taskset", "-c", cpu}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	return cmd
}

// stopCollector sends SIGTERM and kills the collector if it has not exited
// after grace.
func stopCollector(cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-exited
	}
}

func startSink(bin string, latency bool, axiom, dir string) (*exec.Cmd, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"-addr", addr}
	if latency {
		args = append(args, "-latency")
	}
	if axiom != "" {
		args = append(args, "-axiom", axiom)
	}
	cmd := exec.Command(bin, args...)
	logOut, err := os.Create(filepath.Join(dir, "sink.log"))
	if err != nil {
		return nil, "", err
	}
	cmd.Stdout, cmd.Stderr = logOut, logOut
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	url := "http://" + addr
	for range 100 {
		if _, err := sinkStats(url); err == nil {
			return cmd, url, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopProcess(cmd)
	return nil, "", errors.New("sink did not start")
}

func stopProcess(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
}

type sinkState struct {
	Logs, Spans, Rejected int64
	Refused               int64 // answered 503 (benchsink -axiom down)
	Wire                  int64 `json:"wireBytes"`
	Latency               struct {
		Count        int64
		P50ms, P99ms float64
	}
}

var statsClient = &http.Client{Timeout: 5 * time.Second}

func sinkStats(url string) (sinkState, error) {
	var st sinkState
	resp, err := statsClient.Get(url + "/_bench/stats")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("nothing listening on %s after %v", addr, timeout)
}

// selfCPU is this process's user+system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// componentTypes lists the component types a collector binary was built
// with, from its `components` sub-command.
func componentTypes(bin string) (map[string]bool, error) {
	out, err := exec.Command(bin, "components").Output()
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if _, name, ok := strings.Cut(line, "name: "); ok {
			have[strings.TrimSpace(name)] = true
		}
	}
	return have, nil
}

func writeSeries(path string, series []point) error {
	var b strings.Builder
	b.WriteString("t_s,sent,sink_logs,sink_spans,cpu_s,rss_kb\n")
	for _, p := range series {
		b.WriteString(strconv.FormatFloat(p.T, 'f', 3, 64))
		fmt.Fprintf(&b, ",%d,%d,%d,%.2f,%d\n", p.Sent, p.SinkLogs, p.SinkSpans, p.CPUSeconds, p.RSSKB)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
