#!/bin/bash
# The unit tests, the fake-engine tests and the integration suite, built with AddressSanitizer
# and UndefinedBehaviorSanitizer (clang, in the build dir the fuzz targets use), run by ctest in
# that dir, with the fuzz targets' seeds and past crash inputs replayed once each. The
# integration suite runs there against Podman (integration_podman, see
# tests/integration/podman.sh), while the ordinary build runs it against Docker: each engine gets
# the suite once, one of the two runs sanitized.
#
#   tests/sanitize/run-sanitized.sh [--build-dir DIR] [--build-only] [-- CTEST-ARGS...]
#
#   --build-dir DIR  the clang build dir (default: $FUZZ_BUILD_DIR or build/hardening-build)
#   --build-only     build what the fuzz test and this one run, and run nothing
#   CTEST-ARGS       instead of the default selection: -L 'unit|fakeengine|podman|fuzz'
#
# Any finding aborts the test that made it (halt_on_error, abort_on_error); leak detection is on.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${FUZZ_BUILD_DIR:-$ROOT/build/hardening-build}
CTEST_ARGS=(-L 'unit|fakeengine|podman|fuzz')
BUILD_ONLY=
while [ $# -gt 0 ]; do
    case $1 in
    --build-dir) BUILD=$2; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    --) shift; CTEST_ARGS=("$@"); break ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-sanitized.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=../fuzz/clang-build.sh
. "$ROOT/tests/fuzz/clang-build.sh"
clang_build_setup run-sanitized.sh "$BUILD"
# What the selected tests run: every unit_* and fuzz_*, and the engine tests' executables.
mapfile -t targets < <(clang_build_all_targets)
[ ${#targets[@]} -gt 0 ] || { echo "run-sanitized.sh: no test targets found in $BUILD" >&2; exit 1; }
clang_build_targets "${targets[@]}"
[ -z "$BUILD_ONLY" ] || exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/sanitize/lsan.supp:print_suppressions=0}
cd "$BUILD" && ctest --output-on-failure --no-tests=error --timeout 900 "${CTEST_ARGS[@]}"
