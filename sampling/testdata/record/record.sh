#!/usr/bin/env bash
# Records the span fixtures in sampling/testdata/*.json from the real
# OpenTelemetry instrumentations, JS (record.mjs) and Go (go/), see README.md. Run by hand, not in CI:
#   sampling/testdata/record/record.sh
# Needs redis-server and, for pg, PostgreSQL's server binaries (Debian:
# apt-get install redis-server postgresql); pg is skipped without them.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

redis-server --port 16379 --bind 127.0.0.1 --save '' --appendonly no --enable-debug-command local --dir "$tmp" >"$tmp/redis.log" 2>&1 &
pids+=($!)
export REDIS_URL=redis://127.0.0.1:16379

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -n "$pgbin" ] && [ -x "$pgbin/initdb" ]; then
	# PostgreSQL refuses to run as root: run it as the postgres user if we are root.
	as=()
	[ "$(id -u)" -ne 0 ] || as=(runuser -u postgres --)
	mkdir -p "$tmp/pg" && chown "$([ "$(id -u)" -ne 0 ] && id -un || echo postgres)" "$tmp/pg"
	"${as[@]}" "$pgbin/initdb" -D "$tmp/pg/data" -U fixtures --auth=trust >"$tmp/pg.log" 2>&1
	"${as[@]}" "$pgbin/postgres" -D "$tmp/pg/data" -h 127.0.0.1 -p 15432 -k "$tmp/pg" >>"$tmp/pg.log" 2>&1 &
	pids+=($!)
	export PG_URL="postgres://fixtures@127.0.0.1:15432/postgres?sslmode=disable"
	for _ in $(seq 50); do "$pgbin/pg_isready" -q -h 127.0.0.1 -p 15432 && break; sleep 0.2; done
else
	echo "PostgreSQL not found: pg.json is not recorded" >&2
fi
for _ in $(seq 50); do redis-cli -p 16379 ping >/dev/null 2>&1 && break; sleep 0.2; done

[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
node record.mjs
(cd go && go run .)
