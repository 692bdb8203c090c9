// Command fakeaxiom serves the fake Axiom of internal/axiomtest for other
// processes: benchmark scripts, the compose setup, manual runs.
//
//	fakeaxiom -addr 127.0.0.1:8080 [-count-only] [-token xaat-…] [-dataset name]
//
// Besides Axiom's API it serves GET /_fake/stats, GET /_fake/events/{dataset}
// and GET /_fake/spans/{dataset}.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sidecarhq/sidecar/internal/axiomtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "fakeaxiom:", err)
		os.Exit(2)
	}
}

// run serves until ctx ends, printing a stats line every interval while data flows.
func run(ctx context.Context, args []string, stderr io.Writer, interval time.Duration) error {
	fs := flag.NewFlagSet("fakeaxiom", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	countOnly := fs.Bool("count-only", false, "count events and spans, store nothing (benchmarks)")
	maxEvents := fs.Int("max-events", 10000, "events allowed per ingest request")
	var tokens, datasets []string
	fs.Func("token", "accepted token (repeatable; default: any xaat-/xapt- token)", func(v string) error {
		tokens = append(tokens, v)
		return nil
	})
	fs.Func("dataset", "existing dataset (repeatable; default: every dataset exists)", func(v string) error {
		datasets = append(datasets, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	opts := []axiomtest.Option{axiomtest.WithAddr(*addr), axiomtest.WithMaxEvents(*maxEvents)}
	if *countOnly {
		opts = append(opts, axiomtest.WithCountOnly())
	}
	if len(tokens) > 0 {
		opts = append(opts, axiomtest.WithTokens(tokens...))
	}
	if len(datasets) > 0 {
		opts = append(opts, axiomtest.WithDatasets(datasets...))
	}
	srv, err := axiomtest.New(opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stderr, "fakeaxiom listening on %s\n", srv.URL())

	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last axiomtest.DatasetStats
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(stderr, "fakeaxiom: shutting down")
			return nil
		case <-tick.C:
			now := srv.Stats().Total
			if now.Requests != last.Requests {
				printStats(stderr, now, last, interval)
			}
			last = now
		}
	}
}

func printStats(w io.Writer, now, last axiomtest.DatasetStats, interval time.Duration) {
	perSec := func(n, l int64) float64 { return float64(n-l) / interval.Seconds() }
	fmt.Fprintf(w, "events=%d (%.0f/s) spans=%d (%.0f/s) logRecords=%d requests=%d rejected=%d failed=%d bytes=%d (%.1f MB/s)\n",
		now.Events, perSec(now.Events, last.Events), now.Spans, perSec(now.Spans, last.Spans),
		now.LogRecords, now.Requests, now.Rejected, now.Failed, now.Bytes, perSec(now.Bytes, last.Bytes)/1e6)
}
