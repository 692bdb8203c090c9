// Command spanpath counts the instructions per span that the sidecar
// executes for OTLP/JSON spans on stdin (the JS client's stdout exporter,
// benchrun's spans-stdout) and for the same requests over OTLP/HTTP
// (spans-http-json), under valgrind (cachegrind, cache simulation off):
// figures that depend neither on the host's speed nor on its load, for
// comparing the two paths and two builds on a busy machine.
//
// Each path runs the whole process over -requests requests and over a
// fifth of them (each request the bench's: 56 of the load generator's
// requests, 504 spans, one line on stdin), with the bench's config (Redis
// rule at 1%, memory queue, a counting fake Axiom); the difference of the
// two counts over the difference in spans is the figure, so startup and
// shutdown fall out. HTTP requests go one at a time; stdin's lines are
// written as fast as the pipe takes them.
//
//	go build -o /tmp/sidecar ./cmd/sidecar
//	GODEBUG=cpu.rdtscp=off go run ./bench/spanpath -sidecar /tmp/sidecar
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/bench/internal/cachegrind"
	"github.com/sidecarhq/sidecar/bench/internal/loopback"
	"github.com/sidecarhq/sidecar/bench/internal/spanlines"
	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// lineBytes is -line-bytes.
var lineBytes int

// requestsPerExport is benchrun's: load generator requests per export.
const requestsPerExport = 56

func main() {
	sidecar := flag.String("sidecar", "", "path of the sidecar binary (required)")
	requests := flag.Int("requests", 500, "OTLP/JSON exports per path (the small run takes a fifth)")
	only := flag.String("only", "", "count only this path: stdin or http")
	keep := flag.Bool("keep", false, "keep the work directory (configs, logs, cachegrind's files for cg_annotate)")
	flag.IntVar(&lineBytes, "line-bytes", spanlines.DefaultMax, "cut each export's spans on stdin into lines of at most this many bytes, as the JS client's stdout exporter (default lineBytes) and benchrun do; 0: one line per export")
	flag.Parse()
	if *sidecar == "" {
		fmt.Fprintln(os.Stderr, "spanpath: -sidecar is required")
		os.Exit(2)
	}
	if err := run(*sidecar, *requests, *only, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "spanpath:", err)
		os.Exit(1)
	}
}

func run(sidecar string, requests int, only string, keep bool) error {
	small := requests / 5
	if small < 1 {
		return fmt.Errorf("-requests must be at least 5, got %d", requests)
	}
	dir, err := os.MkdirTemp("", "spanpath-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	gen := loadgen.NewSpans(7)
	var bodies, lines [][]byte // an export's HTTP body; its lines on stdin
	size, nlines := 0, 0
	for range 32 {
		td := gen.Requests(requestsPerExport, time.Now())
		b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		if err != nil {
			return err
		}
		bodies, size = append(bodies, b), size+len(b)
		l, n, err := spanlines.Cut(td, lineBytes)
		if err != nil {
			return err
		}
		lines, nlines = append(lines, l), nlines+n
	}
	spansPer := requestsPerExport * loadgen.SpansPerRequest
	fmt.Printf("input: %d and %d exports of %d spans, %d bytes each on average, %.1f lines each on stdin; instructions counted by valgrind (cachegrind, no cache simulation)\n",
		requests, small, spansPer, size/len(bodies), float64(nlines)/float64(len(bodies)))
	fmt.Printf("\n%-28s %16s %16s %16s %14s\n", "path", fmt.Sprintf("instr. (%d)", small), fmt.Sprintf("instr. (%d)", requests), "instr. per span", "spans at sink")
	var perSpan []float64
	for _, path := range []string{"stdin", "http"} {
		if only != "" && only != path {
			continue
		}
		var counts [2]int64
		var kept int64
		for i, n := range [2]int{small, requests} {
			out := filepath.Join(dir, fmt.Sprintf("cachegrind.%s.%d", path, n))
			in := bodies
			if path == "stdin" {
				in = lines
			}
			if kept, err = runOnce(sidecar, dir, path, out, in, n); err != nil {
				return err
			}
			if counts[i], err = cachegrind.InstructionRefs(out + ".log"); err != nil {
				return err
			}
		}
		p := float64(counts[1]-counts[0]) / float64((requests-small)*spansPer)
		perSpan = append(perSpan, p)
		fmt.Printf("%-28s %16d %16d %16.0f %14d\n", path, counts[0], counts[1], p, kept)
	}
	if len(perSpan) == 2 {
		fmt.Printf("\nstdin: %.3fx the instructions per span of OTLP/HTTP JSON\n", perSpan[0]/perSpan[1])
	}
	if keep {
		fmt.Printf("work directory (configs, logs, cachegrind's files): %s\n", dir)
	}
	return nil
}

// runOnce runs the sidecar under valgrind over n exports on path and
// returns the spans the fake Axiom got.
func runOnce(sidecar, dir, path, out string, bodies [][]byte, n int) (int64, error) {
	fake, err := axiomtest.New(axiomtest.WithCountOnly())
	if err != nil {
		return 0, err
	}
	defer fake.Close()
	endpoint := ""
	if path == "http" {
		if endpoint, err = loopback.FreeAddr(); err != nil {
			return 0, err
		}
	}
	cfgPath := filepath.Join(dir, path+".yaml")
	if err := os.WriteFile(cfgPath, []byte(config(fake.URL(), endpoint)), 0o600); err != nil {
		return 0, err
	}
	logFile, err := os.Create(out + ".sidecar.log")
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	cmd := exec.Command("valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file="+out, "--log-file="+out+".log",
		sidecar, "--config", "file:"+cfgPath)
	// Valgrind lacks RDTSCP, which Go's runtime uses when a lock is
	// contended (see bench/count-logpath.sh).
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG=cpu.rdtscp=off")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	var werr error
	if path == "stdin" {
		for i := range n {
			if _, werr = stdin.Write(bodies[i%len(bodies)]); werr != nil {
				break
			}
		}
		stdin.Close() // exit_on_eof: the sidecar drains and exits
	} else {
		werr = postAll(endpoint, bodies, n)
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	err = cmd.Wait()
	if werr != nil {
		return 0, fmt.Errorf("%s: sending: %w (log in %s)", path, werr, logFile.Name())
	}
	if err != nil {
		return 0, fmt.Errorf("%s: sidecar: %w (log in %s)", path, err, logFile.Name())
	}
	return fake.Stats().Datasets["traces"].Spans, nil
}

// postAll posts n exports one at a time, once the listener is up, and
// retries a refused one (backpressure) until it is taken.
func postAll(endpoint string, bodies [][]byte, n int) error {
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		c, err := net.Dial("tcp", endpoint)
		if err == nil {
			c.Close()
			break
		}
		if time.Since(start) > 2*time.Minute {
			return err
		}
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	for i := 0; i < n; {
		resp, err := client.Post("http://"+endpoint+"/v1/traces", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			i++
		case resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests:
			time.Sleep(100 * time.Millisecond)
		default:
			return errors.New("OTLP HTTP: " + resp.Status)
		}
	}
	return nil
}

// config is benchrun's for spans-stdout (no endpoint) or spans-http-json.
func config(url, endpoint string) string {
	receiver := "stdout"
	recv := "  stdout:\n    sampling_processor: sampling\n    stdin: {exit_on_eof: true, when_full: block}\n"
	if endpoint != "" {
		receiver = "otlp"
		recv = fmt.Sprintf("  otlp:\n    sampling_processor: sampling\n    protocols:\n      http: {endpoint: %q}\n", endpoint)
	}
	return "receivers:\n" + recv + `processors:
  memory_limiter: {check_interval: 1s, limit_mib: 400, spike_limit_mib: 100}
  sampling:
    always_keep: {errors: true}
    rules:
      - name: redis
        match: {kind: [client], attributes: {db.system: redis}}
        probability: 0.01
exporters:
  axiom:
    url: ` + url + `
    token: xaat-bench-0000
    logs_dataset: logs
    traces_dataset: traces
service:
  telemetry: {metrics: {level: none}, logs: {level: warn}}
  pipelines:
    traces: {receivers: [` + receiver + `], processors: [memory_limiter, sampling], exporters: [axiom]}
`
}
