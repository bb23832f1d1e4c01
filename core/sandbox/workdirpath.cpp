#include "workdirpath.h"

#include "sandboxlayout.h"

#include <QDir>

QString WorkdirPath::normalize(const QString &path, QString *error)
{
    const QString workdir = QString::fromLatin1(SandboxLayout::kWorkdir);
    const auto fail = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("file path '%1' %2").arg(path.left(200), why);
        return QString();
    };
    if (path.trimmed().isEmpty())
        return fail(QStringLiteral("is empty"));
    if (path.contains(QChar(0)))
        return fail(QStringLiteral("contains a NUL character"));
    if (path.size() > 1024)
        return fail(QStringLiteral("is longer than 1024 characters"));
    QString rel = path;
    if (rel.startsWith(u'/')) {
        // Absolute paths are accepted only inside the workdir.
        const QString clean = QDir::cleanPath(rel);
        if (clean == workdir)
            return fail(QStringLiteral("names the workdir itself, not a file"));
        if (!clean.startsWith(workdir + u'/'))
            return fail(QStringLiteral("is outside the workdir %1").arg(workdir));
        rel = clean.mid(workdir.size() + 1);
    }
    rel = QDir::cleanPath(rel);
    if (rel == u"." || rel.isEmpty())
        return fail(QStringLiteral("names the workdir itself, not a file"));
    if (rel == u".." || rel.startsWith(QStringLiteral("../")) || rel.startsWith(u'/'))
        return fail(QStringLiteral("escapes the workdir %1").arg(workdir));
    return rel;
}
