#pragma once

#include "executionresult.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

// The Python programs tst_egress runs in allow-list sandboxes (a header of their own: moc does
// not read raw string literals well, and tst_egress.cpp is moc's to read). %1, %2: see each.

// %1 the world's port, %2 its address: what the sandbox reaches, and how each refusal looks.
inline constexpr const char *kReachProgram = R"py(
import json, os, socket, urllib.request, urllib.error
PORT, ADDRESS = %1, "%2"
def get(url, opener=None):
    try:
        return (opener.open if opener else urllib.request.urlopen)(url, timeout=15).read().decode()
    except urllib.error.HTTPError as e:
        return "HTTP %d" % e.code
    except Exception as e:
        return "ERR " + type(e).__name__ + " " + str(e)
out = {"allowed": get("http://world.test:%d/a" % PORT),
       "other": get("http://other.test:%d/b" % PORT),
       "literal": get("http://%s:%d/c" % (ADDRESS, PORT))}
try:
    socket.getaddrinfo("world.test", PORT); out["dns"] = "resolved"
except OSError as e:
    out["dns"] = "ERR"
s = socket.socket(); s.settimeout(3)
try:
    s.connect((ADDRESS, PORT)); out["raw"] = "connected"
except OSError as e:
    out["raw"] = "ERR"
proxy = os.environ["HTTP_PROXY"]
# The host's side of the internal network (the address before the gateway's, where an engine
# would put it): no address there, so no way to the host's own services on the world's port.
gateway = proxy.split("@")[1].split(":")[0]
hostside = ".".join(gateway.split(".")[:3] + [str(int(gateway.split(".")[3]) - 1)])
s = socket.socket(); s.settimeout(3)
try:
    s.connect((hostside, PORT)); out["hostside"] = "connected"
except OSError as e:
    out["hostside"] = "ERR"
forged = proxy.split("@")[0].rsplit(":", 1)[0] + ":not-a-credential@" + proxy.split("@")[1]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": forged}))
out["forged"] = get("http://world.test:%d/d" % PORT, opener)
out["proxy"] = proxy
print(json.dumps(out))
)py";

// %1 an earlier sandbox's proxy URL (its credential revoked), %2 the port.
inline constexpr const char *kStaleCredentialProgram = R"py(
import json, os, urllib.request, urllib.error
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": "%1"}))
try:
    r = opener.open("http://world.test:%2/e", timeout=15).read().decode()
except urllib.error.HTTPError as e:
    r = "HTTP %d" % e.code
print(json.dumps({"stale": r, "own": os.environ["HTTP_PROXY"] != "%1"}))
)py";

// %1 the port.
inline constexpr const char *kFetchProgram = R"py(
import json, urllib.request
print(json.dumps({"got": urllib.request.urlopen("http://world.test:%1/x", timeout=15).read().decode()}))
)py";

// %1 the TLS world's port; /sandbox/ca.pem its CA. HTTPS through the gateway, then two tunnels
// made by hand: one whose TLS server name is the CONNECT host, one whose name is another host
// (fronting, which the gateway must end).
inline constexpr const char *kTlsProgram = R"py(
import base64, json, os, socket, ssl, urllib.parse, urllib.request
PORT = %1
ctx = ssl.create_default_context(cafile="/sandbox/ca.pem")
out = {}
try:
    out["https"] = urllib.request.urlopen("https://world.test:%d/s" % PORT, timeout=15,
                                          context=ctx).read().decode()
except Exception as e:
    out["https"] = "ERR " + str(e)
proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
auth = base64.b64encode(("%s:%s" % (proxy.username, proxy.password)).encode()).decode()
def tunnel(host, sni):
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=15)
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\nProxy-Authorization: Basic %s\r\n\r\n"
               % (host, PORT, host, PORT, auth)).encode())
    status = s.recv(4096).decode().split("\r\n")[0]
    if " 200" not in status:
        return "refused " + status
    try:
        t = ctx.wrap_socket(s, server_hostname=sni)
        t.sendall(("GET /t HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n"
                   % (sni, PORT)).encode())
        return "answered " + t.recv(4096).decode().split("\r\n")[0]
    except (OSError, ssl.SSLError) as e:
        return "ERR " + type(e).__name__
out["same"] = tunnel("world.test", "world.test")
out["fronted"] = tunnel("world.test", "other.test")
print(json.dumps(out))
)py";

// %1 the port. Node 18's fetch ignores the proxy variables; the node loader routes it through
// the gateway (undici's ProxyAgent, which tunnels http: URLs through CONNECT as well).
inline constexpr const char *kNodeFetchProgram = R"js(
const get = (url) => fetch(url).then((r) => r.status === 200 ? r.text() : "HTTP " + r.status,
                                     (e) => "ERR " + (e.cause ? e.cause.message : e.message));
Promise.all([get("http://world.test:%1/n"), get("http://other.test:%1/o")])
  .then(([allowed, other]) => console.log(JSON.stringify({ allowed, other })));
)js";

// %1 the port: four requests to other.test, a host the run's list does not name (the test
// answers each question the gateway asks: once, deny, always; the fourth is not asked).
inline constexpr const char *kAskedProgram = R"py(
import json, urllib.request, urllib.error
def get(path):
    try:
        return urllib.request.urlopen("http://other.test:%1" + path, timeout=60).read().decode()
    except urllib.error.HTTPError as e:
        return "HTTP %d" % e.code
    except Exception as e:
        return "ERR " + type(e).__name__ + " " + str(e)
print(json.dumps({"once": get("/1"), "denied": get("/2"), "always": get("/3"),
                  "after": get("/4")}))
)py";

// What kReachProgram's output says that it should not ("" when all is as expected): the listed
// host answered, the others refused by the gateway with an HTTP error the program can read, a
// forged credential refused, and no name lookup, raw route or host address of its own.
inline QString reachMismatch(const QJsonObject &out, const QString &port)
{
    const QList<QPair<const char *, QString>> expected{
        {"allowed", QStringLiteral("hello world.test:%1 /a").arg(port)},
        {"other", QStringLiteral("HTTP 403")},
        {"literal", QStringLiteral("HTTP 403")},
        {"forged", QStringLiteral("HTTP 407")},
        {"dns", QStringLiteral("ERR")},
        {"raw", QStringLiteral("ERR")},
        {"hostside", QStringLiteral("ERR")},
    };
    QStringList wrong;
    for (const auto &[key, value] : expected) {
        const QString got = out.value(QLatin1String(key)).toString();
        if (got != value)
            wrong.append(
                QStringLiteral("%1: %2 (expected %3)").arg(QLatin1String(key), got, value));
    }
    return wrong.join(QStringLiteral("; "));
}

// A run's connections as "host:port verdict".
inline QStringList attemptsSeen(const QList<NetworkAttempt> &attempts)
{
    QStringList seen;
    for (const NetworkAttempt &a : attempts)
        seen.append(QStringLiteral("%1:%2 %3")
                        .arg(a.host)
                        .arg(a.port)
                        .arg(ExecutionResult::verdictName(a.verdict)));
    return seen;
}
