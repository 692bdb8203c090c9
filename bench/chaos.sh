#!/usr/bin/env bash
# The chaos and never-block tests of e2e (chaos_test.go, never_block_test.go),
# long: each kill loop (CRI files, Fluent Forward with acks, stdin) kills the
# sidecar CHAOS_KILLS times (default 100; the suite does 10) while the fake
# Axiom flaps, for ROUNDS rounds with fresh seeds (a failure prints its
# CHAOS_SEED); the app writes at 100k lines/s into a 430 for
# CHAOS_430_SECONDS (default 180; the suite does 6). Prints, per scenario: sent, arrived, duplicated, dropped,
# peak RSS, longest writer block.
#
#   bench/chaos.sh            # 3 rounds of 100 kills per transport
#   CHAOS_KILLS=20 bench/chaos.sh 1
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
export CHAOS_KILLS="${CHAOS_KILLS:-100}"
export CHAOS_430_SECONDS="${CHAOS_430_SECONDS:-180}"
for round in $(seq "$rounds"); do
  echo "round $round of $rounds, $CHAOS_KILLS kills per transport" >&2
  go test ./e2e -count=1 -timeout 120m -v \
    -run 'TestChaos|TestIngestLimitWhileTheAppWritesFast|TestFullStateFolder' |
    grep -E '^(--- |ok|FAIL)|kills:|seed|430 at|full state folder'
done
