// Command benchsink is the benchmarks' Axiom: the project's fake Axiom in
// count-only mode (it still validates every request), plus end-to-end
// latency measured from the timestamps the load generators put in each
// event. It serves the fake's API and GET /_bench/stats. -axiom slow holds
// every request for -slow-delay before taking it; -axiom down answers 503 to
// every request.
//
//	benchsink -addr 127.0.0.1:PORT [-latency] [-axiom up|slow|down] [-slow-delay 500ms]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	latency := flag.Bool("latency", false, "decode bodies to measure end-to-end latency (costs sink CPU)")
	mode := flag.String("axiom", axiomUp, "how the sink behaves: up, slow (holds each request for -slow-delay) or down (503 to everything)")
	delay := flag.Duration("slow-delay", 500*time.Millisecond, "how long -axiom slow holds each request")
	flag.Parse()
	if err := run(*addr, *latency, *mode, *delay); err != nil {
		fmt.Fprintln(os.Stderr, "benchsink:", err)
		os.Exit(2)
	}
}

func run(addr string, measureLatency bool, mode string, delay time.Duration) error {
	f, err := newFaults(mode, delay)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fake, err := axiomtest.New(axiomtest.WithCountOnly())
	if err != nil {
		return err
	}
	defer fake.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s := &sink{fake: fake, measure: measureLatency, faults: f}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_bench/stats", s.serveStats)
	mux.Handle("/", f.wrap(s.wrap(fake.Handler())))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(os.Stderr, "benchsink listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}
