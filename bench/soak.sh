#!/usr/bin/env bash
# Soak: the sidecar (embedded default + stdin) at 5,000 pino lines/s on stdin
# plus 2,000 spans/s over OTLP/HTTP into a count-only fake Axiom, for 30
# minutes; RSS, Go heap and OS threads sampled every 5 s to
# bench/results/soak.csv, drawn to bench/results/soak.png, and each one's
# slope after the first fifth (warm-up) printed. Fails unless every line
# arrived.
#
#   bench/soak.sh          # 30 minutes
#   bench/soak.sh 2m       # the short version (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-30m}"
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -trimpath -o "$bin/sidecar" ./cmd/sidecar
go build -o "$bin/soak" ./bench/cmd/soak
(cd bench/plots && go build -o "$bin/plots" .)
mkdir -p bench/results
"$bin/soak" -sidecar "$bin/sidecar" -duration "$duration" -out bench/results/soak.csv
"$bin/plots" -soak bench/results/soak.csv
echo "wrote bench/results/soak.csv and bench/results/soak.png" >&2
