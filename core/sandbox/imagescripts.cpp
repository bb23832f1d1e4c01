#include "imagescripts.h"

#include "embeddedscripts.h"

#include <QCryptographicHash>

namespace {
struct Script
{
    QString text;
    QString file;
    QString stub;
};

const QList<Script> &scripts()
{
    static const QList<Script> table = [] {
        const QString dir = QString::fromLatin1(ImageScripts::kDir) + u'/';
        const auto named = [](const char *prefix, const char *text, const char *suffix) {
            return QString::fromLatin1(prefix) + ImageScripts::hashOf(QByteArray(text)) +
                   QString::fromLatin1(suffix);
        };
        const QString csRun = named("cs-run-", kSupervisorScript, "");
        const QString python = named("python-loader-", kPythonLoader, ".bin");
        const QString node = named("node-loader-", kNodeLoader, ".js");
        return QList<Script>{
            // Sourced: the positional arguments, and $0, stay those of `sh -c`.
            {QString::fromUtf8(kSupervisorScript), csRun, QStringLiteral(". ") + dir + csRun},
            {QString::fromUtf8(kPythonLoader), python, QString()},
            // As `node -e` runs its text: a script in the global scope named [eval] (the loader
            // cuts the frames of [eval] from a program's stack traces).
            {QString::fromUtf8(kNodeLoader), node,
             QStringLiteral("require(\"vm\").runInThisContext(require(\"fs\").readFileSync(\"%1\", "
                            "\"utf8\"), { filename: \"[eval]\" })")
                 .arg(dir + node)},
        };
    }();
    return table;
}
} // namespace

QStringList ImageScripts::names()
{
    QStringList out;
    for (const Script &s : scripts())
        out.append(s.file);
    return out;
}

QString ImageScripts::hashOf(const QByteArray &text)
{
    return QString::fromLatin1(
        QCryptographicHash::hash(text, QCryptographicHash::Sha256).toHex().left(16));
}

QStringList ImageScripts::fromLabel(const QString &value)
{
    QStringList out;
    for (const QString &name : value.split(u',', Qt::SkipEmptyParts))
        out.append(name.trimmed());
    return out;
}

QStringList ImageScripts::compact(const QStringList &command, const QStringList &carried)
{
    if (carried.isEmpty())
        return command;
    QStringList out = command;
    for (QString &word : out)
        for (const Script &s : scripts())
            if (word.size() == s.text.size() && word == s.text && carried.contains(s.file)) {
                word = s.stub;
                break;
            }
    return out;
}
