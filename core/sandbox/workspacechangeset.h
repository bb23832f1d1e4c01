#pragma once

#include "workspacescanner.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

struct WorkspaceChange
{
    enum class Kind
    {
        Added,
        Modified,
        Deleted,
        Renamed
    };

    Kind kind = Kind::Added;
    QString path;
    QString from; // Renamed: the old path (a deleted and an added file with the same content)
    qint64 size = 0;
    qint64 oldSize = 0;
    QByteArray sha256; // hex; empty for Deleted
    QByteArray oldSha256;
    int mode = 0644; // permission bits of the new file (set-uid, set-gid, sticky never)
    int oldMode = 0644;
    bool binary = false;
    // Text: a unified diff (cut past kMaxDiffBytes with a note), for Added and Modified files;
    // empty for binaries, renames and deletions, and when the old text could not be read.
    QString diff;
    int linesAdded = -1; // from the whole diff, cut or not; -1: no diff
    int linesRemoved = -1;
    QByteArray content; // the new bytes (Added, Modified, Renamed), to apply later
};

// What a :rw run changed in its copy of a workspace, as files: the scan it started from against
// the archive of /workspace/NAME it ended with.
//
// Only regular files are changes. Directories come and go with their files (the applier creates
// the parents a file needs and removes none), so an empty directory made or removed by the
// program is no change. A file whose executable bit alone changed is Modified; as in git, the
// other permission bits are carried but are no change by themselves. Excluded names
// were never sent, so they are neither deleted nor changed; a program that writes one (a new
// `.env`) makes an ordinary Added change, which the applier then refuses to write. Links, devices
// and FIFOs the program made are refused; a link of the scan that comes back unchanged is no
// change, and one that does not is listed as refused (links are never applied).
struct WorkspaceChangeSet
{
    static constexpr int kMaxDiffBytes = 64 * 1024;
    static constexpr int kMaxListed = 100; // refused lines kept; refusedCount has them all

    QString workspace;
    QList<WorkspaceChange> changes; // sorted by path
    // "path: why": what the sandbox made that is never applied (names with "..", absolute, with
    // NUL or control characters; links, devices, FIFOs; a file over the per-file cap, past the
    // total cap or past the entry cap).
    QStringList refused;
    int refusedCount = 0;
    qint64 bytes = 0; // content bytes held

    bool isEmpty() const; // nothing changed and nothing refused: nothing to say

    // `tar` is the engine's archive of the sandbox's /workspace/NAME: the directory "NAME" itself
    // (without it the archive is an error, not a deletion of everything) and its entries under
    // "NAME/" (anything else is refused). Caps: maxTotalBytes of new content held (files past it
    // are refused), maxFileBytes per file, maxEntries entries of the archive. Deleted means in the
    // scan and not in the archive, so a damaged archive is an error (*error, and an empty set)
    // rather than a list of deletions. The old text of a Modified file is read from the scan's
    // folder for its diff, if it still is what the scan saw.
    static WorkspaceChangeSet compute(const WorkspaceScan &before, const QByteArray &tar,
                                      qint64 maxTotalBytes, qint64 maxFileBytes, int maxEntries,
                                      QString *error);

    // {workspace, added, modified, deleted, renamed, refused, refused_count, bytes}; each change
    // {path, from?, size?, old_size?, sha256?, old_sha256?, mode?, old_mode?, binary?, diff?,
    // lines_added?, lines_removed?}; withContent adds the base64 "content" (for the history).
    QJsonObject toJson(bool withContent = false) const;
    // The round trip of toJson(true), checked again as it comes from disk: names, digests against
    // the content, sizes, modes, no path twice. nullopt-like: an empty set and *error.
    static WorkspaceChangeSet fromJson(const QJsonObject &json, QString *error);

    // "workspace data: 2 added (a.csv, b.txt), 1 modified (main.py +3 −1), 1 deleted (old.txt)":
    // what a model reads; the caller appends what happens to it ("; not applied (apply: never)").
    QString summary() const;

    // Why `path` may not be a change's path (empty: it may): empty, absolute, "." or ".."
    // components, empty components, NUL or control characters, not NFC, too long.
    static QString pathProblem(const QString &path);
};
