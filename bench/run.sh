#!/bin/bash
# Benchmark of code-sandbox against the per-call flow of the projects users move from (reproduced
# through the Engine API by peers.py) and the engine's own ceiling; see README.md.
#   bench/run.sh [--calls N] [--flow-calls N] [--out FILE] [--bin PATH] [--smoke] [--engines] [--first-run]
#                [--only realistic] [--realistic-rounds N] [--realistic-warmup N] [--realistic-flow-calls N]
# --engines starts the engines fixture (tests/engines/engines.sh: two more dockerd on this
# machine, one over TCP+TLS, one through ssh) for the "Several engines" section, and stops it
# when the run ends, however it ends. --only realistic runs the realistic programs' section alone
# (no bound-secrets section, no fixture).
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
smoke=0
only=
# cs-gateway, for the bound-secrets section: next to the server binary (--bin), as the build puts it.
gateway=$HERE/../build/bin/cs-gateway
bin=$HERE/../build/bin/code-sandbox
prev=
for a in "$@"; do
    [ "$prev" != --bin ] || { gateway=$(dirname -- "$a")/cs-gateway; bin=$a; }
    [ "$prev" != --only ] || only=$a
    case "$a" in
        --engines) engines=1 ;;
        --smoke) smoke=1; args+=("$a") ;;
        -h|--help) exec node "$HERE/bench.mjs" --help ;;
        *) args+=("$a") ;;
    esac
    prev=$a
done

# Wrong arguments, no binary or no image: said now, before the secrets row and minutes of
# fixture start-up. (--out /dev/null: the check writes nothing, and so makes no temp dir for
# a smoke report.)
node "$HERE/bench.mjs" "${args[@]}" --check --out /dev/null
# One section alone: bench.mjs has checked that it is one it knows (and no --engines with it).
if [ -n "$only" ]; then
    [ "$engines" = 0 ] || { echo "bench: --only $only runs no several-engines rows: leave out --engines" >&2; exit 2; }
    exec node "$HERE/bench.mjs" "${args[@]}"
fi
[ -x "$gateway" ] || { echo "bench: no cs-gateway at $gateway (build it: it is built next to the server)" >&2; exit 2; }

# "Bound secrets: a request with injection against a plain CONNECT" (bench/secrets.mjs): the
# gateway program and an HTTPS origin on loopback, no engine, a few seconds. It runs first, on
# the machine bench.mjs is about to measure (a full run waits for it to be quiet first, as
# bench.mjs does); its Markdown section reaches bench.mjs's report through
# CS_BENCH_SECRETS_SECTION, its JSON line goes to stderr. A wrong answer stops the run here.
if [ "$smoke" = 1 ]; then secrets_args=(--smoke); else secrets_args=(--wait-quiet); fi
echo "bench: bound secrets (bench/secrets.mjs ${secrets_args[*]})" >&2
if ! secrets_out=$(node "$HERE/secrets.mjs" --gateway "$gateway" "${secrets_args[@]}"); then
    printf '%s\n' "$secrets_out" >&2
    echo "bench: bench/secrets.mjs failed (a wrong answer or a failed step; see above)" >&2
    exit 1
fi
CS_BENCH_SECRETS_SECTION=$(printf '%s\n' "$secrets_out" | sed '$d')
export CS_BENCH_SECRETS_SECTION
echo "bench: secrets: $(printf '%s\n' "$secrets_out" | tail -n 1)" >&2

# "Workspaces" (bench/workspaces.mjs): a call over a 200 MB folder of 5,000 files, first and
# next, on the local engine (and, with --engines, the fixture's remote ones: see below). Its
# Markdown section reaches bench.mjs's report through CS_BENCH_WORKSPACES_SECTION.
workspaces_section() { # [ENGINES_ENV]
    local out ws_args=(--bin "$bin")
    [ "$smoke" = 0 ] || ws_args+=(--smoke)
    [ -z "${1:-}" ] || ws_args+=(--engines-env "$1")
    echo "bench: workspaces (bench/workspaces.mjs ${ws_args[*]})" >&2
    if ! out=$(node "$HERE/workspaces.mjs" "${ws_args[@]}"); then
        printf '%s\n' "$out" >&2
        echo "bench: bench/workspaces.mjs failed (a wrong answer or a failed step; see above)" >&2
        exit 1
    fi
    CS_BENCH_WORKSPACES_SECTION=$(printf '%s\n' "$out" | sed '$d')
    export CS_BENCH_WORKSPACES_SECTION
}

# "Sessions that last" (bench/snapshots.mjs): snapshot, rewind and fork of a Python session
# holding a DataFrame of a million rows, on the local engine; through CS_BENCH_SNAPSHOTS_SECTION.
snapshots_args=(--bin "$bin")
[ "$smoke" = 0 ] || snapshots_args+=(--smoke)
echo "bench: snapshots (bench/snapshots.mjs ${snapshots_args[*]})" >&2
if ! snapshots_out=$(node "$HERE/snapshots.mjs" "${snapshots_args[@]}"); then
    printf '%s\n' "$snapshots_out" >&2
    echo "bench: bench/snapshots.mjs failed (a wrong answer or a failed step; see above)" >&2
    exit 1
fi
CS_BENCH_SNAPSHOTS_SECTION=$(printf '%s\n' "$snapshots_out" | sed '$d')
export CS_BENCH_SNAPSHOTS_SECTION

if [ "$engines" = 0 ]; then
    workspaces_section
    exec node "$HERE/bench.mjs" "${args[@]}"
fi

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
workspaces_section "$FIXTURE/env"
# Run in the background and wait, so that a signal reaches the trap (and node) at once.
node "$HERE/bench.mjs" "${args[@]}" --engines-env "$FIXTURE/env" &
node_pid=$!
set +e
wait "$node_pid"
rc=$?
set -e
node_pid=
exit "$rc"
