// Command appcost measures what shipping telemetry costs the app itself:
// the example app (examples/node-app) under the same HTTP load, each request
// 5 Redis GETs and a SET, in three modes (TELEMETRY in telemetry.js):
//
//	direct   logs through the @axiomhq/pino transport and OTLP/protobuf spans,
//	         both posted to Axiom (here a count-only fake) from the process
//	otlp     pino to stdout, piped into the sidecar; OTLP/protobuf spans to
//	         the sidecar on localhost
//	stdout   pino and span lines to stdout, piped into the sidecar: no
//	         telemetry network call
//
// under Node and under Bun. It reports the app's CPU seconds per 1,000
// requests and its RSS after warm-up and at the end, its RSS and retained
// heap after a full garbage collection at both ends (which, unlike RSS as
// the load leaves it, do not hang on the collector's timing), the spans
// lost in the app (its span queue or exporter full: the sidecar keeps
// everything it reads), and the sidecar's CPU and peak RSS, as Markdown;
// -series writes RSS over time as CSV.
//
// A few percent between two modes is less than the machine's drift over
// minutes, so the default is many short rounds: each round measures every
// runtime and mode once, the modes in an order that rotates from round to
// round, and the report gives each mode's median and spread over the rounds
// and, per round, the ratio of stdout's CPU to each other mode's (measured
// minutes apart at most): its median and range.
//
//	go run ./bench/appcost -sidecar bin/sidecar
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sidecarhq/sidecar/bench/internal/procstat"
	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

const token = "xaat-appcost-0123456789"

// spansPerRequest is what GET /orders/<id> makes: the server span, 5 GETs
// and a SET.
const spansPerRequest = 7

type options struct {
	sidecar, appDir, series string
	requests, warmup, conc  int
	rounds                  int
	rate                    float64 // requests per second; 0: as fast as conc allows
}

type result struct {
	runtime, mode       string
	round               int
	seconds             float64 // wall time of the measured load
	appCPU              float64 // CPU seconds during the measured load
	rss0, rss1, appPeak int64   // kB: after warm-up, at the end, VmHWM
	rssMean             int64   // kB: the mean of the samples taken every 250 ms during the measured load
	gc0, gc1            memory  // after a full collection, after warm-up and at the end
	sidecarCPU          float64 // CPU seconds during the measured load
	sidecarPeak         int64   // kB
	events, spans       int64   // what reached the fake Axiom
}

// memory is what the app reports after a full garbage collection (see
// APPCOST_MEMORY_FILE in examples/node-app/server.js).
type memory struct {
	RSS  int64 `json:"rss"`  // bytes
	Heap int64 `json:"heap"` // bytes its objects still hold: JavaScript heap and external memory
}

func main() {
	var o options
	flag.StringVar(&o.sidecar, "sidecar", "", "path of the sidecar binary (required)")
	flag.StringVar(&o.appDir, "app", "examples/node-app", "the example app, with node_modules installed")
	flag.StringVar(&o.series, "series", "", "directory for RSS-over-time CSV files (none if empty)")
	flag.IntVar(&o.requests, "requests", 12_000, "measured requests per run")
	flag.IntVar(&o.warmup, "warmup", 3_000, "requests before measuring")
	flag.IntVar(&o.rounds, "rounds", 6, "measure every runtime and mode this many times, interleaved, the modes' order rotating from round to round (the machine's load drifts less within a round)")
	flag.IntVar(&o.conc, "concurrency", 64, "requests in flight at most")
	flag.Float64Var(&o.rate, "rate", 1500, "requests per second (0: as many as -concurrency allows); the same rate in every mode makes the app do the same work per second")
	runtimes := flag.String("runtimes", "node,bun", "runtimes to measure")
	modes := flag.String("modes", "direct,otlp,stdout", "modes to measure")
	flag.Parse()
	if o.sidecar == "" {
		fmt.Fprintln(os.Stderr, "appcost: -sidecar is required")
		os.Exit(2)
	}
	if err := run(o, strings.Split(*runtimes, ","), strings.Split(*modes, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "appcost:", err)
		os.Exit(1)
	}
}

func run(o options, runtimes, modes []string) error {
	redis, stopRedis, err := startRedis()
	if err != nil {
		return err
	}
	defer stopRedis()
	bins := map[string]string{}
	for _, rt := range runtimes {
		if bins[rt], err = runtimeBinary(o.appDir, rt); err != nil {
			return err
		}
	}
	var results []result
	for round := range o.rounds {
		for _, rt := range runtimes {
			for _, mode := range rotate(modes, round) {
				fmt.Fprintf(os.Stderr, "appcost: round %d: %s %s ...\n", round+1, rt, mode)
				series := ""
				if round == 0 {
					series = o.series
				}
				r, err := measure(o, rt, bins[rt], mode, redis, series)
				if err != nil {
					return fmt.Errorf("%s %s: %w", rt, mode, err)
				}
				r.round = round
				results = append(results, r)
			}
		}
	}
	report(os.Stdout, o, results)
	return nil
}

// runtimeBinary is the absolute path of runtime rt's binary: node on PATH,
// bun the app's devDependency.
func runtimeBinary(appDir, rt string) (string, error) {
	bin := rt
	if rt == "bun" {
		bin = filepath.Join(appDir, "node_modules/.bin/bun")
	}
	bin, err := exec.LookPath(bin)
	if err != nil {
		return "", err
	}
	return filepath.Abs(bin) // the app runs in its own directory
}

// rotate is modes starting at the round's one: each mode runs first, last
// and in between as often, so that a drift of the machine within a round
// does not favour one.
func rotate(modes []string, round int) []string {
	k := round % len(modes)
	return append(slices.Clone(modes[k:]), modes[:k]...)
}

// measure runs the app once; series, if set, is where its RSS over time goes.
func measure(o options, rt, bin, mode, redis, series string) (result, error) {
	res := result{runtime: rt, mode: mode}
	fake, err := axiomtest.New(axiomtest.WithCountOnly())
	if err != nil {
		return res, err
	}
	defer fake.Close()
	dir, err := os.MkdirTemp("", "appcost-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)

	appAddr, otlpHTTP := freeAddr(), freeAddr()
	_, appPort, _ := net.SplitHostPort(appAddr)
	memFile := filepath.Join(dir, "memory.jsonl")
	app := appCommand(o.appDir, rt, bin, memFile)
	app.Env = append(app.Env, "PORT="+appPort, "REDIS_URL=redis://"+redis, "TELEMETRY="+mode,
		"SERVICE_NAME=appcost", "AXIOM_URL="+fake.URL(), "AXIOM_TOKEN="+token,
		"AXIOM_DATASET=logs", "AXIOM_TRACES_DATASET=traces", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+otlpHTTP)
	app.Stderr = os.Stderr

	var sc *exec.Cmd
	scDone := make(chan error, 1)
	if mode != "direct" {
		// No sampling rule: every span the app hands over must reach the
		// fake, so what is missing was lost in the app.
		sc = exec.Command(o.sidecar, "--config", "embedded:stdin")
		_, metricsPort, _ := net.SplitHostPort(freeAddr())
		sc.Env = append(os.Environ(), "AXIOM_URL="+fake.URL(), "AXIOM_TOKEN="+token,
			"SIDECAR_OTLP_GRPC_ENDPOINT="+freeAddr(), "SIDECAR_OTLP_HTTP_ENDPOINT="+otlpHTTP,
			"SIDECAR_HEALTH_ENDPOINT="+freeAddr(), "SIDECAR_METRICS_PORT="+metricsPort, "SIDECAR_LOG_LEVEL=warn")
		sc.Dir = dir
		logf, err := os.Create(filepath.Join(dir, "sidecar.log"))
		if err != nil {
			return res, err
		}
		defer logf.Close()
		sc.Stdout, sc.Stderr = logf, logf
		// The app's stdout is the sidecar's stdin: a pipe, as in `app | sidecar`.
		r, w, err := os.Pipe()
		if err != nil {
			return res, err
		}
		sc.Stdin, app.Stdout = r, w
		if err := sc.Start(); err != nil {
			return res, err
		}
		r.Close()
		defer w.Close()
		go func() { scDone <- sc.Wait() }()
		if err := waitDial(otlpHTTP, scDone); err != nil {
			return res, err
		}
	}
	if err := app.Start(); err != nil {
		return res, err
	}
	if w, ok := app.Stdout.(*os.File); ok {
		w.Close() // the app holds its own copy
	}
	appDone := make(chan error, 1)
	go func() { appDone <- app.Wait() }()
	defer func() {
		app.Process.Kill()
		if sc != nil {
			sc.Process.Kill()
		}
	}()
	if err := waitDial(appAddr, appDone); err != nil {
		return res, err
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.conc}}
	if err := load(client, appAddr, 0, o.warmup, o.conc, o.rate); err != nil {
		return res, err
	}
	// RSS after warm-up as the app left it, then a full collection, before
	// the CPU is read: the collection's CPU is not the load's.
	w, err := procstat.Read(app.Process.Pid)
	if err != nil {
		return res, err
	}
	if res.gc0, err = probeMemory(app.Process, memFile, 1, appDone); err != nil {
		return res, err
	}
	a0, err := procstat.Read(app.Process.Pid)
	if err != nil {
		return res, err
	}
	var s0 procstat.Sample
	if sc != nil {
		s0, _ = procstat.Read(sc.Process.Pid)
	}
	stopSeries := sampleSeries(series, rt+"-"+mode, app.Process.Pid, sc)
	start := time.Now()
	if err := load(client, appAddr, o.warmup, o.requests, o.conc, o.rate); err != nil {
		return res, err
	}
	res.seconds = time.Since(start).Seconds()
	a1, err := procstat.Read(app.Process.Pid)
	if err != nil {
		return res, err
	}
	res.appCPU, res.rss0, res.rss1, res.appPeak = a1.CPUSeconds-a0.CPUSeconds, w.RSSKB, a1.RSSKB, a1.PeakRSSKB
	if sc != nil {
		s1, _ := procstat.Read(sc.Process.Pid)
		res.sidecarCPU, res.sidecarPeak = s1.CPUSeconds-s0.CPUSeconds, s1.PeakRSSKB
	}
	if res.rssMean, err = stopSeries(); err != nil {
		return res, err
	}
	if res.gc1, err = probeMemory(app.Process, memFile, 2, appDone); err != nil {
		return res, err
	}

	// Stop the app (it flushes its spans); the sidecar then reads EOF,
	// drains and exits.
	app.Process.Signal(syscall.SIGTERM)
	if err := waitExit(appDone, 30*time.Second); err != nil {
		return res, fmt.Errorf("app: %w", err)
	}
	if sc != nil {
		if err := waitExit(scDone, 60*time.Second); err != nil {
			return res, fmt.Errorf("sidecar: %w", err)
		}
	} else {
		time.Sleep(2 * time.Second) // the transport's last batch
	}
	st := fake.Stats()
	res.events, res.spans = st.Datasets["logs"].Events, st.Datasets["traces"].Spans
	return res, nil
}

// probeMemory has the app run a full garbage collection (SIGUSR2) and
// returns what it then reports, its nth report in file.
func probeMemory(app *os.Process, file string, nth int, exited <-chan error) (memory, error) {
	var m memory
	if err := app.Signal(syscall.SIGUSR2); err != nil {
		return m, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		if lines := bytes.SplitAfter(b, []byte("\n")); len(lines) > nth { // the last one is empty or partial
			return m, json.Unmarshal(lines[nth-1], &m)
		}
		select {
		case err := <-exited:
			return m, fmt.Errorf("app exited during its memory probe: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("no memory report %d in %s after 30s", nth, file)
		}
	}
}

// appCommand runs the example app in appDir with runtime rt (its binary:
// bin), reporting its memory to memFile when probed (probeMemory).
func appCommand(appDir, rt, bin, memFile string) *exec.Cmd {
	args := []string{"server.js"}
	if rt == "node" {
		args = []string{"--expose-gc", "server.js"} // for the full collections of probeMemory
	}
	app := exec.Command(bin, args...)
	app.Dir = appDir
	app.Env = append(os.Environ(), "APPCOST_MEMORY_FILE="+memFile)
	return app
}

// load sends GET /orders/<id> for requests [from, from+n): ids that are
// multiples of 10, so every request is the plain 5 GETs + 1 SET. With a
// rate, request i starts i/rate seconds after the first (or as soon as one
// of the conc clients is free, if the app falls behind).
func load(c *http.Client, addr string, from, n, conc int, rate float64) error {
	next := make(chan int)
	errc := make(chan error, conc)
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res, err := c.Get(fmt.Sprintf("http://%s/orders/%d", addr, 10*(i%100_000)))
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", res.StatusCode)
					}
				}
				if err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			}
		}()
	}
	start := time.Now()
	for i := from; i < from+n; i++ {
		if rate > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(float64(i-from) / rate * float64(time.Second)))))
		}
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// sampleSeries reads app and sidecar RSS every 250 ms until the returned
// function is called, which gives the app's mean RSS over the samples and,
// with a dir, writes the series to dir/<name>.csv. The mean, unlike the
// growth from the first sample to the last, does not hang on where the
// garbage collector's sawtooth stands at either end (Bun's swings 10-20 MB).
func sampleSeries(dir, name string, appPID int, sc *exec.Cmd) func() (meanKB int64, err error) {
	stop, done := make(chan struct{}), make(chan error, 1)
	var sum, n int64
	go func() {
		var b strings.Builder
		b.WriteString("seconds,app_rss_kb,sidecar_rss_kb\n")
		start := time.Now()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			a, err := procstat.Read(appPID)
			if err == nil {
				sum, n = sum+a.RSSKB, n+1
			}
			var s procstat.Sample
			if sc != nil {
				s, _ = procstat.Read(sc.Process.Pid)
			}
			fmt.Fprintf(&b, "%.2f,%d,%d\n", time.Since(start).Seconds(), a.RSSKB, s.RSSKB)
			select {
			case <-stop:
				if dir == "" {
					done <- nil
				} else {
					done <- os.WriteFile(filepath.Join(dir, name+".csv"), []byte(b.String()), 0o644)
				}
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int64, error) {
		close(stop)
		err := <-done
		if n == 0 {
			return 0, err
		}
		return sum / n, err
	}
}

func report(w io.Writer, o options, results []result) {
	pace := fmt.Sprintf("%d in flight", o.conc)
	if o.rate > 0 {
		pace = fmt.Sprintf("%.0f a second (at most %d in flight)", o.rate, o.conc)
	}
	fmt.Fprintf(w, "%d round(s), each mode %d measured requests a round after %d of warm-up, %s; each request 5 Redis GETs + 1 SET. App CPU: the median over the rounds, their range and spread ((max-min)/median), and every round in round order. App mean RSS: the mean of its RSS sampled every 250 ms during a round's measured load, the median over the rounds. App peak RSS: the median of the rounds' peaks (V8 lets the old generation grow further before some full collections than others, so one round's peak can be 25 MB above the next one's with the same code), and their max. The other figures add the rounds up.\n\n",
		o.rounds, o.requests, o.warmup, pace)
	spans := int64(spansPerRequest * (o.warmup + o.requests))
	fmt.Fprintf(w, "| runtime | mode | req/s | app CPU s / 1k req (median) | min-max | spread | per round | app RSS growth after warm-up (MB), per round | app mean RSS during the load (MB), median | app peak RSS (MB), median (max) | spans lost in the app (of %d) | sidecar CPU s / 1k req (median) | sidecar peak RSS (MB) | log events at Axiom |\n", spans*int64(o.rounds))
	fmt.Fprintln(w, "|---|---|---:|---:|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
	mb := func(kb int64) string { return strconv.FormatFloat(float64(kb)/1024, 'f', 0, 64) }
	f3 := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	for _, key := range keys(results) {
		var sum result
		var cpus, scCPUs, peaks, means []float64
		var perRound, growths []string
		for _, r := range rounds(results, key) {
			sum.seconds += r.seconds
			sum.appPeak = max(sum.appPeak, r.appPeak)
			sum.sidecarPeak = max(sum.sidecarPeak, r.sidecarPeak)
			sum.spans += spans - r.spans // lost
			sum.events += r.events
			cpus = append(cpus, r.appCPU/float64(o.requests)*1000)
			peaks = append(peaks, float64(r.appPeak))
			means = append(means, float64(r.rssMean))
			scCPUs = append(scCPUs, r.sidecarCPU/float64(o.requests)*1000)
			perRound = append(perRound, f3(cpus[len(cpus)-1]))
			growths = append(growths, strconv.FormatFloat(float64(r.rss1-r.rss0)/1024, 'f', 0, 64))
		}
		med, lo, hi := spread(cpus)
		peak, _, _ := spread(peaks)
		mean, _, _ := spread(means)
		sc, scPeak := "—", "—"
		if key.mode != "direct" {
			m, _, _ := spread(scCPUs)
			sc, scPeak = f3(m), mb(sum.sidecarPeak)
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %s | %s-%s | %.0f%% | %s | %s | %s | %s (%s) | %d | %s | %s | %d |\n",
			key.runtime, key.mode, float64(o.requests*len(cpus))/sum.seconds, f3(med), f3(lo), f3(hi), 100*(hi-lo)/med,
			strings.Join(perRound, " / "), strings.Join(growths, " / "), mb(int64(mean)), mb(int64(peak)), mb(sum.appPeak), sum.spans, sc, scPeak, sum.events)
	}
	memoryAfterGC(w, results)
	pairedRatios(w, results)
	pairedMemory(w, results)
}

// memoryAfterGC writes, per runtime and mode, the app's RSS and retained
// heap after the full collections at either end of the measured load.
func memoryAfterGC(w io.Writer, results []result) {
	fmt.Fprintln(w, "\nApp memory after a full garbage collection, which the app runs on a signal after warm-up and at the end of the load (retained heap: the bytes its objects still hold, JavaScript heap and external memory; growth: end minus start, per round). Unlike RSS as the load leaves it, these do not hang on where the collector's sawtooth stands:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| runtime | mode | RSS after full GC at the end (MB), median | its growth (MB), per round | retained heap at the end (MB), median | its growth (MB), per round |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---|")
	for _, key := range keys(results) {
		var rss, heap []float64
		var rssGrowth, heapGrowth []string
		for _, r := range rounds(results, key) {
			rss = append(rss, mib(r.gc1.RSS))
			heap = append(heap, mib(r.gc1.Heap))
			rssGrowth = append(rssGrowth, strconv.FormatFloat(mib(r.gc1.RSS-r.gc0.RSS), 'f', 0, 64))
			heapGrowth = append(heapGrowth, strconv.FormatFloat(mib(r.gc1.Heap-r.gc0.Heap), 'f', 1, 64))
		}
		rssMed, _, _ := spread(rss)
		heapMed, _, _ := spread(heap)
		fmt.Fprintf(w, "| %s | %s | %.0f | %s | %.1f | %s |\n", key.runtime, key.mode, rssMed, strings.Join(rssGrowth, " / "), heapMed, strings.Join(heapGrowth, " / "))
	}
}

// pairedMemory writes, per runtime, stdout's app memory minus each other
// mode's in the same round: the mean RSS during the load, and the RSS and
// retained heap after the full collection at its end.
func pairedMemory(w io.Writer, results []result) {
	var rows []string
	eachPairing(results, func(key runKey, stdout, other []result) {
		var mean, rss, heap []float64
		for i := range stdout {
			mean = append(mean, float64(stdout[i].rssMean-other[i].rssMean)/1024)
			rss = append(rss, mib(stdout[i].gc1.RSS-other[i].gc1.RSS))
			heap = append(heap, mib(stdout[i].gc1.Heap-other[i].gc1.Heap))
		}
		rows = append(rows, fmt.Sprintf("| %s | stdout − %s | %s | %s | %s |", key.runtime, key.mode, medianRange(mean), medianRange(rss), medianRange(heap)))
	})
	writeRows(w, "App memory, stdout minus each other mode in the same round (MB, below 0: stdout smaller), median (min to max) over the rounds:",
		"| runtime | difference | mean RSS during the load | RSS after full GC at the end | retained heap at the end |",
		"|---|---|---|---|---|", rows)
}

// writeRows writes intro and a Markdown table of rows under header and
// align, after a blank line; nothing when there are no rows.
func writeRows(w io.Writer, intro, header, align string, rows []string) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n\n%s\n%s\n", intro, header, align)
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
}

// medianRange is "median (min to max)" of xs, to one decimal.
func medianRange(xs []float64) string {
	med, lo, hi := spread(xs)
	return fmt.Sprintf("%.1f (%.1f to %.1f)", med, lo, hi)
}

// mib is n bytes in MiB.
func mib(n int64) float64 { return float64(n) / (1 << 20) }

// pairedRatios writes, per runtime, stdout's app CPU over each other mode's
// in the same round: the machine drifts less between two runs of one round
// than across the rounds, so the ratio resolves a smaller difference than
// the modes' medians do.
func pairedRatios(w io.Writer, results []result) {
	var rows []string
	eachPairing(results, func(key runKey, stdout, other []result) {
		var ratios []float64
		var perRound []string
		for i := range stdout {
			ratios = append(ratios, stdout[i].appCPU/other[i].appCPU)
			perRound = append(perRound, strconv.FormatFloat(ratios[i], 'f', 2, 64))
		}
		med, lo, hi := spread(ratios)
		rows = append(rows, fmt.Sprintf("| %s | stdout / %s | %.3f | %.2f-%.2f | %s |", key.runtime, key.mode, med, lo, hi, strings.Join(perRound, " / ")))
	})
	writeRows(w, "App CPU per request, stdout over each other mode in the same round (below 1: stdout cheaper):",
		"| runtime | ratio | median | min-max | per round |", "|---|---|---:|---|---|", rows)
}

// eachPairing calls f for each runtime and mode other than stdout that has
// rounds, with stdout's rounds and that mode's, as many of each, round by
// round.
func eachPairing(results []result, f func(key runKey, stdout, other []result)) {
	for _, key := range keys(results) {
		if key.mode == "stdout" {
			continue
		}
		stdout, other := rounds(results, runKey{key.runtime, "stdout"}), rounds(results, key)
		if n := min(len(stdout), len(other)); n > 0 {
			f(key, stdout[:n], other[:n])
		}
	}
}

// rounds is key's results in round order.
func rounds(results []result, key runKey) []result {
	var out []result
	for _, r := range results {
		if r.runtime == key.runtime && r.mode == key.mode {
			out = append(out, r)
		}
	}
	return out
}

// spread is the median, min and max of xs (not empty).
func spread(xs []float64) (median, lo, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return median, s[0], s[n-1]
}

type runKey struct{ runtime, mode string }

// keys lists the runtimes and modes measured, in the order first measured.
func keys(results []result) []runKey {
	var out []runKey
	for _, r := range results {
		if k := (runKey{r.runtime, r.mode}); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func startRedis() (string, func(), error) {
	addr := freeAddr()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("redis-server (scripts/setup.sh installs it): %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := func() { cmd.Process.Kill(); <-done }
	if err := waitDial(addr, done); err != nil {
		stop()
		return "", nil, err
	}
	return addr, stop, nil
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitDial(addr string, exited <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited before listening on %s: %v", addr, err)
		case <-ctx.Done():
			return fmt.Errorf("nothing listening on %s: %w", addr, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func waitExit(done <-chan error, d time.Duration) error {
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("exit status %d", exit.ExitCode())
		}
		return err
	case <-time.After(d):
		return fmt.Errorf("still running after %s", d)
	}
}
