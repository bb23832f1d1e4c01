#pragma once

#include "tararchive.h"
#include "workspace.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QString>
#include <QStringList>
#include <optional>

struct WorkspaceEntry
{
    enum class Type
    {
        File,
        Directory,
        Symlink
    };

    QString path; // relative, '/'-separated, never empty, never ".." or absolute
    Type type = Type::File;
    qint64 size = 0;    // files
    int mode = 0644;    // permission bits only: set-uid, set-gid and sticky dropped
    QByteArray sha256;  // files: hex digest of the content
    QString linkTarget; // symbolic links: a relative target that stays inside the folder
    qint64 mtimeMs = 0;
};

struct WorkspaceScan
{
    QString name;
    QString root; // the folder scanned (Workspace::path): where the run's starting point is read
    QList<WorkspaceEntry> entries; // sorted by path, so directories before their contents
    qint64 bytes = 0;              // sum of file sizes
    int files = 0;
    int excluded = 0;     // entries left out by the rules (a directory counts once)
    QStringList skipped;  // "path: why", the first kMaxListed of them, sorted
    int skippedCount = 0; // all of them, listed or not
    QString error;        // set: the scan failed (folder gone, over a cap); do not use the entries
    // Hex SHA-256 over the path, type, mode and content digest (or link target) of every entry:
    // equal folders, equal hash.
    QByteArray contentHash;
    int hashed = 0; // files read to hash them; the others' digests were remembered

    // The entry at `path`, or null (a binary search: the entries are sorted).
    const WorkspaceEntry *find(const QString &path) const;
};

// Reads workspaces for runs. One per server: it remembers the digest of every file by (path, size,
// modification and change times, device, inode), so that scanning an unchanged folder again reads
// no file. Thread-safe.
//
// The folder is read with the POSIX *at calls from directory descriptors, never by path: every
// entry is lstat'ed (fstatat with AT_SYMLINK_NOFOLLOW) and every directory and file opened with
// O_NOFOLLOW relative to its parent's descriptor, so a symbolic link is never followed, even one
// swapped in for a directory between two reads, and nothing outside the folder is ever opened.
// Only regular files are opened (with O_NONBLOCK, and checked again with fstat), so a FIFO or a
// device is never read and cannot make a scan hang. QDir and QFileInfo work by path and would
// resolve links on the way.
class WorkspaceScanner
{
public:
    static constexpr int kMaxEntries = 200000;
    static constexpr int kMaxDepth = 128; // deeper directories are skipped, with a reason
    static constexpr int kMaxListed = 100;

    // Over maxBytes of file content (when >= 0), or over the entry cap: `error` says so in human
    // sizes, before any file is read.
    WorkspaceScan scan(const Workspace &ws, qint64 maxBytes);
    void setMaxEntries(int maxEntries); // kMaxEntries by default

    // Who owns what pack() writes, and with which permission bits.
    enum class PackAs
    {
        // Everything owned by uid/gid 0, files 0444 (0555 if executable by anyone), directories
        // 0555, so that the sandbox's user (uid 1000, no capabilities) can read but not write.
        ReadOnly,
        // Owned by 1000:1000 with the folder's permission bits (a copy-on-write workspace).
        Writable,
        // Owned by uid/gid 0, files 0644 (0755 if executable by anyone), directories 0755: what
        // goes into a cached volume (WorkspaceCache), filled by a sandbox that runs as root
        // without capabilities and mounted read-only by runs; every directory writable by its
        // owner, so that the fill can put what changed in place.
        Cached
    };
    // The scan as a tar for the engine's archive endpoint, every path under `prefix` (e.g.
    // "NAME"; the prefix directory itself is an entry too), read again from disk: a file that
    // changed since the scan (its digest differs) fails the whole pack, so nothing is half sent.
    // `trailing` entries end the archive, after everything else (a session's link to the version
    // just unpacked: the engine unpacks in order, so the link moves only once the version is
    // complete).
    static QByteArray pack(const Workspace &ws, const WorkspaceScan &scan, const QString &prefix,
                           PackAs as, QString *error,
                           const QList<TarArchive::Entry> &trailing = {});

    // The content of the regular file `relativePath` under `root`, never following a link on the
    // way; nullopt with *error when it is not there, not a regular file or larger than maxBytes.
    static std::optional<QByteArray> readFile(const QString &root, const QString &relativePath,
                                              qint64 maxBytes, QString *error);
    // "812 bytes", "4.2 KiB", "200 MiB".
    static QString formatSize(qint64 bytes);
    // A name as it may be shown in a line of text (skipped, refused, conflicts): control
    // characters escaped ("\x0a"), cut past 300 characters.
    static QString shownPath(const QString &path);

    struct Known
    {
        qint64 size = 0;
        qint64 mtimeNs = 0;
        qint64 ctimeNs = 0;
        quint64 device = 0;
        quint64 inode = 0;
        QByteArray sha256;
    };

private:
    QMutex m_mutex;
    // By folder, then by relative path: only what the last scan of each folder saw, so that
    // files deleted since are forgotten.
    QHash<QString, QHash<QString, Known>> m_known;
    int m_maxEntries = kMaxEntries;
};
