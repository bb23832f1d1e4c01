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
