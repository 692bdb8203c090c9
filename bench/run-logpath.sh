#!/bin/sh
# Measures the log hot path: the decoder alone (Go benchmark) and the whole
# process (pino lines on stdin -> stdout receiver -> axiom exporter -> fake
# Axiom on loopback, sidecar at GOMAXPROCS=1) against a `cat` baseline run on
# the same input. Arguments go to bench/logpath (e.g. -lines 5000000).
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

echo "== decoder alone (GOMAXPROCS=1)"
go test -run '^$' -bench BenchmarkDecodePino -benchtime 2s -cpu 1 ./receivers/stdoutreceiver/internal/decode/ | grep -E '^Benchmark'

echo "== whole process"
go build -o "$work/sidecar" ./cmd/sidecar
go build -o "$work/logpath" ./bench/logpath
"$work/logpath" -sidecar "$work/sidecar" "$@"
