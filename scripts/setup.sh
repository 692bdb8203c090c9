#!/usr/bin/env bash
# Installs what the tests need beyond Go, so that `go test ./...` runs them all
# on a clean machine (Go, gcc, Node/npm, Debian packages). Idempotent and quiet;
# .ci/run calls it before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: redis-server, the example app's Redis in the Node/Bun
# end-to-end tests; zstd, the reference decoder the axiom exporter's tests
# hold its request bodies to.
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v zstd >/dev/null 2>&1 || missing+=(zstd)
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	log=$(mktemp)
	if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
		cat "$log" >&2
		echo "setup: installing ${missing[*]} failed" >&2
		exit 1
	fi
	rm -f "$log"
fi

# npm packages from their committed lockfiles (bun is a devDependency);
# skipped when node_modules was installed from the same lockfile and, for the
# example app, which holds a copy of clients/js, from the same client files.
client_files() { find clients/js -name node_modules -prune -o -type f -print | LC_ALL=C sort; }
for dir in clients/js clients/js/test/sdk3 examples/node-app; do
	[ -f "$dir/package-lock.json" ] || continue
	stamp="$dir/node_modules/.setup-lock.sha256"
	sum=$({
		cat "$dir/package-lock.json"
		[ "$dir" != examples/node-app ] || client_files | xargs cat
	} | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
		echo "$sum" >"$stamp"
	fi
done

# Real Node loggers for the e2e logger tests (pino and @axiomhq/pino for the
# parity test, bunyan and winston for the formats table), from their
# lockfile; no install scripts and no optional packages (bunyan's native
# dtrace-provider is neither needed nor buildable everywhere).
dir=e2e/testdata/loggers/node
stamp="$dir/node_modules/.setup-lock.sha256"
sum=$(sha256sum <"$dir/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
	(cd "$dir" && npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
	echo "$sum" >"$stamp"
fi
