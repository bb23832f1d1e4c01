#pragma once

#include "tararchive.h"
#include "workspacechangeset.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTest>
#include <sys/stat.h>

// What the workspace tests share: files written with a mode, archives edited as a sandbox would
// leave them, and the "path: why" lines of a scan's or a change set's report.
namespace WorkspaceTestFiles {

using Entries = QList<TarArchive::Entry>;
// No cap that matters to these tests.
constexpr qint64 kBig = qint64(1) << 30;

inline void write(const QString &path, const QByteArray &content, int mode = 0644)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    f.write(content);
    f.close();
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), mode_t(mode)), 0);
}

// `path` in the archive holds `data` from now on (a file the program wrote).
inline void setFile(Entries *entries, const QString &path, const QByteArray &data, int mode = 0644)
{
    for (TarArchive::Entry &e : *entries) {
        if (e.path == path) {
            e.data = data;
            e.mode = mode;
            return;
        }
    }
    TarArchive::Entry e;
    e.path = path;
    e.data = data;
    e.mode = mode;
    entries->append(e);
}

inline void remove(Entries *entries, const QString &path)
{
    entries->removeIf([&](const TarArchive::Entry &e) { return e.path == path; });
}

// Whether a "path: why" list has a line for `path` that says `words`.
inline bool listedWith(const QStringList &list, const QString &path, const QString &words)
{
    for (const QString &line : list) {
        if (line.startsWith(path + QStringLiteral(": ")) && line.contains(words))
            return true;
    }
    return false;
}

inline const WorkspaceChange *changeAt(const WorkspaceChangeSet &set, const QString &path)
{
    for (const WorkspaceChange &c : set.changes) {
        if (c.path == path)
            return &c;
    }
    return nullptr;
}

} // namespace WorkspaceTestFiles
