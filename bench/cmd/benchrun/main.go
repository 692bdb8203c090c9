// Command benchrun runs the sidecar-vs-stock-collector benchmarks: for each
// scenario and each collector it starts a fresh sink and a fresh collector
// pinned to one core, offers the same load, samples CPU, RSS and what
// reached the sink, and writes results.json, one CSV time series per run
// and RESULTS.md. bench/run.sh builds everything and calls it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type options struct {
	sidecarBin, baselineBin, sinkBin string
	out, report                      string
	duration, fixedDuration          time.Duration
	settle                           time.Duration
	logRate, spanRate, mixedRPS      int
	cpu                              string
	only                             map[string]bool
	onlyPhase                        string // phaseFixed or phaseMax; empty: both
	command                          string
	reportOnly                       bool
	repeat                           int
	sweepRates                       []int
	sweepRepeat                      int
	sweepBaseline                    bool
}

func main() {
	var o options
	var only string
	flag.StringVar(&o.sidecarBin, "sidecar", "", "sidecar binary")
	flag.StringVar(&o.baselineBin, "baseline", "", "stock collector binary (bench/baseline)")
	flag.StringVar(&o.sinkBin, "sink", "", "benchsink binary")
	flag.StringVar(&o.out, "out", "bench/results", "directory for results.json, CSV series, collector logs and plots")
	flag.StringVar(&o.report, "report", "bench/RESULTS.md", "where the Markdown report goes")
	flag.DurationVar(&o.duration, "duration", 6*time.Second, "load time of each max-rate phase (and of each -sweep-rates step)")
	flag.DurationVar(&o.fixedDuration, "fixed-duration", 20*time.Second, "load time of each fixed-rate phase (0: -duration); longer than -duration since a fixed-rate phase burns little CPU (20k lines/s for 6 s is ~0.6 CPU s) and its ratios need it")
	flag.DurationVar(&o.settle, "settle", 3*time.Second, "idle time after start, before idle RSS is read")
	flag.IntVar(&o.logRate, "log-rate", 20_000, "lines/s of the fixed-rate log phases")
	flag.IntVar(&o.spanRate, "span-rate", 20_000, "spans/s of the fixed-rate span phases")
	flag.IntVar(&o.mixedRPS, "mixed-rps", 10_000, "requests/s of the mixed scenario")
	flag.StringVar(&o.cpu, "cpu", "1", "CPU list the collectors are pinned to (taskset -c); empty: no pinning")
	flag.StringVar(&only, "scenarios", "", "comma-separated scenario names (default: all)")
	flag.StringVar(&o.onlyPhase, "phase", "", "run only this phase of each scenario: fixed or max (default: both)")
	flag.BoolVar(&o.reportOnly, "report-only", false, "rewrite the report from -out/results.json without running anything")
	flag.StringVar(&o.command, "command", strings.Join(os.Args, " "), "command line recorded in RESULTS.md")
	flag.IntVar(&o.repeat, "repeat", 1, "runs of every phase (logs-stdin and the Forward scenarios run at least 3), sidecar and baseline alternating; the report takes each figure from the median run")
	var sweepRates string
	flag.StringVar(&sweepRates, "sweep-rates", "", "instead of the benchmarks: offer the log scenarios' input these lines/s in turn (0: idle) and report CPU ms and wake-ups per second (see sweep.go)")
	flag.IntVar(&o.sweepRepeat, "sweep-repeat", 3, "with -sweep-rates: how many times the rates are offered (medians)")
	flag.BoolVar(&o.sweepBaseline, "sweep-baseline", false, "with -sweep-rates: sweep the stock collector too")
	flag.Parse()
	if sweepRates != "" {
		var err error
		if o.sweepRates, err = parseRates(sweepRates); err != nil {
			fmt.Fprintln(os.Stderr, "benchrun:", err)
			os.Exit(2)
		}
	}
	if o.onlyPhase != "" && o.onlyPhase != phaseFixed && o.onlyPhase != phaseMax {
		fmt.Fprintf(os.Stderr, "benchrun: -phase %q: want %s or %s\n", o.onlyPhase, phaseFixed, phaseMax)
		os.Exit(2)
	}
	if only != "" {
		o.only = map[string]bool{}
		for _, s := range strings.Split(only, ",") {
			o.only[strings.TrimSpace(s)] = true
		}
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.reportOnly {
		return rewriteReport(o)
	}
	if o.sweepRates != nil {
		return sweep(o, o.sweepRates)
	}
	if o.sidecarBin == "" || o.baselineBin == "" || o.sinkBin == "" {
		return fmt.Errorf("-sidecar, -baseline and -sink are required")
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	info := runInfo{Started: time.Now().UTC(), Command: o.command, CPU: o.cpu, Duration: o.duration.String(), FixedDuration: o.phaseDuration(phaseFixed).String(), Repeat: max(o.repeat, 1),
		LogRate: o.logRate, SpanRate: o.spanRate, MixedRPS: o.mixedRPS}
	sidecarHas, err := componentTypes(o.sidecarBin)
	if err != nil {
		return fmt.Errorf("sidecar components: %w", err)
	}
	var results []result
	save := func() error {
		info.Finished = time.Now().UTC()
		return writeJSON(filepath.Join(o.out, "results.json"), saved{info, results})
	}
	for _, sc := range scenarios(o) {
		if o.only != nil && !o.only[sc.name] {
			continue
		}
		phases := sc.phases(o.onlyPhase)
		colls := []string{collSidecar, collBaseline}
		if sc.sidecarOnly {
			colls = colls[:1]
		}
		for rep := range max(o.repeat, sc.runs, 1) {
			for _, coll := range colls {
				for _, ph := range phases {
					var r result
					if missing := missingTypes(sidecarHas, sc.needs); coll == collSidecar && missing != "" {
						r = result{Scenario: sc.name, Collector: coll, Phase: ph, Skipped: "sidecar lacks component " + missing}
					} else {
						fmt.Fprintf(os.Stderr, "== %s / %s / %s (run %d)\n", sc.name, coll, ph, rep+1)
						r = runOne(o, sc, coll, ph, rep)
					}
					if r.Skipped != "" {
						fmt.Fprintf(os.Stderr, "   skipped: %s\n", r.Skipped)
					} else {
						fmt.Fprintf(os.Stderr, "   %s\n", r.summary())
					}
					results = append(results, r)
					if err := save(); err != nil {
						return err
					}
				}
			}
		}
		if sc.name == "logs-stdin" {
			r := zstdFloor(o)
			fmt.Fprintf(os.Stderr, "== logs-stdin / %s\n   %s%s\n", collZstd, r.summary(), r.Skipped)
			results = append(results, r)
			if err := save(); err != nil {
				return err
			}
		}
	}
	return writeReport(o, info, results)
}

// phaseDuration is how long a phase offers its load.
func (o options) phaseDuration(phase string) time.Duration {
	if phase == phaseFixed && o.fixedDuration > 0 {
		return o.fixedDuration
	}
	return o.duration
}

// runInfo is what the report says about the run as a whole.
type runInfo struct {
	Started, Finished           time.Time
	Command, CPU, Duration      string
	FixedDuration               string // empty in runs from before -fixed-duration: Duration
	LogRate, SpanRate, MixedRPS int
	Repeat                      int // runs of every phase
}

// saved is results.json.
type saved struct {
	Run     runInfo
	Results []result
}

// rewriteReport regenerates the report from a previous run's results.
func rewriteReport(o options) error {
	path := filepath.Join(o.out, "results.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sv saved
	if err := json.Unmarshal(b, &sv); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeReport(o, sv.Run, sv.Results)
}

func missingTypes(have map[string]bool, need []string) string {
	var miss []string
	for _, n := range need {
		if !have[n] {
			miss = append(miss, n)
		}
	}
	return strings.Join(miss, ", ")
}
