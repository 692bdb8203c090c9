// Command soak runs the sidecar for a long time at a steady, realistic load
// (pino lines on stdin plus OTLP spans over HTTP, into a count-only fake
// Axiom) and samples its RSS, Go heap and OS threads to a CSV, then reports
// each one's slope after warm-up: a leak shows as a slope that does not go
// to zero. bench/soak.sh runs it and draws the plot.
//
//	soak -sidecar ./sidecar -duration 30m -out bench/results/soak.csv
package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/bench/internal/procstat"
	"github.com/sidecarhq/sidecar/internal/axiomtest"
	"github.com/sidecarhq/sidecar/internal/loadgen"
)

func main() {
	bin := flag.String("sidecar", "sidecar", "the sidecar binary")
	duration := flag.Duration("duration", 30*time.Minute, "how long to run")
	lines := flag.Int("lines", 5000, "pino lines per second on stdin")
	spans := flag.Int("spans", 2000, "spans per second over OTLP/HTTP")
	every := flag.Duration("every", 5*time.Second, "sampling interval")
	warmup := flag.Float64("warmup", 0.2, "share of the run left out of the slopes")
	out := flag.String("out", "bench/results/soak.csv", "CSV of the samples")
	flag.Parse()
	if err := run(*bin, *duration, *lines, *spans, *every, *warmup, *out); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port, nil
}

type sample struct {
	seconds                 float64
	rssMB, heapMB, threads  float64
	linesSent, spansSent    int
	eventsStored, spansSeen int64
}

func run(bin string, duration time.Duration, linesPerSec, spansPerSec int, every time.Duration, warmup float64, out string) error {
	fake, err := axiomtest.New(axiomtest.WithCountOnly())
	if err != nil {
		return err
	}
	defer fake.Close()
	state, err := os.MkdirTemp("", "soak-state")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	ports := make([]string, 4)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return err
		}
	}
	otlpHTTP := "127.0.0.1:" + ports[1]
	cmd := exec.Command(bin, "--config", "embedded:default", "--config", "embedded:stdin")
	cmd.Dir = state
	cmd.Env = append(os.Environ(), "AXIOM_URL="+fake.URL(), "AXIOM_TOKEN=xaat-soak", "SIDECAR_STATE_DIR="+state,
		"SIDECAR_OTLP_GRPC_ENDPOINT=127.0.0.1:"+ports[0], "SIDECAR_OTLP_HTTP_ENDPOINT="+otlpHTTP,
		"SIDECAR_HEALTH_ENDPOINT=127.0.0.1:"+ports[2], "SIDECAR_METRICS_PORT="+ports[3])
	logs, err := os.Create(out + ".log")
	if err != nil {
		return err
	}
	defer logs.Close()
	cmd.Stdout, cmd.Stderr = logs, logs
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := waitListening(otlpHTTP, exited); err != nil {
		return err
	}

	start := time.Now()
	end := start.Add(duration)
	linesSent, spansSent := 0, 0
	pino, gen := loadgen.NewPino(1), loadgen.NewSpans(2)
	w := bufio.NewWriterSize(stdin, 256<<10)
	const tick = 100 * time.Millisecond
	var buf []byte
	var samples []sample
	nextSample := start
	client := &http.Client{Timeout: 10 * time.Second}
	for now := start; now.Before(end); now = time.Now() {
		// Lines and spans due by now, at the configured rates.
		elapsed := now.Sub(start).Seconds()
		for due := int(elapsed * float64(linesPerSec)); linesSent < due; linesSent++ {
			buf = pino.Append(buf[:0], now)
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("writing stdin: %w", err)
			}
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("writing stdin: %w", err)
		}
		if due := int(elapsed * float64(spansPerSec)); due-spansSent >= loadgen.SpansPerRequest {
			td := gen.Requests((due-spansSent)/loadgen.SpansPerRequest, now)
			body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
			if err != nil {
				return err
			}
			if err := post(client, "http://"+otlpHTTP+"/v1/traces", body); err != nil {
				return err
			}
			spansSent += td.SpanCount()
		}
		if !now.Before(nextSample) {
			s, err := read(cmd.Process.Pid, ports[3], fake)
			if err != nil {
				return err
			}
			s.seconds, s.linesSent, s.spansSent = now.Sub(start).Seconds(), linesSent, spansSent
			samples = append(samples, s)
			nextSample = nextSample.Add(every)
		}
		select {
		case err := <-exited:
			return fmt.Errorf("sidecar exited: %v (see %s.log)", err, out)
		case <-time.After(tick):
		}
	}
	stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("sidecar exit: %v (see %s.log)", err, out)
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		return fmt.Errorf("sidecar did not exit at end of stdin")
	}
	if err := writeCSV(out, samples); err != nil {
		return err
	}
	st := fake.Stats()
	fmt.Printf("soak: %v at %d lines/s + %d spans/s: %d lines and %d spans sent, %d events and %d spans arrived\n",
		duration, linesPerSec, spansPerSec, linesSent, spansSent, st.Total.Events, st.Total.Spans)
	from := int(float64(len(samples)) * warmup)
	for _, m := range []struct {
		name string
		get  func(sample) float64
		unit string
	}{
		{"RSS", func(s sample) float64 { return s.rssMB }, "MB"},
		{"heap", func(s sample) float64 { return s.heapMB }, "MB"},
		{"threads", func(s sample) float64 { return s.threads }, ""},
	} {
		lo, hi := minMax(samples[from:], m.get)
		fmt.Printf("soak: %-7s after warm-up %.1f..%.1f %s, slope %+.2f %s/hour\n", m.name, lo, hi, m.unit, slope(samples[from:], m.get)*3600, m.unit)
	}
	if int64(linesSent) != st.Total.Events {
		return fmt.Errorf("%d lines sent, %d events arrived", linesSent, st.Total.Events)
	}
	return nil
}

func waitListening(addr string, exited <-chan error) error {
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("sidecar exited at start: %v", err)
		default:
		}
	}
	return fmt.Errorf("sidecar not listening on %s", addr)
}

func post(c *http.Client, url string, body []byte) error {
	resp, err := c.Post(url, "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("OTLP/HTTP answered %s", resp.Status)
	}
	return nil
}

// read samples the sidecar: RSS and threads from /proc, the Go heap from
// its self-metrics (the collector exports no goroutine count; OS threads
// stand in).
func read(pid int, metricsPort string, fake *axiomtest.Server) (sample, error) {
	var s sample
	ps, err := procstat.Read(pid)
	if err != nil {
		return s, err
	}
	s.rssMB = float64(ps.RSSKB) / 1024
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	if _, v, ok := strings.Cut(string(status), "Threads:"); ok {
		fmt.Sscan(v, &s.threads)
	}
	resp, err := http.Get("http://127.0.0.1:" + metricsPort + "/metrics")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "otelcol_process_runtime_heap_alloc_bytes "); ok {
			b, _ := strconv.ParseFloat(v, 64)
			s.heapMB = b / (1 << 20)
		}
	}
	st := fake.Stats()
	s.eventsStored, s.spansSeen = st.Total.Events, st.Total.Spans
	return s, nil
}

func writeCSV(path string, samples []sample) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"seconds", "rss_mb", "heap_mb", "threads", "lines_sent", "spans_sent", "events_arrived", "spans_arrived"})
	for _, s := range samples {
		_ = w.Write([]string{fmt.Sprintf("%.1f", s.seconds), fmt.Sprintf("%.2f", s.rssMB), fmt.Sprintf("%.2f", s.heapMB),
			fmt.Sprint(s.threads), fmt.Sprint(s.linesSent), fmt.Sprint(s.spansSent), fmt.Sprint(s.eventsStored), fmt.Sprint(s.spansSeen)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func minMax(s []sample, get func(sample) float64) (lo, hi float64) {
	for i, x := range s {
		v := get(x)
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}

// slope is the least-squares slope of get over time, per second.
func slope(s []sample, get func(sample) float64) float64 {
	n := float64(len(s))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for _, x := range s {
		t, v := x.seconds, get(x)
		sx, sy, sxx, sxy = sx+t, sy+v, sxx+t*t, sxy+t*v
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}
