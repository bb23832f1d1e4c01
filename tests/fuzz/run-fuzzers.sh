#!/bin/bash
# Builds the libFuzzer targets of tests/fuzz in a separate clang build dir and fuzzes each one.
#
#   tests/fuzz/run-fuzzers.sh [--build-dir DIR] [--seconds N] [--jobs N] [TARGET...]
#
#   --build-dir DIR  the clang build dir (default: $FUZZ_BUILD_DIR or build/hardening-build); it
#                    is configured with -DCODE_SANDBOX_FUZZ=ON when it has no CMakeCache.txt yet
#                    and reused as it is otherwise (see clang-build.sh); only the fuzz_* targets
#                    are built
#   --seconds N      how long each target runs (default: $FUZZ_SECONDS or 60, but see below)
#   --jobs N         how many targets run at once (default: $FUZZ_JOBS or 2)
#   TARGET...        a subset of: jsonrpc lineframer httprequest httpresponse multiplex tar
#                    proxyrequest clienthello secretrewriter gatewaycontrol
#
# The egress gateway's targets (proxyrequest clienthello secretrewriter gatewaycontrol) have a time
# of their own, 60 s (their issue asks for 60 s each in CI), which FUZZ_SECONDS does not change:
# a test run that fuzzes the others for less (dev.sh: 30 s) still gives them a minute. Only
# --seconds on the command line sets theirs too. The longest start first, so that the last two
# to run end about together.
#
# Each target starts from a fresh copy of its seed corpus (tests/fuzz/corpus/NAME) under
# DIR/fuzz-run/NAME/, where its log and any crash input (crash-*, leak-*, timeout-*, oom-*) are
# left too; nothing is written into the source tree. Exits non-zero when a target fails to build
# or any target crashes. The compiler is $FUZZ_CXX, else clang++ or clang++-14.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ALL_TARGETS=(jsonrpc lineframer httprequest httpresponse multiplex tar
             proxyrequest clienthello secretrewriter gatewaycontrol)
declare -A OWN_SECONDS=([proxyrequest]=60 [clienthello]=60 [secretrewriter]=60 [gatewaycontrol]=60)

BUILD=${FUZZ_BUILD_DIR:-$ROOT/build/hardening-build}
SECONDS_EACH=${FUZZ_SECONDS:-60}
SECONDS_GIVEN=0
JOBS=${FUZZ_JOBS:-2}
TARGETS=()
while [ $# -gt 0 ]; do
    case $1 in
    --build-dir) BUILD=$2; shift 2 ;;
    --seconds) SECONDS_EACH=$2; SECONDS_GIVEN=1; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run-fuzzers.sh: unknown option $1" >&2; exit 2 ;;
    *)
        [[ " ${ALL_TARGETS[*]} " == *" $1 "* ]] || {
            echo "run-fuzzers.sh: unknown target $1 (known: ${ALL_TARGETS[*]})" >&2
            exit 2
        }
        TARGETS+=("$1"); shift ;;
    esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL_TARGETS[@]}")
say() { printf '==> %s\n' "$*"; }
seconds_for() {
    if [ "$SECONDS_GIVEN" = 0 ] && [ -n "${OWN_SECONDS[$1]:-}" ]; then
        echo "${OWN_SECONDS[$1]}"
    else
        echo "$SECONDS_EACH"
    fi
}

# shellcheck source=clang-build.sh
. "$HERE/clang-build.sh"
clang_build_setup run-fuzzers.sh "$BUILD"
clang_build_targets "${TARGETS[@]/#/fuzz_}"

# Stacks for every finding; a UBSan finding is a crash like any other. Leaks inside Qt or system
# libraries only are suppressed by lsan.supp.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
[ -f "$HERE/lsan.supp" ] && export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$HERE/lsan.supp}

WORK=$BUILD/fuzz-run
run_one() {
    local t=$1 dir=$WORK/$1 dict=()
    rm -rf "$dir"
    mkdir -p "$dir/corpus"
    cp "$HERE/corpus/$t/"* "$dir/corpus/" 2>/dev/null
    [ -f "$HERE/dict/$t.dict" ] && dict=(-dict="$HERE/dict/$t.dict")
    (
        cd "$dir" || exit 1
        "$BUILD/bin/fuzz_$t" -max_total_time="$(seconds_for "$t")" -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$dir/" "${dict[@]}" "$dir/corpus"
    ) >"$dir/log" 2>&1
    echo $? >"$dir/rc"
}

# Longest first (a stable sort: the order given otherwise).
mapfile -t ORDER < <(for t in "${TARGETS[@]}"; do echo "$(seconds_for "$t") $t"; done |
    sort -s -k1,1nr | cut -d' ' -f2)
total=0
for t in "${TARGETS[@]}"; do total=$((total + $(seconds_for "$t"))); done
say "fuzzing ${#TARGETS[@]} targets for $total s in all, $JOBS at a time"
running=0
for t in "${ORDER[@]}"; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

# Per target: executions, edge coverage and features at the end, and the corpus it grew.
passed=0
failed=0
printf '%-15s %-6s %5s %12s %8s %8s %14s\n' target result s runs cov ft corpus
for t in "${TARGETS[@]}"; do
    dir=$WORK/$t
    rc=$(cat "$dir/rc" 2>/dev/null || echo 1)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n 1)
    [ -n "$runs" ] || runs=$(grep -oE '^#[0-9]+' "$dir/log" | tail -n 1 | tr -d '#')
    cov=$(grep -oE 'cov: [0-9]+' "$dir/log" | tail -n 1 | cut -d' ' -f2)
    ft=$(grep -oE 'ft: [0-9]+' "$dir/log" | tail -n 1 | cut -d' ' -f2)
    files=$(find "$dir/corpus" -type f | wc -l)
    bytes=$(find "$dir/corpus" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    if [ "$rc" = 0 ]; then
        result=ok
        passed=$((passed + 1))
    else
        result=FAILED
        failed=$((failed + 1))
    fi
    printf '%-15s %-6s %5s %12s %8s %8s %14s\n' "$t" "$result" "$(seconds_for "$t")" "${runs:-?}" \
        "${cov:-?}" "${ft:-?}" "$files/${bytes}b"
done
for t in "${TARGETS[@]}"; do
    dir=$WORK/$t
    [ "$(cat "$dir/rc" 2>/dev/null || echo 1)" = 0 ] && continue
    echo
    echo "---- fuzz_$t failed (exit $(cat "$dir/rc" 2>/dev/null)); log: $dir/log"
    # The report from its first line on: the target's own, a sanitizer's or libFuzzer's.
    first=$(grep -nE -m1 '^(whole:|input:|limits?:? |==[0-9]+== ?ERROR)|runtime error|fuzz property broken' \
        "$dir/log" | cut -d: -f1)
    if [ -n "$first" ]; then sed -n "$first,\$p" "$dir/log" | head -n 150; else tail -n 80 "$dir/log"; fi
    for a in "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* "$dir"/slow-unit-*; do
        [ -f "$a" ] && echo "input: $a (replay: $BUILD/bin/fuzz_$t $a)"
    done
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
