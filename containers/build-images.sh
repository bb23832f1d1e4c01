#!/bin/bash
# Builds the sandbox images code-sandbox/<image>:latest.
#
# Default path needs no image registry, only a Debian mirror: debootstrap a minbase rootfs once
# (cached), bring a copy of it up to date once per run, then per image copy that, apt-get install
# the language packages in a chroot and `docker import` the result. With
# CODE_SANDBOX_USE_DOCKERFILES=1 the Dockerfiles beside this script are tried first, for
# machines that do reach a registry.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The images, their Debian packages and environment, and which language names and aliases pick
# them, come from the server's language table (which is also compiled into the server).
LANGUAGES_JSON=${CODE_SANDBOX_LANGUAGES:-$HERE/../resources/languages.json}

# Answers QUERY from the language table: images | usage | packages IMAGE | env IMAGE |
# stubs IMAGE | image-of NAME (an image, language or alias; fails for an unknown one).
table() { # QUERY [ARG]
    python3 - "$LANGUAGES_JSON" "$@" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    table = json.load(f)
query, args = sys.argv[2], sys.argv[3:]
images = table["images"]
def names_of(image):
    names = []
    for lang in table["languages"]:
        if lang["image"] == image["name"]:
            names += [n for n in [lang["name"]] + lang.get("aliases", []) if n != image["name"]]
    return names + image.get("aliases", [])
def find(name):
    return next((i for i in images if i["name"] == name), None)
if query == "images":
    print(" ".join(i["name"] for i in images))
elif query == "usage":
    print(", ".join(i["name"] + (" (" + ", ".join(names_of(i)) + ")" if names_of(i) else "")
                    for i in images))
elif query in ("packages", "env", "stubs"):
    image = find(args[0])
    if image is None:
        sys.exit(1)
    print(" ".join(image.get(query, [])))
elif query == "image-of":
    word = args[0].lower()
    image = next((i for i in images if word == i["name"] or word in names_of(i)), None)
    if image is None:
        sys.exit(1)
    print(image["name"])
else:
    sys.exit(2)
PY
}

command -v python3 > /dev/null || { echo "build-images.sh: python3 is needed" >&2; exit 1; }
read -r -a ALL_IMAGES <<< "$(table images)"
# Not a language: the allow-list network mode's egress gateway (gateway/, beside containers/).
GATEWAY_IMAGE=gateway
ALL_IMAGES+=("$GATEWAY_IMAGE")

usage() {
    cat <<EOF
usage: build-images.sh [--force] [--refresh-base] [--jobs N] [--engine ADDRESS]
                       [--push REGISTRY/PREFIX] [image...]

images (aliases; none = all):
$(table usage | fold -s -w 94 | sed 's/ *$//; s/^/  /')
  gateway (the egress gateway of --egress runs, not a language; built with the host's c++)

  --force         rebuild images that already exist
  --refresh-base  debootstrap the cached base rootfs again
  --jobs N        build N images at a time (default 1; dpkg is single-threaded, so up to the
                  number of CPUs helps)
  --engine ADDRESS
                  put the images on that engine instead of the local one: an image the local
                  engine already has is copied (docker save | docker load, much faster than a
                  build; not with --force), any other is built there. ADDRESS is
                    unix:///PATH        a local socket
                    tcp://HOST:PORT     with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH as the
                                        docker CLI reads them
                    ssh://[USER@]HOST[:PORT][/SOCKET]
                                        ssh HOST docker [--host unix://SOCKET] ..., with
                                        CODE_SANDBOX_SSH_CONFIG as the ssh client's config
                    context:NAME        a docker CLI context
                  Through ssh, HOST needs the docker CLI. Building (not copying) needs root.
  --push REGISTRY/PREFIX
                  then tag each image as REGISTRY/PREFIX/code-sandbox/NAME:latest and push it
                  (docker push, with the engine's own registry login), for clusters that pull
                  from a registry: run the server with --image-prefix REGISTRY/PREFIX

environment:
  CODE_SANDBOX_CACHE            cache and log directory (default /var/cache/code-sandbox)
  CODE_SANDBOX_IMAGE_STATUS     where each image's build status is written for the server
                                (default /run/code-sandbox-images; see "Build status" below)
  CODE_SANDBOX_MIRROR           Debian mirror (default http://deb.debian.org/debian)
  CODE_SANDBOX_SECURITY_MIRROR  (default http://deb.debian.org/debian-security)
  CODE_SANDBOX_USE_DOCKERFILES  1 = try \`docker build\` with the Dockerfiles first
  CODE_SANDBOX_JOBS             default for --jobs
  CODE_SANDBOX_LANGUAGES        the language table (default ../resources/languages.json)
  CODE_SANDBOX_SSH_CONFIG       ssh client config for --engine ssh://... (default: ssh's own)
  DOCKER                        docker client to use (default docker)

One build runs at a time (a lock in the cache directory): a second one waits for it, then
skips the images the first has built.

Build status: while it builds, IMAGE.status in the status directory holds KEY=VALUE lines,
  state=queued|building|failed  image=IMAGE  engine=ADDRESS  pid=PID (of this script)
  started=EPOCH  expected=EPOCH (when it should be done)  log=PATH
written atomically and removed once the image is there; the server reads it to say that an
image is being built and when it should be ready.
EOF
}

SUITE=bookworm
MIRROR=${CODE_SANDBOX_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${CODE_SANDBOX_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
CACHE=${CODE_SANDBOX_CACHE:-/var/cache/code-sandbox}
DOCKER=${DOCKER:-docker}
BASE_TAR=$CACHE/$SUITE-minbase.tar
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Read-only data the images carry for the server (e.g. matplotlib's font list).
SHARE=/usr/local/share/code-sandbox
# Where the server looks for the build status of each image. In /run: root's alone to write, so
# nobody can plant a status (or a symlink) there, and gone after a reboot with the builds it
# described.
STATUS_DIR=${CODE_SANDBOX_IMAGE_STATUS:-/run/code-sandbox-images}

packages_for() { # IMAGE
    table packages "$1"
}

# Packages that IMAGE's packages depend on but need only to be built (python3-scipy's
# python3-pythran): an empty package provides them instead (stub-package.sh).
stubs_for() { # IMAGE
    table stubs "$1"
}

env_for() { # IMAGE
    echo "PATH=$CHROOT_PATH" HOME=/sandbox LANG=C.UTF-8
    table env "$1"
}

# Runs in the chroot (with /proc) after the packages are installed; output goes to the log.
post_install() { # ROOT IMAGE
    local root=$1 image=$2
    case $image in
        python)
            # matplotlib scans the fonts on first import (several seconds); do it once here.
            install -d -m 0755 "$root$SHARE/matplotlib"
            in_chroot "$root" env MPLCONFIGDIR="$SHARE/matplotlib" MPLBACKEND=Agg \
                python3 -c 'import matplotlib.font_manager'
            ls "$root$SHARE"/matplotlib/fontlist-*.json > /dev/null
            # The loader compiled by this image's Python (see loaders/install-python-loader.sh):
            # compiling it would cost every sandbox 3 ms of CPU.
            install -m 0644 "$HERE/loaders/python-loader.py" "$root/tmp/cs-python-loader.py"
            install -m 0755 "$HERE/loaders/install-python-loader.sh" "$root/tmp/cs-install-loader.sh"
            in_chroot "$root" /tmp/cs-install-loader.sh /tmp/cs-python-loader.py
            rm -f "$root/tmp/cs-python-loader.py" "$root/tmp/cs-install-loader.sh"
            chmod -R a+rX,go-w "$root$SHARE"
            ;;
        go)
            # Debian ships the standard library compiled with cgo; with CGO_ENABLED=0 net,
            # os/user and everything above them (net/http, …) would be stale and recompiled
            # into the per-run GOCACHE (~8 s). Reinstall them as the runs will use them.
            in_chroot "$root" env CGO_ENABLED=0 GOCACHE=/tmp/go-build-cache GOFLAGS= \
                go install std
            rm -rf "$root/tmp/go-build-cache"
            # The standard library's tests and Go's own test suite are never built here.
            find "$root"/usr/share/go-*/src -type d -name testdata -prune -exec rm -rf {} +
            find "$root"/usr/share/go-*/src -type f -name '*_test.go' -delete
            rm -rf "$root"/usr/share/go-*/test
            # Compiled cmd/... packages (140 MB) only serve to rebuild the toolchain itself.
            rm -rf "$root"/usr/lib/go-*/pkg/linux_*/cmd
            ;;
        java)
            # A CDS archive of the classes javac loads cuts its startup by about a third:
            # javac -J-XX:SharedArchiveFile=$SHARE/java/javac.jsa … (a JVM that cannot use
            # the archive, e.g. after a JDK update, silently runs without it).
            install -d -m 0755 "$root$SHARE/java" "$root/tmp/cds"
            install -m 0644 "$HERE/java-cds/Main.java" "$root/tmp/cds/Main.java"
            in_chroot "$root" javac -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 \
                "-J-XX:ArchiveClassesAtExit=$SHARE/java/javac.jsa" -d /tmp/cds /tmp/cds/Main.java
            in_chroot "$root" java -cp /tmp/cds Main
            rm -rf "$root/tmp/cds"
            chmod -R a+rX,go-w "$root$SHARE"
            ;;
    esac
}

# --- progress and failure reporting -------------------------------------------------------

JOBS=${CODE_SANDBOX_JOBS:-1}
LOG=
STEP=
STEP_TAG=
STEP_T0=0
TMPDIRS=()
JOB_PIDS=()

# One image at a time, a step's line is printed when it begins and completed when it ends; with
# parallel jobs each step prints one whole line when it ends, so that lines do not interleave.
step_begin() { # NUMBER TOTAL TEXT
    STEP="$3"
    STEP_TAG="[$1/$2]"
    STEP_T0=$SECONDS
    [ "$JOBS" -gt 1 ] || printf '%s %s … ' "$STEP_TAG" "$STEP" >&2
}

step_result() { # TEXT [FD] -- ends the current step's line
    local fd=${2:-2}
    if [ "$JOBS" -gt 1 ]; then
        printf '%s %s … %s\n' "$STEP_TAG" "$STEP" "$1" >&"$fd"
    else
        printf '%s\n' "$1" >&"$fd"
    fi
    STEP=
}

step_end() {
    step_result "($((SECONDS - STEP_T0)) s)"
}

die() {
    echo "build-images.sh: $*" >&2
    exit 1
}

# --- build status for the server ---------------------------------------------------------------

# The images this run builds (empty until the lock is held), with when each should be done;
# STATUS_QUEUE keeps them all in order (a parallel job's STATUS_IMAGES is its own image).
STATUS_IMAGES=()
STATUS_QUEUE=()
STATUS_OWNER=$$
STATUS_ENGINE=
# Seconds an image took the last time it was built here ($CACHE/durations), else what it took
# from a fresh cache on a loaded 2-core machine (python and node two at a time), for the
# server's "about N s left".
estimate_for() { # IMAGE
    local s
    s=$(cat "$CACHE/durations/$1" 2> /dev/null || true)
    case $s in '' | *[!0-9]*) ;; *) echo "$s"; return ;; esac
    case $1 in
        python) echo 140 ;;
        node) echo 125 ;;
        go) echo 70 ;;
        r | rust) echo 45 ;;
        "$GATEWAY_IMAGE") echo 20 ;;
        *) echo 30 ;;
    esac
}

status_write() { # IMAGE STATE STARTED EXPECTED
    local file=$STATUS_DIR/$1.status
    [ -d "$STATUS_DIR" ] || return 0
    if printf 'state=%s\nimage=%s\nengine=%s\npid=%s\nstarted=%s\nexpected=%s\nlog=%s\n' \
        "$2" "$1" "$STATUS_ENGINE" "$STATUS_OWNER" "$3" "$4" "${LOG:-}" > "$file.new.$BASHPID"
    then
        mv -f "$file.new.$BASHPID" "$file" || true
    fi
}

status_remove() { # IMAGE
    rm -f "$STATUS_DIR/$1.status"
}

# Marks every image of this run queued, each expected after those before it (JOBS at a time).
status_queue() {
    local image now total=0
    now=$(date +%s)
    mkdir -p "$STATUS_DIR" 2> /dev/null || true
    chmod 0755 "$STATUS_DIR" 2> /dev/null || true
    for image in "${STATUS_IMAGES[@]}"; do
        total=$((total + $(estimate_for "$image")))
        status_write "$image" queued "$now" $((now + (total + JOBS - 1) / JOBS))
    done
}

# Once IMAGE's build begins, those still queued behind it are expected after it.
status_requeue_after() { # IMAGE NOW
    local image behind=0 total file started
    total=$(estimate_for "$1")
    for image in "${STATUS_QUEUE[@]+"${STATUS_QUEUE[@]}"}"; do
        if [ "$image" = "$1" ]; then
            behind=1
            continue
        fi
        file=$STATUS_DIR/$image.status
        if [ "$behind" = 0 ] || ! [ -f "$file" ] || ! grep -qx 'state=queued' "$file" \
            || ! grep -qx "pid=$STATUS_OWNER" "$file"; then
            continue
        fi
        total=$((total + $(estimate_for "$image")))
        started=$(sed -n 's/^started=//p' "$file")
        status_write "$image" queued "${started:-$2}" $(($2 + (total + JOBS - 1) / JOBS))
    done
}

# A build stopped before its end: what it was building failed, what it had not begun is no
# longer coming. Files of images already built are gone; those of another run are left alone.
status_abandon() {
    local image file
    for image in "${STATUS_IMAGES[@]+"${STATUS_IMAGES[@]}"}"; do
        file=$STATUS_DIR/$image.status
        if ! [ -f "$file" ] || ! grep -qx "pid=$STATUS_OWNER" "$file"; then
            continue
        fi
        if grep -qx 'state=building' "$file"; then
            sed -i 's/^state=building$/state=failed/' "$file" || true
        elif grep -qx 'state=queued' "$file"; then
            rm -f "$file"
        fi
    done
}

# --- the engine the images go to ------------------------------------------------------------

ENGINE=
ENGINE_ARGS=()   # docker CLI options that pick the engine (none: the local one, as ever)
ENGINE_SSH=()    # ssh … HOST, when the engine is reached through ssh
ENGINE_REMOTE=() # the docker command run on that host

# Docker's own ssh:// support cannot name a socket or an ssh config; the server's engine client
# reaches such an engine the same way as here (ssh HOST docker --host unix://SOCKET ...).
parse_engine() { # ADDRESS
    local address=$1 rest hostport host user='' port='' path=''
    case $address in
        unix:///* | tcp://?*) ENGINE_ARGS=(--host "$address") ;;
        context:?*) ENGINE_ARGS=(--context "${address#context:}") ;;
        ssh://?*)
            rest=${address#ssh://}
            hostport=${rest%%/*}
            [ "$hostport" = "$rest" ] || path=/${rest#*/}
            if [[ $hostport == *@* ]]; then
                user=${hostport%%@*}
                hostport=${hostport#*@}
            fi
            if [[ $hostport =~ ^\[([^]]+)\](:([0-9]+))?$ ]]; then
                host=${BASH_REMATCH[1]}
                port=${BASH_REMATCH[3]}
            elif [[ $hostport =~ ^([^:]+)(:([0-9]+))?$ ]]; then
                host=${BASH_REMATCH[1]}
                port=${BASH_REMATCH[3]}
            else
                die "--engine $address: cannot read the host and port"
            fi
            ENGINE_SSH=(ssh -T -o BatchMode=yes -o ConnectTimeout=10)
            [ -z "${CODE_SANDBOX_SSH_CONFIG:-}" ] || ENGINE_SSH+=(-F "$CODE_SANDBOX_SSH_CONFIG")
            [ -z "$user" ] || ENGINE_SSH+=(-l "$user")
            [ -z "$port" ] || ENGINE_SSH+=(-p "$port")
            ENGINE_SSH+=(-- "$host")
            ENGINE_REMOTE=(docker)
            [ -z "$path" ] || ENGINE_REMOTE+=(--host "unix://$path")
            ;;
        *) die "--engine wants unix:///PATH, tcp://HOST:PORT, ssh://[USER@]HOST[:PORT][/SOCKET] or context:NAME, not '$address'" ;;
    esac
    ENGINE=$address
}

# The docker CLI against the engine the images go to.
engine() { # ARG...
    if [ "${#ENGINE_SSH[@]}" -gt 0 ]; then
        # ssh hands the remote shell one string; each word is quoted for it.
        "${ENGINE_SSH[@]}" "$(printf '%q ' "${ENGINE_REMOTE[@]}" "$@")"
    else
        "$DOCKER" "${ENGINE_ARGS[@]+"${ENGINE_ARGS[@]}"}" "$@"
    fi
}

# The docker CLI against the local engine, where copies come from. DOCKER_TLS_VERIFY and
# DOCKER_CERT_PATH are meant for a tcp:// --engine; the CLI would apply them to a local socket too.
local_docker() { # ARG...
    case ${DOCKER_HOST:-unix://} in
        unix://*) env -u DOCKER_TLS_VERIFY -u DOCKER_CERT_PATH "$DOCKER" "$@" ;;
        *) "$DOCKER" "$@" ;;
    esac
}

# Removes a temporary tree; a mount left inside it (e.g. the chroot's /proc after a failed step)
# is detached first so that rm can never reach into the host's /proc or /dev.
remove_tree() {
    local dir=$1 mnt
    [ -e "$dir" ] || return 0
    awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r \
        | while read -r mnt; do umount -l "$mnt" || true; done
    rm -rf --one-file-system "$dir"
}

# A signal trap runs inside the redirection of the interrupted step, whose stderr is the log;
# fd 3 keeps the terminal's stderr for the failure report.
exec 3>&2

on_exit() {
    local rc=$? dir pid step
    if [ "$rc" -ne 0 ] && [ -n "$STEP" ]; then
        step=$STEP
        step_result FAILED 3
        {
            echo "build-images.sh: step \"$step\" failed (exit $rc)."
            if [ -n "$LOG" ] && [ -s "$LOG" ]; then
                echo "build-images.sh: last lines of the log $LOG:"
                tail -n 15 "$LOG" | sed 's/^/    /'
            fi
        } >&3
    fi
    # Parallel jobs still running clean up after themselves when told to stop.
    for pid in "${JOB_PIDS[@]+"${JOB_PIDS[@]}"}"; do
        kill -TERM "$pid" 2> /dev/null || true
    done
    for pid in "${JOB_PIDS[@]+"${JOB_PIDS[@]}"}"; do
        wait "$pid" 2> /dev/null || true
    done
    for dir in "${TMPDIRS[@]+"${TMPDIRS[@]}"}"; do
        remove_tree "$dir"
    done
    [ "$rc" -eq 0 ] || status_abandon
    exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

new_tmpdir() { # VARIABLE PREFIX -- sets VARIABLE to a new directory that the EXIT trap removes
    local dir
    dir=$(mktemp -d "$CACHE/tmp/$2.XXXXXX")
    TMPDIRS+=("$dir")
    printf -v "$1" '%s' "$dir"
}

# --- rootfs work (output goes to the log) --------------------------------------------------

in_chroot() { # ROOT CMD...
    local root=$1
    shift
    chroot "$root" /usr/bin/env -i PATH="$CHROOT_PATH" HOME=/root LC_ALL=C \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# No /dev/pts is mounted in the chroot, so dpkg must not want a pty.
apt() { # ROOT ARG...
    local root=$1
    shift
    in_chroot "$root" apt-get -o Dpkg::Use-Pty=0 "$@"
}

# Some maintainer scripts need /proc (the JDK's refuse to run without it). It is mounted only
# while packages are installed; remove_tree detaches it if a step fails in between.
mount_proc() { # ROOT
    mount -t proc -o nosuid,nodev,noexec proc "$1/proc"
}

umount_proc() { # ROOT
    umount "$1/proc"
}

make_base() { # ROOT
    local root=$1
    debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR"
    cat > "$root/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
EOF
    # Documentation and translations are dead weight in a sandbox; keep only licences.
    cat > "$root/etc/dpkg/dpkg.cfg.d/01-code-sandbox-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
    apt "$root" clean
    rm -rf "$root"/var/lib/apt/lists/*
}

# Brings a copy of the base up to date once per run; every image starts from a copy of it, with
# the package lists already there.
prepare_run_base() { # ROOT
    local root=$1
    rm -f "$root/etc/resolv.conf"
    cat /etc/resolv.conf > "$root/etc/resolv.conf"
    # No init system runs in the chroot; tell maintainer scripts not to start services.
    printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    # A crash mid-build only loses a temporary tree, so dpkg need not fsync each file (it does
    # for hundreds of small packages, e.g. npm's). Removed again in configure_rootfs.
    echo force-unsafe-io > "$root/etc/dpkg/dpkg.cfg.d/99-code-sandbox-build"
    mount_proc "$root"
    apt "$root" update
    apt "$root" -y upgrade
    apt "$root" clean
    umount_proc "$root"
}

install_packages() { # ROOT IMAGE PACKAGE...
    local root=$1 image=$2 stubs stub
    shift 2
    mount_proc "$root"
    stubs=$(stubs_for "$image")
    if [ -n "$stubs" ]; then
        install -m 0755 "$HERE/stub-package.sh" "$root/tmp/cs-stub-package.sh"
        # shellcheck disable=SC2086 # the list is meant to split
        in_chroot "$root" /tmp/cs-stub-package.sh $stubs
        rm -f "$root/tmp/cs-stub-package.sh"
    fi
    apt "$root" install -y --no-install-recommends "$@"
    # A versioned dependency (a later Debian update's) would not be met by the stub: apt would
    # then install the real package, and with it what the stub is there to keep out.
    for stub in $stubs; do
        # shellcheck disable=SC2016 # dpkg-query's format, not the shell's
        if in_chroot "$root" dpkg-query -W -f '${Status}' "$stub" 2> /dev/null \
            | grep -q ' installed$'; then
            echo "build-images.sh: apt installed $stub, which stub-package.sh should provide" >&2
            return 1
        fi
    done
    post_install "$root" "$image"
    umount_proc "$root"
}

configure_rootfs() { # ROOT IMAGE
    local root=$1 image=$2
    in_chroot "$root" groupadd --gid 1000 sandbox
    in_chroot "$root" useradd --uid 1000 --gid 1000 --home-dir /sandbox --no-create-home \
        --shell /bin/sh --comment "Code Sandbox" sandbox
    # The engine fills each new workdir volume from /sandbox, owner and mode included: the output
    # folder is there before the supervisor starts (which makes it only where it is missing).
    install -d -m 0755 -o 1000 -g 1000 "$root/sandbox" "$root/sandbox/outputs"
    # A run's workspaces (--workspace) are unpacked by the engine into the workdir volume (the
    # root is read-only), and programs find them at /workspace/NAME.
    ln -sfn /sandbox/.cs-workspace "$root/workspace"
    # Library caches are volumes mounted here; the engine fills a new volume from this (empty)
    # directory, owner and mode included.
    install -d -m 0755 -o 1000 -g 1000 "$root/opt/cs-libs"
    install -m 0755 -o 0 -g 0 "$HERE/cs-run" "$root/usr/local/bin/cs-run"
    # The scripts the server would otherwise pass as text on every sandbox's command line, which
    # the engine stores and hands on for each container, under the names their label
    # code-sandbox.scripts gives them (loaders/image-scripts.sh); Python's loader is compiled in
    # post_install.
    install -d -m 0755 "$root$SHARE"
    local name
    for name in $("$HERE/loaders/image-scripts.sh" "$image" | tr , ' '); do
        case $name in
            cs-run-*) install -m 0644 -o 0 -g 0 "$HERE/cs-run" "$root$SHARE/$name" ;;
            node-loader-*) install -m 0644 -o 0 -g 0 "$HERE/loaders/node-loader.js" "$root$SHARE/$name" ;;
        esac
    done
    printf 'language=%s\nbuilt=%s\ndebian=%s\n' "$image" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        "$(cat "$root/etc/debian_version")" > "$root/etc/code-sandbox-image"

    apt "$root" clean
    rm -f "$root/usr/sbin/policy-rc.d" "$root/etc/dpkg/dpkg.cfg.d/99-code-sandbox-build"
    # The engine provides resolv.conf, hosts and hostname at run time.
    : > "$root/etc/resolv.conf"
    : > "$root/etc/machine-id"
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/debconf/*-old \
        "$root"/var/log/apt/* "$root"/var/log/*.log "$root"/tmp/* "$root"/var/tmp/* \
        "$root"/root/.cache
    # The base was bootstrapped before the dpkg excludes existed.
    find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
    find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/*
    find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
    # The libraries' own test suites are about a fifth of the python image and never imported.
    if [ -d "$root/usr/lib/python3/dist-packages" ]; then
        find "$root/usr/lib/python3/dist-packages" -type d -name tests -prune -exec rm -rf {} +
    fi
}

import_rootfs() { # ROOT IMAGE TAG
    local root=$1 image=$2 tag=$3 var
    local changes=(--change 'USER 1000:1000' --change 'WORKDIR /sandbox'
                   --change "LABEL org.opencontainers.image.title=code-sandbox-$image"
                   --change "LABEL code-sandbox.scripts=$("$HERE/loaders/image-scripts.sh" "$image")"
                   --change "LABEL code-sandbox.packages=$("$HERE/image-packages.sh" "$image")")
    for var in $(env_for "$image"); do
        changes+=(--change "ENV $var")
    done
    tar --numeric-owner -C "$root" -c . \
        | engine import -m "code-sandbox $image image" "${changes[@]}" - "$tag"
}

# --- driver -------------------------------------------------------------------------------

ensure_base() {
    if [ -s "$BASE_TAR" ] && [ "$REFRESH_BASE" = 0 ]; then
        step_begin 1 2 "base rootfs: cached $BASE_TAR"
        step_end
        return
    fi
    command -v debootstrap > /dev/null \
        || die "debootstrap is not installed (apt-get install debootstrap)"
    step_begin 1 2 "base rootfs: debootstrap --variant=minbase $SUITE"
    local tmp
    new_tmpdir tmp base
    make_base "$tmp/root" >> "$LOG" 2>&1
    tar --numeric-owner -C "$tmp/root" -cf "$BASE_TAR.new" .
    mv -f "$BASE_TAR.new" "$BASE_TAR"
    remove_tree "$tmp"
    REFRESH_BASE=0
    step_end
}

RUN_BASE=

ensure_run_base() {
    [ -z "$RUN_BASE" ] || return 0
    ensure_base
    step_begin 2 2 "base rootfs: apt-get update, upgrade"
    local tmp
    new_tmpdir tmp run-base
    mkdir "$tmp/root"
    tar --numeric-owner -C "$tmp/root" -xpf "$BASE_TAR"
    prepare_run_base "$tmp/root" >> "$LOG" 2>&1
    RUN_BASE=$tmp/root
    step_end
}

build_with_dockerfile() { # IMAGE TAG; returns non-zero so the caller can fall back
    local image=$1 tag=$2
    # The labels the offline build gives, which the checks above read.
    local labels=(--label "code-sandbox.scripts=$("$HERE/loaders/image-scripts.sh" "$image")"
                  --label "code-sandbox.packages=$("$HERE/image-packages.sh" "$image")")
    step_begin 1 1 "$image: docker build -f $image.Dockerfile"
    if [ "${#ENGINE_SSH[@]}" -gt 0 ]; then
        # The build context cannot be a path on this machine: it goes as a tar on stdin.
        if tar -C "$HERE" -c . | engine build -f "$image.Dockerfile" "${labels[@]}" -t "$tag" - \
            >> "$LOG" 2>&1; then
            step_end
            return 0
        fi
    elif engine build -f "$HERE/$image.Dockerfile" "${labels[@]}" -t "$tag" "$HERE" >> "$LOG" 2>&1
    then
        step_end
        return 0
    fi
    step_result "failed, falling back to the offline build (see $LOG)"
    return 1
}

build_offline() { # IMAGE TAG
    local image=$1 tag=$2 tmp root packages
    packages=$(packages_for "$image")
    ensure_run_base

    step_begin 1 4 "$image: copying the base rootfs"
    new_tmpdir tmp "$image"
    root=$tmp/root
    cp -a --one-file-system "$RUN_BASE" "$root"
    step_end

    step_begin 2 4 "$image: installing $packages"
    # shellcheck disable=SC2086 # the package list is meant to split
    install_packages "$root" "$image" $packages >> "$LOG" 2>&1
    step_end

    step_begin 3 4 "$image: adding user sandbox, cs-run, cleaning up"
    configure_rootfs "$root" "$image" >> "$LOG" 2>&1
    step_end

    step_begin 4 4 "$image: docker import $tag"
    import_rootfs "$root" "$image" "$tag" >> "$LOG" 2>&1
    step_end

    remove_tree "$tmp"
}

# The egress gateway: compiled here with the host's compiler (Debian 12's, as the images') and put
# into an image of its own with the C library it links and nothing else: no shell, no package
# manager, a few MB that load fast onto a remote engine. libstdc++ and libhttp-parser are linked
# statically, so only libc, its loader and OpenSSL's two libraries (the TLS where a secret is
# added) come from the host; glibc 2.36 resolves names (files,
# dns) without loading NSS modules. It runs as nobody.
# The gateway's sources: its own code (gateway/) and the part it shares with the server
# (gateway/shared/). What the image is built from is the label it carries
# (gateway/sources-label.sh): an image built from other sources (an older checkout) is rebuilt
# without --force, since the server and the gateway speak a protocol of their own that grows with
# both.
GATEWAY_DIR=$HERE/../gateway
gateway_sources() {
    "$GATEWAY_DIR/sources-label.sh"
}

build_gateway() { # TAG
    local tag=$1 tmp root parser lib
    command -v c++ > /dev/null || die "the gateway image needs a C++ compiler: apt-get install g++"
    parser=$(c++ -print-file-name=libhttp_parser.a)
    [ -f "$parser" ] && [ -f /usr/include/http_parser.h ] \
        || die "the gateway image needs libhttp-parser: apt-get install libhttp-parser-dev"
    [ -f /usr/include/openssl/ssl.h ] \
        || die "the gateway image needs OpenSSL's headers: apt-get install libssl-dev"
    new_tmpdir tmp "$GATEWAY_IMAGE"
    root=$tmp/root
    install -d -m 0755 "$root/usr/local/bin" "$root/etc" "$root/tmp"

    step_begin 1 3 "$GATEWAY_IMAGE: compiling gateway/"
    c++ -std=c++17 -O2 -pthread -static-libstdc++ -static-libgcc -Wl,-z,relro,-z,now -pie -fPIE \
        -fstack-protector-strong -D_FORTIFY_SOURCE=2 -o "$root/usr/local/bin/cs-gateway" \
        -I"$GATEWAY_DIR" -I"$GATEWAY_DIR/shared" "$GATEWAY_DIR"/*.cpp "$GATEWAY_DIR"/shared/*.cpp \
        "$parser" -lssl -lcrypto >> "$LOG" 2>&1
    step_end

    step_begin 2 3 "$GATEWAY_IMAGE: the C library and the files it reads"
    # Every shared object ldd names (the loader included), at the same path.
    for lib in $(ldd "$root/usr/local/bin/cs-gateway" | grep -o '/[^ ]*'); do
        install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
    done
    printf 'root:x:0:0::/:/nonexistent\nnobody:x:65534:65534:nobody:/nonexistent:/nonexistent\n' \
        > "$root/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
    printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
    # The engine provides resolv.conf, hosts and hostname at run time.
    : > "$root/etc/resolv.conf"
    : > "$root/etc/hosts"
    chmod 1777 "$root/tmp"
    step_end

    step_begin 3 3 "$GATEWAY_IMAGE: docker import $tag"
    tar --numeric-owner --owner=0 --group=0 -C "$root" -c . \
        | engine import -m "code-sandbox egress gateway" --change 'USER 65534:65534' \
            --change 'ENTRYPOINT ["/usr/local/bin/cs-gateway"]' \
            --change "LABEL org.opencontainers.image.title=code-sandbox-$GATEWAY_IMAGE" \
            --change "LABEL code-sandbox.sources=$(gateway_sources)" \
            - "$tag" >> "$LOG" 2>&1
    step_end
    remove_tree "$tmp"
}

# Builds one image and reports it; output of the build goes to $LOG.
build_image() { # IMAGE
    local image=$1 tag=code-sandbox/$1:latest old_id new_id size t0=$SECONDS now
    now=$(date +%s)
    status_write "$image" building "$now" $((now + $(estimate_for "$image")))
    status_requeue_after "$image" "$now"
    old_id=$(engine image inspect --format '{{.Id}}' "$tag" 2> /dev/null || true)
    if [ "$image" = "$GATEWAY_IMAGE" ]; then
        build_gateway "$tag"
    elif [ "${CODE_SANDBOX_USE_DOCKERFILES:-0}" = 1 ] && build_with_dockerfile "$image" "$tag"; then
        :
    else
        build_offline "$image" "$tag"
    fi
    # A rebuild leaves the previous image untagged; drop it unless a container still uses it.
    new_id=$(engine image inspect --format '{{.Id}}' "$tag")
    if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
        engine rmi "$old_id" > /dev/null 2>&1 || true
    fi
    size=$(engine image inspect --format '{{.Size}}' "$tag")
    status_remove "$image"
    echo $((SECONDS - t0)) > "$CACHE/durations/$image" || true
    echo "built $tag ($((size / 1000000)) MB) in $((SECONDS - t0)) s" >&2
}

# A parallel job (a subshell): build_image with its own log, temporary trees and clean-up.
run_job() { # IMAGE
    TMPDIRS=()
    JOB_PIDS=()
    LOG=${LOG%.log}-$1.log
    : > "$LOG"
    STATUS_IMAGES=("$1")
    trap on_exit EXIT
    trap 'exit 143' TERM
    build_image "$1"
}

running_jobs() {
    local pid n=0
    for pid in "${JOB_PIDS[@]+"${JOB_PIDS[@]}"}"; do
        ! kill -0 "$pid" 2> /dev/null || n=$((n + 1))
    done
    echo "$n"
}

FORCE=0
REFRESH_BASE=0
PUSH=
IMAGES=()
while [ "$#" -gt 0 ]; do
    case $1 in
        --force) FORCE=1 ;;
        --refresh-base) REFRESH_BASE=1 ;;
        --jobs | -j) [ "$#" -ge 2 ] || { usage >&2; exit 2; }; JOBS=$2; shift ;;
        --jobs=*) JOBS=${1#--jobs=} ;;
        --engine) [ "$#" -ge 2 ] || { usage >&2; exit 2; }; parse_engine "$2"; shift ;;
        --engine=*) parse_engine "${1#--engine=}" ;;
        --push) [ "$#" -ge 2 ] || { usage >&2; exit 2; }; PUSH=$2; shift ;;
        --push=*) PUSH=${1#--push=} ;;
        -h | --help) usage; exit 0 ;;
        -*) usage >&2; exit 2 ;;
        "$GATEWAY_IMAGE") IMAGES+=("$GATEWAY_IMAGE") ;;
        *) image=$(table image-of "$1") || { usage >&2; exit 2; }; IMAGES+=("$image") ;;
    esac
    shift
done
[ "${#IMAGES[@]}" -gt 0 ] || IMAGES=("${ALL_IMAGES[@]}")
# A registry name may carry a port (localhost:5000/team); it needs a path after it.
case $PUSH in
    '' | [!/]*/[!/]*) ;;
    *) die "--push wants REGISTRY/PREFIX (e.g. registry.example.com/team), not '$PUSH'" ;;
esac
case $PUSH in
    */ | *' '* | *//*) die "--push wants REGISTRY/PREFIX (e.g. registry.example.com/team), not '$PUSH'" ;;
esac
case $JOBS in '' | *[!0-9]* | 0) die "--jobs wants a positive number, not '$JOBS'" ;; esac

# Root, the cache and its lock are for building; copies onto an --engine need none of them.
prepare_build() {
    [ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap and chroot need it)"
    mkdir -p "$CACHE/tmp" "$CACHE/logs" "$CACHE/durations"
    # One build at a time, so leftovers in tmp/ can only be from a build that was killed, and
    # two builds (say ./dev.sh run's in the background and a ./dev.sh test) never share the
    # base rootfs, the temporary trees or an image's tag. The later one waits, then skips what
    # the first built (the caller checks again once this returns).
    exec 9> "$CACHE/lock"
    if ! flock -n 9; then
        echo "build-images.sh: another build is running (lock $CACHE/lock); waiting for it" >&2
        flock 9
    fi
    local stale
    for stale in "$CACHE"/tmp/*; do
        remove_tree "$stale"
    done
}

# --push: every image asked for, as the engine has it now, under the registry's prefix.
push_images() {
    [ -n "$PUSH" ] || return 0
    local image
    for image in "${IMAGES[@]}"; do
        # The name the server's --image-prefix gives pods: the prefix before the usual name.
        local target=$PUSH/code-sandbox/$image:latest
        engine tag "code-sandbox/$image:latest" "$target" \
            || die "cannot tag code-sandbox/$image:latest as $target"
        engine push "$target" || die "docker push $target failed"
        echo "pushed $target" >&2
    done
}
finish() {
    push_images
    exit 0
}

# Copies an image the local engine has onto the --engine; fails if the copy is not the same image.
copy_image() { # IMAGE
    local tag=code-sandbox/$1:latest id copied t0=$SECONDS
    id=$(local_docker image inspect --format '{{.Id}}' "$tag")
    local_docker save "$tag" | engine load -q > /dev/null
    copied=$(engine image inspect --format '{{.Id}}' "$tag") \
        || die "$tag is not on $ENGINE after docker load"
    [ "$copied" = "$id" ] || die "$tag on $ENGINE is $copied, not the local $id"
    echo "copied $tag onto $ENGINE in $((SECONDS - t0)) s" >&2
}

if [ -z "$ENGINE" ]; then
    prepare_build
    "$DOCKER" version --format '{{.Server.Version}}' > /dev/null 2>&1 \
        || die "'$DOCKER version' got no answer from the engine; is dockerd running?"
else
    engine version --format '{{.Server.Version}}' > /dev/null \
        || die "the engine $ENGINE got no answer (docker version above)"
fi

declare -A seen=()
TODO=()
COPY=()
for image in "${IMAGES[@]}"; do
    [ -z "${seen[$image]:-}" ] || continue
    seen[$image]=1
    if [ "$FORCE" = 0 ] && engine image inspect "code-sandbox/$image:latest" > /dev/null 2>&1
    then
        if [ "$image" = "$GATEWAY_IMAGE" ] && [ "$(engine image inspect --format \
            '{{index .Config.Labels "code-sandbox.sources"}}' "code-sandbox/$image:latest" \
            2> /dev/null)" != "$(gateway_sources)" ]; then
            echo "code-sandbox/$image:latest${ENGINE:+ on $ENGINE} was built from other sources; rebuilding" >&2
            TODO+=("$image")
            continue
        fi
        # An image that carries other versions of our scripts works (the server then sends their
        # text), but every sandbox costs the engine more: rebuilt, as the gateway above.
        if [ "$image" != "$GATEWAY_IMAGE" ] && [ "$(engine image inspect --format \
            '{{index .Config.Labels "code-sandbox.scripts"}}' "code-sandbox/$image:latest" \
            2> /dev/null)" != "$("$HERE/loaders/image-scripts.sh" "$image")" ]; then
            echo "code-sandbox/$image:latest${ENGINE:+ on $ENGINE} carries other versions of cs-run or its loader; rebuilding" >&2
            TODO+=("$image")
            continue
        fi
        # Built from another package list (an older checkout): the tools would name libraries
        # that it lacks.
        if [ "$image" != "$GATEWAY_IMAGE" ] && [ "$(engine image inspect --format \
            '{{index .Config.Labels "code-sandbox.packages"}}' "code-sandbox/$image:latest" \
            2> /dev/null)" != "$("$HERE/image-packages.sh" "$image")" ]; then
            echo "code-sandbox/$image:latest${ENGINE:+ on $ENGINE} was built from another package list; rebuilding" >&2
            TODO+=("$image")
            continue
        fi
        echo "code-sandbox/$image:latest already exists${ENGINE:+ on $ENGINE}; skipping (use --force to rebuild)" >&2
        continue
    fi
    if [ -n "$ENGINE" ] && [ "$FORCE" = 0 ] \
        && local_docker image inspect "code-sandbox/$image:latest" > /dev/null 2>&1; then
        COPY+=("$image")
        continue
    fi
    TODO+=("$image")
done
for image in "${COPY[@]+"${COPY[@]}"}"; do
    copy_image "$image"
done
[ "${#TODO[@]}" -gt 0 ] || finish
if [ -n "$ENGINE" ]; then
    prepare_build
    # A build that held the lock may have put some of them there meanwhile.
    if [ "$FORCE" = 0 ]; then
        LEFT=()
        for image in "${TODO[@]}"; do
            if engine image inspect "code-sandbox/$image:latest" > /dev/null 2>&1; then
                echo "code-sandbox/$image:latest is now on $ENGINE; skipping" >&2
            else
                LEFT+=("$image")
            fi
        done
        [ "${#LEFT[@]}" -gt 0 ] || finish
        TODO=("${LEFT[@]}")
    fi
fi
# With Dockerfiles a job may fall back to the offline build, and two jobs must not both create
# the base rootfs; docker build is not dpkg-bound in the same way anyway.
[ "${#TODO[@]}" -gt 1 ] && [ "${CODE_SANDBOX_USE_DOCKERFILES:-0}" != 1 ] || JOBS=1

T_ALL=$SECONDS
LOG=$CACHE/logs/build-$(date +%Y%m%d-%H%M%S)-$$.log
: > "$LOG"
# The server compares this with its engine's address; the docker CLI's default is this socket.
STATUS_ENGINE=${ENGINE:-${DOCKER_HOST:-unix:///var/run/docker.sock}}
STATUS_IMAGES=("${TODO[@]}")
STATUS_QUEUE=("${TODO[@]}")
status_queue
if [ "$JOBS" = 1 ]; then
    echo "log: $LOG" >&2
    for image in "${TODO[@]}"; do
        build_image "$image"
    done
else
    echo "logs: ${LOG%.log}*.log ($JOBS jobs)" >&2
    # Every job starts from a copy of the run's base, so it is prepared first.
    ensure_run_base
    for image in "${TODO[@]}"; do
        while [ "$(running_jobs)" -ge "$JOBS" ]; do
            wait -n 2> /dev/null || sleep 1
        done
        ( run_job "$image" ) &
        JOB_PIDS+=("$!")
    done
    failed=0
    for pid in "${JOB_PIDS[@]}"; do
        wait "$pid" || failed=$((failed + 1))
    done
    JOB_PIDS=()
    [ "$failed" = 0 ] || die "$failed of ${#TODO[@]} images failed (logs: ${LOG%.log}*.log)"
fi
[ "${#TODO[@]}" -lt 2 ] || echo "built ${#TODO[@]} images in $((SECONDS - T_ALL)) s" >&2
push_images
