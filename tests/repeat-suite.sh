#!/bin/bash
# Runs the whole suite as CI does (`bash .ci/run` in a fresh clone of HEAD), several times in a row,
# and optionally with the machine loaded, to show that it holds: a test that passes only on a quiet
# machine, or only once, is a flaky test.
#
#   tests/repeat-suite.sh [--runs N] [--stress] [--reuse] [--keep] [--dir DIR]
#
#   --runs N    how many runs in a row (default 3); each is a fresh clone and a fresh build dir
#   --reuse     every run after the first in the first run's clone: the same .ci/run again, which
#               finds the images, packages and both build trees there and so runs the tests (what
#               can be flaky) without building them again
#   --stress    load every core with stress-ng (Debian's stress-ng) for the whole of each run,
#               bounded by the run's own end and by a 90-minute cap
#   --keep      keep the clones (default: removed after a passing run)
#   --dir DIR   where the clones go (default /tmp/cs-repeat)
#
# Prints one line per run (its time, its result, ctest's summary) and exits non-zero when any run
# failed; each run's whole output is in DIR/run-N.log.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=3 STRESS= KEEP= REUSE= DIR=/tmp/cs-repeat
while [ $# -gt 0 ]; do
    case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --stress) STRESS=1; shift ;;
    --reuse) REUSE=1; shift ;;
    --keep) KEEP=1; shift ;;
    --dir) DIR=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "repeat-suite.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -n "$STRESS" ] && ! command -v stress-ng >/dev/null; then
    echo "repeat-suite.sh: --stress needs stress-ng (apt-get install stress-ng)" >&2
    exit 2
fi
mkdir -p "$DIR"
failed=0
for n in $(seq "$RUNS"); do
    if [ -n "$REUSE" ] && [ "$n" -gt 1 ]; then
        clone=$DIR/clone-1
    else
        clone=$DIR/clone-$n
        rm -rf "$clone"
        git clone -q "$ROOT" "$clone"
    fi
    stress=
    if [ -n "$STRESS" ]; then
        stress-ng --cpu "$(nproc)" --timeout 90m --quiet &
        stress=$!
    fi
    start=$(date +%s)
    load_before=$(cut -d' ' -f1 /proc/loadavg)
    rc=0
    (cd "$clone" && CI=true bash .ci/run) >"$DIR/run-$n.log" 2>&1 </dev/null || rc=$?
    end=$(date +%s)
    load_after=$(cut -d' ' -f1 /proc/loadavg)
    [ -z "$stress" ] || { kill "$stress" 2>/dev/null || true; wait "$stress" 2>/dev/null || true; }
    # dev.sh test runs ctest twice (the tests, then the hardening tests): both summaries.
    summary=$(grep -E '^[0-9]+% tests passed' "$DIR/run-$n.log" | paste -sd';' || true)
    printf 'run %d: %s in %d s (load %s before, %s at the end%s): %s\n' "$n" \
        "$([ $rc = 0 ] && echo passed || echo FAILED)" $((end - start)) "$load_before" \
        "$load_after" "${STRESS:+, stress-ng on every core}" "${summary:-no ctest summary}"
    if [ $rc != 0 ]; then
        failed=1
        grep -E '^\s*[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Not Run)' "$DIR/run-$n.log" || true
    elif [ -z "$KEEP" ] && { [ -z "$REUSE" ] || [ "$n" = "$RUNS" ]; }; then
        rm -rf "$clone"
    fi
done
exit $failed
