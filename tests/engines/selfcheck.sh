#!/bin/bash
# Proves that the engines fixture (engines.sh start DIR) is what DIR/env says it is: the TLS
# engine answers over TCP with the client certificates and refuses without them, the ssh engine
# answers through sshd (docker system dial-stdio, as the server's engine client uses it) and
# refuses a stranger's key, both run the sandbox images on their own bridges, the main engine
# and its docker0 are untouched, and `engines.sh kill` / `revive` take one engine down and up.
#
#   selfcheck.sh DIR
set -euo pipefail

DIR=$(realpath -m -- "${1:?usage: selfcheck.sh DIR}")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ENGINES=$HERE/engines.sh
MARK=cs-selfcheck=$$-$RANDOM
FAILS=0
TMP=$(mktemp -d)

ok() { echo "ok    $*"; }
fail() {
    echo "FAIL  $*" >&2
    FAILS=$((FAILS + 1))
}
# Passes when CMD succeeds; its output is shown on failure.
check() { # DESCRIPTION CMD...
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then ok "$what"; else fail "$what: $out"; fi
}
# Passes when CMD fails, and (if given) its output contains PATTERN.
refused() { # DESCRIPTION PATTERN CMD...
    local what=$1 pattern=$2 out
    shift 2
    if out=$("$@" 2>&1); then
        fail "$what: it succeeded: $out"
    elif [ -n "$pattern" ] && ! grep -qi -- "$pattern" <<< "$out"; then
        fail "$what: failed, but not with '$pattern': $out"
    else
        ok "$what (refused: $(head -n 1 <<< "$out" | cut -c1-100))"
    fi
}
same() { # DESCRIPTION EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then ok "$1 ($3)"; else fail "$1: expected '$2', got '$3'"; fi
}
pings() { # unix://SOCKET
    curl -sf --max-time 3 --unix-socket "${1#unix://}" http://engine/_ping > /dev/null 2>&1
}

# Whatever happens, the check leaves no container or volume of its own anywhere.
cleanup() {
    local sock ids
    for sock in "${CS_TLS_UNIX:-}" "${CS_SSH_UNIX:-}" "${CS_MAIN_ENGINE:-}"; do
        if [ -z "$sock" ] || ! pings "$sock"; then continue; fi
        ids=$(docker -H "$sock" ps -aq --filter "label=$MARK" 2> /dev/null || true)
        # shellcheck disable=SC2086 # one id a word
        [ -z "$ids" ] || docker -H "$sock" rm -f $ids > /dev/null 2>&1 || true
        ids=$(docker -H "$sock" volume ls -q --filter "label=$MARK" 2> /dev/null || true)
        # shellcheck disable=SC2086
        [ -z "$ids" ] || docker -H "$sock" volume rm -f $ids > /dev/null 2>&1 || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo "FAIL  selfcheck.sh stopped at line $LINENO: a command that must work failed" >&2' ERR

# --- DIR/env ---------------------------------------------------------------------------------

[ -f "$DIR/env" ] || { echo "FAIL  no $DIR/env: is the fixture started?" >&2; exit 1; }
for key in CS_ENGINES_DIR CS_TLS_ENGINE CS_TLS_CERT_PATH CS_TLS_UNIX CS_SSH_ENGINE CS_SSH_CONFIG \
    CS_SSH_UNIX CS_MAIN_ENGINE; do
    if grep -q "^$key=[^[:space:]]\+$" "$DIR/env"; then ok "env has $key"; else fail "env lacks $key"; fi
done
# shellcheck disable=SC1091
. "$DIR/env"
same "CS_ENGINES_DIR is DIR" "$DIR" "$CS_ENGINES_DIR"
[ "$FAILS" = 0 ] || exit 1

CERTS=$CS_TLS_CERT_PATH
TLS=(docker --tlsverify --tlscacert "$CERTS/ca.pem" --tlscert "$CERTS/cert.pem"
    --tlskey "$CERTS/key.pem" -H "$CS_TLS_ENGINE")
HOSTPORT=${CS_TLS_ENGINE#tcp://}
# ssh://USER@HOST:PORT/SOCKET, split as the server's engine client splits it.
rest=${CS_SSH_ENGINE#ssh://}
SSH_SOCKET=/${rest#*/}
rest=${rest%%/*}
SSH_USER=${rest%%@*}
rest=${rest#*@}
SSH_HOST=${rest%:*}
SSH_PORT=${rest##*:}
same "CS_SSH_ENGINE names daemon ssh's socket" "${CS_SSH_UNIX#unix://}" "$SSH_SOCKET"
SSH=(ssh -T -o BatchMode=yes -o ConnectTimeout=10 -F "$CS_SSH_CONFIG" -l "$SSH_USER" -p "$SSH_PORT"
    -- "$SSH_HOST")
ssh_docker() { # ARG... -- docker on the ssh engine, through ssh (words must not need quoting)
    "${SSH[@]}" docker --host "unix://$SSH_SOCKET" "$@"
}

# --- TLS engine ------------------------------------------------------------------------------

check "tls: docker --tlsverify with the client certificates reaches $CS_TLS_ENGINE" \
    "${TLS[@]}" version --format '{{.Server.Version}}'
check "tls: so does DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$CERTS" \
    env DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$CERTS" docker -H "$CS_TLS_ENGINE" version
refused "tls: plain HTTP is refused" "HTTPS" \
    env -u DOCKER_TLS_VERIFY -u DOCKER_CERT_PATH docker -H "$CS_TLS_ENGINE" version
check "tls: curl with the client certificate gets /_ping" \
    curl -sf --max-time 10 --cacert "$CERTS/ca.pem" --cert "$CERTS/cert.pem" \
    --key "$CERTS/key.pem" "https://$HOSTPORT/_ping"
refused "tls: TLS without a client certificate is refused" "" \
    curl -sf --max-time 10 --cacert "$CERTS/ca.pem" "https://$HOSTPORT/_ping"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 1 \
    -subj "/CN=stranger" -addext "extendedKeyUsage=clientAuth" 2> /dev/null
refused "tls: a client certificate of another CA is refused" "" \
    curl -sf --max-time 10 --cacert "$CERTS/ca.pem" --cert "$TMP/cert.pem" --key "$TMP/key.pem" \
    "https://$HOSTPORT/_ping"
refused "tls: the server certificate does not pass for another name" "" \
    curl -sf --max-time 10 --cacert "$CERTS/ca.pem" --cert "$CERTS/cert.pem" \
    --key "$CERTS/key.pem" --resolve "elsewhere.test:${HOSTPORT##*:}:127.0.0.1" \
    "https://elsewhere.test:${HOSTPORT##*:}/_ping"

# --- ssh engine ------------------------------------------------------------------------------

check "ssh: ssh -F CS_SSH_CONFIG 127.0.0.1 docker --host CS_SSH_UNIX version" \
    ssh -F "$CS_SSH_CONFIG" 127.0.0.1 docker --host "$CS_SSH_UNIX" version --format '{{.Server.Version}}'
# The answer is what came on stdout; dial-stdio's own complaints (it may log that closing its
# stdin raced the end of the stream, with no newline before it) go to stderr, shown on failure.
out=$(printf 'GET /_ping HTTP/1.0\r\n\r\n' | timeout 30 "${SSH[@]}" \
    docker --host "unix://$SSH_SOCKET" system dial-stdio 2>"$TMP/dial-stdio.err" || true)
if grep -q '^HTTP/1\.[01] 200' <<< "$out" && [ "$(tail -n 1 <<< "$out")" = OK ]; then
    ok "ssh: docker system dial-stdio through ssh answers GET /_ping with 200 OK"
else
    fail "ssh: GET /_ping through dial-stdio: $out (stderr: $(cat "$TMP/dial-stdio.err"))"
fi
ssh-keygen -q -t ed25519 -N '' -f "$TMP/stranger"
refused "ssh: a key that is not authorized is refused" "Permission denied" \
    ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -i "$TMP/stranger" \
    -o UserKnownHostsFile="$DIR/known_hosts" -o GlobalKnownHostsFile=/dev/null \
    -o StrictHostKeyChecking=yes -p "$SSH_PORT" "root@$SSH_HOST" true
refused "ssh: the host key is checked (unknown with an empty known_hosts)" "Host key verification failed" \
    ssh -F "$CS_SSH_CONFIG" -o UserKnownHostsFile=/dev/null 127.0.0.1 true

# --- three distinct engines ------------------------------------------------------------------

# A volume made on one engine through one door is seen through the other door of the same
# engine and on no other engine.
docker -H "$CS_TLS_UNIX" volume create --label "$MARK" cs-selfcheck-tls-$$ > /dev/null
ssh_docker volume create --label "$MARK" cs-selfcheck-ssh-$$ > /dev/null
check "tls: a volume made on CS_TLS_UNIX is seen over TLS" "${TLS[@]}" volume inspect cs-selfcheck-tls-$$
check "ssh: a volume made through ssh is seen on CS_SSH_UNIX" \
    docker -H "$CS_SSH_UNIX" volume inspect cs-selfcheck-ssh-$$
refused "tls: its volume is not on the ssh engine" "no such volume" \
    docker -H "$CS_SSH_UNIX" volume inspect cs-selfcheck-tls-$$
refused "ssh: its volume is not on the tls engine" "no such volume" \
    docker -H "$CS_TLS_UNIX" volume inspect cs-selfcheck-ssh-$$
refused "main: neither volume is on the main engine" "no such volume" \
    docker -H "$CS_MAIN_ENGINE" volume inspect cs-selfcheck-tls-$$ cs-selfcheck-ssh-$$
id_tls=$(docker -H "$CS_TLS_UNIX" info --format '{{.ID}}')
id_ssh=$(docker -H "$CS_SSH_UNIX" info --format '{{.ID}}')
id_main=$(docker -H "$CS_MAIN_ENGINE" info --format '{{.ID}}')
if [ "$id_tls" != "$id_ssh" ] && [ "$id_tls" != "$id_main" ] && [ "$id_ssh" != "$id_main" ]; then
    ok "the three engines have distinct IDs (docker info)"
else
    fail "engine IDs are not distinct: tls $id_tls, ssh $id_ssh, main $id_main"
fi
same "tls: its data root is DIR/tls/data" "$DIR/tls/data" \
    "$(docker -H "$CS_TLS_UNIX" info --format '{{.DockerRootDir}}')"

# --- images and runs -------------------------------------------------------------------------

for image in ${CS_ENGINE_IMAGES:-code-sandbox/python:latest code-sandbox/node:latest}; do
    want=$(docker -H "$CS_MAIN_ENGINE" image inspect --format '{{.Id}}' "$image")
    for sock in "$CS_TLS_UNIX" "$CS_SSH_UNIX"; do
        same "$image on ${sock##*/engines/} is the main engine's" "$want" \
            "$(docker -H "$sock" image inspect --format '{{.Id}}' "$image" 2>&1 || true)"
    done
done
same "tls: python prints 42 (docker run over TLS)" 42 \
    "$("${TLS[@]}" run --rm --network none --label "$MARK" code-sandbox/python:latest \
        python3 -c 'print(6*7)' 2>&1 || true)"
same "ssh: python prints 42 (docker run through ssh)" 42 \
    "$(ssh_docker run --rm --network none --label "$MARK" code-sandbox/python:latest \
        python3 -c "'print(6*7)'" 2>&1 || true)"

# Each engine's default network is its own bridge, not the main engine's docker0.
for sock in "$CS_TLS_UNIX" "$CS_SSH_UNIX"; do
    name=${sock%/docker.sock}
    name=${name##*/}
    bridge=$(docker -H "$sock" network inspect bridge \
        --format '{{index .Options "com.docker.network.bridge.name"}}')
    subnet=$(ip -4 -o addr show dev "$bridge" 2> /dev/null | awk '{ print $4 }')
    address=$(docker -H "$sock" run --rm --label "$MARK" code-sandbox/python:latest python3 -c \
        'import socket; print(socket.gethostbyname(socket.gethostname()))' 2>&1 || true)
    if [[ $bridge == cs-br*-$name && $subnet == 10.213.*.1/24 && $address == "${subnet%.1/24}".* ]]
    then
        ok "$name: a container on its default network is on bridge $bridge ($address in $subnet)"
    else
        fail "$name: bridge '$bridge', subnet '$subnet', container address '$address'"
    fi
done

# --- the main engine -------------------------------------------------------------------------

check "main: docker0 still exists" ip link show docker0
check "main: the main engine answers /_ping" pings "$CS_MAIN_ENGINE"
same "main: its default network is still docker0" docker0 \
    "$(docker -H "$CS_MAIN_ENGINE" network inspect bridge \
        --format '{{index .Options "com.docker.network.bridge.name"}}' 2>&1 || true)"

# --- kill and revive -------------------------------------------------------------------------

for name in tls ssh; do
    case $name in
        tls) sock=$CS_TLS_UNIX other=$CS_SSH_UNIX ;;
        ssh) sock=$CS_SSH_UNIX other=$CS_TLS_UNIX ;;
    esac
    # A run in progress when the engine dies (--stop-timeout: dockerd's restart stops it).
    docker -H "$sock" run -d --rm --stop-timeout 1 --network none --label "$MARK" \
        code-sandbox/python:latest sleep 600 > /dev/null
    check "$name: engines.sh kill" bash "$ENGINES" kill "$DIR" "$name"
    if pings "$sock"; then fail "$name: still answers /_ping after kill"; else ok "$name: no /_ping after kill"; fi
    if pings "$other"; then ok "$name: the other engine still answers"; else fail "$name: kill took the other engine down too"; fi
    case $name in
        tls) refused "tls: TLS over TCP fails while it is down" "" "${TLS[@]}" version ;;
        ssh) refused "ssh: docker through ssh fails while it is down" "" ssh_docker version ;;
    esac
    check "$name: engines.sh revive" bash "$ENGINES" revive "$DIR" "$name"
    if pings "$sock"; then ok "$name: /_ping after revive"; else fail "$name: no /_ping after revive"; fi
    case $name in
        tls) check "tls: TLS over TCP answers again" "${TLS[@]}" version ;;
        ssh) check "ssh: docker through ssh answers again" ssh_docker version ;;
    esac
    # The restarted engine stops the run and removes it (--rm): nothing of the check is left.
    left=
    for _ in $(seq 1 50); do
        left=$(docker -H "$sock" ps -aq --filter "label=$MARK" 2>&1 || true)
        [ -n "$left" ] || break
        sleep 0.2
    done
    same "$name: docker ps -a shows no container of the check after revive" "" "$left"
done
same "ssh: python prints 42 after its revive" 42 \
    "$(ssh_docker run --rm --network none --label "$MARK" code-sandbox/python:latest \
        python3 -c "'print(6*7)'" 2>&1 || true)"

if [ "$FAILS" -gt 0 ]; then
    echo "selfcheck: $FAILS check(s) failed" >&2
    exit 1
fi
echo "selfcheck: all checks passed"
