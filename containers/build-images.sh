#!/bin/bash
# Builds the sandbox images code-sandbox/<language>:latest.
#
# Default path needs no image registry, only a Debian mirror: debootstrap a minbase rootfs once
# (cached), then per image copy it, apt-get install the language packages in a chroot and
# `docker import` the result. With CODE_SANDBOX_USE_DOCKERFILES=1 the Dockerfiles beside this
# script are tried first, for machines that do reach a registry.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: build-images.sh [--force] [--refresh-base] [language...]

languages: python, node (alias: javascript); none = all
  --force         rebuild images that already exist
  --refresh-base  debootstrap the cached base rootfs again

environment:
  CODE_SANDBOX_CACHE            cache and log directory (default /var/cache/code-sandbox)
  CODE_SANDBOX_MIRROR           Debian mirror (default http://deb.debian.org/debian)
  CODE_SANDBOX_SECURITY_MIRROR  (default http://deb.debian.org/debian-security)
  CODE_SANDBOX_USE_DOCKERFILES  1 = try `docker build` with the Dockerfiles first
  DOCKER                        docker client to use (default docker)
EOF
}

SUITE=bookworm
MIRROR=${CODE_SANDBOX_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${CODE_SANDBOX_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
CACHE=${CODE_SANDBOX_CACHE:-/var/cache/code-sandbox}
DOCKER=${DOCKER:-docker}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BASE_TAR=$CACHE/$SUITE-minbase.tar
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

packages_for() {
    case $1 in
        # python3-munkres satisfies python3-fonttools' "python3-scipy | python3-munkres"; without
        # it apt picks scipy, whose pythran pulls in gcc, g++ and boost (about 1 GB).
        python) echo python3 python3-numpy python3-pandas python3-matplotlib python3-pil \
                     python3-munkres fonts-dejavu-core ;;
        node) echo nodejs ;;
    esac
}

env_for() {
    echo "PATH=$CHROOT_PATH" HOME=/sandbox LANG=C.UTF-8
    case $1 in
        # Each run gets a fresh tmpfs on /tmp, so matplotlib's cache dir must live there.
        python) echo PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg \
                     MPLCONFIGDIR=/tmp/matplotlib ;;
    esac
}

# --- progress and failure reporting -------------------------------------------------------

LOG=
STEP=
STEP_T0=0
TMPDIRS=()

step_begin() { # NUMBER TOTAL TEXT
    STEP="$3"
    STEP_T0=$SECONDS
    printf '[%s/%s] %s … ' "$1" "$2" "$3" >&2
}

step_end() {
    printf '(%d s)\n' $((SECONDS - STEP_T0)) >&2
    STEP=
}

die() {
    echo "build-images.sh: $*" >&2
    exit 1
}

# Removes a temporary tree; a mount left inside it (e.g. by an interrupted debootstrap) is
# detached first so that rm can never reach into the host's /proc or /dev.
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
    local rc=$? dir
    if [ "$rc" -ne 0 ] && [ -n "$STEP" ]; then
        printf 'FAILED\n' >&3
        echo "build-images.sh: step \"$STEP\" failed (exit $rc)." >&3
        if [ -n "$LOG" ] && [ -s "$LOG" ]; then
            echo "build-images.sh: last lines of the log $LOG:" >&3
            tail -n 15 "$LOG" | sed 's/^/    /' >&3
        fi
    fi
    for dir in "${TMPDIRS[@]+"${TMPDIRS[@]}"}"; do
        remove_tree "$dir"
    done
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

# No /dev/pts is mounted in the chroot (nothing else needs a mount), so dpkg must not want a pty.
apt() { # ROOT ARG...
    local root=$1
    shift
    in_chroot "$root" apt-get -o Dpkg::Use-Pty=0 "$@"
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

install_packages() { # ROOT PACKAGE...
    local root=$1
    shift
    rm -f "$root/etc/resolv.conf"
    cat /etc/resolv.conf > "$root/etc/resolv.conf"
    # No init system runs in the chroot; tell maintainer scripts not to start services.
    printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    apt "$root" update
    apt "$root" -y upgrade
    apt "$root" install -y --no-install-recommends "$@"
}

configure_rootfs() { # ROOT LANGUAGE
    local root=$1 lang=$2
    in_chroot "$root" groupadd --gid 1000 sandbox
    in_chroot "$root" useradd --uid 1000 --gid 1000 --home-dir /sandbox --no-create-home \
        --shell /bin/sh --comment "Code Sandbox" sandbox
    install -d -m 0755 -o 1000 -g 1000 "$root/sandbox"
    install -m 0755 -o 0 -g 0 "$HERE/cs-run" "$root/usr/local/bin/cs-run"
    printf 'language=%s\nbuilt=%s\ndebian=%s\n' "$lang" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        "$(cat "$root/etc/debian_version")" > "$root/etc/code-sandbox-image"

    apt "$root" clean
    rm -f "$root/usr/sbin/policy-rc.d"
    # The engine provides resolv.conf, hosts and hostname at run time.
    : > "$root/etc/resolv.conf"
    : > "$root/etc/machine-id"
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/debconf/*-old \
        "$root"/var/log/apt/* "$root"/var/log/*.log "$root"/tmp/* "$root"/var/tmp/*
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

import_rootfs() { # ROOT LANGUAGE IMAGE
    local root=$1 lang=$2 image=$3 var
    local changes=(--change 'USER 1000:1000' --change 'WORKDIR /sandbox'
                   --change "LABEL org.opencontainers.image.title=code-sandbox-$lang")
    for var in $(env_for "$lang"); do
        changes+=(--change "ENV $var")
    done
    tar --numeric-owner -C "$root" -c . \
        | "$DOCKER" import -m "code-sandbox $lang image" "${changes[@]}" - "$image"
}

# --- driver -------------------------------------------------------------------------------

ensure_base() { # STEP TOTAL
    if [ -s "$BASE_TAR" ] && [ "$REFRESH_BASE" = 0 ]; then
        step_begin "$1" "$2" "base rootfs: cached $BASE_TAR"
        step_end
        return
    fi
    command -v debootstrap > /dev/null \
        || die "debootstrap is not installed (apt-get install debootstrap)"
    step_begin "$1" "$2" "base rootfs: debootstrap --variant=minbase $SUITE"
    local tmp
    new_tmpdir tmp base
    make_base "$tmp/root" >> "$LOG" 2>&1
    tar --numeric-owner -C "$tmp/root" -cf "$BASE_TAR.new" .
    mv -f "$BASE_TAR.new" "$BASE_TAR"
    remove_tree "$tmp"
    REFRESH_BASE=0
    step_end
}

build_with_dockerfile() { # LANGUAGE IMAGE; returns non-zero so the caller can fall back
    local lang=$1 image=$2
    step_begin 1 1 "$lang: docker build -f $lang.Dockerfile"
    if "$DOCKER" build -f "$HERE/$lang.Dockerfile" -t "$image" "$HERE" >> "$LOG" 2>&1; then
        step_end
        return 0
    fi
    STEP=
    printf 'failed, falling back to the offline build (see %s)\n' "$LOG" >&2
    return 1
}

build_offline() { # LANGUAGE IMAGE
    local lang=$1 image=$2 tmp root packages
    packages=$(packages_for "$lang")
    ensure_base 1 5

    step_begin 2 5 "$lang: unpacking the base rootfs"
    new_tmpdir tmp "$lang"
    root=$tmp/root
    mkdir "$root"
    tar --numeric-owner -C "$root" -xpf "$BASE_TAR"
    step_end

    step_begin 3 5 "$lang: installing $packages"
    # shellcheck disable=SC2086 # the package list is meant to split
    install_packages "$root" $packages >> "$LOG" 2>&1
    step_end

    step_begin 4 5 "$lang: adding user sandbox, cs-run, cleaning up"
    configure_rootfs "$root" "$lang" >> "$LOG" 2>&1
    step_end

    step_begin 5 5 "$lang: docker import $image"
    import_rootfs "$root" "$lang" "$image" >> "$LOG" 2>&1
    step_end

    remove_tree "$tmp"
}

FORCE=0
REFRESH_BASE=0
LANGS=()
for arg in "$@"; do
    case $arg in
        --force) FORCE=1 ;;
        --refresh-base) REFRESH_BASE=1 ;;
        -h | --help) usage; exit 0 ;;
        python) LANGS+=(python) ;;
        node | javascript) LANGS+=(node) ;;
        *) usage >&2; exit 2 ;;
    esac
done
[ "${#LANGS[@]}" -gt 0 ] || LANGS=(python node)

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap and chroot need it)"
"$DOCKER" version --format '{{.Server.Version}}' > /dev/null 2>&1 \
    || die "'$DOCKER version' got no answer from the engine; is dockerd running?"

mkdir -p "$CACHE/tmp" "$CACHE/logs"
# One build at a time, so leftovers in tmp/ can only be from a build that was killed.
exec 9> "$CACHE/lock"
flock -n 9 || die "another build is running (lock $CACHE/lock)"
for stale in "$CACHE"/tmp/*; do
    remove_tree "$stale"
done

declare -A done_langs=()
for lang in "${LANGS[@]}"; do
    [ -z "${done_langs[$lang]:-}" ] || continue
    done_langs[$lang]=1
    image=code-sandbox/$lang:latest
    if [ "$FORCE" = 0 ] && "$DOCKER" image inspect "$image" > /dev/null 2>&1; then
        echo "$image already exists; skipping (use --force to rebuild)" >&2
        continue
    fi
    if [ -z "$LOG" ]; then
        LOG=$CACHE/logs/build-$(date +%Y%m%d-%H%M%S)-$$.log
        : > "$LOG"
        echo "log: $LOG" >&2
    fi
    old_id=$("$DOCKER" image inspect --format '{{.Id}}' "$image" 2> /dev/null || true)
    SECONDS=0
    if [ "${CODE_SANDBOX_USE_DOCKERFILES:-0}" = 1 ] && build_with_dockerfile "$lang" "$image"; then
        :
    else
        build_offline "$lang" "$image"
    fi
    # A rebuild leaves the previous image untagged; drop it unless a container still uses it.
    new_id=$("$DOCKER" image inspect --format '{{.Id}}' "$image")
    if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
        "$DOCKER" rmi "$old_id" > /dev/null 2>&1 || true
    fi
    size=$("$DOCKER" image inspect --format '{{.Size}}' "$image")
    echo "built $image ($((size / 1000000)) MB) in $SECONDS s" >&2
done
