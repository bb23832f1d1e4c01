#include "workspacecache.h"

#include "execution.h"
#include "sandboxlayout.h"
#include "sandboxlog.h"
#include "sandboxsite.h"
#include "workspacetransfer.h"

#include <QPointer>
#include <utility>

namespace {

QString parentOf(const QString &path)
{
    const qsizetype slash = path.lastIndexOf(u'/');
    return slash < 0 ? QString() : path.left(slash);
}

// Whether a cached volume holding `a` holds `b` as it is: links and files by their target or
// digest, and what a cached volume keeps of the mode (PackAs::Cached: executable or not).
bool sameEntry(const WorkspaceEntry &a, const WorkspaceEntry &b)
{
    if (a.type != b.type)
        return false;
    switch (a.type) {
    case WorkspaceEntry::Type::File:
        return a.sha256 == b.sha256 && ((a.mode & 0111) != 0) == ((b.mode & 0111) != 0);
    case WorkspaceEntry::Type::Symlink:
        return a.linkTarget == b.linkTarget;
    case WorkspaceEntry::Type::Directory:
        return true;
    }
    return false;
}

// A single-quoted word for sh.
QString quoted(const QString &word)
{
    QString out = word;
    out.replace(u'\'', QStringLiteral("'\\''"));
    return u'\'' + out + u'\'';
}

} // namespace

WorkspaceCache::WorkspaceCache(Fills fills, std::shared_ptr<WorkspaceScanner> scanner,
                               QObject *parent)
    : QObject(parent), m_fills(std::move(fills)), m_scanner(std::move(scanner))
{}

QString WorkspaceCache::volumeName(const QByteArray &contentHash)
{
    return QStringLiteral("code-sandbox-workspace-") + QString::fromLatin1(contentHash.left(32));
}

QString WorkspaceCache::stageName(const QByteArray &contentHash)
{
    return QStringLiteral(".cs-stage-") + QString::fromLatin1(contentHash.left(32));
}

QString WorkspaceCache::deletedListName(const QByteArray &contentHash)
{
    return QStringLiteral(".cs-deleted-") + QString::fromLatin1(contentHash.left(32));
}

QString WorkspaceCache::fillScript(const QByteArray &contentHash)
{
    // cp -a keeps links as links, modes and times; the staged files are hard-linked into place
    // over what was there (-f: an older file is unlinked first), which costs no copy. Entry by
    // entry rather than "DIR/.": the volume's own folder is not the filler's on every backend (a
    // claim's is root's, its group the pod's), and cp would fail to give it DIR's times.
    return QStringLiteral(
               "set -eu\n"
               "cd %1\n"
               "s=%3\n"
               "l=%4\n"
               "if [ -d %2 ]; then find %2 -mindepth 1 -maxdepth 1 -exec cp -a -t . {} +; "
               "fi\n"
               "if [ -s \"$l\" ]; then xargs -0 rm -rf -- < \"$l\"; fi\n"
               "if [ -d \"$s\" ]; then find \"$s\" -mindepth 1 -maxdepth 1 -exec cp -a -l -f "
               "-t . {} +; fi\n"
               "rm -rf -- \"$s\" \"$l\"\n")
        .arg(quoted(QString::fromLatin1(SandboxLayout::kWorkspaceFillDir)),
             quoted(QString::fromLatin1(SandboxLayout::kWorkspacePreviousDir)),
             quoted(stageName(contentHash)), quoted(deletedListName(contentHash)));
}

WorkspaceCache::Delta WorkspaceCache::delta(const WorkspaceScan *previous, const WorkspaceScan &now)
{
    Delta d;
    d.changed = std::make_shared<WorkspaceScan>(now);
    if (!previous)
        return d;
    QSet<QString> deletedFolders;
    const auto insideDeleted = [&](const QString &path) {
        for (QString dir = parentOf(path); !dir.isEmpty(); dir = parentOf(dir))
            if (deletedFolders.contains(dir))
                return true;
        return false;
    };
    for (const WorkspaceEntry &p : previous->entries) {
        const WorkspaceEntry *n = now.find(p.path);
        // Gone, or another type: deleted whole. A link or a file that differs: deleted too (a
        // link cannot be replaced in place; a file could, but this keeps the two alike).
        if ((n && sameEntry(p, *n)) || insideDeleted(p.path))
            continue;
        d.deleted.append(p.path);
        if (p.type == WorkspaceEntry::Type::Directory)
            deletedFolders.insert(p.path);
    }
    // What is sent: the entries previous lacks or has otherwise, and the folders above them.
    QSet<QString> sent;
    for (const WorkspaceEntry &n : now.entries) {
        const WorkspaceEntry *p = previous->find(n.path);
        if (p && sameEntry(*p, n) && !insideDeleted(n.path))
            continue;
        for (QString path = n.path; !path.isEmpty() && !sent.contains(path); path = parentOf(path))
            sent.insert(path);
    }
    d.changed->entries.clear();
    d.changed->files = 0;
    d.changed->bytes = 0;
    for (const WorkspaceEntry &n : now.entries) {
        if (!sent.contains(n.path))
            continue;
        d.changed->entries.append(n);
        if (n.type == WorkspaceEntry::Type::File) {
            ++d.changed->files;
            d.changed->bytes += n.size;
        }
    }
    return d;
}

void WorkspaceCache::ensure(SandboxSite *site, const Language &language, const Workspace &ws,
                            const std::shared_ptr<const WorkspaceScan> &scan, const Done &done)
{
    const QString volume = volumeName(scan->contentHash);
    const Key key{site, volume};
    if (m_waiting.contains(key)) {
        m_waiting[key].append(done);
        return;
    }
    m_waiting.insert(key, {done});
    const QHash<QString, Held> &onSite = m_held[site];
    if (const auto held = onSite.constFind(volume); held == onSite.constEnd() || !held->ready) {
        fill(site, language, ws, scan);
        return;
    }
    // The engine may have lost it (`docker volume prune` removes what no container uses), and
    // mounting a volume that is not there makes an empty one: the run would see an empty folder.
    QPointer<SandboxSite> where(site);
    site->backend()->hasVolume(
        volume, this,
        [this, where, site, language, ws, scan, volume, key](bool exists, const QString &error) {
            if (exists && where) {
                const QList<Done> waiting = m_waiting.take(key);
                for (const Done &d : waiting)
                    lease(site, volume, 0, d);
                return;
            }
            qCInfo(lcSandbox).noquote()
                << QStringLiteral("workspace %1: its volume %2 is gone from the engine%3; filled "
                                  "again")
                       .arg(ws.name, volume,
                            error.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(error));
            m_held[site].remove(volume);
            if (!where) {
                filled(site, ws.name, volume, QString(), 0, QStringLiteral("the engine went away"));
                return;
            }
            fill(site, language, ws, scan);
        });
}

void WorkspaceCache::lease(SandboxSite *site, const QString &volume, qint64 sentBytes,
                           const Done &done)
{
    ++m_held[site][volume].leases;
    done(volume, sentBytes, QString());
}

void WorkspaceCache::release(SandboxSite *site, const QString &volume)
{
    auto it = m_held[site].find(volume);
    if (it == m_held[site].end())
        return;
    it->leases = qMax(0, it->leases - 1);
    dropIfStale(site, volume);
}

QString WorkspaceCache::latestOf(SandboxSite *site, const QString &name) const
{
    const auto onSite = m_held.constFind(site);
    if (onSite == m_held.constEnd())
        return QString();
    for (auto it = onSite->cbegin(); it != onSite->cend(); ++it)
        if (it->ready && it->latestOf.contains(name))
            return it.key();
    return QString();
}

void WorkspaceCache::fill(SandboxSite *site, const Language &language, const Workspace &ws,
                          const std::shared_ptr<const WorkspaceScan> &scan)
{
    const QString volume = volumeName(scan->contentHash);
    const QString previous = latestOf(site, ws.name);
    const Delta d = delta(previous.isEmpty() ? nullptr : m_held[site][previous].scan.get(), *scan);
    if (!previous.isEmpty())
        ++m_held[site][previous].leases; // read by the fill: not removed meanwhile
    Held &held = m_held[site][volume];
    held.scan = scan;
    held.ready = false;
    qCDebug(lcSandbox).noquote() << "workspace" << ws.name << "into volume" << volume << ":"
                                 << d.changed->files << "file(s) to send," << d.deleted.size()
                                 << "to delete, from"
                                 << (previous.isEmpty() ? QStringLiteral("nothing") : previous);
    auto *transfer =
        new WorkspaceTransfer({ws}, m_scanner, -1, nullptr, WorkspaceTransfer::Kind::Fill);
    transfer->setFill(d.changed, d.deleted);
    Execution *execution =
        m_fills.run(site, language, volume, previous, fillScript(scan->contentHash), transfer);
    if (!execution) {
        delete transfer;
        filled(site, ws.name, volume, previous, 0, QStringLiteral("the server is shutting down"));
        return;
    }
    QPointer<SandboxSite> where(site);
    connect(execution, &Execution::finished, this,
            [this, where, site, name = ws.name, volume, previous](const ExecutionResult &r) {
                const WorkspaceRun sent = r.workspaces.value(0);
                QString error;
                if (!where)
                    error = QStringLiteral("the engine went away");
                else if (!r.error.isEmpty())
                    error = r.error;
                else if (r.timedOut)
                    error = QStringLiteral("copying took longer than %1 s").arg(r.timeoutSec);
                else if (r.exitCode != 0)
                    error = QStringLiteral("copying failed (exit code %1): %2")
                                .arg(r.exitCode)
                                .arg(QString::fromUtf8(r.stderrData.right(1000)).trimmed());
                filled(site, name, volume, previous, sent.sentBytes, error);
            });
}

void WorkspaceCache::filled(SandboxSite *site, const QString &name, const QString &volume,
                            const QString &previous, qint64 sentBytes, const QString &error)
{
    const QList<Done> waiting = m_waiting.take({site, volume});
    if (!previous.isEmpty())
        release(site, previous);
    if (!error.isEmpty()) {
        m_held[site].remove(volume);
        m_fills.remove(site, volume);
        for (const Done &d : waiting)
            d(QString(), 0, error);
        return;
    }
    Held &held = m_held[site][volume];
    held.ready = true;
    QStringList older;
    for (auto it = m_held[site].begin(); it != m_held[site].end(); ++it)
        if (it.key() != volume && it->latestOf.remove(name))
            older.append(it.key());
    held.latestOf.insert(name);
    for (qsizetype i = 0; i < waiting.size(); ++i)
        lease(site, volume, i == 0 ? sentBytes : 0, waiting.at(i));
    for (const QString &v : std::as_const(older))
        dropIfStale(site, v);
}

void WorkspaceCache::dropIfStale(SandboxSite *site, const QString &volume)
{
    const auto it = m_held[site].constFind(volume);
    if (it == m_held[site].constEnd() || !it->ready || it->leases > 0 || !it->latestOf.isEmpty())
        return;
    m_held[site].remove(volume);
    m_fills.remove(site, volume);
}
