#!/usr/bin/env bash
# Runs every benchmark scenario against the sidecar and a stock collector,
# side by side, and writes bench/RESULTS.md, bench/results/ (JSON, CSV
# series, collector logs) and bench/results/plots/*.png.
#
#   bench/run.sh                          # everything (~20 minutes: 20 s fixed-rate phases, 6 s max-rate)
#   bench/run.sh -scenarios logs-stdin    # extra flags go to benchrun
#
# See bench/COMPARISON.md for what is measured and how.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${BENCH_BIN:-$(mktemp -d)}"
echo "building into $bin (the stock collector's first build takes minutes)" >&2
go build -trimpath -o "$bin/sidecar" ./cmd/sidecar
go build -o "$bin/" ./bench/cmd/benchsink ./bench/cmd/benchrun
(cd bench/baseline && go build -trimpath -o "$bin/baseline" .)
(cd bench/plots && go build -o "$bin/plots" .)

cpu=1
if ! command -v taskset >/dev/null || [ "$(nproc)" -lt 2 ]; then cpu=""; fi

"$bin/benchrun" -sidecar "$bin/sidecar" -baseline "$bin/baseline" -sink "$bin/benchsink" \
  -out bench/results -report bench/RESULTS.md -cpu "$cpu" \
  -command "bench/run.sh${*:+ $*}" "$@"
"$bin/plots" -results bench/results
echo "wrote bench/RESULTS.md and bench/results/plots/" >&2
