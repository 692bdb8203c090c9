#!/bin/sh
# Counts the instructions the log hot path executes per pino line, under
# valgrind (cachegrind, cache simulation off): a figure that does not depend
# on the host's speed or load, for comparing two builds on a busy machine.
#   1. the decoder alone: BenchmarkDecodePino at two iteration counts
#      (GOGC=off, GOMAXPROCS=1), the difference over the difference in lines;
#   2. the whole process and zstd -1 -T1 on the same bytes: bench/logpath
#      -valgrind (the same differencing, over -lines and -lines/5).
# Instructions are not CPU time: the ratio to zstd here is not the timed
# ratio of bench/run-logpath.sh. Arguments go to bench/logpath (e.g. -lines
# 500000, -keep to keep cachegrind's files for cg_annotate).
#
# With -forward first, it counts the whole process on Fluent Forward instead:
# stdin, docker-style (a Message frame per line) and FireLens-style (16-line
# Forward frames with ecs_* fields) on the same load generator lines, the
# frames pre-encoded as benchrun's generators send them, and the ratios to
# stdin (bench/logpath -valgrind -forward).
set -eu
forward=
if [ "${1:-}" = -forward ]; then
	forward=-forward
	shift
fi
cd "$(dirname "$0")/.."
# Valgrind 3.19 has no RDTSCP, which Go's runtime uses (cputicks) when a lock
# is contended, more often on a loaded host: the program then dies of
# SIGILL. Without it the runtime reads the clock with RDTSC. (golang.org/x/sys/cpu
# reads GODEBUG too and warns that it does not know "rdtscp": harmless.)
export GODEBUG=cpu.rdtscp=off
command -v valgrind >/dev/null || { echo "count-logpath.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

go build -o "$work/sidecar" ./cmd/sidecar
go build -o "$work/logpath" ./bench/logpath
if [ -n "$forward" ]; then
	"$work/logpath" -sidecar "$work/sidecar" -valgrind -forward -lines 300000 "$@"
	exit
fi
go test -c -o "$work/decode.test" ./receivers/stdoutreceiver/internal/decode/

echo "== decoder alone (BenchmarkDecodePino, 1024 lines per iteration)"
count() { # iterations -> instructions
	GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		--log-file="$work/decode.$1.log" "$work/decode.test" -test.run '^$' \
		-test.bench 'BenchmarkDecodePino$' -test.benchtime "$1x" -test.cpu 1 >/dev/null
	sed -n 's/.*I *refs: *//p' "$work/decode.$1.log" | tr -d ,
}
small=$(count 20)
large=$(count 120)
echo "instructions: $small (20 iterations), $large (120); per line: $(( (large - small) / (100 * 1024) ))"

echo "== whole process and zstd -1 -T1"
"$work/logpath" -sidecar "$work/sidecar" -valgrind -lines 300000 "$@"
