#include "languageregistry.h"

LanguageRegistry LanguageRegistry::builtIn()
{
    LanguageRegistry r;
    Language py;
    py.name = QStringLiteral("python");
    py.aliases = {QStringLiteral("py"), QStringLiteral("python3")};
    py.title = QStringLiteral("Python 3");
    py.image = QStringLiteral("code-sandbox/python:latest");
    py.buildName = QStringLiteral("python");
    py.fileName = QStringLiteral("main.py");
    py.command = {QStringLiteral("python3"), QStringLiteral("-u"), QStringLiteral("main.py")};
    py.env = {QStringLiteral("PYTHONUNBUFFERED=1"), QStringLiteral("PYTHONDONTWRITEBYTECODE=1"),
              QStringLiteral("MPLBACKEND=Agg"), QStringLiteral("MPLCONFIGDIR=/tmp/matplotlib")};
    // The interpreter starts (and imports site) while the container waits in the pool; the
    // program then runs as __main__ from /sandbox/main.py, with tracebacks as `python3 main.py`
    // would print them.
    py.preloadCommand = {QStringLiteral("python3"), QStringLiteral("-u"), QStringLiteral("-c"),
                         QStringLiteral(R"py(import os, sys
head = sys.stdin.buffer.readline().split()
if len(head) != 2 or not head[1].isdigit():
    sys.stderr.write("cs-run: bad header\n"); sys.exit(90)
nonce = head[0]
status_file = os.environ.pop("CS_PRELOAD")  # for cs-run, not for the program
with open(status_file, "wb") as f:
    f.write(nonce)
src = sys.stdin.buffer.read(int(head[1]))
with open("main.py", "wb") as f:
    f.write(src)
null = os.open("/dev/null", os.O_RDONLY); os.dup2(null, 0); os.close(null)
sys.argv = ["main.py"]; sys.path[0] = "/sandbox"
del head, f, null
def _run(src):
    import traceback
    g = {"__name__": "__main__", "__file__": "/sandbox/main.py", "__builtins__": __builtins__}
    try:
        code = compile(src, "/sandbox/main.py", "exec")
    except SyntaxError as e:
        traceback.print_exception(type(e), e, None)
        return 1
    try:
        exec(code, g)
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        return 1
    return 0
rc = _run(src)
# What normal interpreter exit would do (exit handlers, waiting for threads), then the result
# line at once: tearing the interpreter down would only delay it.
import atexit, threading
try:
    threading._shutdown()
except Exception:
    pass
atexit._run_exitfuncs()
for s in (sys.stdout, sys.stderr):
    try:
        s.flush()
    except Exception:
        pass
rc &= 0xFF
line = nonce + b" " + str(rc).encode() + b"\n"
os.unlink(status_file)
os.write(1, line); os.write(2, line)
os._exit(rc)
)py")};
    py.packageManager = QStringLiteral("pip");
    py.versionCommand = {QStringLiteral("python3"), QStringLiteral("--version")};
    py.preinstalled = {QStringLiteral("numpy"), QStringLiteral("pandas"),
                       QStringLiteral("matplotlib"), QStringLiteral("pillow")};
    py.useCases = {QStringLiteral("data analysis"), QStringLiteral("numerical computing"),
                   QStringLiteral("scripting and automation"), QStringLiteral("plotting")};
    py.example = QStringLiteral("import numpy as np\nprint(np.arange(5).sum())");
    py.printHint = QStringLiteral("print()");
    py.visualization = true;
    r.add(py);

    Language js;
    js.name = QStringLiteral("javascript");
    js.aliases = {QStringLiteral("js"), QStringLiteral("node"), QStringLiteral("nodejs")};
    js.title = QStringLiteral("JavaScript (Node.js)");
    js.image = QStringLiteral("code-sandbox/node:latest");
    js.buildName = QStringLiteral("node");
    js.fileName = QStringLiteral("main.js");
    js.command = {QStringLiteral("node"), QStringLiteral("main.js")};
    // Node starts while the container waits in the pool; the program then runs as the main
    // module /sandbox/main.js, and cs-run reports the exit status after node exits.
    js.preloadCommand = {QStringLiteral("node"), QStringLiteral("-e"), QStringLiteral(R"js(
const fs = require("fs");
const byte = Buffer.alloc(1);
let head = "";
while (fs.readSync(0, byte, 0, 1, null) === 1 && byte[0] !== 10) head += String.fromCharCode(byte[0]);
const [nonce, size] = head.split(" ");
if (!/^[0-9a-f]+$/.test(nonce || "") || !/^[0-9]+$/.test(size || "")) {
  process.stderr.write("cs-run: bad header\n");
  process.exit(90);
}
const src = Buffer.alloc(Number(size));
for (let got = 0; got < src.length;) {
  const n = fs.readSync(0, src, got, src.length - got, null);
  if (n <= 0) break;
  got += n;
}
fs.writeFileSync(process.env.CS_PRELOAD, nonce);
delete process.env.CS_PRELOAD; // for cs-run, not for the program
fs.writeFileSync("/sandbox/main.js", src);
// The lowest free descriptor is reused: this puts /dev/null on stdin, as for other programs.
fs.closeSync(0);
fs.openSync("/dev/null", "r");
process.argv[1] = "/sandbox/main.js";
require("module").runMain();
)js")};
    js.packageManager = QStringLiteral("npm");
    js.versionCommand = {QStringLiteral("node"), QStringLiteral("--version")};
    js.useCases = {QStringLiteral("JSON and text processing"), QStringLiteral("algorithms"),
                   QStringLiteral("quick scripts")};
    js.example = QStringLiteral("console.log([1, 2, 3].map(x => x * 2));");
    js.printHint = QStringLiteral("console.log()");
    r.add(js);
    return r;
}

const Language *LanguageRegistry::find(const QString &nameOrAlias) const
{
    const QString key = nameOrAlias.trimmed().toLower();
    for (const Language &l : m_languages)
        if (l.name == key || l.aliases.contains(key))
            return &l;
    return nullptr;
}

QStringList LanguageRegistry::names() const
{
    QStringList out;
    for (const Language &l : m_languages)
        out.append(l.name);
    return out;
}

bool LanguageRegistry::setImage(const QString &nameOrAlias, const QString &image)
{
    const Language *found = find(nameOrAlias);
    for (Language &l : m_languages) {
        if (&l == found) {
            l.image = image;
            return true;
        }
    }
    return false;
}
