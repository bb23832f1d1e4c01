#!/bin/bash
# The desktop app as a person meets it, in a real X server (Xvfb) with a system tray (trayer):
#   1. `code-sandbox` opens the window "Code Sandbox" and its tray icon;
#   2. Ctrl+Return runs the editor's Python example, which draws a matplotlib plot: the run, its
#      output and its image show;
#   3. a separately launched `code-sandbox --stdio` (as an assistant starts it) runs a program:
#      it appears in the window live, with the client's name;
#   4. closing the window keeps the HTTP MCP endpoint answering; launching the app again shows
#      the same window;
#   5. after a restart, the history has the runs.
# On the way: an approval, a connection asked about live (its dialog and the Network tab), a
# workspace's change set applied from the Workspace tab and from the dialog that asks, a
# headless run stopped from the window, and a session's snapshots (steps, a rewind, a fork).
# Screenshots of the window go to SHOTS (docs/screenshots with --update-screenshots).
#
#   tests/gui/desktop.sh BIN_DIR [SHOTS_DIR]
set -euo pipefail
BIN=$(cd "$1" && pwd)
SHOTS=${2:-$BIN/../screenshots}
mkdir -p "$SHOTS"
SHOTS=$(cd "$SHOTS" && pwd)

# trayer is required, not optional: without a tray the tray icon assertions would be skipped.
for tool in Xvfb trayer xdotool import curl; do
    command -v "$tool" >/dev/null || {
        echo "desktop.sh: FAIL: $tool is missing; install it (./dev.sh installs xvfb trayer xdotool imagemagick curl)" >&2
        exit 1
    }
done

WORK=$(mktemp -d /tmp/cs-desktop.XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    for log in "$WORK"/app*.log "$WORK"/stdio.log "$WORK"/second.log; do
        [ -f "$log" ] || continue
        echo "--- ${log##*/} ---" >&2
        cat "$log" >&2
    done
    exit 1
}
ok() { echo "ok: $*"; }

# A user of our own: settings, history, token and monitor socket all under $WORK.
export XDG_CONFIG_HOME=$WORK/config XDG_DATA_HOME=$WORK/data XDG_RUNTIME_DIR=$WORK/run
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
unset CODE_SANDBOX_MONITOR_SOCKET CODE_SANDBOX_HISTORY QT_QPA_PLATFORM

# A display of our own.
exec 5>"$WORK/display"
Xvfb -displayfd 5 -screen 0 1440x900x24 -nolisten tcp >"$WORK/xvfb.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$WORK/display" ] && break; sleep 0.1; done
export DISPLAY=:$(cat "$WORK/display")
ok "Xvfb on $DISPLAY"
trayer --edge bottom --align right --widthtype pixel --width 120 --height 24 \
    >"$WORK/trayer.log" 2>&1 &
TRAYER=$!
PIDS+=($TRAYER)
sleep 1
kill -0 "$TRAYER" 2>/dev/null || { cat "$WORK/trayer.log" >&2; fail "trayer (the system tray) did not start"; }
ok "trayer runs (system tray)"

# A client's site: its client ID metadata document over TLS (a certificate made here, which the
# app is told to trust, on loopback, which it is told to fetch from), for the sign-in of step 3f.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$WORK/site-key.pem" -out "$WORK/site-cert.pem" -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >"$WORK/openssl.log" 2>&1 ||
    fail "openssl could not make the site's certificate: $(cat "$WORK/openssl.log")"
python3 - "$WORK" <<'PY' >"$WORK/site.log" 2>&1 &
import http.server, json, ssl, sys
work = sys.argv[1]
class Site(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        base = f"https://localhost:{self.server.server_port}"
        body = json.dumps({"client_id": base + "/claude-code.json", "client_name": "Claude Code",
                           "redirect_uris": ["http://127.0.0.1:33418/callback"],
                           "token_endpoint_auth_method": "none"}).encode()
        self.send_response(200 if self.path == "/claude-code.json" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
site = http.server.HTTPServer(("127.0.0.1", 0), Site)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain(f"{work}/site-cert.pem", f"{work}/site-key.pem")
site.socket = tls.wrap_socket(site.socket, server_side=True)
open(f"{work}/site-port", "w").write(str(site.server_port))
site.serve_forever()
PY
PIDS+=($!)
APP_ARGS=(--client-metadata-ca "$WORK/site-cert.pem" --client-metadata-private)

start_app() { # log file
    "$BIN/code-sandbox" --port 0 "${APP_ARGS[@]}" </dev/null >"$1" 2>&1 &
    APP=$!
    PIDS+=($APP)
    WINDOW=$(timeout 30 xdotool search --sync --onlyvisible --name '^Code Sandbox$' | head -1) ||
        fail "the window did not open"
}
wait_log() { # file pattern seconds what
    for _ in $(seq $(($3 * 5))); do
        grep -qE "$2" "$1" && return 0
        sleep 0.2
    done
    fail "$4"
}
shot() { # name
    sleep 0.5
    import -window "$WINDOW" "$SHOTS/$1.png"
    ok "screenshot $1.png"
}

# The dialog a waiting call opens (its title matches TITLE): nothing answered it yet, its
# screenshot, then Allow once, and the call ends.
allow_once() { # TITLE OUTPUT SHOT WHAT
    DIALOG=$(timeout 90 xdotool search --sync --onlyvisible --name "$1" | head -1) ||
        fail "no dialog for $4: $(cat "$2")"
    grep -q '"result"' "$2" && fail "$4 went ahead before anyone answered"
    sleep 0.5
    import -window "$DIALOG" "$SHOTS/$3.png"
    ok "screenshot $3.png"
    xdotool windowfocus --sync "$DIALOG"
    xdotool key --window "$DIALOG" alt+o
    wait_log "$2" '"result"' 90 "the call did not end once $4 was allowed"
}

start_app "$WORK/app.log"
ok "the window opened (id $WINDOW)"
wait_log "$WORK/app.log" 'MCP endpoint http://127.0.0.1:[0-9]+/mcp' 10 "no MCP endpoint"
URL=$(grep -oE 'http://127.0.0.1:[0-9]+/mcp' "$WORK/app.log" | head -1)
grep -q "no system tray" "$WORK/app.log" && fail "trayer runs, but the app found no tray"
ok "tray icon shown"
wait_log "$WORK/app.log" 'pool: .* python sandbox' 90 "the python pool did not warm"

# 2. A manual run: the editor starts with a Python plot example.
xdotool windowfocus --sync "$WINDOW"
xdotool key --window "$WINDOW" ctrl+Return
wait_log "$WORK/app.log" 'run [0-9a-f]+ python ok .* from manual' 90 "the manual run did not end ok"
ok "manual python run ended ok"
shot main-window
xdotool key --window "$WINDOW" alt+i
shot run-with-plot
xdotool key --window "$WINDOW" alt+o

# 3. Runs from a separately launched stdio instance, as an assistant starts it: a program that
#    prints as it goes, then a session whose variable survives from one call to the next.
coproc SRV { exec "$BIN/code-sandbox" --stdio --pool 0 2>"$WORK/stdio.log"; }
PIDS+=($SRV_PID)
send() { printf '%s\n' "$1" >&"${SRV[1]}"; }
answer() { # ID: the response with this id (notifications before it are skipped)
    local line
    while IFS= read -r -t 120 line <&"${SRV[0]}"; do
        case $line in *'"id":'"$1"[,}]*)
            printf '%s\n' "$line" >>"$WORK/stdio.out"
            printf '%s\n' "$line"
            return 0 ;;
        esac
    done
    fail "no answer to request $1 from the stdio instance"
}
call() { # ID TOOL ARGUMENTS-JSON
    send '{"jsonrpc":"2.0","id":'"$1"',"method":"tools/call","params":{"name":"'"$2"'","arguments":'"$3"'}}'
    answer "$1"
}
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.0"}}}'
answer 1 >/dev/null
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
wait_log "$WORK/stdio.log" 'a Code Sandbox window is watching' 15 "the stdio instance did not reach the window"
# (call runs in $(...): a coprocess's descriptors reach command substitutions, not pipelines)
R=$(call 2 execute_code '{"language":"python","code":"import sys, time\nfor i in range(4):\n    print(f\"step {i}: {2**i}\", flush=True)\n    time.sleep(0.5)\nprint(\"warning: last step\", file=sys.stderr)\n"}')
grep -q 'step 3: 8' <<<"$R" || fail "the stdio client did not get its answer"
wait_log "$WORK/app.log" 'of instance pid [0-9]+ \( claude-code \) ok' 90 \
    "the stdio instance's run did not show in the window"
ok "the run of a separate stdio instance showed in the window"
R=$(call 3 create_session '{"language":"python"}')
SID=$(grep -oE 's-[0-9a-z]{1,8}-[0-9a-f]{12}' <<<"$R" | head -1)
[ -n "$SID" ] || fail "create_session gave no session id"
R=$(call 4 run_python_code '{"session_id":"'"$SID"'","code":"data = [3, 1, 4, 1, 5, 9, 2, 6]\nx = 41"}')
R=$(call 5 run_python_code '{"session_id":"'"$SID"'","code":"print(x + 1, sorted(data))"}')
grep -q '42 \[1, 1, 2, 3, 4, 5, 6, 9\]' <<<"$R" || fail "the session did not keep its variables: $R"
for _ in $(seq 150); do
    [ "$(grep -cE 'of instance pid [0-9]+ \( claude-code \) ok' "$WORK/app.log")" -ge 3 ] && break
    sleep 0.2
done
[ "$(grep -cE 'of instance pid [0-9]+ \( claude-code \) ok' "$WORK/app.log")" -ge 3 ] ||
    fail "the session's runs did not show in the window"
ok "a session's runs showed in the window, its variables kept between calls"
shot assistant-run
exec {SRV[1]}>&-
wait "$SRV_PID" || true

# 3b. The control room, with the official SDK client through --stdio instances: an assistant
#     whose policy says "ask" waits until a person allows its run in the window; a long run is
#     stopped from the window's Run menu and its client is told so.
SDK_CALL="$(cd "$(dirname "$0")/../e2e" && pwd)/sdk-call.mjs"
mkdir -p "$XDG_CONFIG_HOME/code-sandbox"
cat >>"$XDG_CONFIG_HOME/code-sandbox/code-sandbox.conf" <<'CONF'
[assistants]
policies="{\"default\":{\"action\":\"run\"},\"assistants\":[{\"client\":\"cautious-bot\",\"action\":\"ask\"},{\"client\":\"net-bot\",\"action\":\"run\",\"otherHosts\":\"ask\"}]}"
CONF
sdk_call() { # OUTPUT CLIENT TOOL ARGS: in the background
    node "$SDK_CALL" --stdio "$BIN/code-sandbox" --stdio --pool 0 -- --client "$2" --tool "$3" \
        --args "$4" >"$1" 2>>"$WORK/stdio.log" &
    PIDS+=($!)
}
sdk_call "$WORK/ask.out" cautious-bot execute_code \
    '{"language":"python","code":"import statistics\nprint(statistics.mean([3, 1, 4, 1, 5]))\n"}'
allow_once "^Approve a run" "$WORK/ask.out" approval-dialog "the run of an assistant whose policy says ask"
grep -q '"progress":"waiting for approval in the Code Sandbox window"' "$WORK/ask.out" ||
    fail "the waiting call did not say it waits: $(cat "$WORK/ask.out")"
grep -q '2.8' "$WORK/ask.out" || fail "the allowed call did not run: $(cat "$WORK/ask.out")"
ok "an 'ask' assistant's call waited for the window, and ran once allowed"

# 3c. A connection beyond a run's list, asked live: a headless allow-list server (--egress), whose
#     assistant's policy asks for other hosts, holds the connection while the window asks; "Allow
#     once" lets it through, and the run's Network tab shows both connections. The world is a
#     web server of this script's on the machine's address, named through the gateway's
#     test-only name map (this machine has no internet).
ADDR=$(hostname -I | tr ' ' '\n' | grep -E '^[0-9.]+$' | grep -v '^172\.' | head -1)
[ -n "$ADDR" ] || fail "the machine has no address for the test's web server"
WORLD_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
python3 -m http.server "$WORLD_PORT" --bind 0.0.0.0 --directory "$WORK" >"$WORK/world.log" 2>&1 &
PIDS+=($!)
CODE_SANDBOX_TEST_EGRESS_HOSTS="world.test=$ADDR,other.test=$ADDR" \
CODE_SANDBOX_TEST_EGRESS_PUBLIC="$ADDR/32" \
    node "$SDK_CALL" --stdio "$BIN/code-sandbox" --stdio --pool 0 --egress "world.test:$WORLD_PORT" \
    -- --client net-bot --tool execute_code \
    --args '{"language":"python","code":"import urllib.request\nfor host in (\"world.test\", \"other.test\"):\n    r = urllib.request.urlopen(f\"http://{host}:'"$WORLD_PORT"'/\", timeout=100)\n    print(host, r.status)\n"}' \
    >"$WORK/net.out" 2>>"$WORK/stdio.log" &
PIDS+=($!)
allow_once "^Allow a connection" "$WORK/net.out" ask-connection-dialog \
    "the connection beyond the run's list"
grep -q 'other.test 200' "$WORK/net.out" || fail "the allowed connection did not go through: $(cat "$WORK/net.out")"
ok "a connection beyond the run's list waited for the window, and went through once allowed"
xdotool windowfocus --sync "$WINDOW"
xdotool key --window "$WINDOW" alt+n
shot network-tab
xdotool key --window "$WINDOW" alt+o

# 3d. Workspaces. A stdio instance with a copy-on-write workspace runs a program that changes its
#     copy of a folder: the folder stays as it was until the run's Workspace tab applies the
#     change set. Then a headless instance's run whose workspace asks (apply "ask") ends: the
#     window asks in a dialog of its own, and its Apply writes that folder. (--workspace has no
#     apply setting, so that run is made as the server makes it and told over the monitor socket
#     by gui_workspacepublisher; see tests/gui/workspacepublisher.cpp.)
REPO=$WORK/repo
mkdir -p "$REPO/src"
printf 'def mean(xs):\n    return sum(xs) / len(xs)\n' >"$REPO/src/stats.py"
printf 'x,y\n1,2\n' >"$REPO/old.csv"
printf 'TOKEN=not-for-the-sandbox\n' >"$REPO/.env"
cat >"$WORK/ws.py" <<'PY'
import pathlib
repo = pathlib.Path('/workspace/repo')
stats = repo / 'src/stats.py'
stats.write_text(stats.read_text().replace(
    '    return sum(xs) / len(xs)',
    '    if not xs:\n        raise ValueError("mean of nothing")\n    return sum(xs) / len(xs)'))
(repo / 'src/test_stats.py').write_text(
    'from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n')
(repo / 'old.csv').unlink()
print('edited', sorted(str(p.relative_to(repo)) for p in repo.rglob('*')))
PY
WS_ARGS=$(python3 -c 'import json, sys; print(json.dumps({"workspaces": ["repo"], "code": open(sys.argv[1]).read()}))' "$WORK/ws.py")
# The instance keeps its runs where the window does (sdk-call passes CODE_SANDBOX_* on), so that
# the decision made in the window reaches the run's row.
CODE_SANDBOX_HISTORY=$XDG_DATA_HOME/code-sandbox/history.sqlite \
    node "$SDK_CALL" --stdio "$BIN/code-sandbox" --stdio --pool 0 --workspace "repo=$REPO:rw" \
    -- --client claude-code --tool run_python_code --args "$WS_ARGS" \
    >"$WORK/ws.out" 2>>"$WORK/stdio.log" || fail "the workspace run failed: $(cat "$WORK/ws.out")"
grep -q 'not applied' "$WORK/ws.out" || fail "the workspace run's result has no change set: $(cat "$WORK/ws.out")"
grep -q 'raise ValueError' "$REPO/src/stats.py" && fail "the run changed the folder itself"
[ -f "$REPO/old.csv" ] && [ ! -e "$REPO/src/test_stats.py" ] || fail "the run changed the folder itself"
for _ in $(seq 150); do
    [ "$(grep -cE 'of instance pid [0-9]+ \( claude-code \) ok' "$WORK/app.log")" -ge 4 ] && break
    sleep 0.2
done
[ "$(grep -cE 'of instance pid [0-9]+ \( claude-code \) ok' "$WORK/app.log")" -ge 4 ] ||
    fail "the workspace run did not show in the window"
ok "a run changed its copy of a workspace; the folder is as it was"
xdotool windowfocus --sync "$WINDOW"
xdotool key --window "$WINDOW" alt+k
shot workspace-tab
xdotool key --window "$WINDOW" alt+a
for _ in $(seq 100); do [ -f "$REPO/src/test_stats.py" ] && break; sleep 0.1; done
grep -q 'raise ValueError' "$REPO/src/stats.py" && [ -f "$REPO/src/test_stats.py" ] &&
    [ ! -e "$REPO/old.csv" ] || fail "Apply in the Workspace tab did not write the folder"
grep -qx 'TOKEN=not-for-the-sandbox' "$REPO/.env" || fail "Apply touched .env"
ok "Apply in the Workspace tab wrote the change set into the folder"
xdotool key --window "$WINDOW" alt+o

SALES=$WORK/sales
mkdir -p "$SALES"
printf 'import csv\n\nrows = list(csv.DictReader(open("q3.csv")))\nprint(len(rows))\n' >"$SALES/clean.py"
printf 'region,month,revenue\nnorth,jul,1200\nsouth,jul,950\nnorth,jul,1200\nnorth,aug,1310\nsouth,aug,990\n' \
    >"$SALES/q3.csv"
printf 'check the duplicates\n' >"$SALES/notes.txt"
"$BIN/gui_workspacepublisher" "$SALES" gemini-cli >"$WORK/publisher.log" 2>&1 ||
    fail "the ask run did not reach the window: $(cat "$WORK/publisher.log")"
DIALOG=$(timeout 30 xdotool search --sync --onlyvisible --name "^Apply the run's changes" | head -1) ||
    fail "no dialog asked about the run's changes"
[ -f "$SALES/report.md" ] && fail "the ask run's changes reached the folder before anyone answered"
sleep 0.5
import -window "$DIALOG" "$SHOTS/workspace-ask-dialog.png"
ok "screenshot workspace-ask-dialog.png"
xdotool windowfocus --sync "$DIALOG"
xdotool key --window "$DIALOG" alt+a
for _ in $(seq 100); do [ -f "$SALES/report.md" ] && break; sleep 0.1; done
[ -f "$SALES/report.md" ] && [ ! -e "$SALES/notes.txt" ] ||
    fail "Apply in the dialog did not write the folder"
ok "a headless instance's 'ask' run opened the dialog, and its Apply wrote the folder"
# Both decisions are kept with the runs in the history (the instances wrote the rows).
applied_runs() {
    python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
        "SELECT count(*) FROM runs WHERE workspaces LIKE ?", ("%\"decision\":\"applied\"%",)).fetchone()[0])' \
        "$XDG_DATA_HOME/code-sandbox/history.sqlite"
}
for _ in $(seq 50); do [ "$(applied_runs)" -ge 2 ] && break; sleep 0.2; done
[ "$(applied_runs)" -eq 2 ] || fail "the history kept $(applied_runs) of the 2 decisions"
ok "the history keeps both decisions with their runs"
# Closes it; the dialog is gone before the key's release reaches it (xdotool's BadWindow).
xdotool key --window "$DIALOG" Escape 2>/dev/null || true
# That lost release leaves Escape held down in the X server, which repeats it into whatever has
# the focus next (a dialog later on closes as soon as it opens): release it.
xdotool keyup Escape 2>/dev/null || true
xdotool windowfocus --sync "$WINDOW"

sdk_call "$WORK/long.out" long-bot execute_code \
    '{"language":"python","timeout":120,"code":"import time\nx = bytearray(64 << 20)\nprint(\"started\", flush=True)\nt = time.time()\nwhile time.time() - t < 60: pass\n"}'
wait_log "$WORK/app.log" 'of instance pid [0-9]+ \( long-bot \) started' 90 \
    "the long run of a stdio instance did not start in the window"
wait_log "$WORK/long.out" '"progress":"stdout: started"' 120 "the long run printed nothing"
# A few seconds of samples for the chart, then the screenshot of a live run.
sleep 3
shot live-run-chart
xdotool windowfocus --sync "$WINDOW"
# A click on the toolbar's Stop run (the list follows the newest run, so it is the one selected).
# Where the button is: beside New run, in the window of 1280x820 this script always opens.
xdotool mousemove --window "$WINDOW" 143 38
sleep 0.3
T0=$(date +%s%N)
xdotool click 1
for _ in $(seq 500); do
    grep -q '"result"' "$WORK/long.out" && break
    sleep 0.01
done
T1=$(date +%s%N)
grep -q '"result"' "$WORK/long.out" || fail "the stopped run's client got no answer"
grep -q 'stopped from the Code Sandbox window' "$WORK/long.out" ||
    fail "the client was not told the window stopped it: $(tail -1 "$WORK/long.out")"
grep -q '"isError":true' "$WORK/long.out" || fail "the stopped run's result is not an error"
STOP_MS=$(((T1 - T0) / 1000000))
ok "a stdio instance's run stopped from the window: its SDK client had the answer ${STOP_MS} ms after the click"
[ "$STOP_MS" -le 5000 ] || fail "the stop took ${STOP_MS} ms"
wait_log "$WORK/app.log" 'of instance pid [0-9]+ \( long-bot \) cancelled' 30 \
    "the window did not show the run as stopped"
shot stopped-run

# 3e. Sessions' snapshots: gui_snapshots opens a window of its own over this display (its own
#     server, whose session steps, is rewound and is forked as the window's menu does it) and
#     takes the screenshot of the tree with its menu open. Only the functions the screenshot
#     needs: ctest runs the others offscreen, where file dialogs are always Qt's own.
CODE_SANDBOX_SHOTS=$SHOTS "$BIN/gui_snapshots" twoCallsShowTwoSteps rewindHereBringsTheSessionBack \
    forkFromHereListsALinkedSession screenshotOfTheTree >"$WORK/snapshots.log" 2>&1 ||
    fail "the session snapshots' window failed: $(grep -vE '^QINFO' "$WORK/snapshots.log" | tail -40)"
grep -q 'PASS   : SnapshotsTest::screenshotOfTheTree' "$WORK/snapshots.log" ||
    fail "no screenshot of the session tree: $(grep -E 'SKIP|FAIL' "$WORK/snapshots.log")"
ok "screenshot session-snapshots.png (a session's steps, a branch, a fork, the menu)"
# Its window had the focus: the app's gets it back for the keys that follow.
xdotool windowfocus --sync "$WINDOW"

# 3f. An assistant signs in (OAuth) to the window's endpoint with the official SDK's OAuth client,
#     naming itself by its client ID metadata document on the site above: its sign-in page
#     waits, the window asks (the consent dialog's screenshot, which says whose document names
#     it), Allow; the browser is sent back with a code that the SDK exchanges (PKCE) for an
#     access token, and its call runs.
for _ in $(seq 50); do [ -s "$WORK/site-port" ] && break; sleep 0.1; done
[ -s "$WORK/site-port" ] || fail "the client's site did not start: $(cat "$WORK/site.log")"
# The files exist before the client runs: the loop below reads them at once, whatever the load.
: >"$WORK/signin.jsonl"
: >"$WORK/signin.err"
node "$SDK_CALL" --sign-in "$URL" --client 'claims-anything' \
    --metadata-url "https://localhost:$(cat "$WORK/site-port")/claude-code.json" \
    --tool run_python_code --args '{"code": "print(6 * 7)"}' --timeout-ms 120000 \
    >"$WORK/signin.jsonl" 2>"$WORK/signin.err" &
SIGNIN_PID=$!
PIDS+=($SIGNIN_PID)
SIGNIN=
for _ in $(seq 100); do
    SIGNIN=$(sed -n 's/^{"signIn":"\([0-9a-f]*\)".*/\1/p' "$WORK/signin.jsonl")
    [ -n "$SIGNIN" ] && break
    kill -0 "$SIGNIN_PID" 2>/dev/null || break
    sleep 0.2
done
[ -n "$SIGNIN" ] || fail "no sign-in page: $(cat "$WORK/signin.jsonl" "$WORK/signin.err")"
grep -q 'choose <b>Allow</b> there' "$WORK/signin.jsonl" ||
    fail "the sign-in page does not send the person to the window: $(cat "$WORK/signin.jsonl")"
grep -q 'as named by its metadata document at localhost' "$WORK/signin.jsonl" ||
    fail "the sign-in page does not say what names the client: $(cat "$WORK/signin.jsonl")"
DIALOG=$(timeout 30 xdotool search --sync --onlyvisible --name '^An assistant wants to sign in$' | head -1) ||
    fail "the window did not ask about the sign-in"
sleep 0.5
import -window "$DIALOG" "$SHOTS/sign-in-consent.png"
ok "screenshot sign-in-consent.png"
# Alt+A is Allow; pressed again (at most five times) should the key reach the window before the
# dialog has the focus.
for _ in 1 2 3 4 5; do
    xdotool windowfocus --sync "$DIALOG" 2>/dev/null || true
    xdotool key --window "$DIALOG" alt+a
    for _ in $(seq 10); do
        grep -q "sign-in $SIGNIN allowed as" "$WORK/app.log" && break 2
        sleep 0.2
    done
    echo "desktop.sh: Alt+A did not reach the consent dialog (focus: $(xdotool getwindowfocus)); again" >&2
done
grep -q "sign-in $SIGNIN allowed as" "$WORK/app.log" || fail "Allow in the consent dialog was not taken"
wait "$SIGNIN_PID" || fail "the signed-in SDK client did not run its call: $(cat "$WORK/signin.jsonl" "$WORK/signin.err")"
grep -q '"result".*42' "$WORK/signin.jsonl" || fail "the signed-in call did not print 42: $(cat "$WORK/signin.jsonl")"
ok "the SDK client signed in by its metadata document with the window's Allow, and its call ran"
# The dialog had the focus: the window gets it back for the keys that follow.
xdotool windowfocus --sync "$WINDOW"

# 4. Closing the window keeps serving; a second launch shows it again.
xdotool key --window "$WINDOW" ctrl+w
for _ in $(seq 25); do
    xdotool search --onlyvisible --name '^Code Sandbox$' >/dev/null 2>&1 || break
    sleep 0.2
done
xdotool search --onlyvisible --name '^Code Sandbox$' >/dev/null 2>&1 && fail "the window did not close"
kill -0 "$APP" || fail "closing the window ended the app"
TOKEN=$(cat "$XDG_CONFIG_HOME/code-sandbox/http-token")
REPLY=$(curl -s --max-time 10 -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' \
    "$URL")
echo "$REPLY" | grep -q '"serverInfo"' || fail "the HTTP endpoint did not answer with the window closed: $REPLY"
ok "window closed, the HTTP endpoint still answers initialize"
"$BIN/code-sandbox" </dev/null >"$WORK/second.log" 2>&1 || fail "the second launch failed: $(cat "$WORK/second.log")"
grep -q "already open" "$WORK/second.log" || fail "the second launch did not find the first"
wait_log "$WORK/app.log" 'showing the window' 10 "the window did not hear the second launch"
timeout 60 xdotool search --sync --onlyvisible --name '^Code Sandbox$' >/dev/null ||
    fail "the second launch did not show the window"
ok "a second launch showed the running window"

# 5. The history survives a restart.
kill -TERM "$APP"
wait "$APP" 2>/dev/null || true
start_app "$WORK/app2.log"
wait_log "$WORK/app2.log" 'history: [0-9]+ runs loaded' 10 "the history was not loaded"
RUNS=$(grep -oE 'history: [0-9]+ runs' "$WORK/app2.log" | grep -oE '[0-9]+')
[ "$RUNS" -ge 2 ] || fail "the history has $RUNS runs after a restart, expected 2"
ok "after a restart the history has $RUNS runs"
shot history-after-restart
kill -TERM "$APP"
wait "$APP" 2>/dev/null || true
echo "desktop.sh: all checks passed; screenshots in $SHOTS"
