#!/bin/bash
# Benchmark of code-sandbox against the per-call flow of the projects users move from (reproduced
# through the Engine API by peers.py) and the engine's own ceiling; see README.md.
#   bench/run.sh [--calls N] [--flow-calls N] [--out FILE] [--bin PATH] [--smoke] [--engines] [--first-run]
# --engines starts the engines fixture (tests/engines/engines.sh: two more dockerd on this
# machine, one over TCP+TLS, one through ssh) for the "Several engines" section, and stops it
# when the run ends, however it ends.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v node >/dev/null || { echo "bench: node is required" >&2; exit 2; }
if [ ! -d "$HERE/node_modules/@modelcontextprotocol/sdk" ]; then
    echo "bench: installing the MCP SDK client (npm ci)" >&2
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
cd "$HERE/.."

args=()
engines=0
for a in "$@"; do
    if [ "$a" = --engines ]; then engines=1; else args+=("$a"); fi
done
[ "$engines" = 1 ] || exec node "$HERE/bench.mjs" "$@"

# Wrong arguments, no binary or no image: said now, before minutes of fixture start-up.
node "$HERE/bench.mjs" "${args[@]}" --check

ENGINES_SH=$HERE/../tests/engines/engines.sh
# Short: the fixture's unix socket paths live under it (108 bytes at most).
TMP=$(mktemp -d /tmp/cs-bench-XXXXXX)
FIXTURE=$TMP/e
node_pid=
cleanup() {
    local rc=$? t0=$SECONDS
    trap - EXIT INT TERM
    [ -z "$node_pid" ] || kill -TERM "$node_pid" 2> /dev/null || true
    [ -z "$node_pid" ] || wait "$node_pid" 2> /dev/null || true
    echo "bench: stopping the engines fixture in $FIXTURE" >&2
    if bash "$ENGINES_SH" stop "$FIXTURE" > "$TMP/stop.log" 2>&1; then
        echo "bench: engines fixture stopped in $((SECONDS - t0)) s" >&2
        rm -f "$TMP/start.log" "$TMP/stop.log"
        rmdir "$TMP" 2> /dev/null || true
    else
        cat "$TMP/stop.log" >&2
        echo "bench: stopping the engines fixture failed; see $TMP" >&2
        [ "$rc" != 0 ] || rc=1
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t0=$SECONDS
echo "bench: starting the engines fixture in $FIXTURE (copies the images into two more dockerd)" >&2
if ! bash "$ENGINES_SH" start "$FIXTURE" > "$TMP/start.log" 2>&1; then
    cat "$TMP/start.log" >&2
    echo "bench: the engines fixture did not start" >&2
    exit 2
fi
echo "bench: engines fixture started in $((SECONDS - t0)) s" >&2
# Run in the background and wait, so that a signal reaches the trap (and node) at once.
node "$HERE/bench.mjs" "${args[@]}" --engines-env "$FIXTURE/env" &
node_pid=$!
set +e
wait "$node_pid"
rc=$?
set -e
node_pid=
exit "$rc"
