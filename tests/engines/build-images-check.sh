#!/bin/bash
# containers/build-images.sh --engine against the engines fixture: an image the local engine
# has is copied onto the engine ADDRESS names (ssh://, tcp:// with DOCKER_TLS_VERIFY and
# DOCKER_CERT_PATH, unix://, context:NAME) and onto no other; a TLS engine without the
# certificates is an error; an image already there is left alone. Every copy is removed again.
#
#   build-images-check.sh DIR
set -euo pipefail

DIR=$(realpath -m -- "${1:?usage: build-images-check.sh DIR}")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD_IMAGES=$HERE/../../containers/build-images.sh
IMAGE=code-sandbox/bash:latest
FAILS=0
TMP=$(mktemp -d)

ok() { echo "ok    $*"; }
fail() {
    echo "FAIL  $*" >&2
    FAILS=$((FAILS + 1))
}
same() { # DESCRIPTION EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}
id_on() { # unix://SOCKET -- the image's id there, or "absent"
    local id
    if id=$(docker -H "$1" image inspect --format '{{.Id}}' "$IMAGE" 2> /dev/null); then
        echo "$id"
    else
        echo absent
    fi
}

[ -f "$DIR/env" ] || { echo "FAIL  no $DIR/env: is the fixture started?" >&2; exit 1; }
# shellcheck disable=SC1091
. "$DIR/env"

# The images this check copies onto the fixture's engines are its own to remove; one the
# fixture was given is put back at the end.
HAD=()
cleanup() {
    local sock
    for sock in "$CS_TLS_UNIX" "$CS_SSH_UNIX"; do
        docker -H "$sock" rmi "$IMAGE" > /dev/null 2>&1 || true
    done
    for sock in "${HAD[@]+"${HAD[@]}"}"; do
        docker -H "$CS_MAIN_ENGINE" save "$IMAGE" | docker -H "$sock" load -q > /dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo "FAIL  build-images-check.sh stopped at line $LINENO: a command that must work failed" >&2' ERR

MAIN_ID=$(docker -H "$CS_MAIN_ENGINE" image inspect --format '{{.Id}}' "$IMAGE") || {
    echo "FAIL  $IMAGE is not on the main engine; build it first (containers/build-images.sh bash)" >&2
    exit 1
}
for sock in "$CS_TLS_UNIX" "$CS_SSH_UNIX"; do
    if [ "$(id_on "$sock")" != absent ]; then
        HAD+=("$sock")
        docker -H "$sock" rmi "$IMAGE" > /dev/null
    fi
done

if "$BUILD_IMAGES" --help | grep -q -- '--engine ADDRESS'; then
    ok "--help documents --engine ADDRESS"
else
    fail "--help does not mention --engine ADDRESS"
fi

# Runs build-images.sh ARGS with ENV...; passes when it succeeds and says it copied the image.
copies() { # DESCRIPTION ENV... -- ARGS...
    local what=$1 envs=() out
    shift
    while [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    if out=$(env "${envs[@]+"${envs[@]}"}" "$BUILD_IMAGES" "$@" 2>&1) \
        && grep -q "^copied $IMAGE onto " <<< "$out"; then
        ok "$what ($(grep "^copied" <<< "$out"))"
    else
        fail "$what: $out"
    fi
}

# ssh://USER@HOST:PORT/SOCKET with the fixture's ssh config.
copies "ssh: --engine $CS_SSH_ENGINE copies $IMAGE" CODE_SANDBOX_SSH_CONFIG="$CS_SSH_CONFIG" -- \
    --engine "$CS_SSH_ENGINE" bash
same "ssh: the image is on the ssh engine, the same as the local one" "$MAIN_ID" "$(id_on "$CS_SSH_UNIX")"
same "ssh: and not on the tls engine" absent "$(id_on "$CS_TLS_UNIX")"
out=$(CODE_SANDBOX_SSH_CONFIG=$CS_SSH_CONFIG "$BUILD_IMAGES" --engine "$CS_SSH_ENGINE" shell 2>&1) || true
if grep -q "already exists on $CS_SSH_ENGINE; skipping" <<< "$out"; then
    ok "ssh: a second run finds it there and skips it"
else
    fail "ssh: a second run: $out"
fi
docker -H "$CS_SSH_UNIX" rmi "$IMAGE" > /dev/null

# tcp:// with TLS: the certificates come from the environment, as for the docker CLI.
if out=$(env -u DOCKER_TLS_VERIFY -u DOCKER_CERT_PATH "$BUILD_IMAGES" --engine "$CS_TLS_ENGINE" \
    bash 2>&1); then
    fail "tls: without DOCKER_TLS_VERIFY/DOCKER_CERT_PATH it succeeded: $out"
else
    ok "tls: without the certificates it fails ($(tail -n 1 <<< "$out"))"
fi
same "tls: and copied nothing" absent "$(id_on "$CS_TLS_UNIX")"
copies "tls: --engine $CS_TLS_ENGINE with DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH" \
    DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$CS_TLS_CERT_PATH" -- --engine "$CS_TLS_ENGINE" bash
same "tls: the image is on the tls engine" "$MAIN_ID" "$(id_on "$CS_TLS_UNIX")"
same "tls: and not on the ssh engine" absent "$(id_on "$CS_SSH_UNIX")"
docker -H "$CS_TLS_UNIX" rmi "$IMAGE" > /dev/null

# unix:// and a docker CLI context (in a config directory of its own).
copies "unix: --engine $CS_SSH_UNIX" -- --engine "$CS_SSH_UNIX" bash
same "unix: the image is on the ssh engine" "$MAIN_ID" "$(id_on "$CS_SSH_UNIX")"
docker -H "$CS_SSH_UNIX" rmi "$IMAGE" > /dev/null
DOCKER_CONFIG=$TMP/docker docker context create cs-engines-check --docker "host=$CS_TLS_UNIX" > /dev/null 2>&1
copies "context: --engine context:cs-engines-check" DOCKER_CONFIG="$TMP/docker" -- \
    --engine context:cs-engines-check bash
same "context: the image is on the tls engine" "$MAIN_ID" "$(id_on "$CS_TLS_UNIX")"
docker -H "$CS_TLS_UNIX" rmi "$IMAGE" > /dev/null

if out=$("$BUILD_IMAGES" --engine ftp://example bash 2>&1); then
    fail "an address of no known kind was accepted: $out"
else
    ok "an address of no known kind is refused ($out)"
fi
same "the local engine's $IMAGE is unchanged" "$MAIN_ID" "$(id_on "$CS_MAIN_ENGINE")"
same "no copy is left on the tls engine" absent "$(id_on "$CS_TLS_UNIX")"
same "no copy is left on the ssh engine" absent "$(id_on "$CS_SSH_UNIX")"

if [ "$FAILS" -gt 0 ]; then
    echo "build-images-check: $FAILS check(s) failed" >&2
    exit 1
fi
echo "build-images-check: all checks passed"
