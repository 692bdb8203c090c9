#!/bin/sh
# Measures the log hot path: the decoder alone (Go benchmark) and the whole
# process (pino lines on stdin -> stdout receiver -> axiom exporter -> fake
# Axiom on loopback, sidecar at GOMAXPROCS=1) against two baselines run on
# the same input: `cat` and the compression floor, `zstd -1 -T1`. Each
# process is pinned to core 1 (as bench/run.sh pins its collectors) when
# taskset and two cores are there. Arguments go to bench/logpath (e.g.
# -lines 5000000).
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

echo "== decoder alone (GOMAXPROCS=1)"
go test -run '^$' -bench BenchmarkDecodePino -benchtime 2s -cpu 1 ./receivers/stdoutreceiver/internal/decode/ | grep -E '^Benchmark'

echo "== whole process"
go build -o "$work/sidecar" ./cmd/sidecar
go build -o "$work/logpath" ./bench/logpath
cpu=1
if ! command -v taskset >/dev/null || [ "$(nproc)" -lt 2 ]; then cpu=-1; fi
"$work/logpath" -sidecar "$work/sidecar" -cpu "$cpu" "$@"
