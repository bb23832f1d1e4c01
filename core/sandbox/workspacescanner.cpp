#include "workspacescanner.h"

#include "tararchive.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QLocale>
#include <QMutexLocker>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {
constexpr qint64 kChunk = 1 << 20;

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

qint64 nanosecondsOf(const struct timespec &t)
{
    return qint64(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// Descriptors under one folder, opened component by component from the folder's own with
// O_NOFOLLOW: a link anywhere on the way is an error, never followed. Keeps the last directory
// open, as consecutive paths of a sorted scan share it.
class FolderReader
{
public:
    explicit FolderReader(const QString &root)
        : m_root(::open(QFile::encodeName(root).constData(),
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)),
          m_rootErrno(errno)
    {}
    ~FolderReader()
    {
        if (m_dir >= 0)
            ::close(m_dir);
        if (m_root >= 0)
            ::close(m_root);
    }
    FolderReader(const FolderReader &) = delete;
    FolderReader &operator=(const FolderReader &) = delete;

    int root() const { return m_root; }
    int rootErrno() const { return m_rootErrno; }

    // The directory holding `relativePath`, and the path's last component in *name.
    int parentOf(const QString &relativePath, QByteArray *name, QString *error)
    {
        const qsizetype slash = relativePath.lastIndexOf(u'/');
        *name = QFile::encodeName(relativePath.mid(slash + 1));
        return directory(slash < 0 ? QString() : relativePath.left(slash), error);
    }

    // A read descriptor of the regular file `relativePath`, or -1 with *error.
    int openFile(const QString &relativePath, QString *error)
    {
        QByteArray name;
        const int dir = parentOf(relativePath, &name, error);
        if (dir < 0)
            return -1;
        // O_NONBLOCK: a FIFO put in the file's place since it was lstat'ed opens at once (and is
        // refused below) instead of waiting for a writer.
        const int fd = ::openat(dir, name.constData(),
                                O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
            *error = errno == ELOOP ? QStringLiteral("is a symbolic link") : errnoText(errno);
            return -1;
        }
        struct stat st;
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            *error = QStringLiteral("is not a regular file");
            return -1;
        }
        return fd;
    }

private:
    int directory(const QString &relativeDir, QString *error)
    {
        if (relativeDir.isEmpty())
            return m_root;
        if (m_dir >= 0 && relativeDir == m_dirPath)
            return m_dir;
        if (m_dir >= 0)
            ::close(m_dir);
        m_dir = -1;
        int current = m_root;
        for (const QString &part : relativeDir.split(u'/')) {
            const int next = ::openat(current, QFile::encodeName(part).constData(),
                                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            const int why = errno;
            if (current != m_root)
                ::close(current);
            if (next < 0) {
                *error = why == ELOOP || why == ENOTDIR
                             ? QStringLiteral("'%1' is a symbolic link or not a folder").arg(part)
                             : errnoText(why);
                return -1;
            }
            current = next;
        }
        m_dir = current;
        m_dirPath = relativeDir;
        return m_dir;
    }

    int m_root = -1;
    int m_rootErrno = 0;
    int m_dir = -1;
    QString m_dirPath;
};

// Reads `fd` to its end: at most maxBytes (more is an error), hashing as it goes when `hash` is
// given and keeping the bytes when `data` is.
bool readAll(int fd, qint64 maxBytes, QCryptographicHash *hash, QByteArray *data, QString *error)
{
    QByteArray chunk(qsizetype(kChunk), Qt::Uninitialized);
    qint64 total = 0;
    for (;;) {
        const ssize_t n = ::read(fd, chunk.data(), size_t(chunk.size()));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *error = errnoText(errno);
            return false;
        }
        if (n == 0)
            return true;
        total += n;
        if (total > maxBytes) {
            *error =
                QStringLiteral("is larger than %1").arg(WorkspaceScanner::formatSize(maxBytes));
            return false;
        }
        if (hash)
            hash->addData(QByteArrayView(chunk.constData(), n));
        if (data)
            data->append(chunk.constData(), n);
    }
}

// Whether a name read from the folder can travel: into the tar and back as the same string.
QString unfitName(const QByteArray &raw, const QString &name)
{
    if (name.toUtf8() != raw)
        return QStringLiteral("its name is not valid UTF-8");
    for (QChar c : name) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            return QStringLiteral("its name holds a control character");
    }
    // The engine's tar, as libarchive, carries names in NFC: another form would come back as
    // a different name.
    if (name.normalized(QString::NormalizationForm_C) != name)
        return QStringLiteral("its name is not in Unicode normalization form C");
    return {};
}

QByteArray entryHash(const QList<WorkspaceEntry> &entries)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (const WorkspaceEntry &e : entries) {
        // NUL never occurs in a path, a mode or a digest: an unambiguous separator.
        hash.addData(e.path.toUtf8());
        hash.addData(QByteArrayView("\0", 1));
        hash.addData(QByteArray::number(int(e.type)) + '\0' + QByteArray::number(e.mode, 8) + '\0');
        hash.addData(e.type == WorkspaceEntry::Type::Symlink ? e.linkTarget.toUtf8() : e.sha256);
        hash.addData(QByteArrayView("\n", 1));
    }
    return hash.result().toHex();
}
} // namespace

const WorkspaceEntry *WorkspaceScan::find(const QString &path) const
{
    const auto it =
        std::lower_bound(entries.cbegin(), entries.cend(), path,
                         [](const WorkspaceEntry &e, const QString &p) { return e.path < p; });
    return it != entries.cend() && it->path == path ? &*it : nullptr;
}

namespace {
struct Found
{
    WorkspaceEntry entry;
    WorkspaceScanner::Known stat;
    bool dropped = false; // skipped after the walk (unreadable, changed while read)
};

QString typeName(mode_t mode)
{
    if (S_ISFIFO(mode))
        return QStringLiteral("is a FIFO");
    if (S_ISSOCK(mode))
        return QStringLiteral("is a socket");
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return QStringLiteral("is a device");
    return QStringLiteral("is not a file, folder or symbolic link");
}

// The walk: every entry lstat'ed from its directory's descriptor, nothing read but directories
// and link targets (the sizes are all the caps need).
class Walker
{
public:
    Walker(const Workspace &ws, int maxEntries) : m_ws(ws), m_maxEntries(maxEntries) {}

    QList<Found> found;
    qint64 bytes = 0;
    int excluded = 0;
    QStringList skipped;
    int skippedCount = 0;
    QString error;

    void skip(const QString &path, const QString &why)
    {
        if (skippedCount++ < WorkspaceScanner::kMaxListed)
            skipped.append(QStringLiteral("%1: %2").arg(WorkspaceScanner::shownPath(path), why));
    }

    void walk(int dirFd, const QString &relativeDir, int depth)
    {
        const QString shown = relativeDir.isEmpty() ? QStringLiteral(".") : relativeDir;
        const int copy = ::dup(dirFd); // closedir closes it, not dirFd
        DIR *dir = copy >= 0 ? ::fdopendir(copy) : nullptr;
        if (!dir) {
            if (copy >= 0)
                ::close(copy);
            skip(shown, QStringLiteral("cannot be listed (%1)").arg(errnoText(errno)));
            return;
        }
        QList<QByteArray> names;
        errno = 0;
        while (const dirent *d = ::readdir(dir)) {
            if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0)
                names.append(QByteArray(d->d_name));
            errno = 0;
        }
        const int listError = errno;
        ::closedir(dir);
        if (listError != 0) {
            skip(shown, QStringLiteral("cannot be listed (%1)").arg(errnoText(listError)));
            return;
        }
        for (const QByteArray &raw : std::as_const(names)) {
            if (!error.isEmpty())
                return;
            visit(dirFd, relativeDir, raw, depth);
        }
    }

private:
    void visit(int dirFd, const QString &relativeDir, const QByteArray &raw, int depth)
    {
        const QString name = QString::fromUtf8(raw);
        const QString path = relativeDir.isEmpty() ? name : relativeDir + u'/' + name;
        if (const QString why = unfitName(raw, name); !why.isEmpty())
            return skip(path, why);
        struct stat st;
        if (::fstatat(dirFd, raw.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return skip(path, QStringLiteral("cannot be read (%1)").arg(errnoText(errno)));
        if (m_ws.excludes(path, S_ISDIR(st.st_mode))) {
            ++excluded;
            return;
        }
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
            return skip(path, typeName(st.st_mode));
        if (found.size() >= m_maxEntries) {
            error = QStringLiteral("workspace '%1' holds more than %2 files and folders, over the "
                                   "limit of %2")
                        .arg(m_ws.name, QLocale(QLocale::English).toString(m_maxEntries));
            return;
        }
        Found f;
        f.entry.path = path;
        f.entry.mode = int(st.st_mode & 0777);
        f.entry.mtimeMs = nanosecondsOf(st.st_mtim) / 1000000;
        f.stat = {qint64(st.st_size), nanosecondsOf(st.st_mtim), nanosecondsOf(st.st_ctim),
                  quint64(st.st_dev), quint64(st.st_ino),        {}};
        if (S_ISREG(st.st_mode)) {
            f.entry.size = st.st_size;
            bytes += st.st_size;
            found.append(std::move(f));
        } else if (S_ISLNK(st.st_mode)) {
            addLink(dirFd, relativeDir, raw, std::move(f));
        } else if (depth >= WorkspaceScanner::kMaxDepth) {
            skip(path, QStringLiteral("is more than %1 folders deep").arg(depth));
        } else {
            addDirectory(dirFd, raw, depth, std::move(f));
        }
    }

    void addDirectory(int dirFd, const QByteArray &raw, int depth, Found f)
    {
        // O_NOFOLLOW: a link swapped in since the lstat is not followed but refused.
        const int fd =
            ::openat(dirFd, raw.constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return skip(f.entry.path, QStringLiteral("cannot be read (%1)").arg(errnoText(errno)));
        f.entry.type = WorkspaceEntry::Type::Directory;
        const QString path = f.entry.path;
        found.append(std::move(f));
        walk(fd, path, depth + 1);
        ::close(fd);
    }

    // Links are kept when they name something inside the folder (lexically: the target is
    // resolved in the sandbox, where only such links exist; the host never follows them).
    void addLink(int dirFd, const QString &relativeDir, const QByteArray &raw, Found f)
    {
        QByteArray bytes(4096, Qt::Uninitialized);
        const ssize_t n = ::readlinkat(dirFd, raw.constData(), bytes.data(), size_t(bytes.size()));
        if (n < 0 || n == bytes.size())
            return skip(f.entry.path, QStringLiteral("is a symbolic link that cannot be read"));
        bytes.truncate(n);
        const QString target = QString::fromUtf8(bytes);
        if (target.isEmpty() || target.toUtf8() != bytes || target.contains(QChar(0)))
            return skip(f.entry.path, QStringLiteral("is a symbolic link to an unusable name"));
        if (target.startsWith(u'/'))
            return skip(f.entry.path,
                        QStringLiteral("is a symbolic link to an absolute path (%1)").arg(target));
        const QString resolved =
            QDir::cleanPath(relativeDir.isEmpty() ? target : relativeDir + u'/' + target);
        if (resolved == u".." || resolved.startsWith(QStringLiteral("../")))
            return skip(
                f.entry.path,
                QStringLiteral("is a symbolic link leaving the folder (to %1)").arg(target));
        f.entry.type = WorkspaceEntry::Type::Symlink;
        f.entry.linkTarget = target;
        found.append(std::move(f));
    }

    const Workspace &m_ws;
    int m_maxEntries;
};

bool sameFile(const WorkspaceScanner::Known &a, const WorkspaceScanner::Known &b)
{
    return a.size == b.size && a.mtimeNs == b.mtimeNs && a.ctimeNs == b.ctimeNs &&
           a.device == b.device && a.inode == b.inode;
}

// The digest of one file found by the walk: read through `reader`, and only if it is still the
// file the walk saw, before and after; else an empty digest and *error.
QByteArray hashFile(FolderReader &reader, const Found &f, QString *error)
{
    const int fd = reader.openFile(f.entry.path, error);
    if (fd < 0)
        return {};
    const auto current = [fd] {
        struct stat st;
        ::fstat(fd, &st);
        return WorkspaceScanner::Known{qint64(st.st_size),        nanosecondsOf(st.st_mtim),
                                       nanosecondsOf(st.st_ctim), quint64(st.st_dev),
                                       quint64(st.st_ino),        {}};
    };
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QString why;
    const bool read = sameFile(current(), f.stat) && readAll(fd, f.stat.size, &hash, nullptr, &why);
    const bool still = sameFile(current(), f.stat);
    ::close(fd);
    if (!read || !still) {
        *error = still && !why.isEmpty() ? why : QStringLiteral("changed while it was being read");
        return {};
    }
    return hash.result().toHex();
}
} // namespace

void WorkspaceScanner::setMaxEntries(int maxEntries)
{
    QMutexLocker lock(&m_mutex);
    m_maxEntries = maxEntries;
}

WorkspaceScan WorkspaceScanner::scan(const Workspace &ws, qint64 maxBytes)
{
    WorkspaceScan result;
    result.name = ws.name;
    result.root = ws.path;
    FolderReader reader(ws.path);
    if (reader.root() < 0) {
        result.error = QStringLiteral("workspace '%1': the folder %2 cannot be read (%3)")
                           .arg(ws.name, ws.path, errnoText(reader.rootErrno()));
        return result;
    }
    QHash<QString, Known> known;
    int maxEntries;
    {
        QMutexLocker lock(&m_mutex);
        known = m_known.value(ws.path);
        maxEntries = m_maxEntries;
    }
    Walker walker(ws, maxEntries);
    walker.walk(reader.root(), QString(), 0);
    if (walker.error.isEmpty() && maxBytes >= 0 && walker.bytes > maxBytes)
        walker.error = QStringLiteral("workspace '%1' holds %2, over the --workspace-max of %3")
                           .arg(ws.name, formatSize(walker.bytes), formatSize(maxBytes));
    if (!walker.error.isEmpty()) {
        result.error = walker.error;
        return result;
    }
    QHash<QString, Known> seen;
    for (Found &f : walker.found) {
        if (f.entry.type != WorkspaceEntry::Type::File)
            continue;
        const auto it = known.constFind(f.entry.path);
        if (it != known.cend() && sameFile(*it, f.stat)) {
            f.entry.sha256 = it->sha256;
        } else {
            QString why;
            f.entry.sha256 = hashFile(reader, f, &why);
            ++result.hashed;
            if (f.entry.sha256.isEmpty()) {
                f.dropped = true;
                walker.skip(f.entry.path, why);
                continue;
            }
        }
        f.stat.sha256 = f.entry.sha256;
        seen.insert(f.entry.path, f.stat);
    }
    {
        QMutexLocker lock(&m_mutex);
        m_known.insert(ws.path, seen);
    }
    for (Found &f : walker.found) {
        if (f.dropped)
            continue;
        if (f.entry.type == WorkspaceEntry::Type::File) {
            result.bytes += f.entry.size;
            ++result.files;
        }
        result.entries.append(std::move(f.entry));
    }
    std::sort(result.entries.begin(), result.entries.end(),
              [](const WorkspaceEntry &a, const WorkspaceEntry &b) { return a.path < b.path; });
    result.excluded = walker.excluded;
    result.skipped = walker.skipped;
    result.skipped.sort();
    result.skippedCount = walker.skippedCount;
    result.contentHash = entryHash(result.entries);
    return result;
}

namespace {
// One entry of the scan as pack writes it: its data read again through `reader`, and checked
// against the scan's digest (or link target).
bool packEntry(FolderReader &reader, const WorkspaceEntry &e, WorkspaceScanner::PackAs as,
               TarArchive::Entry *out, QString *error)
{
    const auto changed = [&](const QString &why) {
        *error = QStringLiteral("'%1' changed since the scan (%2)").arg(e.path, why);
        return false;
    };
    if (e.type == WorkspaceEntry::Type::File) {
        const int fd = reader.openFile(e.path, error);
        if (fd < 0)
            return changed(*error);
        QCryptographicHash hash(QCryptographicHash::Sha256);
        QString why;
        const bool read = readAll(fd, e.size, &hash, &out->data, &why);
        ::close(fd);
        if (!read)
            return changed(why);
        if (hash.result().toHex() != e.sha256)
            return changed(QStringLiteral("its content differs"));
    } else if (e.type == WorkspaceEntry::Type::Symlink) {
        QByteArray name;
        QByteArray target(4096, Qt::Uninitialized);
        const int dir = reader.parentOf(e.path, &name, error);
        const ssize_t n =
            dir < 0 ? -1
                    : ::readlinkat(dir, name.constData(), target.data(), size_t(target.size()));
        if (n < 0 || QString::fromUtf8(target.left(n)) != e.linkTarget)
            return changed(QStringLiteral("its link target differs"));
        out->type = TarArchive::Entry::Type::Symlink;
        out->linkTarget = e.linkTarget;
    } else {
        out->type = TarArchive::Entry::Type::Directory;
        out->isDirectory = true;
    }
    out->mtimeMs = e.mtimeMs;
    using PackAs = WorkspaceScanner::PackAs;
    out->uid = out->gid = as == PackAs::Writable ? 1000 : 0;
    // The bits the owner may not have in the sandbox: write, for a read-only workspace.
    const int noWrite = as == PackAs::ReadOnly ? 0222 : 0;
    if (as == PackAs::Writable)
        out->mode = e.mode & 0777;
    else if (e.type == WorkspaceEntry::Type::File)
        out->mode = ((e.mode & 0111) ? 0755 : 0644) & ~noWrite;
    else
        out->mode = e.type == WorkspaceEntry::Type::Symlink ? 0777 : 0755 & ~noWrite;
    return true;
}
} // namespace

QByteArray WorkspaceScanner::pack(const Workspace &ws, const WorkspaceScan &scan,
                                  const QString &prefix, PackAs as, QString *error,
                                  const QList<TarArchive::Entry> &trailing)
{
    const auto fail = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("workspace '%1': %2").arg(ws.name, why);
        return QByteArray();
    };
    if (!scan.error.isEmpty())
        return fail(QStringLiteral("the scan failed: %1").arg(scan.error));
    if (!scan.root.isEmpty() && scan.root != ws.path)
        return fail(QStringLiteral("the scan is of another folder (%1)").arg(scan.root));
    FolderReader reader(ws.path);
    if (reader.root() < 0)
        return fail(QStringLiteral("the folder %1 cannot be read (%2)")
                        .arg(ws.path, errnoText(reader.rootErrno())));
    const QString under = prefix.isEmpty() ? QString() : prefix + u'/';
    qsizetype next = prefix.isEmpty() ? 0 : -1; // -1: the prefix directory itself
    qsizetype after = 0;                        // the trailing entries written
    QString why;
    const QByteArray tar = TarArchive::packFrom(
        [&](TarArchive::Entry *out, QString *stop) {
            if (next == scan.entries.size()) {
                if (after == trailing.size())
                    return false;
                *out = trailing.at(after++);
                return true;
            }
            if (next < 0) {
                ++next;
                out->path = prefix;
                out->type = TarArchive::Entry::Type::Directory;
                out->isDirectory = true;
                out->mode = as == PackAs::ReadOnly ? 0555 : 0755;
                out->uid = out->gid = as == PackAs::Writable ? 1000 : 0;
                return true;
            }
            const WorkspaceEntry &e = scan.entries.at(next++);
            out->path = under + e.path;
            if (packEntry(reader, e, as, out, &why))
                return true;
            *stop = why;
            return false;
        },
        &why);
    if (tar.isEmpty())
        return fail(why);
    return tar;
}

std::optional<QByteArray> WorkspaceScanner::readFile(const QString &root,
                                                     const QString &relativePath, qint64 maxBytes,
                                                     QString *error)
{
    QString why;
    FolderReader reader(root);
    const int fd = reader.root() < 0 ? -1 : reader.openFile(relativePath, &why);
    QByteArray data;
    const bool read = fd >= 0 && readAll(fd, maxBytes, nullptr, &data, &why);
    if (fd >= 0)
        ::close(fd);
    if (read)
        return data;
    if (error)
        *error = reader.root() < 0 ? errnoText(reader.rootErrno()) : why;
    return std::nullopt;
}

QString WorkspaceScanner::formatSize(qint64 bytes)
{
    if (bytes < 1024)
        return QStringLiteral("%1 bytes").arg(bytes);
    const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    double value = double(bytes) / 1024;
    int unit = 0;
    while (value >= 1024 && unit < 3) {
        value /= 1024;
        ++unit;
    }
    QString number = QString::number(value, 'f', 1);
    if (number.endsWith(QStringLiteral(".0")))
        number.chop(2);
    return number + u' ' + QLatin1String(units[unit]);
}

QString WorkspaceScanner::shownPath(const QString &path)
{
    QString out;
    for (QChar c : QStringView(path).left(300)) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            out += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        else
            out += c;
    }
    return path.size() > 300 ? out + QStringLiteral("…") : out;
}
