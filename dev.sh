#!/bin/bash
# Set up, build, run and test Code Sandbox on Debian 12.
#
#   ./dev.sh run [ARGS...]   install what is missing, build the app (not the tests) while the
#                            python image builds (from as soon as the engine and the image
#                            builder are installed, before the other packages), then run
#                            code-sandbox ARGS (without ARGS: the window where there is a
#                            display; elsewhere a first call through the MCP server, then
#                            --help). The other images build afterwards in the background, at
#                            low priority (log: BUILD/images-background.log); until one is
#                            there, get_supported_languages and the window say that it is being
#                            built.
#   ./dev.sh test            install what is missing, build all images and every target, run
#                            every test (ctest)
#   ./dev.sh hardening       only the hardening tests: the fuzz targets, and the unit and engine
#                            tests under ASan+UBSan with the integration suite on Podman
#   ./dev.sh screenshots     refresh docs/screenshots (the app under Xvfb, see tests/gui)
#   ./dev.sh build           install what is missing and build only
#
# "What is missing" is: the Debian packages below, a running container engine (dockerd is
# started in the background when no engine answers), the sandbox images (built offline from
# Debian packages by containers/build-images.sh) and the test's npm packages (npm ci).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT=$PWD
BUILD=${BUILD_DIR:-$ROOT/build}
SOCKET=/var/run/docker.sock

# What the sandbox images' build needs to begin: the engine (curl asks whether it answers) and
# the image builder (debootstrap, and python3 to read resources/languages.json). ./dev.sh run
# installs these first and starts the python image, which then builds while it installs the rest
# (mostly dpkg, one core) and builds the app.
IMAGE_PACKAGES=(curl ca-certificates docker.io debootstrap python3)
# What building and running need: those, build tools, Qt 6.4 and the four C libraries (tar, HTTP
# framing, YAML for kubeconfig files, OpenSSL for the secrets' authority and the gateway's TLS).
# ./dev.sh run and build install only these, so that a first run does not wait for the test tools.
RUN_PACKAGES=(build-essential cmake ninja-build pkg-config
              qt6-base-dev libqt6sql6-sqlite libarchive-dev libhttp-parser-dev libyaml-cpp-dev libssl-dev
              qt6-websockets-dev shared-mime-info "${IMAGE_PACKAGES[@]}")
# What the tests add: git and clang-format (format check), the peers' flows in the benchmark
# (python3-docker), the test Kubernetes API server and the official Kubernetes client that checks
# it (aiohttp, kubernetes, websocket-client, PyYAML, jsonschema), what the GUI tests need (Xvfb, a
# tray, xdotool to type, ImageMagick's import for screenshots, a font), the package checks
# (dpkg-dev, desktop-file-utils, appstream), headless Chromium for the run view's host test
# (e2e_view_browser), and the hardening tests: clang with libFuzzer and the
# sanitizer runtimes (llvm-14 for symbolised stacks), Podman with the init it needs for
# HostConfig.Init, and the extra engines of tests/engines (a private sshd, bridges made with ip,
# certificates made with openssl), and gVisor's runsc, which tests/engines registers with one of
# them (never with the user's engine). Node.js comes from Debian only where no node is installed.
TEST_PACKAGES=(git clang-format python3-docker
               python3-aiohttp python3-kubernetes python3-websocket python3-yaml python3-jsonschema
               xvfb trayer xdotool imagemagick fonts-dejavu-core chromium
               dpkg-dev desktop-file-utils appstream
               clang-14 libclang-rt-14-dev llvm-14 podman catatonit
               openssh-server openssh-client iproute2 openssl runsc)

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

APT_UPDATED=
install_packages() { # [images|tests] -- "images": only IMAGE_PACKAGES; "tests": the tests' as well
    local missing=() wanted=("${RUN_PACKAGES[@]}")
    case ${1:-} in
        images) wanted=("${IMAGE_PACKAGES[@]}") ;;
        tests) wanted+=("${TEST_PACKAGES[@]}") ;;
    esac
    for p in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ "${1:-}" = tests ]; then
        command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing Debian packages: ${missing[*]}"
        # Once per run: ./dev.sh run installs in two steps.
        if [ -z "$APT_UPDATED" ]; then
            as_root apt-get update -qq
            APT_UPDATED=1
        fi
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null
        # tests/engines runs an sshd of its own; the system one the package enables is not wanted
        if printf '%s\n' "${missing[@]}" | grep -qx openssh-server && command -v systemctl >/dev/null; then
            as_root systemctl disable --now ssh.service >/dev/null 2>&1 || true
        fi
    fi
}

engine_answers() {
    local sock=${DOCKER_HOST:-}
    sock=${sock#unix://}
    [ -n "${DOCKER_HOST:-}" ] || sock=$SOCKET
    curl -sf --max-time 3 --unix-socket "$sock" http://engine/_ping >/dev/null 2>&1
}

start_engine() {
    engine_answers && return 0
    if [ -n "${DOCKER_HOST:-}" ]; then
        echo "dev.sh: DOCKER_HOST=$DOCKER_HOST does not answer" >&2
        exit 1
    fi
    say "starting dockerd in the background (log: /var/log/code-sandbox-dockerd.log)"
    if command -v systemctl >/dev/null && systemctl is-system-running >/dev/null 2>&1; then
        as_root systemctl start docker || true
    fi
    if ! engine_answers; then
        as_root sh -c 'nohup dockerd >/var/log/code-sandbox-dockerd.log 2>&1 &'
    fi
    for _ in $(seq 1 60); do
        engine_answers && return 0
        sleep 1
    done
    echo "dev.sh: the Docker engine did not come up; see /var/log/code-sandbox-dockerd.log" >&2
    exit 1
}

# The engine this script started (or found) is the one the app and the tests use: a Podman
# socket that Debian's podman package may enable would otherwise be found first.
use_engine() {
    export DOCKER_HOST=${DOCKER_HOST:-unix://$SOCKET}
}

ALL_IMAGES=(python node bash gcc go java ruby r rust gateway)
# The image the first call needs (the demo's, and the window's first example). Node came along
# once, but on 2 cores its dpkg took a core from the python image and the compiler that the first
# answer waits for (bench/firstrun.sh: both finished at 175-180 s); it is the first of the others
# in the background (ALL_IMAGES' order), about a minute later.
FIRST_IMAGES=(python)

missing_images() { # IMAGE... -- prints those the engine does not have
    local image sources labels
    for image in "$@"; do
        if [ "$image" = gateway ]; then
            # Built from other sources (an older checkout): as good as missing, since the server
            # and the gateway grow one protocol together (gateway/sources-label.sh, the label
            # build-images.sh gives it).
            sources=$("$ROOT"/gateway/sources-label.sh)
            [ "$(as_root docker image inspect --format '{{index .Config.Labels "code-sandbox.sources"}}' \
                code-sandbox/gateway:latest 2>/dev/null)" = "$sources" ] || echo gateway
            continue
        fi
        # Missing, or carrying other versions of cs-run or its loader (an older checkout): such
        # an image works, but integration_containerpool fails on it, and build-images.sh
        # rebuilds it (loaders/image-scripts.sh: the label this checkout's scripts give). Or
        # built from another package list, without libraries the tools say it has
        # (image-packages.sh).
        labels=$(as_root docker image inspect --format \
            '{{index .Config.Labels "code-sandbox.scripts"}} {{index .Config.Labels "code-sandbox.packages"}}' \
            "code-sandbox/$image:latest" 2>/dev/null) || labels=
        [ "$labels" = "$("$ROOT/containers/loaders/image-scripts.sh" "$image") $("$ROOT/containers/image-packages.sh" "$image")" ] ||
            echo "$image"
    done
}

# Builds every image that is missing. If another build runs (./dev.sh run's in the background,
# say), build-images.sh waits for it and skips what it built.
build_images() {
    local missing
    mapfile -t missing < <(missing_images "${ALL_IMAGES[@]}")
    if [ ${#missing[@]} -gt 0 ]; then
        say "building sandbox images: ${missing[*]} (offline from Debian packages, a few minutes once)"
        as_root "$ROOT/containers/build-images.sh" --jobs 2 "${missing[@]}"
    fi
}

# ./dev.sh run: the first image from as soon as the engine and the image builder are installed,
# beside the rest of the packages (two dpkg, one core each) and then beside the app (the compiler
# wants the CPUs, dpkg also waits for the disk), so that the first call is answered as soon as
# both are there; then the other images in the background at the lowest priority.
# Starts build-images.sh for IMAGE... in the background, logging to LOG; IMAGES_PID is its pid.
start_images() { # LOG IMAGE...
    local log=$1
    shift
    # sudo asks for a password here, not from the background job.
    [ "$(id -u)" = 0 ] || sudo -v
    mkdir -p "$BUILD"
    as_root "$ROOT/containers/build-images.sh" --jobs 2 "$@" >"$log" 2>&1 &
    IMAGES_PID=$!
}
# Waits for the image build PID that logs to LOG; on failure shows the log's end and stops.
wait_images() { # PID LOG WHAT
    say "waiting for the $3 images"
    if ! wait "$1"; then
        tail -n 25 "$2" >&2
        echo "dev.sh: building the $3 images failed (log: $2)" >&2
        exit 1
    fi
    grep -E '^(built|code-sandbox/)' "$2" >&2 || true
}
# Every missing image, built while everything else builds (for the tests, which need them all).
build_with_images() {
    local missing pid=
    mapfile -t missing < <(missing_images "${ALL_IMAGES[@]}")
    if [ ${#missing[@]} -gt 0 ]; then
        say "building sandbox images meanwhile: ${missing[*]} (offline from Debian packages; log: $BUILD/images.log)"
        start_images "$BUILD/images.log" "${missing[@]}"
        pid=$IMAGES_PID
    fi
    install_npm
    build
    [ -z "$pid" ] || wait_images "$pid" "$BUILD/images.log" "${missing[*]}"
}
# ./dev.sh run starts the first images once the engine runs, before the rest of the packages
# (FIRST_MISSING: those it builds; FIRST_PID: that build).
FIRST_MISSING=()
FIRST_PID=
start_first_images() {
    mapfile -t FIRST_MISSING < <(missing_images "${FIRST_IMAGES[@]}")
    if [ ${#FIRST_MISSING[@]} -gt 0 ]; then
        say "building the ${FIRST_MISSING[*]} image(s) meanwhile (log: $BUILD/images-first.log)"
        start_images "$BUILD/images-first.log" "${FIRST_MISSING[@]}"
        FIRST_PID=$IMAGES_PID
    fi
}
build_for_run() {
    local rest
    build code-sandbox
    [ -z "$FIRST_PID" ] || wait_images "$FIRST_PID" "$BUILD/images-first.log" "${FIRST_MISSING[*]}"
    mapfile -t rest < <(missing_images "${ALL_IMAGES[@]}")
    if [ ${#rest[@]} -gt 0 ]; then
        say "building the other images in the background: ${rest[*]} (log: $BUILD/images-background.log)"
        # Detached (setsid, nohup): it outlives this script, which becomes the app.
        as_root setsid nohup nice -n 19 ionice -c 2 -n 7 \
            "$ROOT/containers/build-images.sh" "${rest[@]}" \
            </dev/null >"$BUILD/images-background.log" 2>&1 &
    fi
}

install_npm() {
    local dir
    for dir in "$ROOT/tests/e2e" "$ROOT/tests/clients" "$ROOT/tests/conformance" "$ROOT/bench"; do
        [ -f "$dir/package-lock.json" ] || continue
        if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
            say "installing test packages from npm (${dir#$ROOT/})"
            (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
        fi
    done
}

build() { # [TARGET] -- everything by default
    say "building ${1:-everything} in $BUILD"
    # CODE_SANDBOX_UNITY: the app's own code in unity batches (about 95 s instead of 150 s for the
    # app on 2 cores); CODE_SANDBOX_PCH: its Qt Core headers precompiled once (12% less CPU for
    # the app). See CMakeLists.txt.
    # (Its notes, such as a test left out for want of node, are in the log; shown when it fails.)
    mkdir -p "$BUILD"
    if ! cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCODE_SANDBOX_UNITY=ON -DCODE_SANDBOX_PCH=ON >"$BUILD/configure.log" 2>&1; then
        cat "$BUILD/configure.log" >&2
        exit 1
    fi
    cmake --build "$BUILD" ${1:+--target "$1"}
}

demo() {
    local bin=$BUILD/bin/code-sandbox
    "$bin" --version
    say "a first call through the MCP server (stdio): run_python_code"
    printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"dev.sh","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_python_code","arguments":{"code":"import platform, numpy\nprint(\"Hello from the sandbox:\", platform.python_version(), \"numpy\", numpy.__version__)"}}}' |
        "$bin" --stdio | sed -n 2p
    echo
    "$bin" --help
    cat <<MSG

Configure your MCP client to start:  $bin --stdio
(for example: claude mcp add code-sandbox -- $bin --stdio)
On a desktop, '$bin' without arguments opens the window, which shows every run.
MSG
}

cmd=${1:-run}
[ $# -gt 0 ] && shift
case $cmd in
    run)
        install_packages images; start_engine; use_engine; start_first_images
        install_packages; build_for_run
        if [ $# -gt 0 ]; then exec "$BUILD/bin/code-sandbox" "$@"
        elif [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then exec "$BUILD/bin/code-sandbox"
        else demo; fi ;;
    test)
        install_packages tests; start_engine; use_engine
        # The clang tree of the fuzz and sanitized tests (hundreds of ASan objects: the longest
        # build here) builds from now on at idle priority (SCHED_IDLE: it gets only CPU time that
        # nothing else wants), beside the images and the build (which overlap: the images wait
        # on downloads and the disk much of the time), and then the engine tests, which spend
        # much of their time waiting on containers. It takes nothing from them that they would
        # use, and the tests that need it run once it is done. Should it fail, its test
        # (hardening_build) builds again and says why.
        say "building the hardening tests' clang tree meanwhile, at idle priority (log: $BUILD/hardening-build.log)"
        mkdir -p "$BUILD"
        setsid chrt --idle 0 ionice -c3 nice -n 19 "$ROOT/tests/sanitize/run-sanitized.sh" \
            --build-dir "$BUILD/hardening-build" --build-only >"$BUILD/hardening-build.log" 2>&1 &
        hardening=$!
        # (The || true: under set -e a kill that finds nothing left would fail the run.)
        trap 'kill -- "-$hardening" 2>/dev/null || true' EXIT
        build_with_images
        cd "$BUILD"
        # Fuzzing time per target in this run (run-fuzzers.sh's own default is 60 s).
        export FUZZ_SECONDS=${FUZZ_SECONDS:-30}
        # Two at a time: tests that use the engine hold the lock "docker" and so still run one
        # after another; the others (unit, style, GUI widgets, conformance fixtures) run beside
        # them. integration_podman runs this build's engine tests on Podman; the sanitized test
        # runs them there already (built with ASan+UBSan), so it is left out here.
        say "running the tests (the clang tree goes on building at idle priority)"
        failed=0
        ctest --output-on-failure --timeout 1500 -j2 -LE 'podman|hardening' || failed=1
        say "waiting for the hardening tests' clang tree"
        wait "$hardening" || say "the clang tree did not build; hardening_build will say why"
        say "running the hardening tests: fuzzing, the unit and engine tests under ASan+UBSan"
        ctest --output-on-failure --timeout 1500 -L hardening -LE podman || failed=1
        [ "$failed" = 0 ] || say "some tests failed: see above (both ctest runs)"
        exit "$failed" ;;
    hardening)
        install_packages tests; start_engine; use_engine; build_images; build
        say "the hardening tests: fuzz targets, sanitized unit and engine tests, Podman"
        cd "$BUILD" && ctest --output-on-failure --timeout 1500 -L hardening ;;
    screenshots)
        install_packages tests; start_engine; use_engine; build_images; build
        "$ROOT/tests/gui/desktop.sh" "$BUILD/bin" "$ROOT/docs/screenshots" ;;
    build)
        install_packages; build ;;
    *)
        sed -n '2,22p' "$0" >&2; exit 2 ;;
esac
