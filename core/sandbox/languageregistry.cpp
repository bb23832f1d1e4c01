#include "languageregistry.h"

#include "embeddedscripts.h"

namespace {
QStringList words(const char *text)
{
    return QString::fromLatin1(text).split(u' ', Qt::SkipEmptyParts);
}

// A command line for `sh -c`, for version probes that need a pipe.
QStringList shell(const QString &script)
{
    return {QStringLiteral("sh"), QStringLiteral("-c"), script};
}

Language make(const char *name, const char *title, const char *aliases, const char *build,
              const char *file, const char *command)
{
    Language l;
    l.name = QString::fromLatin1(name);
    l.title = QString::fromLatin1(title);
    l.aliases = words(aliases);
    l.buildName = QString::fromLatin1(build);
    l.image = QStringLiteral("code-sandbox/%1:latest").arg(l.buildName);
    l.fileName = QString::fromLatin1(file);
    l.command = words(command);
    return l;
}

// Java insists that a public class lives in a file of its name, and the class to run is the
// one with main: take the public class's name (else the first class's), compile under that name,
// and leave it for the run command. Messages then name the user's class file, as javac would.
// The image carries a startup archive for javac (a JVM without it just starts slower).
const char *kJavaCompile =
    "cls=$(sed -n 's/^.*public[[:space:]]\\{1,\\}\\([a-z]\\{1,\\}[[:space:]]\\{1,\\}\\)*class"
    "[[:space:]]\\{1,\\}\\([A-Za-z_$][A-Za-z0-9_$]*\\).*$/\\2/p' Main.java | head -n 1); "
    "[ -n \"$cls\" ] || cls=$(sed -n 's/^[[:space:]]*\\([a-z]\\{1,\\}[[:space:]]\\{1,\\}\\)*class"
    "[[:space:]]\\{1,\\}\\([A-Za-z_$][A-Za-z0-9_$]*\\).*$/\\2/p' Main.java | head -n 1); "
    "[ -n \"$cls\" ] || cls=Main; "
    "mkdir -p /tmp/java/src /tmp/java/classes && cp Main.java \"/tmp/java/src/$cls.java\" && "
    "printf '%s' \"$cls\" > /tmp/java/main-class && cd /tmp/java/src && "
    "javac -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 "
    "-J-XX:SharedArchiveFile=/usr/local/share/code-sandbox/java/javac.jsa -d /tmp/java/classes "
    "\"$cls.java\"";
} // namespace

LanguageRegistry LanguageRegistry::builtIn()
{
    LanguageRegistry r;

    Language py =
        make("python", "Python 3", "py python3", "python", "main.py", "python3 -u main.py");
    py.env = words("PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg "
                   "MPLCONFIGDIR=/tmp/matplotlib");
    // Starts the interpreter while the container waits in the pool; it also captures matplotlib
    // figures (resources/loaders/python-loader.py).
    py.preloadCommand = {QStringLiteral("python3"), QStringLiteral("-u"), QStringLiteral("-c"),
                         QString::fromUtf8(kPythonLoader)};
    py.installCommand = QStringLiteral(
        "pip install --no-cache-dir --disable-pip-version-check --no-warn-script-location "
        "--break-system-packages --target /opt/cs-libs/python --");
    py.libraryEnv = {QStringLiteral("PYTHONPATH=/opt/cs-libs/python")};
    py.packageManager = QStringLiteral("pip");
    // The version, then the preinstalled libraries with their versions, read from the image.
    py.versionCommand = {QStringLiteral("python3"), QStringLiteral("-c"),
                         QStringLiteral("import sys, importlib.metadata as m\n"
                                        "print('Python ' + sys.version.split()[0])\n"
                                        "for n in ('numpy', 'pandas', 'matplotlib', 'pillow'):\n"
                                        "    print(n + ' ' + m.version(n))")};
    py.preinstalled = words("numpy pandas matplotlib pillow");
    py.useCases = {QStringLiteral("data analysis"), QStringLiteral("numerical computing"),
                   QStringLiteral("plotting (figures come back as PNG images)"),
                   QStringLiteral("scripting and automation")};
    py.example = QStringLiteral("import numpy as np\nprint(np.arange(5).sum())");
    py.printHint = QStringLiteral("print()");
    py.visualization = true;
    py.liveSession = true;
    r.add(py);

    Language js = make("javascript", "JavaScript (Node.js)", "js node nodejs", "node", "main.js",
                       "node main.js");
    js.preloadCommand = {QStringLiteral("node"), QStringLiteral("-e"),
                         QString::fromUtf8(kNodeLoader)};
    js.liveSession = true;
    js.installCommand =
        QStringLiteral("npm install --no-audit --no-fund --no-update-notifier --no-package-lock "
                       "--cache /tmp/npm-cache --prefix /opt/cs-libs/node --");
    js.libraryEnv = {QStringLiteral("NODE_PATH=/opt/cs-libs/node/node_modules")};
    js.packageManager = QStringLiteral("npm");
    js.versionCommand = words("node --version");
    js.useCases = {QStringLiteral("JSON and text processing"), QStringLiteral("algorithms"),
                   QStringLiteral("quick scripts")};
    js.example = QStringLiteral("console.log([1, 2, 3].map(x => x * 2));");
    js.printHint = QStringLiteral("console.log()");
    r.add(js);

    // Same image and entry point as JavaScript: the TypeScript compiler is loaded ahead of time
    // and strips types (no type check), so a program runs as soon as it parses.
    Language ts = make("typescript", "TypeScript (Node.js, types stripped)", "ts", "node",
                       "main.ts", "node main.ts");
    ts.preloadCommand = {QStringLiteral("node"), QStringLiteral("-e"),
                         QString::fromUtf8(kNodeLoader), QStringLiteral("typescript")};
    ts.installCommand = js.installCommand;
    ts.libraryEnv = js.libraryEnv;
    ts.packageManager = QStringLiteral("npm");
    ts.liveSession = true;
    ts.versionCommand = {QStringLiteral("node"), QStringLiteral("-p"),
                         QStringLiteral("'TypeScript ' + require('typescript').version + ', "
                                        "Node.js ' + process.version")};
    ts.useCases = {QStringLiteral("typed scripts"), QStringLiteral("algorithms"),
                   QStringLiteral("JSON processing")};
    ts.example =
        QStringLiteral("const xs: number[] = [1, 2, 3];\nconsole.log(xs.reduce((a, b) => a + b));");
    ts.printHint = QStringLiteral("console.log()");
    r.add(ts);

    Language sh = make("bash", "Bash", "sh shell", "bash", "main.sh", "bash main.sh");
    sh.versionCommand = shell(QStringLiteral("bash --version | head -n 1"));
    sh.preinstalled = words("coreutils grep sed gawk jq bc");
    sh.useCases = {QStringLiteral("shell pipelines"), QStringLiteral("text processing with "
                                                                     "standard tools")};
    sh.example = QStringLiteral("echo $((6 * 7))");
    sh.printHint = QStringLiteral("echo");
    r.add(sh);

    Language c = make("c", "C (GCC, C17)", "gcc", "gcc", "main.c", "./main");
    c.compileCommand = QStringLiteral("gcc -O2 -std=c17 -Wall -o main main.c -lm");
    c.versionCommand = shell(QStringLiteral("gcc --version | head -n 1"));
    c.preinstalled = {QStringLiteral("the C standard library (libc, libm)")};
    c.useCases = {QStringLiteral("systems programming"), QStringLiteral("performance checks")};
    c.example = QStringLiteral("#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 6 * 7); "
                               "return 0; }");
    c.printHint = QStringLiteral("printf()");
    r.add(c);

    Language cpp = make("cpp", "C++ (GCC, C++17)", "c++ cxx g++", "gcc", "main.cpp", "./main");
    cpp.compileCommand = QStringLiteral("g++ -O2 -std=c++17 -Wall -o main main.cpp");
    cpp.versionCommand = shell(QStringLiteral("g++ --version | head -n 1"));
    cpp.preinstalled = {QStringLiteral("the C++17 standard library")};
    cpp.useCases = {QStringLiteral("algorithms"), QStringLiteral("performance checks")};
    cpp.example = QStringLiteral("#include <iostream>\nint main() { std::cout << 6 * 7 << "
                                 "std::endl; }");
    cpp.printHint = QStringLiteral("std::cout");
    r.add(cpp);

    Language go = make("go", "Go", "golang", "go", "main.go", "./main");
    go.env = words("GOCACHE=/tmp/go-cache GOPATH=/tmp/go CGO_ENABLED=0 GO111MODULE=auto "
                   "GOFLAGS=-buildvcs=false GOTELEMETRY=off");
    go.compileCommand = QStringLiteral("go build -o main main.go");
    go.versionCommand = words("go version");
    go.preinstalled = {QStringLiteral("the Go standard library")};
    go.useCases = {QStringLiteral("concurrency"), QStringLiteral("algorithms")};
    go.example = QStringLiteral("package main\n\nimport \"fmt\"\n\nfunc main() { "
                                "fmt.Println(6 * 7) }");
    go.printHint = QStringLiteral("fmt.Println()");
    r.add(go);

    Language java = make("java", "Java (OpenJDK)", "jdk", "java", "Main.java", "");
    java.compileCommand = QString::fromLatin1(kJavaCompile);
    java.command = shell(QStringLiteral("exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "
                                        "/tmp/java/classes \"$(cat /tmp/java/main-class)\""));
    java.versionCommand = shell(QStringLiteral("java -version 2>&1 | head -n 1"));
    java.preinstalled = {QStringLiteral("the Java SE standard library")};
    java.useCases = {QStringLiteral("object-oriented programs"), QStringLiteral("algorithms")};
    java.example = QStringLiteral("public class Main {\n    public static void main(String[] "
                                  "args) {\n        System.out.println(6 * 7);\n    }\n}");
    java.printHint = QStringLiteral("System.out.println()");
    r.add(java);

    Language rb = make("ruby", "Ruby", "rb", "ruby", "main.rb", "ruby main.rb");
    rb.installCommand =
        QStringLiteral("gem install --no-document --install-dir /opt/cs-libs/ruby --");
    rb.libraryEnv = {QStringLiteral("GEM_PATH=/opt/cs-libs/ruby:")};
    rb.packageManager = QStringLiteral("gem");
    rb.versionCommand = shell(QStringLiteral("ruby --version; gem list --local --quiet | "
                                             "sed 's/ (\\(default: \\)*\\([^),]*\\).*/ \\2/'"));
    rb.preinstalled = words("json set date bigdecimal csv");
    rb.useCases = {QStringLiteral("text processing"), QStringLiteral("scripting")};
    rb.example = QStringLiteral("puts [1, 2, 3].sum * 7");
    rb.printHint = QStringLiteral("puts");
    r.add(rb);

    Language rl = make("r", "R", "rscript", "r", "main.R", "Rscript main.R");
    rl.installCommand = QStringLiteral(
        "Rscript -e 'p <- commandArgs(TRUE); install.packages(p, lib = \"/opt/cs-libs/r\", "
        "repos = \"https://cloud.r-project.org\"); "
        "q(status = !all(p %in% rownames(installed.packages(\"/opt/cs-libs/r\"))))'");
    rl.libraryEnv = {QStringLiteral("R_LIBS=/opt/cs-libs/r")};
    rl.packageManager = QStringLiteral("install.packages (CRAN)");
    rl.versionCommand =
        shell(QStringLiteral("R --version | head -n 1; Rscript -e 'p <- installed.packages(); "
                             "cat(paste(p[, \"Package\"], p[, \"Version\"]), sep = \"\\n\")'"));
    rl.preinstalled = words("base stats graphics utils methods");
    rl.useCases = {QStringLiteral("statistics"), QStringLiteral("data analysis")};
    rl.example = QStringLiteral("x <- c(40, 44)\nprint(mean(x) + 0)");
    rl.printHint = QStringLiteral("print()");
    r.add(rl);

    Language rs = make("rust", "Rust", "rs", "rust", "main.rs", "./main");
    rs.compileCommand = QStringLiteral("rustc --edition 2021 -O -o main main.rs");
    rs.versionCommand = words("rustc --version");
    rs.preinstalled = {QStringLiteral("the Rust standard library")};
    rs.useCases = {QStringLiteral("systems programming"), QStringLiteral("algorithms")};
    rs.example = QStringLiteral("fn main() {\n    println!(\"{}\", 6 * 7);\n}");
    rs.printHint = QStringLiteral("println!()");
    r.add(rs);
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
