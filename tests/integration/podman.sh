#!/bin/bash
# Runs the integration suite against Podman's Docker-compatible API: the same test executables
# that run against Docker, pointed at a `podman system service` socket by DOCKER_HOST. Any
# difference between the engines is the engine client's to handle (core/engine/enginedialect.*),
# never the tests'.
#
#   tests/integration/podman.sh --bin DIR --work DIR [TEST...]
#
#   --bin DIR    where the test executables are (tst_sandboxservice, ...)
#   --work DIR   the service's socket, its configuration and log go here
#   TEST...      executables to run (default: the integration suite and the engine-outage test)
#   --list       print the default executables, one a line, and exit (the sanitized build builds
#                what this list names: tests/fuzz/clang-build.sh)
#
# Podman 4.3 from Debian runs here only with runc and cgroupfs (crun refuses this machine's
# cgroup setup), set in a containers.conf of our own. The sandbox images are copied from Docker's
# store (docker save | podman load) when Podman lacks them or has another build of them. At the
# end no container or volume of ours may be left in Podman. Exits non-zero on any failure.
set -uo pipefail

BIN=
WORK=
TESTS=()
LIST=
while [ $# -gt 0 ]; do
    case $1 in
    --bin) BIN=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --list) LIST=1; shift ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "podman.sh: unknown option $1" >&2; exit 2 ;;
    *) TESTS+=("$1"); shift ;;
    esac
done
# An entry may name test functions after the binary: "tst_x fn1 fn2" runs only those.
DEFAULT_TESTS=(tst_sandboxservice tst_containerpool tst_abuse tst_egress tst_secrets tst_workspaces
    tst_snapshots
    "tst_gatewayattacks hostsAndTargetsAreTheAllowedOnes aCredentialWorksOnlyInItsSandbox"
    tst_engineoutage)
if [ -n "$LIST" ]; then
    for t in "${DEFAULT_TESTS[@]}"; do echo "${t%% *}"; done
    exit 0
fi
[ -n "$BIN" ] && [ -n "$WORK" ] || { echo "usage: podman.sh --bin DIR --work DIR [TEST...]" >&2; exit 2; }
[ ${#TESTS[@]} -gt 0 ] || TESTS=("${DEFAULT_TESTS[@]}")
IMAGES=(python node bash gateway) # what those tests run
# Every executable first: one that was not built is a failure said at once, not after the others.
for t in "${TESTS[@]}"; do
    [ -x "$BIN/${t%% *}" ] || { echo "podman.sh: $BIN/${t%% *} was not built" >&2; exit 1; }
done

say() { printf '==> %s\n' "$*"; }
fail() { echo "podman.sh: $*" >&2; exit 1; }

command -v podman >/dev/null ||
    fail "podman is not installed (Debian: apt-get install podman catatonit; ./dev.sh installs them)"
[ -x /usr/libexec/podman/catatonit ] ||
    fail "catatonit is not installed: Podman needs it for HostConfig.Init (apt-get install catatonit)"

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
SOCK=$WORK/podman.sock
export CONTAINERS_CONF=$WORK/containers.conf
cat >"$CONTAINERS_CONF" <<'EOF'
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
EOF

ping() { curl -sf --max-time 3 --unix-socket "$SOCK" http://podman/_ping >/dev/null 2>&1; }

rm -f "$SOCK"
podman system service --time=0 "unix://$SOCK" >"$WORK/service.log" 2>&1 &
SERVICE=$!
trap 'kill "$SERVICE" 2>/dev/null; wait "$SERVICE" 2>/dev/null' EXIT
for _ in $(seq 1 100); do
    ping && break
    kill -0 "$SERVICE" 2>/dev/null || { cat "$WORK/service.log" >&2; fail "podman system service exited"; }
    sleep 0.1
done
ping || { cat "$WORK/service.log" >&2; fail "podman system service did not answer on $SOCK"; }
say "Podman $(podman version --format '{{.Server.Version}}' 2>/dev/null) serving $SOCK"

# The images: Docker's build, copied when Podman has none or another (the ids are the same
# config digest in both stores).
for lang in "${IMAGES[@]}"; do
    image=code-sandbox/$lang:latest
    want=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null) ||
        fail "Docker has no $image to copy (containers/build-images.sh $lang builds it)"
    have=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null)
    if [ "sha256:${have#sha256:}" != "$want" ]; then
        say "copying $image from Docker to Podman"
        docker save "$image" | podman load -q >/dev/null || fail "could not copy $image"
    fi
done

# (Every container, volume and network of ours carries the label code-sandbox=1.)
leftovers() {
    podman ps -a -q --filter label=code-sandbox
    podman volume ls -q --filter label=code-sandbox
    podman network ls -q --filter label=code-sandbox
}
before=$(leftovers | sort)

failed=()
for t in "${TESTS[@]}"; do
    say "$t on Podman"
    start=$(date +%s)
    read -ra run <<<"$t"
    if DOCKER_HOST=unix://$SOCK "$BIN/${run[0]}" "${run[@]:1}"; then
        say "$t passed on Podman in $(($(date +%s) - start)) s"
    else
        failed+=("$t")
    fi
done

# gVisor on Podman: its Docker-compatible API ignores a container's HostConfig.Runtime, so the
# only way is Podman's default runtime. A second service whose default is runsc (through a
# wrapper: containers.conf takes a runtime's path, not its arguments, and Debian's runsc runs a
# --network none container only with --network=none), and the test that expects gVisor there.
if [ -x /usr/bin/runsc ]; then
    GVISOR_SOCK=$WORK/podman-gvisor.sock
    cat >"$WORK/runsc-nonet" <<'EOF2'
#!/bin/sh
exec /usr/bin/runsc --network=none "$@"
EOF2
    chmod +x "$WORK/runsc-nonet"
    cat >"$WORK/containers-gvisor.conf" <<EOF2
[engine]
runtime = "runsc"
cgroup_manager = "cgroupfs"

[engine.runtimes]
runsc = ["$WORK/runsc-nonet"]
EOF2
    rm -f "$GVISOR_SOCK"
    CONTAINERS_CONF=$WORK/containers-gvisor.conf \
        podman system service --time=0 "unix://$GVISOR_SOCK" >"$WORK/service-gvisor.log" 2>&1 &
    GVISOR_SERVICE=$!
    trap 'kill "$SERVICE" "$GVISOR_SERVICE" 2>/dev/null; wait "$SERVICE" "$GVISOR_SERVICE" 2>/dev/null' EXIT
    for _ in $(seq 1 100); do
        curl -sf --max-time 3 --unix-socket "$GVISOR_SOCK" http://podman/_ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    say "tst_sandboxservice runsUnderTheEnginesGvisor on Podman with runsc as its default runtime"
    if CS_EXPECT_GVISOR=1 DOCKER_HOST=unix://$GVISOR_SOCK "$BIN/tst_sandboxservice" \
        runsUnderTheEnginesGvisor; then
        say "gVisor on Podman passed"
    else
        failed+=("gvisor")
    fi
    kill "$GVISOR_SERVICE" 2>/dev/null
    wait "$GVISOR_SERVICE" 2>/dev/null
fi

after=$(leftovers | sort)
left=$(comm -13 <(echo "$before") <(echo "$after"))
if [ -n "$left" ]; then
    echo "podman.sh: left behind in Podman:" >&2
    echo "$left" >&2
    failed+=("leftovers")
fi
[ ${#failed[@]} -eq 0 ] || fail "failed on Podman: ${failed[*]}"
say "all passed on Podman: ${TESTS[*]}"
