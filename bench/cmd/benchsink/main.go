// Command benchsink is the benchmarks' Axiom: the project's fake Axiom in
// count-only mode (it still validates every request), plus end-to-end
// latency measured from the timestamps the load generators put in each
// event. It serves the fake's API and GET /_bench/stats.
//
//	benchsink -addr 127.0.0.1:PORT [-latency]
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
	flag.Parse()
	if err := run(*addr, *latency); err != nil {
		fmt.Fprintln(os.Stderr, "benchsink:", err)
		os.Exit(2)
	}
}

func run(addr string, measureLatency bool) error {
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
	s := &sink{fake: fake, measure: measureLatency}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_bench/stats", s.serveStats)
	mux.Handle("/", s.wrap(fake.Handler()))
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
