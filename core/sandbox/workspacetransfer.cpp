#include "workspacetransfer.h"

#include "sandboxcontainer.h"
#include "sandboxlayout.h"
#include "sandboxlog.h"
#include "workspacecache.h"

#include <QFutureWatcher>
#include <QMap>
#include <QPromise>
#include <QSet>
#include <QThreadPool>
#include <utility>

namespace {

QThreadPool *worker()
{
    static QThreadPool *pool = [] {
        auto *p = new QThreadPool;
        p->setMaxThreadCount(1);
        p->setExpiryTimeout(30000);
        return p;
    }();
    return pool;
}

// `work` on the worker, then `done` with its result on `context`'s thread, unless `context` is
// gone by then: the worker only ever touches the promise, never `context`.
template <typename T>
void offLoop(QObject *context, std::function<T()> work, std::function<void(const T &)> done)
{
    auto promise = std::make_shared<QPromise<T>>();
    auto *watcher = new QFutureWatcher<T>(context);
    QObject::connect(watcher, &QFutureWatcherBase::finished, context, [watcher, done] {
        watcher->deleteLater();
        done(watcher->result());
    });
    watcher->setFuture(promise->future());
    worker()->start([promise, work] {
        promise->start();
        promise->addResult(work());
        promise->finish();
    });
}

struct Packed
{
    std::shared_ptr<const WorkspaceScan> scan;
    QByteArray tar;
    QString error;
    bool unchanged = false; // a session's read-only workspace whose version is in its sandbox
};

struct Compared
{
    WorkspaceChangeSet changes;
    std::optional<WorkspaceApplyResult> applied;
    std::shared_ptr<const WorkspaceScan> rebased; // a session's baseline, moved by what applied
    QString error;
};

// What a link's archive may hold: Docker's answer is the link alone; an engine that resolves it
// answers with the folder it leads to, and more than this is not read.
constexpr qint64 kMaxLinkArchiveBytes = 64 * 1024;

// Scans `ws` and packs what its sandbox gets: the folder at kWorkspaceDir/NAME, or in a session
// (`session`) a read-only workspace's new version and the link to it (nothing when `held`, the
// version in the sandbox, has the same content).
// A Fill's archive: the changed files in the volume's staging folder, then the list of paths to
// delete (SandboxLayout::kWorkspaceFillDir, see WorkspaceCache::fillScript).
Packed packFill(const Workspace &ws, const std::shared_ptr<const WorkspaceScan> &changed,
                const QStringList &deleted)
{
    Packed p;
    p.scan = changed;
    const QString fill = QString::fromLatin1(SandboxLayout::kWorkspaceFillDir)
                             .mid(qstrlen(SandboxLayout::kWorkdir) + 1);
    TarArchive::Entry list;
    list.path = fill + u'/' + WorkspaceCache::deletedListName(changed->contentHash);
    list.mode = 0644;
    list.uid = list.gid = 0;
    for (const QString &path : deleted)
        list.data += path.toUtf8() + '\0';
    p.tar = WorkspaceScanner::pack(ws, *changed,
                                   fill + u'/' + WorkspaceCache::stageName(changed->contentHash),
                                   WorkspaceScanner::PackAs::Cached, &p.error, {list});
    return p;
}

Packed packFor(const Workspace &ws, WorkspaceScanner &scanner, qint64 maxBytes, bool session,
               const std::shared_ptr<const WorkspaceScan> &held,
               const std::shared_ptr<const WorkspaceScan> &scanned)
{
    Packed p;
    const std::shared_ptr<const WorkspaceScan> scan =
        scanned ? scanned : std::make_shared<WorkspaceScan>(scanner.scan(ws, maxBytes));
    p.scan = scan;
    if (!scan->error.isEmpty()) {
        p.error = scan->error;
        return p;
    }
    const bool readOnly = ws.mode == Workspace::Mode::ReadOnly;
    const QString dir = QLatin1String(SandboxLayout::kWorkspaceDirName);
    if (!session || !readOnly) {
        p.tar = WorkspaceScanner::pack(ws, *scan, dir + u'/' + ws.name,
                                       readOnly ? WorkspaceScanner::PackAs::ReadOnly
                                                : WorkspaceScanner::PackAs::Writable,
                                       &p.error);
        return p;
    }
    if (held && held->contentHash == scan->contentHash) {
        p.unchanged = true;
        return p;
    }
    const QString version = WorkspaceTransfer::versionName(ws.name, scan->contentHash);
    TarArchive::Entry link;
    link.path = dir + u'/' + ws.name;
    link.type = TarArchive::Entry::Type::Symlink;
    link.linkTarget = QStringLiteral(".v/") + version;
    link.mode = 0777;
    link.uid = link.gid = 0;
    p.tar = WorkspaceScanner::pack(ws, *scan, dir + QStringLiteral("/.v/") + version,
                                   WorkspaceScanner::PackAs::ReadOnly, &p.error, {link});
    return p;
}

QString parentPath(const QString &path)
{
    const qsizetype slash = path.lastIndexOf(u'/');
    return slash < 0 ? QString() : path.left(slash);
}

} // namespace

WorkspaceTransfer::WorkspaceTransfer(const QList<Workspace> &workspaces,
                                     std::shared_ptr<WorkspaceScanner> scanner, qint64 maxBytes,
                                     QObject *parent, Kind kind)
    : QObject(parent), m_scanner(std::move(scanner)), m_maxBytes(maxBytes), m_kind(kind)
{
    for (const Workspace &w : workspaces) {
        WorkspaceRun run;
        run.workspace = w;
        m_runs.append(run);
        m_held.append(nullptr);
    }
}

bool WorkspaceTransfer::hasCopyOnWrite() const
{
    if (m_kind == Kind::Fill)
        return false; // (it fills a volume: nothing comes back)
    for (const WorkspaceRun &r : m_runs)
        if (r.workspace.mode == Workspace::Mode::CopyOnWrite)
            return true;
    return false;
}

QString WorkspaceTransfer::versionName(const QString &name, const QByteArray &contentHash)
{
    return name + u'-' + QString::fromLatin1(contentHash.left(12));
}

void WorkspaceTransfer::setCached(int index, const QString &volume, qint64 sentBytes)
{
    m_runs[index].volume = volume;
    m_runs[index].sentBytes = sentBytes;
}

void WorkspaceTransfer::setFill(const std::shared_ptr<const WorkspaceScan> &changed,
                                const QStringList &deleted)
{
    m_runs[0].scan = changed;
    m_fillDeleted = deleted;
}

void WorkspaceTransfer::settle()
{
    m_busy = false;
    if (m_waiting)
        std::exchange(m_waiting, {})();
}

void WorkspaceTransfer::forgetHeld()
{
    for (auto &held : m_held)
        held.reset();
}

void WorkspaceTransfer::send(SandboxContainer *container, const Done &done)
{
    if (m_busy) {
        // The previous call's changes are still being fetched or applied (its result went
        // without them): this call's workspaces go in once that is over.
        QPointer<SandboxContainer> target(container);
        m_waiting = [this, target, done] { send(target, done); };
        return;
    }
    m_busy = true;
    m_container = container;
    if (m_kind == Kind::Session) {
        // What the previous call came back with is its result's; what the sandbox holds stays.
        for (qsizetype i = 0; i < m_runs.size(); ++i) {
            WorkspaceRun &run = m_runs[i];
            run.scan = m_held.at(i);
            run.changes.reset();
            run.applied.reset();
            run.error.clear();
            run.sentBytes = 0;
        }
    }
    sendNext(0, [this, done](const QString &error) {
        done(error);
        settle();
    });
}

void WorkspaceTransfer::scan(const Done &done)
{
    scanNext(0, done);
}

void WorkspaceTransfer::scanNext(int index, const Done &done)
{
    if (index >= m_runs.size()) {
        done(QString());
        return;
    }
    const Workspace ws = m_runs.at(index).workspace;
    const std::shared_ptr<WorkspaceScanner> scanner = m_scanner;
    const qint64 maxBytes = m_maxBytes;
    offLoop<std::shared_ptr<const WorkspaceScan>>(
        this,
        [ws, scanner, maxBytes] {
            return std::shared_ptr<const WorkspaceScan>(
                std::make_shared<WorkspaceScan>(scanner->scan(ws, maxBytes)));
        },
        [this, index, done](const std::shared_ptr<const WorkspaceScan> &scan) {
            WorkspaceRun &run = m_runs[index];
            run.scan = scan;
            if (!scan->error.isEmpty()) {
                run.error = scan->error;
                done(QStringLiteral("workspace %1: %2").arg(run.workspace.name, run.error));
                return;
            }
            scanNext(index + 1, done);
        });
}

namespace {
// What tmpfs charges for a scan: whole pages for each file, a page for each folder and link.
qint64 pagesOf(const WorkspaceScan &scan)
{
    constexpr qint64 kPage = 4096;
    qint64 bytes = 0;
    for (const WorkspaceEntry &e : scan.entries)
        bytes +=
            e.type == WorkspaceEntry::Type::File ? (e.size + kPage - 1) / kPage * kPage : kPage;
    return bytes;
}
} // namespace

qint64 WorkspaceTransfer::copyBytes(int index) const
{
    // Room to grow up to the cap: only what is written is used, and what the program writes
    // counts against its memory limit too.
    const WorkspaceRun &run = m_runs.at(index);
    if (!run.scan)
        return 0;
    return 4096 + pagesOf(*run.scan) + qMax<qint64>(0, m_maxBytes - run.scan->bytes);
}

qint64 WorkspaceTransfer::scratchBytes() const
{
    qint64 bytes = 4096;
    bool any = false;
    for (qsizetype i = 0; i < m_runs.size(); ++i) {
        const WorkspaceRun &run = m_runs.at(i);
        if (!run.scan || !run.volume.isEmpty())
            continue; // (a cached one has its own mounts)
        any = true;
        bytes += run.workspace.mode == Workspace::Mode::CopyOnWrite ? copyBytes(int(i))
                                                                    : pagesOf(*run.scan);
    }
    return any ? bytes : 0;
}

void WorkspaceTransfer::sendNext(int index, const Done &done)
{
    const bool session = m_kind == Kind::Session;
    // A session's copy-on-write workspaces went in when it started: its calls change that copy.
    // A cached one is in its volume.
    while (index < m_runs.size() &&
           ((session && m_runs.at(index).workspace.mode == Workspace::Mode::CopyOnWrite &&
             m_held.at(index)) ||
            !m_runs.at(index).volume.isEmpty()))
        ++index;
    if (index >= m_runs.size()) {
        done(QString());
        return;
    }
    const Workspace ws = m_runs.at(index).workspace;
    const std::shared_ptr<WorkspaceScanner> scanner = m_scanner;
    const qint64 maxBytes = m_maxBytes;
    const std::shared_ptr<const WorkspaceScan> held = m_held.at(index);
    // A one-shot run's was scanned when its sandbox was sized for it (SandboxService::start).
    const std::shared_ptr<const WorkspaceScan> scanned = session ? nullptr : m_runs.at(index).scan;
    const bool fill = m_kind == Kind::Fill;
    offLoop<Packed>(
        this,
        [ws, scanner, maxBytes, session, held, scanned, fill, deleted = m_fillDeleted] {
            return fill ? packFill(ws, scanned, deleted)
                        : packFor(ws, *scanner, maxBytes, session, held, scanned);
        },
        [this, index, done, session](const Packed &p) {
            WorkspaceRun &run = m_runs[index];
            run.scan = p.scan;
            if (!p.error.isEmpty() || !m_container) {
                run.error = p.error.isEmpty() ? QStringLiteral("the sandbox is gone") : p.error;
                done(QStringLiteral("workspace %1: %2").arg(run.workspace.name, run.error));
                return;
            }
            if (p.unchanged) {
                sendNext(index + 1, done);
                return;
            }
            // A version of a read-only workspace that replaces one in a session's sandbox.
            const bool refresh = session && m_held.at(index);
            qCDebug(lcSandbox).noquote()
                << "workspace" << run.workspace.name << (refresh ? "again:" : "in:")
                << p.scan->files << "files," << p.tar.size() << "bytes of archive";
            run.sentBytes += p.tar.size();
            m_container->putFiles(
                QLatin1String(SandboxLayout::kWorkdir), p.tar, this,
                [this, index, done, session, refresh, scan = p.scan](const QString &error) {
                    WorkspaceRun &r = m_runs[index];
                    if (!error.isEmpty()) {
                        r.error =
                            refresh ? QStringLiteral("the folder changed since the last call, and "
                                                     "its new content could not be copied into "
                                                     "the session's sandbox: %1")
                                          .arg(error)
                                    : QStringLiteral("could not be copied into the sandbox: %1")
                                          .arg(error);
                        done(QStringLiteral("workspace %1 %2").arg(r.workspace.name, r.error));
                        return;
                    }
                    if (refresh) {
                        checkLink(index, scan, done);
                        return;
                    }
                    if (session)
                        m_held[index] = scan;
                    sendNext(index + 1, done);
                });
        });
}

void WorkspaceTransfer::checkLink(int index, const std::shared_ptr<const WorkspaceScan> &scan,
                                  const Done &done)
{
    const QString name = m_runs.at(index).workspace.name;
    const QString version = versionName(name, scan->contentHash);
    if (!m_container) {
        m_runs[index].error = QStringLiteral("the sandbox is gone");
        done(QStringLiteral("workspace %1: %2").arg(name, m_runs.at(index).error));
        return;
    }
    m_container->fetchFiles(
        QLatin1String(SandboxLayout::kWorkspaceDir) + u'/' + name, kMaxLinkArchiveBytes, this,
        [this, index, scan, version, done](const SandboxContainer::Archive &archive) {
            WorkspaceRun &run = m_runs[index];
            // An archive too large is the folder the link leads to (the engine resolved it);
            // one that could not be fetched says nothing: the put went through.
            const QString problem = archive.error.isEmpty() && !archive.tooLarge
                                        ? linkProblem(archive.tar, run.workspace.name, version)
                                        : QString();
            if (!problem.isEmpty()) {
                run.error = QStringLiteral("the folder changed since the last call, but the "
                                           "container engine did not replace /workspace/%1 "
                                           "with its new version (%2), so the call would see the "
                                           "old one; the call did not run. Create a new session "
                                           "to see the folder as it is now")
                                .arg(run.workspace.name, problem);
                done(QStringLiteral("workspace %1: %2").arg(run.workspace.name, run.error));
                return;
            }
            m_held[index] = scan;
            sendNext(index + 1, done);
        });
}

QString WorkspaceTransfer::linkProblem(const QByteArray &tar, const QString &name,
                                       const QString &version)
{
    QString problem = QStringLiteral("its archive is empty or damaged");
    const QString expected = QStringLiteral(".v/") + version;
    // The first entry is the path itself.
    TarArchive::read(tar, [&](TarArchive::Entry &entry, const TarArchive::ReadData &) {
        if (entry.type == TarArchive::Entry::Type::Directory)
            problem.clear();
        else if (entry.type != TarArchive::Entry::Type::Symlink)
            problem = QStringLiteral("%1 is not a link").arg(name);
        else if (entry.linkTarget != expected)
            problem =
                QStringLiteral("%1 links to %2, not %3").arg(name, entry.linkTarget, expected);
        else
            problem.clear();
        return false;
    });
    return problem;
}

void WorkspaceTransfer::collect(SandboxContainer *container, const std::function<void()> &done)
{
    if (m_busy) {
        QPointer<SandboxContainer> target(container);
        m_waiting = [this, target, done] { collect(target, done); };
        return;
    }
    m_busy = true;
    m_container = container;
    collectNext(0, [this, done] {
        done();
        settle();
    });
}

void WorkspaceTransfer::collectNext(int index, const std::function<void()> &done)
{
    // The archive is held in memory while it is compared: what a run may bring back is the
    // workspace's cap, within kMaxReturnBytes whatever the cap.
    const qint64 maxBytes = qMin(m_maxBytes, kMaxReturnBytes);
    while (index < m_runs.size() &&
           (m_runs.at(index).workspace.mode != Workspace::Mode::CopyOnWrite ||
            !m_runs.at(index).error.isEmpty() || !m_runs.at(index).scan))
        ++index;
    if (index >= m_runs.size() || !m_container) {
        done();
        return;
    }
    const QString path =
        QLatin1String(SandboxLayout::kWorkspaceDir) + u'/' + m_runs.at(index).workspace.name;
    m_container->fetchFiles(
        path, maxBytes, this,
        [this, index, maxBytes, done](const SandboxContainer::Archive &archive) {
            WorkspaceRun &run = m_runs[index];
            if (archive.tooLarge) {
                run.error = QStringLiteral("after the run it held more than %1, the most one "
                                           "workspace may bring back (a file too large?): no "
                                           "change was kept")
                                .arg(WorkspaceScanner::formatSize(maxBytes));
                collectNext(index + 1, done);
                return;
            }
            if (!archive.error.isEmpty()) {
                run.error =
                    QStringLiteral("its changes could not be fetched: %1").arg(archive.error);
                collectNext(index + 1, done);
                return;
            }
            compare(index, archive.tar, maxBytes, done);
        });
}

void WorkspaceTransfer::compare(int index, const QByteArray &tar, qint64 maxBytes,
                                const std::function<void()> &done)
{
    const Workspace ws = m_runs.at(index).workspace;
    const std::shared_ptr<const WorkspaceScan> scan = m_runs.at(index).scan;
    const std::shared_ptr<WorkspaceScanner> scanner = m_scanner;
    const bool session = m_kind == Kind::Session;
    offLoop<Compared>(
        this,
        [ws, scan, tar, maxBytes, scanner, session] {
            Compared c;
            c.changes = WorkspaceChangeSet::compute(*scan, tar, maxBytes, kMaxChangedFileBytes,
                                                    kMaxChangedEntries, &c.error);
            if (!c.error.isEmpty() || ws.apply != Workspace::Apply::Always || c.changes.isEmpty())
                return c;
            c.applied = WorkspaceApplier::apply(ws, *scan, c.changes);
            if (!session || c.applied->applied.isEmpty())
                return c;
            // Read again at once (only the files just written are hashed): their new times and
            // digests are what a later change to them is checked against. Without a cap: the
            // folder was within it, and what was applied came back within kMaxReturnBytes.
            const WorkspaceScan now = scanner->scan(ws, -1);
            if (now.error.isEmpty())
                c.rebased =
                    std::make_shared<WorkspaceScan>(rebase(*scan, c.changes, *c.applied, now));
            else
                qCWarning(lcSandbox).noquote()
                    << "workspace" << ws.name << "could not be read again after its changes "
                    << "were applied (" << now.error << "); the session's baseline stays";
            return c;
        },
        [this, index, done](const Compared &c) {
            WorkspaceRun &r = m_runs[index];
            if (!c.error.isEmpty())
                r.error = QStringLiteral("its changes could not be read: %1").arg(c.error);
            else
                r.changes = c.changes;
            r.applied = c.applied;
            if (c.rebased)
                m_held[index] = c.rebased;
            collectNext(index + 1, done);
        });
}

WorkspaceScan WorkspaceTransfer::rebase(const WorkspaceScan &before,
                                        const WorkspaceChangeSet &changes,
                                        const WorkspaceApplyResult &applied,
                                        const WorkspaceScan &now)
{
    QMap<QString, WorkspaceEntry> entries; // by path, in the scan's order
    for (const WorkspaceEntry &e : before.entries)
        entries.insert(e.path, e);
    const QSet<QString> written(applied.applied.cbegin(), applied.applied.cend());
    for (const WorkspaceChange &c : changes.changes) {
        if (!written.contains(c.path))
            continue; // a conflict or a failure: the baseline keeps the file as it was
        if (c.kind == WorkspaceChange::Kind::Renamed)
            entries.remove(c.from);
        if (c.kind == WorkspaceChange::Kind::Deleted) {
            entries.remove(c.path);
            continue;
        }
        // Only as it was written: a file saved again in the folder just after keeps its old
        // entry (an added one: none), so that a later change to it is a conflict.
        const WorkspaceEntry *e = now.find(c.path);
        if (!e || e->type != WorkspaceEntry::Type::File || e->sha256 != c.sha256)
            continue;
        entries.insert(c.path, *e);
        for (QString dir = parentPath(c.path); !dir.isEmpty(); dir = parentPath(dir))
            if (const WorkspaceEntry *d = now.find(dir); d && !entries.contains(dir))
                entries.insert(dir, *d);
    }
    WorkspaceScan out = before;
    out.entries = entries.values();
    out.files = 0;
    out.bytes = 0;
    for (const WorkspaceEntry &e : std::as_const(out.entries))
        if (e.type == WorkspaceEntry::Type::File) {
            ++out.files;
            out.bytes += e.size;
        }
    // The hash of a folder no scan saw: none, rather than one that looks like the folder's.
    out.contentHash.clear();
    out.hashed = 0;
    return out;
}
