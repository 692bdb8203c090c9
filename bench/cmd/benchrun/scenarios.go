package main

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// Log inputs a scenario can use.
const (
	inputStdin    = "stdin"     // pino lines on the collector's stdin
	inputFileJSON = "file-json" // pino lines appended to a file
	inputFileCRI  = "file-cri"  // pino lines in CRI framing appended to a file
	inputForward  = "forward"   // Fluent Forward, docker fluentd driver style (message mode)
	// inputForwardBatch is Fluent Forward as FireLens sends it (forward
	// mode, small batches).
	inputForwardBatch = "forward-batch"
)

// inputs is what one collector receives in a scenario.
type inputs struct {
	logs  string // one of the input* constants, or ""
	spans bool   // OTLP spans
	// stdinSpans sends the spans as OTLP/JSON lines on stdin (the JS
	// client's zero-network path) instead of over OTLP.
	stdinSpans bool
	// noHold turns the sampling processor's deferred drops off
	// (hold.max_bytes: 0), so a span a rule drops is dropped at once.
	noHold bool
	// disk puts the sidecar's sending queue (and file offsets) on disk in
	// dir_storage, as every shipped config does; without it the queue is
	// in memory, like the stock collector's.
	disk bool
	// shippedWhenFull keeps the log source's shipped when_full (stdin and
	// forward: drop_oldest, the app is never blocked) instead of block.
	shippedWhenFull bool
}

// scenario is one benchmark: the same load offered to each collector.
type scenario struct {
	name, title string
	// sidecar and baseline are the inputs each collector reads; they differ
	// only where the baseline has no equivalent (stdin).
	sidecar, baseline inputs
	// needs lists the sidecar component types the scenario uses.
	needs []string
	// fixedRate is the events/s of the fixed-rate phase; fixedOnly skips
	// the max-throughput phase, maxOnly the fixed-rate one.
	fixedRate int
	fixedOnly bool
	maxOnly   bool
	// axiom is how the sink behaves (benchsink -axiom): slow, down, or ""
	// for up.
	axiom string
	// sidecarOnly checks a sidecar goal that has no baseline counterpart.
	sidecarOnly bool
	// load offers the load; rate 0 means as fast as possible.
	load func(ctx context.Context, env *runEnv, in inputs, rate int, sent *atomic.Int64) error
	note string
	// runs is how many times its phases run at least (see -repeat); its
	// variants (axiomFault, withDisk) do not inherit it.
	runs int
}

// closeGoalRuns is the runs of the scenarios whose goals compare fixed-rate
// costs across paths (Forward within 1.5x of stdin, 4x the stock receiver):
// one 20 s phase on this shared VM reads 20-30% apart from the next
// (bench/COMPARISON.md), more than those goals' margins, so the report takes
// the median of three.
const closeGoalRuns = 3

// phases are the phases sc runs, in order; only (if not empty) keeps that
// one.
func (sc scenario) phases(only string) []string {
	var out []string
	for _, ph := range []string{phaseFixed, phaseMax} {
		if (ph == phaseFixed && sc.maxOnly) || (ph == phaseMax && sc.fixedOnly) || (only != "" && ph != only) {
			continue
		}
		out = append(out, ph)
	}
	return out
}

func scenarios(o options) []scenario {
	all := []scenario{
		{
			name: "logs-stdin", title: "pino logs via stdin",
			sidecar: inputs{logs: inputStdin}, baseline: inputs{logs: inputFileJSON},
			needs: []string{"stdout"}, fixedRate: o.logRate, load: loadLogs, runs: closeGoalRuns,
			note: "No stock receiver reads stdin: the baseline's file_log + json_parser reads the same lines from a file.",
		},
		{
			name: "logs-stdin-50k", title: "pino logs via stdin at 50,000 lines/s (the peak RSS goal)",
			sidecar: inputs{logs: inputStdin}, needs: []string{"stdout"},
			fixedRate: 50_000, fixedOnly: true, sidecarOnly: true, load: loadLogs,
			note: "Sidecar only: checks peak RSS at 50,000 lines/s.",
		},
		{
			name: "logs-file", title: "pino logs tailed from a CRI container log file",
			sidecar: inputs{logs: inputFileCRI}, baseline: inputs{logs: inputFileCRI},
			needs: []string{"stdout"}, fixedRate: o.logRate, load: loadLogs,
			note: "Baseline: file_log + container (containerd) + json_parser operators.",
		},
		{
			name: "spans-http", title: "OTLP/HTTP spans, Redis rule at 1%",
			sidecar: inputs{spans: true}, baseline: inputs{spans: true},
			needs: []string{"sampling"}, fixedRate: o.spanRate, load: loadSpansHTTP,
			note: "Baseline: probabilistic_sampler at 13% (the same kept volume; no per-operation rule exists in stock components at v0.165.1 here).",
		},
		{
			name: "spans-http-json", title: "OTLP/HTTP spans as JSON (Node's default exporter), Redis rule at 1%",
			sidecar: inputs{spans: true}, baseline: inputs{spans: true},
			needs: []string{"sampling"}, fixedRate: o.spanRate, load: loadSpansHTTPJSON,
			note: "As spans-http, with OTLP/JSON bodies, as `@opentelemetry/exporter-trace-otlp-http` sends them.",
		},
		{
			name: "spans-stdout", title: "OTLP/JSON span lines on stdin (the JS client's stdout exporter), Redis rule at 1%",
			sidecar: inputs{spans: true, stdinSpans: true}, needs: []string{"stdout", "sampling"},
			fixedRate: o.spanRate, sidecarOnly: true, load: loadSpansStdin,
			note: "Sidecar only (no stock receiver reads stdin): the spans of spans-http-json as the JS client writes them: lines of at most 64 KiB; its goal is the same CPU per span as spans-http-json.",
		},
		{
			name: "spans-grpc", title: "OTLP/gRPC spans, Redis rule at 1%",
			sidecar: inputs{spans: true}, baseline: inputs{spans: true},
			needs: []string{"sampling"}, fixedRate: o.spanRate, load: loadSpansGRPC,
			note: "As spans-http, over gRPC.",
		},
		{
			name: "logs-forward", title: "pino logs via Fluent Forward (docker fluentd driver style)",
			sidecar: inputs{logs: inputForward}, baseline: inputs{logs: inputForward},
			needs: []string{"stdout"}, fixedRate: o.logRate, load: loadLogs, runs: closeGoalRuns,
			note: "Baseline: fluent_forward; it cannot parse the JSON in `log` (no operators, transform is unavailable), so it does less work. The generator writes frames it encoded ahead (at max rate, before the run) over 4 connections.",
		},
		{
			name: "logs-forward-batch", title: "pino logs via Fluent Forward (FireLens style: forward mode, 16 lines per frame)",
			sidecar: inputs{logs: inputForwardBatch}, baseline: inputs{logs: inputForwardBatch},
			needs: []string{"stdout"}, fixedRate: o.logRate, load: loadLogs, runs: closeGoalRuns,
			note: "As logs-forward, with Fluent Bit's forward output's frames: [tag, [[time, record], ...]] with ECS fields in each record.",
		},
		{
			name: "mixed", title: "a 10k req/s service: 2 log lines and 9 spans per request",
			sidecar: inputs{logs: inputStdin, spans: true}, baseline: inputs{logs: inputFileJSON, spans: true},
			needs: []string{"stdout", "sampling"}, fixedRate: o.mixedRPS * (2 + loadgen.SpansPerRequest), fixedOnly: true, load: loadMixed(o.mixedRPS),
			note: "Fixed rate only. Logs via stdin (baseline: file_log from a file), spans via OTLP/gRPC.",
		},
	}
	// Each variant runs right after its scenario, so both see the same
	// machine.
	var out []scenario
	for _, sc := range all {
		out = append(out, sc)
		switch sc.name {
		case "spans-http", "spans-http-json":
			out = append(out, withoutHold(sc))
		case "spans-grpc":
			out = append(out, withoutHold(sc), axiomFault(sc, sinkSlow), axiomFault(sc, sinkDown))
		case "logs-stdin":
			out = append(out, withDisk(sc))
			for _, mode := range []string{sinkSlow, sinkDown} {
				f := axiomFault(sc, mode)
				out = append(out, f, withDisk(f))
			}
		case "logs-file":
			out = append(out, withDisk(sc))
		}
	}
	return out
}

// Sink behaviours (benchsink -axiom) besides up, the default.
const (
	sinkSlow = "slow" // every request held for benchsink's -slow-delay (500 ms)
	sinkDown = "down" // 503 to every request
)

// axiomFault is sc at max rate only, against a sink that is slow or down:
// what each collector's memory does when it cannot ship as fast as it reads.
func axiomFault(sc scenario, mode string) scenario {
	sc.name += "-" + mode
	sc.axiom, sc.maxOnly = mode, true
	sc.runs = 0 // a peak-RSS budget takes one run, not a median
	sc.sidecar.shippedWhenFull = true
	switch mode {
	case sinkSlow:
		sc.title += ", Axiom slow (500 ms per request)"
		sc.note = "Max rate only: the sink holds every request 500 ms before taking it, so the collectors read faster than they can ship. The sidecar's sources keep their shipped `when_full` (stdin: `drop_oldest`). " + sc.note
	case sinkDown:
		sc.title += ", Axiom down (503 to everything)"
		sc.note = "Max rate only: the sink answers 503 to every request, so what the collectors read waits in their queues until they refuse or drop it. The sidecar's sources keep their shipped `when_full` (stdin: `drop_oldest`). " + sc.note
	}
	return sc
}

// withDisk is sc with the sidecar's sending queue on disk (dir_storage, and
// file offsets there too), sidecar only: set against sc's own sidecar run,
// it shows what durability costs.
func withDisk(sc scenario) scenario {
	sc.note = "As " + sc.name + " with the sidecar's sending queue on disk (`dir_storage`, as every shipped config runs it; file offsets there too); compare with " + sc.name + "'s runs in the same report."
	sc.name += "-disk"
	sc.title += ", disk buffer on"
	sc.sidecar.disk = true
	sc.baseline = inputs{}
	sc.sidecarOnly, sc.runs = true, 0
	return sc
}

// withoutHold is sc with holding off, sidecar only: set against sc's own
// sidecar and baseline runs, it shows what deferred drops cost.
func withoutHold(sc scenario) scenario {
	sc.note = "As " + sc.name + " with the sampling processor's `hold: {max_bytes: 0}` (deferred drops off); compare with " + sc.name + "'s runs in the same report."
	sc.name += "-nohold"
	sc.title += ", holding off"
	sc.sidecar.noHold = true
	sc.baseline = inputs{}
	sc.sidecarOnly = true
	return sc
}

// loadLogs offers pino lines on the collector's log input.
func loadLogs(ctx context.Context, env *runEnv, in inputs, rate int, sent *atomic.Int64) error {
	switch in.logs {
	case inputStdin:
		return writeLines(ctx, env.stdin, env, rate, plainLine, sent)
	case inputFileJSON, inputFileCRI:
		f, err := os.OpenFile(env.logFile, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		frame := plainLine
		if in.logs == inputFileCRI {
			frame = loadgen.AppendCRI
		}
		return writeLines(ctx, f, env, rate, frame, sent)
	case inputForward:
		return feedForward(ctx, env, loadgen.ForwardMessage, rate, sent)
	case inputForwardBatch:
		return feedForward(ctx, env, loadgen.ForwardBatch, rate, sent)
	}
	return nil
}

func loadSpansHTTP(ctx context.Context, env *runEnv, _ inputs, rate int, sent *atomic.Int64) error {
	return feedSpans(ctx, rate, httpSpanExporter(env.httpEndpoint(), false), sent)
}

func loadSpansHTTPJSON(ctx context.Context, env *runEnv, _ inputs, rate int, sent *atomic.Int64) error {
	return feedSpans(ctx, rate, httpSpanExporter(env.httpEndpoint(), true), sent)
}

func loadSpansStdin(ctx context.Context, env *runEnv, _ inputs, rate int, sent *atomic.Int64) error {
	return feedSpans(ctx, rate, stdinSpanExporter(env.stdin), sent)
}

func loadSpansGRPC(ctx context.Context, env *runEnv, _ inputs, rate int, sent *atomic.Int64) error {
	export, closeConn, err := grpcSpanExporter(env.grpcEndpoint())
	if err != nil {
		return err
	}
	defer closeConn()
	return feedSpans(ctx, rate, export, sent)
}

// loadMixed offers rps requests/s worth of logs (2 lines each) and spans.
func loadMixed(rps int) func(ctx context.Context, env *runEnv, in inputs, rate int, sent *atomic.Int64) error {
	return func(ctx context.Context, env *runEnv, in inputs, _ int, sent *atomic.Int64) error {
		var wg sync.WaitGroup
		var logErr, spanErr error
		wg.Go(func() { logErr = loadLogs(ctx, env, in, 2*rps, &env.sentLogs) })
		wg.Go(func() { spanErr = loadSpansGRPC(ctx, env, in, rps*loadgen.SpansPerRequest, &env.sentSpans) })
		// Sum both into sent while they run.
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				sent.Store(env.sentLogs.Load() + env.sentSpans.Load())
				if logErr != nil {
					return logErr
				}
				return spanErr
			case <-t.C:
				sent.Store(env.sentLogs.Load() + env.sentSpans.Load())
			}
		}
	}
}
