#!/bin/bash
# Test fixture for "many engines": two extra Docker daemons on this machine beside the main one,
#   tls  reached over tcp://127.0.0.1:PORT with TLS client certificates,
#   ssh  reached through a private sshd on 127.0.0.1:PORT2 (its socket forwarded; the dial-stdio
#        fallback with a key the server refuses to forward for).
#
#   engines.sh start DIR        start both (stops a fixture already in DIR first), copy the
#                               images of $CS_ENGINE_IMAGES into them, write DIR/env
#   engines.sh stop DIR         stop everything, delete the bridges and DIR
#   engines.sh kill DIR NAME    SIGKILL dockerd NAME (tls|ssh) only: an engine dying mid-run
#   engines.sh revive DIR NAME  start dockerd NAME again with the same flags, wait for /_ping
#
# DIR/env (after start): KEY=VALUE lines a shell can source (the keys: write_env below).
# Each daemon has its own data root, exec root, containerd, bridge and config file, and never
# touches the main engine (it only reads images from it) nor its docker0 bridge or iptables.
set -euo pipefail

NAMES=(tls ssh)
MAIN_ENGINE=${CS_MAIN_ENGINE:-unix:///var/run/docker.sock}
IMAGES=${CS_ENGINE_IMAGES:-code-sandbox/python:latest code-sandbox/node:latest}
# Exec roots hold unix sockets (containerd's, libnetwork's), whose paths are limited to 108
# bytes; they live here, short, whatever DIR is. A slot is one fixture: its number picks the
# bridges' names and subnets, so that fixtures of several build dirs can run at once.
SLOTS=/run/cs-engines
MAX_SLOTS=60
# The data roots are tmpfs of this size (memory is used only as they fill; 0 = on DIR's disk).
TMPFS_SIZE=${CS_ENGINES_TMPFS_SIZE:-8g}
PING_TIMEOUT=${CS_ENGINE_PING_TIMEOUT:-90}
STOP_TIMEOUT=20
RUNSC=${CS_RUNSC:-/usr/bin/runsc}
# Docker 20.10 with Debian's runsc: a --network none container needs --network=none (without it:
# "cannot run with network enabled in root network namespace"), and so does one on a network
# with runsc's own network stack; --network=host (the container's own namespace, passed
# through) is what works for a container on a network (the allow-list mode's), hence a second
# entry. As the README tells users to register them.
RUNSC_RUNTIMES="{ \"runsc\": { \"path\": \"$RUNSC\", \"runtimeArgs\": [\"--network=none\"] }, \
\"runsc-net\": { \"path\": \"$RUNSC\", \"runtimeArgs\": [\"--network=host\"] } }"

say() { printf 'engines.sh: %s\n' "$*"; }
warn() { printf 'engines.sh: %s\n' "$*" >&2; }
die() {
    printf 'engines.sh: %s\n' "$*" >&2
    exit 1
}
usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
now() { printf '%s' "$EPOCHREALTIME"; }
since() { # T0 -- seconds since T0, one decimal
    awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

# --- the fixture's layout --------------------------------------------------------------------

set_dir() { # DIR -- sets DIR (absolute, need not exist)
    [ -n "$1" ] || usage
    DIR=$(realpath -m -- "$1")
    case $DIR in
        / | /run | /tmp | /var | /usr | /etc | /home | /root) die "refusing DIR=$DIR" ;;
        *[[:space:]]*) die "DIR must not contain spaces: '$DIR'" ;;
    esac
}

slot_of_dir() { # prints the slot number of DIR's fixture, or nothing
    local s owner
    if [ -s "$DIR/slot" ]; then
        cat "$DIR/slot"
        return 0
    fi
    # A start interrupted between taking the slot and recording it: the slot knows its owner.
    for owner in "$SLOTS"/*/owner; do
        [ -f "$owner" ] || continue
        if [ "$(cat "$owner")" = "$DIR" ]; then
            s=${owner%/owner}
            echo "${s##*/}"
            return 0
        fi
    done
}

set_names() { # SLOT NAME -- sets the per-daemon names and paths
    local slot=$1 name=$2
    DAEMON_DIR=$DIR/$name
    SOCK=$DIR/$name/docker.sock
    EXEC=$SLOTS/$slot/$name
    BRIDGE=cs-br$slot-$name
    case $name in
        tls) SUBNET_OCTET=$((slot * 2 - 1)) ;;
        ssh) SUBNET_OCTET=$((slot * 2)) ;;
        *) die "unknown engine '$name' (tls or ssh)" ;;
    esac
    BRIDGE_ADDR=10.213.$SUBNET_OCTET.1/24
}

# --- processes ------------------------------------------------------------------------------

# True when PID is alive (not a zombie) and its command line contains PATTERN: a pid file may
# name a pid that was reused since.
pid_is() { # PID PATTERN
    local pid=$1 pattern=$2 cmd
    case $pid in '' | *[!0-9]*) return 1 ;; esac
    [ -r "/proc/$pid/cmdline" ] || return 1
    cmd=$(tr '\0' ' ' 2> /dev/null < "/proc/$pid/cmdline") || return 1
    [ -n "$cmd" ] && [[ $cmd == *"$pattern"* ]]
}

# SIGTERM, up to TIMEOUT seconds, then SIGKILL; returns once the process is gone.
end_process() { # PID PATTERN WHAT [TIMEOUT]
    local pid=$1 pattern=$2 what=$3 timeout=${4:-$STOP_TIMEOUT} i
    pid_is "$pid" "$pattern" || return 0
    kill -TERM "$pid" 2> /dev/null || true
    for ((i = 0; i < timeout * 10; i++)); do
        pid_is "$pid" "$pattern" || return 0
        sleep 0.1
    done
    warn "$what (pid $pid) did not stop within $timeout s; SIGKILL"
    kill -KILL "$pid" 2> /dev/null || true
    for ((i = 0; i < 50; i++)); do
        pid_is "$pid" "$pattern" || return 0
        sleep 0.1
    done
    warn "$what (pid $pid) is still there after SIGKILL"
}

dockerd_pid() { # prints the pid of the dockerd of the current names, if it runs
    local pid
    for pid in "$(cat "$DAEMON_DIR/dockerd.pid" 2> /dev/null)" \
        "$(cat "$DAEMON_DIR/launch.pid" 2> /dev/null)"; do
        if pid_is "$pid" "--data-root $DAEMON_DIR/data"; then
            echo "$pid"
            return 0
        fi
    done
}

pings() { # SOCKET
    [ -S "$1" ] && curl -sf --max-time 3 --unix-socket "$1" http://engine/_ping > /dev/null 2>&1
}

log_tail() { # FILE
    if [ -s "$1" ]; then
        echo "---- last lines of $1:"
        tail -n 25 "$1" | sed 's/^/    /'
    else
        echo "---- $1 is empty or missing"
    fi
} >&2

# Starts dockerd with the flags recorded in DAEMON_DIR/dockerd.args and waits for /_ping.
launch_dockerd() { # NAME
    local name=$1 args pid i
    mapfile -t args < "$DAEMON_DIR/dockerd.args"
    # A pid file left by a SIGKILLed daemon would stop the new one ("pid file found"); one of
    # its containerd that is gone (or a zombie) would make it wait for that containerd in vain.
    [ -n "$(dockerd_pid)" ] || rm -f "$DAEMON_DIR/dockerd.pid"
    pid_is "$(cat "$EXEC/containerd/containerd.pid" 2> /dev/null)" "$EXEC/" \
        || rm -f "$EXEC/containerd/containerd.pid"
    # Its own session, and no descriptor of ours: ctest waits for the pipes it gave this script.
    setsid dockerd "${args[@]}" < /dev/null >> "$DAEMON_DIR/dockerd.log" 2>&1 &
    echo "$!" > "$DAEMON_DIR/launch.pid"
}

wait_dockerd() { # NAME
    local name=$1 pid t0=$SECONDS
    pid=$(cat "$DAEMON_DIR/launch.pid")
    until pings "$SOCK"; do
        if ! pid_is "$pid" "--data-root $DAEMON_DIR/data"; then
            log_tail "$DAEMON_DIR/dockerd.log"
            die "dockerd '$name' exited during its start (log: $DAEMON_DIR/dockerd.log)"
        fi
        if [ $((SECONDS - t0)) -ge "$PING_TIMEOUT" ]; then
            log_tail "$DAEMON_DIR/dockerd.log"
            die "dockerd '$name' did not answer /_ping on $SOCK within $PING_TIMEOUT s"
        fi
        sleep 0.2
    done
}

# --- start -----------------------------------------------------------------------------------

free_ports() { # N -- prints N distinct free TCP ports on 127.0.0.1
    python3 - "$1" << 'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

take_slot() { # sets SLOT
    local s
    mkdir -p "$SLOTS"
    for ((s = 1; s <= MAX_SLOTS; s++)); do
        mkdir "$SLOTS/$s" 2> /dev/null || continue
        # Taken by nobody's fixture, but the names or subnets may still be in use.
        local busy=0 name
        for name in "${NAMES[@]}"; do
            set_names "$s" "$name"
            if ip link show "$BRIDGE" > /dev/null 2>&1 \
                || ip -4 addr show | grep -q "inet 10\.213\.$SUBNET_OCTET\." \
                || [ -n "$(ip -4 route show "10.213.$SUBNET_OCTET.0/24")" ]; then
                busy=1
            fi
        done
        if [ "$busy" = 1 ]; then
            rmdir "$SLOTS/$s"
            continue
        fi
        echo "$DIR" > "$SLOTS/$s/owner"
        echo "$s" > "$DIR/slot"
        SLOT=$s
        return 0
    done
    die "no free slot in $SLOTS (1..$MAX_SLOTS); stale fixtures? (cat $SLOTS/*/owner)"
}

make_tls() { # CA, server and client certificates
    local ca=$DIR/tls-ca srv=$DIR/tls-server cli=$DIR/tls-client
    mkdir -p "$ca" "$srv" "$cli"
    chmod 700 "$ca"
    openssl genrsa -out "$ca/ca-key.pem" 2048 2> /dev/null
    openssl req -x509 -new -key "$ca/ca-key.pem" -sha256 -days 30 \
        -subj "/CN=code-sandbox engines fixture CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -out "$ca/ca.pem"
    openssl genrsa -out "$srv/key.pem" 2048 2> /dev/null
    openssl req -new -key "$srv/key.pem" -subj "/CN=localhost" -out "$ca/server.csr"
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "extendedKeyUsage=serverAuth" \
        "keyUsage=critical,digitalSignature,keyEncipherment" > "$ca/server.ext"
    openssl x509 -req -in "$ca/server.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca-key.pem" \
        -CAcreateserial -days 30 -sha256 -extfile "$ca/server.ext" -out "$srv/cert.pem" 2> /dev/null
    openssl genrsa -out "$cli/key.pem" 2048 2> /dev/null
    openssl req -new -key "$cli/key.pem" -subj "/CN=code-sandbox engines fixture client" \
        -out "$ca/client.csr"
    printf '%s\n' "extendedKeyUsage=clientAuth" "keyUsage=critical,digitalSignature" \
        > "$ca/client.ext"
    openssl x509 -req -in "$ca/client.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca-key.pem" \
        -CAcreateserial -days 30 -sha256 -extfile "$ca/client.ext" -out "$cli/cert.pem" 2> /dev/null
    cp "$ca/ca.pem" "$srv/ca.pem"
    cp "$ca/ca.pem" "$cli/ca.pem"
    chmod 600 "$srv/key.pem" "$cli/key.pem"
}

prepare_dockerd() { # NAME -- bridge, directories, config and the recorded flags
    local name=$1
    set_names "$SLOT" "$name"
    mkdir -p "$DAEMON_DIR/data" "$EXEC"
    ln -sfn "$EXEC" "$DAEMON_DIR/exec"
    # The images' ~100k files: on a disk mounted with discard, deleting them took minutes.
    if [ "$TMPFS_SIZE" != 0 ]; then
        mount -t tmpfs -o "size=$TMPFS_SIZE,mode=0710" "cs-engines-$name" "$DAEMON_DIR/data"
    fi
    # Its own configuration (/etc/docker/daemon.json is the main engine's), and its own trust
    # key: dockerd 20.10 derives the engine's ID (docker info) from it, and engines on separate
    # machines have separate IDs. Newer dockerd ignore the key (the ID lives in the data root).
    # The tls engine also offers gVisor (Debian's runsc) when it is installed, so that the tests
    # have an engine with it and engines without (see RUNSC_RUNTIMES).
    local runtimes=
    if [ "$name" = tls ] && [ -x "$RUNSC" ]; then
        runtimes=", \"runtimes\": $RUNSC_RUNTIMES"
    fi
    printf '{ "deprecated-key-path": "%s"%s }\n' "$DAEMON_DIR/key.json" "$runtimes" \
        > "$DAEMON_DIR/daemon.json"
    ip link add "$BRIDGE" type bridge
    ip addr add "$BRIDGE_ADDR" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    # Never --bridge=none: dockerd then deletes the host's docker0, the main engine's bridge.
    local args=(--data-root "$DAEMON_DIR/data" --exec-root "$EXEC"
        --pidfile "$DAEMON_DIR/dockerd.pid" --config-file "$DAEMON_DIR/daemon.json"
        --containerd-namespace "cs-$name" --containerd-plugins-namespace "cs-$name-plugins"
        --iptables=false --ip6tables=false --bridge="$BRIDGE"
        -H "unix://$SOCK")
    if [ "$name" = tls ]; then
        args+=(-H "tcp://127.0.0.1:$TLS_PORT" --tlsverify
            --tlscacert "$DIR/tls-server/ca.pem" --tlscert "$DIR/tls-server/cert.pem"
            --tlskey "$DIR/tls-server/key.pem")
    fi
    printf '%s\n' "${args[@]}" > "$DAEMON_DIR/dockerd.args"
}

make_ssh() { # PORT -- host and client keys, sshd_config, ssh_configs, known_hosts
    local port=$1 key config
    rm -f "$DIR/ssh_host_ed25519_key"* "$DIR/id_ed25519"* "$DIR/id_nodocker"* "$DIR/id_noforward"*
    ssh-keygen -q -t ed25519 -N '' -C cs-engines-host -f "$DIR/ssh_host_ed25519_key"
    # Three client keys: the plain one; "nodocker", whose sessions run a command that is not
    # docker (as on a host without a docker CLI: the engine is reached through the forwarded
    # socket only); "noforward", for which the server refuses forwarding (clients fall back to
    # docker system dial-stdio).
    for key in ed25519 nodocker noforward; do
        ssh-keygen -q -t ed25519 -N '' -C "cs-engines-client-$key" -f "$DIR/id_$key"
    done
    {
        cat "$DIR/id_ed25519.pub"
        printf 'command="echo no docker command on this host >&2; exit 127" %s\n' \
            "$(cat "$DIR/id_nodocker.pub")"
        printf 'no-port-forwarding %s\n' "$(cat "$DIR/id_noforward.pub")"
    } > "$DIR/authorized_keys"
    echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$DIR/ssh_host_ed25519_key.pub")" > "$DIR/known_hosts"
    # Local forwarding of unix sockets (the engine's) is how clients reach the engine; OpenSSH
    # refuses a socket forward too when AllowTcpForwarding is off. MaxStartups/MaxSessions: an
    # engine client on the dial-stdio fallback opens many connections at once.
    cat > "$DIR/sshd_config" << EOF
ListenAddress 127.0.0.1:$port
HostKey $DIR/ssh_host_ed25519_key
PidFile $DIR/sshd.pid
AuthorizedKeysFile $DIR/authorized_keys
PermitRootLogin prohibit-password
AllowUsers root
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
X11Forwarding no
AllowTcpForwarding local
AllowStreamLocalForwarding local
AllowAgentForwarding no
PrintMotd no
MaxStartups 200
MaxSessions 100
LogLevel VERBOSE
EOF
    for key in ed25519 nodocker noforward; do
        config=$DIR/ssh_config_$key
        [ "$key" = ed25519 ] && config=$DIR/ssh_config
        cat > "$config" << EOF
Host 127.0.0.1
    Port $port
    User root
    IdentityFile $DIR/id_$key
    IdentitiesOnly yes
    UserKnownHostsFile $DIR/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    BatchMode yes
    ConnectTimeout 10
    LogLevel ERROR
EOF
    done
}

start_sshd() {
    # sshd's privilege separation directory (Debian creates it only when its service starts).
    mkdir -p /run/sshd
    chmod 755 /run/sshd
    /usr/sbin/sshd -t -f "$DIR/sshd_config" || die "sshd rejects $DIR/sshd_config"
    setsid /usr/sbin/sshd -D -f "$DIR/sshd_config" -E "$DIR/sshd.log" < /dev/null > /dev/null 2>&1 &
    echo "$!" > "$DIR/sshd.launch-pid"
}

wait_sshd() {
    local t0=$SECONDS out
    until out=$(ssh -F "$DIR/ssh_config" 127.0.0.1 \
        docker --host "unix://$DIR/ssh/docker.sock" version --format '{{.Server.Version}}' 2>&1); do
        if ! pid_is "$(cat "$DIR/sshd.launch-pid")" "$DIR/sshd_config"; then
            log_tail "$DIR/sshd.log"
            die "sshd exited during its start"
        fi
        if [ $((SECONDS - t0)) -ge 20 ]; then
            log_tail "$DIR/sshd.log"
            die "ssh -F $DIR/ssh_config 127.0.0.1 docker ... version fails: $out"
        fi
        sleep 0.2
    done
    say "ssh: docker over ssh answers (server $out)"
}

copy_images() {
    local images t0 name pids=() failed=0 image main_id id
    read -r -a images <<< "$IMAGES"
    [ "${#images[@]}" -gt 0 ] || return 0
    for image in "${images[@]}"; do
        docker -H "$MAIN_ENGINE" image inspect "$image" > /dev/null 2>&1 \
            || die "image $image is not on the main engine ($MAIN_ENGINE); build it first (containers/build-images.sh)"
    done
    # One docker save for both daemons (the main engine's side is the slow one): tee feeds the
    # first daemon's load through a fifo, the pipe the second's.
    t0=$(now)
    set_names "$SLOT" tls
    local tls_log=$DAEMON_DIR/load.log tls_sock=$SOCK
    set_names "$SLOT" ssh
    local ssh_log=$DAEMON_DIR/load.log ssh_sock=$SOCK
    rm -f "$DIR/images.fifo"
    mkfifo "$DIR/images.fifo"
    docker -H "unix://$tls_sock" load -q < "$DIR/images.fifo" > "$tls_log" 2>&1 &
    pids+=("$!")
    (
        set -o pipefail
        docker -H "$MAIN_ENGINE" save "${images[@]}" | tee "$DIR/images.fifo" \
            | docker -H "unix://$ssh_sock" load -q
    ) > "$ssh_log" 2>&1 &
    pids+=("$!")
    wait "${pids[0]}" || { log_tail "$tls_log"; failed=1; }
    wait "${pids[1]}" || { log_tail "$ssh_log"; failed=1; }
    rm -f "$DIR/images.fifo"
    [ "$failed" = 0 ] || die "copying the images into the extra engines failed"
    for image in "${images[@]}"; do
        main_id=$(docker -H "$MAIN_ENGINE" image inspect --format '{{.Id}}' "$image")
        for name in "${NAMES[@]}"; do
            set_names "$SLOT" "$name"
            id=$(docker -H "unix://$SOCK" image inspect --format '{{.Id}}' "$image" 2> /dev/null) \
                || die "$image is missing on '$name' after docker load"
            [ "$id" = "$main_id" ] || die "$image on '$name' is $id, not the main engine's $main_id"
        done
    done
    say "images: copied ${images[*]} into ${NAMES[*]} (one save, both loads at once) in $(since "$t0") s"
}

write_env() {
    cat > "$DIR/env.new" << EOF
CS_ENGINES_DIR=$DIR
CS_TLS_ENGINE=tcp://127.0.0.1:$TLS_PORT
CS_TLS_CERT_PATH=$DIR/tls-client
CS_TLS_UNIX=unix://$DIR/tls/docker.sock
CS_SSH_ENGINE=ssh://root@127.0.0.1:$SSH_PORT$DIR/ssh/docker.sock
CS_SSH_CONFIG=$DIR/ssh_config
CS_SSH_CONFIG_NODOCKER=$DIR/ssh_config_nodocker
CS_SSH_CONFIG_NOFORWARD=$DIR/ssh_config_noforward
CS_SSH_LOG=$DIR/sshd.log
CS_SSH_UNIX=unix://$DIR/ssh/docker.sock
CS_MAIN_ENGINE=$MAIN_ENGINE
EOF
    mv -f "$DIR/env.new" "$DIR/env"
}

preflight() {
    local cmd
    for cmd in dockerd docker containerd ip openssl ssh ssh-keygen curl python3 setsid realpath; do
        command -v "$cmd" > /dev/null || die "'$cmd' is not installed (see dev.sh install_packages)"
    done
    [ -x /usr/sbin/sshd ] || die "/usr/sbin/sshd is missing (apt-get install openssh-server)"
    # The longest unix socket path the fixture creates; the limit is 108 bytes with the NUL.
    [ $((${#DIR} + 20)) -lt 108 ] || die "DIR is too long for unix socket paths: $DIR"
}

start() {
    local t_all t0
    t_all=$(now)
    if [ -e "$DIR" ] || [ -n "$(slot_of_dir)" ]; then
        say "stopping the fixture already in $DIR first"
        stop
    fi
    preflight
    pings "${MAIN_ENGINE#unix://}" || warn "the main engine ($MAIN_ENGINE) does not answer /_ping"
    mkdir -p "$DIR"
    touch "$DIR/.cs-engines"
    # From here on a failure leaves nothing running (unless CS_ENGINES_KEEP=1, to look at it).
    trap 'start_failed' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    take_slot
    read -r TLS_PORT SSH_PORT <<< "$(free_ports 2)"
    printf 'SLOT=%s\nTLS_PORT=%s\nSSH_PORT=%s\n' "$SLOT" "$TLS_PORT" "$SSH_PORT" > "$DIR/state"

    t0=$(now)
    make_tls
    make_ssh "$SSH_PORT"
    say "certificates and keys made in $(since "$t0") s"

    t0=$(now)
    local name
    for name in "${NAMES[@]}"; do
        prepare_dockerd "$name"
        launch_dockerd "$name"
    done
    start_sshd
    for name in "${NAMES[@]}"; do
        set_names "$SLOT" "$name"
        wait_dockerd "$name"
    done
    say "dockerd tls and ssh answer /_ping ($(since "$t0") s after their start)"
    wait_sshd
    copy_images
    write_env
    trap - EXIT
    say "started in $(since "$t_all") s; $DIR/env:"
    cat "$DIR/env"
}

start_failed() {
    local rc=$?
    trap - EXIT
    [ "$rc" -ne 0 ] || return 0
    if [ "${CS_ENGINES_KEEP:-0}" = 1 ]; then
        warn "start failed (exit $rc); CS_ENGINES_KEEP=1: left as is, clean up with: $0 stop $DIR"
        return
    fi
    warn "start failed (exit $rc); stopping what was started"
    local n
    for n in "${NAMES[@]}"; do
        log_tail "$DIR/$n/dockerd.log"
    done
    stop || true
    exit "$rc"
}

# --- stop ------------------------------------------------------------------------------------

# Processes the fixture started that are still there: SIGKILLed, children (container
# processes under a shim) first.
sweep_processes() { # PATTERN
    local pattern=$1 pid comm child socket i id cids=()
    for pid in $(pgrep -f -- "$pattern" || true); do
        [ "$pid" != "$$" ] || continue
        comm=$(cat "/proc/$pid/comm" 2> /dev/null) || continue
        case $comm in
            dockerd | containerd | containerd-shim* | sshd | docker | docker-proxy | tee) ;;
            *) continue ;;
        esac
        pid_is "$pid" "$pattern" || continue
        # A shim's socket (/run/containerd/s/HASH) is its to remove, which it cannot after SIGKILL.
        socket=$(ss -xlpn 2> /dev/null | awk -v p="pid=$pid," 'index($0, p) { print $5 }' \
            | grep '^/run/containerd/s/' || true)
        # So are its container's cgroups (/sys/fs/cgroup/*/docker/ID, …/docker-ID.scope).
        if [[ $comm == containerd-shim* ]]; then
            id=$(tr '\0' '\n' 2> /dev/null < "/proc/$pid/cmdline" | grep -A1 -x -- -id | tail -n 1 || true)
            cids+=("$id")
        fi
        for child in $(pgrep -P "$pid" || true); do
            kill -KILL "$child" 2> /dev/null || true
        done
        warn "left over: $comm (pid $pid); SIGKILL"
        kill -KILL "$pid" 2> /dev/null || true
        for ((i = 0; i < 50; i++)); do
            pid_is "$pid" "$pattern" || break
            sleep 0.1
        done
        # shellcheck disable=SC2086 # one path a word
        [ -z "$socket" ] || rm -f $socket
    done
    for id in "${cids[@]+"${cids[@]}"}"; do
        [[ $id =~ ^[0-9a-f]{64}$ ]] || continue
        find /sys/fs/cgroup -maxdepth 4 -depth -type d -name "*$id*" -exec rmdir {} \; 2> /dev/null || true
    done
}

unmount_under() { # PATH
    local mnt
    awk -v d="$1/" 'index($5, d) == 1 || $5 == substr(d, 1, length(d) - 1) { print $5 }' \
        /proc/self/mountinfo | sort -r | while read -r mnt; do
        umount -l "$mnt" 2> /dev/null || warn "could not unmount $mnt"
    done
}

stop_dockerd() { # SLOT NAME
    local slot=$1 name=$2 pid ids cpid
    set_names "$slot" "$name"
    if pings "$SOCK"; then
        ids=$(docker -H "unix://$SOCK" ps -aq 2> /dev/null || true)
        if [ -n "$ids" ]; then
            # shellcheck disable=SC2086 # one id a word
            docker -H "unix://$SOCK" rm -f $ids > /dev/null 2>&1 \
                || warn "could not remove every container of '$name'"
        fi
    fi
    pid=$(dockerd_pid)
    [ -z "$pid" ] || end_process "$pid" "--data-root $DAEMON_DIR/data" "dockerd $name"
    # Its containerd stops with it, unless dockerd was SIGKILLed.
    cpid=$(cat "$EXEC/containerd/containerd.pid" 2> /dev/null || true)
    end_process "$cpid" "$EXEC/" "containerd of $name" 10
    sweep_processes "$EXEC/"
    sweep_processes "$DAEMON_DIR/"
    if ip link show "$BRIDGE" > /dev/null 2>&1; then
        ip link delete "$BRIDGE" || warn "could not delete bridge $BRIDGE"
    fi
}

stop() {
    local slot name pid t0 t1
    t0=$(now)
    slot=$(slot_of_dir)
    if [ -z "$slot" ] && [ ! -e "$DIR" ]; then
        say "nothing to stop in $DIR"
        return 0
    fi
    if [ -e "$DIR" ] && [ ! -e "$DIR/.cs-engines" ] && [ -n "$(ls -A "$DIR")" ]; then
        die "$DIR is not an engines fixture (no $DIR/.cs-engines); not touching it"
    fi
    # sshd first: no new sessions reach a daemon that is stopping.
    pid=$(cat "$DIR/sshd.pid" 2> /dev/null || cat "$DIR/sshd.launch-pid" 2> /dev/null || true)
    if pid_is "$pid" "$DIR/sshd_config"; then
        local sessions
        sessions=$(pgrep -P "$pid" || true)
        end_process "$pid" "$DIR/sshd_config" sshd 5
        # shellcheck disable=SC2086 # one pid a word
        [ -z "$sessions" ] || kill -TERM $sessions 2> /dev/null || true
    fi
    if [ -n "$slot" ]; then
        for name in "${NAMES[@]}"; do
            t1=$(now)
            stop_dockerd "$slot" "$name"
            say "dockerd $name: stopped in $(since "$t1") s"
        done
        unmount_under "$SLOTS/$slot"
        rm -rf --one-file-system "${SLOTS:?}/$slot"
    fi
    sweep_processes "$DIR/"
    if [ -e "$DIR" ]; then
        t1=$(now)
        unmount_under "$DIR"
        rm -rf --one-file-system "$DIR"
        say "removed $DIR in $(since "$t1") s"
    fi
    if ! ip link show docker0 > /dev/null 2>&1; then
        warn "note: there is no docker0 bridge on this machine (the main engine's)"
    fi
    say "stopped in $(since "$t0") s"
}

# --- kill, revive -----------------------------------------------------------------------------

load_state() { # NAME
    [ -f "$DIR/state" ] || die "no fixture in $DIR (no $DIR/state)"
    # shellcheck disable=SC1091
    . "$DIR/state"
    set_names "$SLOT" "$1"
}

kill_dockerd() { # NAME
    local name=$1 pid cpid i
    load_state "$name"
    pid=$(dockerd_pid)
    [ -n "$pid" ] || die "dockerd '$name' is not running"
    kill -KILL "$pid"
    for ((i = 0; i < 100; i++)); do
        pid_is "$pid" "--data-root $DAEMON_DIR/data" || break
        sleep 0.1
    done
    ! pid_is "$pid" "--data-root $DAEMON_DIR/data" || die "dockerd '$name' (pid $pid) survived SIGKILL"
    # Its containerd dies with it (dockerd starts it with a parent-death signal); a revive right
    # after must not find it still exiting and try to reuse it.
    cpid=$(cat "$EXEC/containerd/containerd.pid" 2> /dev/null || true)
    for ((i = 0; i < 50; i++)); do
        pid_is "$cpid" "$EXEC/" || break
        sleep 0.1
    done
    say "killed dockerd '$name' (pid $pid)"
}

revive_dockerd() { # NAME
    local name=$1 t0
    load_state "$name"
    if [ -n "$(dockerd_pid)" ]; then
        pings "$SOCK" || die "dockerd '$name' runs but does not answer /_ping"
        say "dockerd '$name' is already running"
        return 0
    fi
    t0=$(now)
    launch_dockerd "$name"
    wait_dockerd "$name"
    say "revived dockerd '$name' in $(since "$t0") s"
}

# --- main ------------------------------------------------------------------------------------

[ $# -ge 2 ] || usage
if [ "$(id -u)" != 0 ]; then
    command -v sudo > /dev/null || die "must run as root (dockerd, ip link, sshd)"
    exec sudo -n -- bash "$0" "$@"
fi
cmd=$1
set_dir "$2"
case $cmd in
    start) [ $# = 2 ] || usage; start ;;
    stop) [ $# = 2 ] || usage; stop ;;
    kill) [ $# = 3 ] || usage; kill_dockerd "$3" ;;
    revive) [ $# = 3 ] || usage; revive_dockerd "$3" ;;
    *) usage ;;
esac
