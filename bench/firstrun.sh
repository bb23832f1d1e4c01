#!/bin/bash
# How long a new user waits for the first answer: ./dev.sh run on a fresh Debian 12 machine, from
# a fresh clone of this repository's HEAD to the answer of its first call.
#
#   bench/firstrun.sh [--log FILE]
#
# The "fresh machine" is a container made from a Debian 12 minbase root (code-sandbox/bash:
# debootstrap --variant=minbase bookworm, plus jq, bc and gawk), with nothing else: no build tools,
# no Qt, no engine, no sandbox image, no image cache. ./dev.sh run installs the packages from the
# Debian mirror, starts a dockerd of its own inside (its data root on an empty volume), builds the
# images and the app, and answers its first call there. It shares this machine's kernel, CPUs and
# network, so run it with nothing else busy. Prints the seconds to each step and to the answer, the
# steps of the first image's build (python; dev.sh's build/images-first.log, kept as
# FILE-images.log beside the log) and the 1-minute load average before and after.
#
# Needs root, this machine's engine, the code-sandbox/bash image and a reachable Debian mirror.
# The engine inside needs most capabilities; they are added one by one rather than with
# --privileged, which fails on machines that lack one (some VMs do not grant CAP_SYS_RESOURCE).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
IMAGE=code-sandbox/bash:latest
LOG=

while [ $# -gt 0 ]; do
    case $1 in
        --log) LOG=$2; shift 2 ;;
        -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "firstrun.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
docker image inspect "$IMAGE" > /dev/null 2>&1 ||
    { echo "firstrun.sh: needs the $IMAGE image (containers/build-images.sh bash)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/cs-firstrun-XXXXXX)
NAME=cs-firstrun-$$
VOLUME=cs-firstrun-$$
LOG=${LOG:-$WORK/run.log}
cleanup() {
    docker rm -f "$NAME" > /dev/null 2>&1 || true
    docker volume rm "$VOLUME" > /dev/null 2>&1 || true
    rm -rf "$WORK/src"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

git clone -q "$ROOT" "$WORK/src"
echo "firstrun: a fresh clone of $(git -C "$WORK/src" rev-parse --short HEAD) in $WORK/src" >&2

# The capabilities this machine can grant (its bounding set), by name.
NAMES=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE
       NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO
       SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME
       SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG
       WAKE_ALARM BLOCK_SUSPEND AUDIT_READ)
bound=$((16#$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
caps=()
for i in "${!NAMES[@]}"; do
    if (((bound >> i) & 1)); then caps+=(--cap-add "${NAMES[$i]}"); fi
done

cat > "$WORK/inside.sh" << 'EOF'
#!/bin/bash
cd /src
start=$(date +%s.%N)
./dev.sh run 2>&1 | while IFS= read -r line; do
    printf '%7.1f %s\n' "$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { print n - s }')" "$line"
done
EOF
chmod +x "$WORK/inside.sh"
docker volume create "$VOLUME" > /dev/null

echo "firstrun: ./dev.sh run in a fresh Debian 12 container (log: $LOG)" >&2
load_before=$(cut -d' ' -f1 /proc/loadavg)
t0=$SECONDS
# A fresh machine's /run and /tmp are empty; /var/lib/docker is a volume because the engine
# inside cannot put overlay mounts on the container's own overlay root.
docker run --rm --name "$NAME" "${caps[@]}" \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    --security-opt systempaths=unconfined -v /sys/fs/cgroup:/sys/fs/cgroup:rw \
    --network bridge -u 0 --entrypoint "" \
    -v "$VOLUME:/var/lib/docker" -v "$WORK/src:/src" -v "$WORK/inside.sh:/inside.sh:ro" \
    --tmpfs /run:exec --tmpfs /tmp:exec \
    "$IMAGE" /inside.sh > "$LOG" 2>&1 || true
echo "firstrun: the container ran for $((SECONDS - t0)) s" >&2
load_after=$(cut -d' ' -f1 /proc/loadavg)
IMAGES_LOG=${LOG%.log}-images.log
cp "$WORK/src/build/images-first.log" "$IMAGES_LOG" 2> /dev/null || true

# The steps (dev.sh's "==>" lines) and the answer, with their times.
sed -n 's/\x1b\[[0-9;]*m//g; /==>\|^ *[0-9.]* built /p' "$LOG" | cut -c1-160
if [ -s "$IMAGES_LOG" ]; then
    echo "firstrun: the first image's steps (log: $IMAGES_LOG):"
    grep '^\[[0-9]*/[0-9]*\]' "$IMAGES_LOG" | cut -c1-160
fi
echo "firstrun: 1-minute load average $load_before before, $load_after after"
answer=$(grep -m1 '"result":{"content":\[{"text":"Hello from the sandbox' "$LOG" || true)
if [ -z "$answer" ]; then
    tail -n 30 "$LOG" >&2
    echo "firstrun: no answer to the first call (log: $LOG)" >&2
    exit 1
fi
seconds=$(awk '{ print $1 }' <<< "$answer")
echo "firstrun: first answer after $seconds s ($(awk -v s="$seconds" 'BEGIN { printf "%d min %02d s", s / 60, s % 60 }'))"
