#include "workspaceapplier.h"

#include <QCryptographicHash>
#include <QFile>
#include <QRandomGenerator>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace {
using Kind = WorkspaceChange::Kind;

const QString kChanged = QStringLiteral("the folder's file changed since the run started");

QString applyErrnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

// A descriptor closed when it goes.
class Fd
{
public:
    explicit Fd(int fd = -1) : m_fd(fd) {}
    ~Fd()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    Fd(Fd &&other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
    Fd &operator=(Fd &&other) noexcept
    {
        if (this != &other) {
            if (m_fd >= 0)
                ::close(m_fd);
            m_fd = std::exchange(other.m_fd, -1);
        }
        return *this;
    }
    int get() const { return m_fd; }

private:
    int m_fd;
};

// The directory that holds `path`, opened component by component from the folder's descriptor
// with O_NOFOLLOW; missing ones made (mkdirat) when `create`. -1 with *why (and *missing when a
// directory is not there and was not to be made).
Fd parentOf(int root, const QString &path, bool create, QByteArray *name, QString *why,
            bool *missing)
{
    QStringList parts = path.split(u'/');
    *name = QFile::encodeName(parts.takeLast());
    Fd current(::dup(root));
    for (const QString &part : std::as_const(parts)) {
        const QByteArray raw = QFile::encodeName(part);
        int next = ::openat(current.get(), raw.constData(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create) {
            if (::mkdirat(current.get(), raw.constData(), 0755) != 0 && errno != EEXIST) {
                *why = QStringLiteral("cannot make the folder '%1' (%2)")
                           .arg(part, applyErrnoText(errno));
                return Fd();
            }
            next = ::openat(current.get(), raw.constData(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            *missing = errno == ENOENT;
            *why = errno == ELOOP || errno == ENOTDIR
                       ? QStringLiteral("'%1' on the way is a symbolic link or not a folder in the "
                                        "host folder; nothing written")
                             .arg(part)
                       : QStringLiteral("cannot open the folder '%1' (%2)")
                             .arg(part, applyErrnoText(errno));
            return Fd();
        }
        current = Fd(next);
    }
    return current;
}

// Whether the host file `name` in `dir` still is the scan's `entry`: a regular file of the same
// size, modification time and content.
bool sameAsScan(int dir, const QByteArray &name, const WorkspaceEntry &entry)
{
    struct stat st;
    if (::fstatat(dir, name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size != entry.size ||
        qint64(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000 != entry.mtimeMs)
        return false;
    const Fd fd(::openat(dir, name.constData(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0)
        return false;
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QByteArray chunk(1 << 20, Qt::Uninitialized);
    for (;;) {
        const ssize_t n = ::read(fd.get(), chunk.data(), size_t(chunk.size()));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            break;
        hash.addData(QByteArrayView(chunk.constData(), n));
    }
    return hash.result().toHex() == entry.sha256;
}

bool exists(int dir, const QByteArray &name)
{
    struct stat st;
    return ::fstatat(dir, name.constData(), &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

bool writeAll(int fd, const QByteArray &data)
{
    qsizetype done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.constData() + done, size_t(data.size() - done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += n;
    }
    return true;
}

// Moves the temporary file into place: over the old file (`replace`), or only where there is
// none (renameat2's RENAME_NOREPLACE; where the file system lacks it, a check just before).
int moveInto(int dir, const QByteArray &temporary, const QByteArray &name, bool replace)
{
    if (replace)
        return ::renameat(dir, temporary.constData(), dir, name.constData());
    if (::renameat2(dir, temporary.constData(), dir, name.constData(), RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    if (exists(dir, name)) {
        errno = EEXIST;
        return -1;
    }
    return ::renameat(dir, temporary.constData(), dir, name.constData());
}

// The change's content into `name`: a temporary file beside it, written, fsync'ed, renamed.
// False with *why; *appeared when an added file found one in its place.
bool writeFile(int dir, const QByteArray &name, const WorkspaceChange &c, bool replace,
               QString *why, bool *appeared)
{
    const QByteArray temporary =
        ".cs-apply-" + QByteArray::number(QRandomGenerator::global()->generate64(), 16) + ".tmp";
    const Fd fd(::openat(dir, temporary.constData(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    int error = 0;
    if (fd.get() < 0)
        error = errno;
    else if (!writeAll(fd.get(), c.content) || ::fchmod(fd.get(), mode_t(c.mode & 0777)) != 0 ||
             ::fsync(fd.get()) != 0)
        error = errno;
    else if (moveInto(dir, temporary, name, replace) != 0)
        error = errno;
    if (error == 0) {
        ::fsync(dir); // the rename itself, on disk
        return true;
    }
    if (fd.get() >= 0)
        ::unlinkat(dir, temporary.constData(), 0);
    *appeared = error == EEXIST && fd.get() >= 0;
    *why = QStringLiteral("cannot write it (%1)").arg(applyErrnoText(error ? error : EIO));
    return false;
}
} // namespace

namespace {
// One change, into the result: applied, a conflict or failed.
class ChangeWriter
{
public:
    ChangeWriter(const Workspace &ws, const WorkspaceScan &before, int root,
                 WorkspaceApplyResult *result)
        : m_ws(ws), m_before(before), m_root(root), m_result(result)
    {}

    void apply(const WorkspaceChange &c)
    {
        if (refused(c))
            return;
        switch (c.kind) {
        case Kind::Added:
            return add(c);
        case Kind::Modified:
            return modify(c);
        case Kind::Deleted:
            remove(c.path, true);
            return;
        case Kind::Renamed:
            return rename(c);
        }
    }

private:
    void failed(const QString &path, const QString &why)
    {
        m_result->failed.append(
            QStringLiteral("%1: %2").arg(WorkspaceScanner::shownPath(path), why));
    }
    void conflict(const QString &path, const QString &why = kChanged)
    {
        m_result->conflicts.append(
            QStringLiteral("%1: %2").arg(WorkspaceScanner::shownPath(path), why));
    }

    // Whether the change may not be applied at all, whatever the folder holds (listed as failed).
    bool refused(const WorkspaceChange &c)
    {
        const QStringList paths =
            c.kind == Kind::Renamed ? QStringList{c.path, c.from} : QStringList{c.path};
        for (const QString &path : paths) {
            if (const QString problem = WorkspaceChangeSet::pathProblem(path); !problem.isEmpty()) {
                failed(path, problem);
                return true;
            }
            if (m_ws.excludes(path, false)) {
                failed(path, QStringLiteral("the workspace's rules keep this name out of the "
                                            "sandbox, and a run never writes it"));
                return true;
            }
        }
        if (c.kind != Kind::Deleted &&
            (c.content.size() != c.size ||
             QCryptographicHash::hash(c.content, QCryptographicHash::Sha256).toHex() != c.sha256)) {
            failed(c.path, QStringLiteral("its content does not match its digest"));
            return true;
        }
        const QString old = c.kind == Kind::Renamed ? c.from : c.path;
        const WorkspaceEntry *entry = m_before.find(old);
        if (c.kind != Kind::Added && !(entry && entry->type == WorkspaceEntry::Type::File)) {
            failed(old, QStringLiteral("was not a file when the run started"));
            return true;
        }
        // A change set measured against another scan (another run's) would make the conflict
        // check compare the folder with the wrong starting point.
        if (c.kind != Kind::Added && entry->sha256 != c.oldSha256) {
            failed(old, QStringLiteral("the change set is not of the scan the run started from"));
            return true;
        }
        return false;
    }

    void add(const WorkspaceChange &c)
    {
        QByteArray name;
        QString why;
        bool missing = false, appeared = false;
        const Fd dir = parentOf(m_root, c.path, true, &name, &why, &missing);
        if (dir.get() < 0)
            return failed(c.path, why);
        if (exists(dir.get(), name))
            return conflict(c.path, QStringLiteral("appeared in the folder since the run started"));
        if (!writeFile(dir.get(), name, c, false, &why, &appeared))
            return appeared ? conflict(c.path, QStringLiteral("appeared in the folder since the "
                                                              "run started"))
                            : failed(c.path, why);
        m_result->applied.append(c.path);
    }

    void modify(const WorkspaceChange &c)
    {
        QByteArray name;
        QString why;
        bool missing = false, appeared = false;
        const Fd dir = parentOf(m_root, c.path, false, &name, &why, &missing);
        if (dir.get() < 0)
            return missing ? conflict(c.path) : failed(c.path, why);
        if (!sameAsScan(dir.get(), name, *m_before.find(c.path)))
            return conflict(c.path);
        if (!writeFile(dir.get(), name, c, true, &why, &appeared))
            return failed(c.path, why);
        m_result->applied.append(c.path);
    }

    // Deletes `path`, the scan's file, if it still is; listed as applied when `listApplied`
    // (a deletion, not the second half of a renaming).
    bool remove(const QString &path, bool listApplied)
    {
        QByteArray name;
        QString why;
        bool missing = false;
        const Fd dir = parentOf(m_root, path, false, &name, &why, &missing);
        if (dir.get() < 0) {
            missing ? conflict(path) : failed(path, why);
            return false;
        }
        if (!sameAsScan(dir.get(), name, *m_before.find(path))) {
            conflict(path);
            return false;
        }
        if (::unlinkat(dir.get(), name.constData(), 0) != 0) {
            failed(path, QStringLiteral("cannot delete it (%1)").arg(applyErrnoText(errno)));
            return false;
        }
        ::fsync(dir.get());
        if (listApplied)
            m_result->applied.append(path);
        return true;
    }

    // The new name written first, then the old one deleted: a failure between leaves both, never
    // neither.
    void rename(const WorkspaceChange &c)
    {
        QByteArray name;
        QString why;
        bool missing = false;
        const Fd from = parentOf(m_root, c.from, false, &name, &why, &missing);
        if (from.get() < 0 || !sameAsScan(from.get(), name, *m_before.find(c.from)))
            return from.get() < 0 && !missing ? failed(c.from, why) : conflict(c.from);
        const int before = int(m_result->applied.size());
        add(c);
        if (m_result->applied.size() == before)
            return;
        if (!remove(c.from, false))
            m_result->applied.removeLast(); // listed as a conflict or failure of c.from instead
    }

    const Workspace &m_ws;
    const WorkspaceScan &m_before;
    const int m_root;
    WorkspaceApplyResult *m_result;
};
} // namespace

WorkspaceApplyResult WorkspaceApplier::apply(const Workspace &ws, const WorkspaceScan &before,
                                             const WorkspaceChangeSet &changes)
{
    WorkspaceApplyResult result;
    QString why;
    if (changes.workspace != ws.name || before.name != ws.name)
        why = QStringLiteral("the change set is of workspace '%1', not '%2'")
                  .arg(changes.workspace, ws.name);
    else if (!before.error.isEmpty())
        why = QStringLiteral("the scan the run started from failed");
    else if (!before.root.isEmpty() && before.root != ws.path)
        why = QStringLiteral("the scan the run started from is of another folder");
    const Fd root(why.isEmpty() ? ::open(QFile::encodeName(ws.path).constData(),
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                : -1);
    if (why.isEmpty() && root.get() < 0)
        why = QStringLiteral("the folder %1 cannot be opened (%2)")
                  .arg(ws.path, applyErrnoText(errno));
    if (!why.isEmpty()) {
        for (const WorkspaceChange &c : changes.changes)
            result.failed.append(
                QStringLiteral("%1: %2").arg(WorkspaceScanner::shownPath(c.path), why));
        return result;
    }
    ChangeWriter writer(ws, before, root.get(), &result);
    for (const WorkspaceChange &c : changes.changes)
        writer.apply(c);
    return result;
}
