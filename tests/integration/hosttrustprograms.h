#pragma once

// The programs of tst_egress's tests of the host's trust store in runs with network. (Here, not
// in the test's source: after these raw strings, moc no longer finds the test's class.)

// %1 the TLS world's port. Stock HTTPS clients, told of no authority: they trust what the
// sandbox's store holds. Python's urllib through the gateway (HTTPS_PROXY), and whether the
// sandbox has the host's store (its file, the variable naming it, the trust variables).
inline constexpr const char *kHostTrustProgram = R"py(
import json, os, urllib.request
out = {"file": os.path.exists("/etc/code-sandbox/host-ca.crt"),
       "vars": [v for v in ("CS_HOST_CA", "SSL_CERT_FILE") if v in os.environ]}
try:
    out["https"] = urllib.request.urlopen("https://world.test:%1/h", timeout=15).read().decode()
except Exception as e:
    out["https"] = "ERR " + str(e)
print(json.dumps(out))
)py";

// The same with Node's fetch (through the gateway: the loader routes it).
inline constexpr const char *kHostTrustNodeProgram = R"js(
fetch("https://world.test:%1/n")
  .then((r) => r.text(), (e) => "ERR " + (e.cause ? e.cause.code || e.cause.message : e.message))
  .then((https) => console.log(JSON.stringify({ https })));
)js";

// On the open network (--network): straight to the world's address %2 with Python's default
// context, checking the certificate for world.test (no name service knows it there).
inline constexpr const char *kHostTrustOpenProgram = R"py(
import json, socket, ssl
try:
    s = socket.create_connection(("%2", %1), timeout=15)
    t = ssl.create_default_context().wrap_socket(s, server_hostname="world.test")
    t.sendall(b"GET /o HTTP/1.1\r\nHost: world.test:%1\r\nConnection: close\r\n\r\n")
    answer = t.recv(4096).decode()
    print(json.dumps({"https": answer.split("\r\n\r\n", 1)[-1]}))
except Exception as e:
    print(json.dumps({"https": "ERR " + str(e)}))
)py";
