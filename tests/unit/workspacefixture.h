#pragma once

// Shared by the run record, history and window tests: a copy-on-write workspace's run made the
// way the server makes it (the folder scanned, the sandbox's copy as an archive with the
// program's changes, the change set computed from it), without an engine.

#include "tararchive.h"
#include "workspacerun.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QTest>
#include <memory>

// Writes `files` (relative path → content) under `folder`, making folders as needed.
inline bool writeFiles(const QString &folder, const QMap<QString, QByteArray> &files)
{
    for (auto it = files.cbegin(); it != files.cend(); ++it) {
        const QString path = folder + u'/' + it.key();
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(it.value()) < 0)
            return false;
    }
    return true;
}

inline QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Workspace `name` over `folder`, and what a run that changed its copy brings back: `changes`
// maps a path to its new content, a null QByteArray deleting it; `extra` entries (paths under
// NAME/) are what else the program left there (links, devices). The folder is scanned now, as
// the server scans it when the run starts.
inline WorkspaceRun changedWorkspace(const QString &name, const QString &folder,
                                     Workspace::Apply apply,
                                     const QMap<QString, QByteArray> &changes,
                                     const QList<TarArchive::Entry> &extra = {})
{
    Workspace ws;
    ws.name = name;
    ws.path = QFileInfo(folder).canonicalFilePath();
    ws.mode = Workspace::Mode::CopyOnWrite;
    ws.apply = apply;
    WorkspaceScanner scanner;
    auto scan = std::make_shared<WorkspaceScan>(scanner.scan(ws, -1));
    if (!scan->error.isEmpty())
        qFatal("scan: %s", qPrintable(scan->error));

    // The sandbox's copy when the program ended.
    QList<TarArchive::Entry> entries;
    TarArchive::Entry root;
    root.path = name;
    root.isDirectory = true;
    root.mode = 0755;
    entries.append(root);
    for (const WorkspaceEntry &e : scan->entries) {
        TarArchive::Entry entry;
        entry.path = name + u'/' + e.path;
        entry.mode = e.mode;
        if (e.type == WorkspaceEntry::Type::Directory) {
            entry.isDirectory = true;
        } else if (e.type == WorkspaceEntry::Type::File) {
            if (changes.contains(e.path))
                continue; // changed or deleted: below
            entry.data = readFile(ws.path + u'/' + e.path);
        } else {
            continue;
        }
        entries.append(entry);
    }
    for (auto it = changes.cbegin(); it != changes.cend(); ++it) {
        if (it.value().isNull())
            continue;
        TarArchive::Entry entry;
        entry.path = name + u'/' + it.key();
        entry.data = it.value();
        entries.append(entry);
    }
    entries.append(extra);
    QString error;
    const QByteArray tar = TarArchive::pack(entries, &error);
    WorkspaceRun run;
    run.workspace = ws;
    run.scan = scan;
    run.changes = WorkspaceChangeSet::compute(*scan, tar, 1LL << 30, 256LL << 20, 200000, &error);
    if (!error.isEmpty())
        qFatal("change set: %s", qPrintable(error));
    return run;
}

// A read-only workspace over `folder`, as it went in.
inline WorkspaceRun readOnlyWorkspace(const QString &name, const QString &folder)
{
    WorkspaceRun run;
    run.workspace.name = name;
    run.workspace.path = QFileInfo(folder).canonicalFilePath();
    WorkspaceScanner scanner;
    run.scan = std::make_shared<WorkspaceScan>(scanner.scan(run.workspace, -1));
    return run;
}
