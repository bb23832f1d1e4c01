#pragma once

// The programs tst_secrets runs (a header of their own: moc does not read raw string literals
// well). API_KEY holds the placeholder of a secret bound to world.test and bad.test.

// %1 the TLS world's port, %2 the plain world's, %3 the untrusted server's. The key goes to its
// host, to a host it is not bound to, and to a bound host whose certificate the host's trust
// store does not know; what came back is printed and left in a file.
inline constexpr const char *kSecretPythonProgram = R"py(
import json, os, urllib.request, urllib.error
TLS, PLAIN, BAD = %1, %2, %3
key = os.environ.get("API_KEY", "")
def get(url):
    try:
        request = urllib.request.Request(url, headers={"Authorization": "Bearer " + key})
        return urllib.request.urlopen(request, timeout=20).read().decode()
    except urllib.error.HTTPError as e:
        return "HTTP %d %s" % (e.code, e.read().decode()[:300])
    except Exception as e:
        return "ERR " + type(e).__name__ + " " + str(e)
out = {"key": key, "plain_var": os.environ.get("PLAIN_VAR", ""),
       "bound": get("https://world.test:%d/bound" % TLS),
       "other": get("http://other.test:%d/other" % PLAIN),
       "untrusted": get("https://bad.test:%d/bad" % BAD)}
with open(os.path.join(os.environ["OUTPUT_DIR"], "seen.json"), "w") as f:
    json.dump(out, f)
print(json.dumps(out))
)py";

// %1 the TLS world's port: Node's fetch (through the loader's proxy agent) with the key.
inline constexpr const char *kSecretNodeProgram = R"js(
const key = process.env.API_KEY || "";
fetch("https://world.test:%1/node", { headers: { Authorization: "Bearer " + key } })
  .then((r) => r.text(), (e) => "ERR " + (e.cause ? e.cause.message : e.message))
  .then((got) => console.log(JSON.stringify({ key, got })));
)js";
