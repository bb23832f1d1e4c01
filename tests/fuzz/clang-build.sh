# Sourced by run-fuzzers.sh and ../sanitize/run-sanitized.sh: the clang build dir they share, in
# which everything is built with AddressSanitizer and UndefinedBehaviorSanitizer (and libFuzzer's
# coverage instrumentation, which costs the tests nothing but a little speed).
#
#   clang_build_setup NAME DIR   finds clang++ and its runtimes, configures DIR once
#                                (-DCODE_SANDBOX_FUZZ=ON) and reuses it after; sets BUILD
#   clang_build_targets T...     builds those targets in BUILD
#   clang_build_all_targets      prints every target the hardening tests run (fuzz_*, unit_*,
#                                the engine tests)
#
# The dir is locked (flock on DIR/.lock) from setup until the build is done, so two scripts never
# build in it at once (ctest's hardening_build test builds it before the fuzz and sanitized tests,
# which then find nothing left to build; a second ctest in the same tree waits).
#
# The compiler is $FUZZ_CXX, else clang++ or clang++-14. NAME prefixes messages. Both functions
# exit the script with a message on failure.

CLANG_BUILD_PACKAGES="clang-14 libclang-rt-14-dev llvm-14"

clang_build_setup() {
    local name=$1 root
    BUILD=$2
    CLANG_BUILD_NAME=$name
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    mkdir -p "$BUILD"
    BUILD=$(cd "$BUILD" && pwd)
    exec {CLANG_BUILD_LOCK}>"$BUILD/.lock"
    if ! flock -n "$CLANG_BUILD_LOCK"; then
        echo "==> waiting for the build under way in $BUILD"
        flock "$CLANG_BUILD_LOCK"
    fi

    # The toolchain: clang++, and libFuzzer with the sanitizer runtimes (libclang-rt-14-dev, which
    # clang-14 only recommends).
    CXX=${FUZZ_CXX:-}
    if [ -z "$CXX" ]; then
        for c in clang++ clang++-14; do
            if command -v "$c" >/dev/null; then CXX=$(command -v "$c"); break; fi
        done
    fi
    if [ -z "$CXX" ] || ! command -v "$CXX" >/dev/null; then
        clang_build_missing "${CXX:-clang++} not found"
    fi
    local probe
    probe=$(mktemp -d)
    printf '%s\n' '#include <cstddef>' '#include <cstdint>' \
        'extern "C" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) { return 0; }' \
        >"$probe/p.cpp"
    if ! "$CXX" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" \
        >"$probe/log" 2>&1; then
        local why
        why=$(head -3 "$probe/log")
        rm -rf "$probe"
        clang_build_missing "$CXX cannot link -fsanitize=fuzzer,address,undefined: $why"
    fi
    rm -rf "$probe"
    # Symbolised stacks in reports; Debian names the symbolizer llvm-symbolizer-14.
    if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && ! command -v llvm-symbolizer >/dev/null; then
        for s in llvm-symbolizer-14 /usr/lib/llvm-14/bin/llvm-symbolizer; do
            if command -v "$s" >/dev/null; then
                ASAN_SYMBOLIZER_PATH=$(command -v "$s")
                export ASAN_SYMBOLIZER_PATH
                break
            fi
        done
    fi

    # Configure once, then reuse; the build reconfigures by itself when CMakeLists.txt changes.
    if grep -qs '^CODE_SANDBOX_FUZZ:BOOL=ON' "$BUILD/CMakeCache.txt"; then
        return 0
    fi
    if [ -f "$BUILD/CMakeCache.txt" ]; then
        echo "$name: $BUILD is a build dir without CODE_SANDBOX_FUZZ=ON" >&2
        exit 1
    fi
    local generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    # Warnings are the gcc build's business: clang warns about things gcc does not (the fuzz
    # targets themselves still build with -Werror). The app's code in unity batches, as dev.sh
    # builds it: under ASan each object costs several times what it does with gcc, and this
    # tree is the longest build of a test run.
    echo "==> configuring $BUILD with $CXX"
    cmake "${generator[@]}" -S "$root" -B "$BUILD" -DCMAKE_CXX_COMPILER="$CXX" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCODE_SANDBOX_FUZZ=ON -DBUILD_TESTING=ON \
        -DCODE_SANDBOX_WERROR=OFF -DCODE_SANDBOX_UNITY=ON \
        >"$BUILD/configure.log" 2>&1 || {
        tail -n 40 "$BUILD/configure.log"
        echo "$name: configuring failed, see $BUILD/configure.log" >&2
        exit 1
    }
}

clang_build_missing() {
    echo "$CLANG_BUILD_NAME: $1" >&2
    echo "$CLANG_BUILD_NAME: libFuzzer and the sanitizers need clang with its runtimes; on Debian 12:" >&2
    echo "    apt-get install $CLANG_BUILD_PACKAGES" >&2
    exit 1
}

clang_build_targets() {
    local start log
    start=$(date +%s)
    log=$BUILD/build-$CLANG_BUILD_NAME.log
    echo "==> building $# targets in $BUILD"
    if ! cmake --build "$BUILD" --target "$@" >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "$CLANG_BUILD_NAME: the build failed, see $log" >&2
        exit 1
    fi
    echo "==> built in $(($(date +%s) - start)) s"
    # Built: what runs next needs no lock, and must not pass it on to what it starts.
    exec {CLANG_BUILD_LOCK}>&-
}

# The unit and fuzz tests, the fake-engine test, and what the Podman run executes (its own list,
# so that a test added there is built here too).
clang_build_all_targets() {
    local podman
    podman=$(bash "$(dirname "${BASH_SOURCE[0]}")/../integration/podman.sh" --list | paste -sd '|')
    cmake --build "$BUILD" --target help 2>/dev/null |
        sed -nE 's/^([a-z_]+): (phony|EXECUTABLE|CUSTOM_COMMAND).*/\1/p; s/^\.\.\. ([a-z_]+)$/\1/p' |
        grep -xE "unit_[a-z]+|fuzz_[a-z]+|tst_enginefaults|$podman" |
        sort -u
}
