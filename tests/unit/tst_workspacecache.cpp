// WorkspaceCache's pure parts: what a fill sends and deletes to turn a workspace's previous
// content into its new one (real folders, scanned), and the fill's script, run with sh on this
// machine over folders laid out as the fill sandbox has them, which must leave exactly the new
// content. The volumes and the fill sandbox themselves run against Docker and Podman in the
// integration suite (tst_workspaces).
#include "sandboxlayout.h"
#include "workspacecache.h"
#include "workspacescanner.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {
void write(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    f.write(content);
}

Workspace workspaceAt(const QString &path)
{
    Workspace ws;
    ws.name = QStringLiteral("data");
    ws.path = path;
    return ws;
}

QStringList pathsOf(const QList<WorkspaceEntry> &entries)
{
    QStringList out;
    for (const WorkspaceEntry &e : entries)
        out.append(e.path);
    return out;
}

bool run(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    return p.waitForFinished(30000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}
} // namespace

class TestWorkspaceCache : public QObject
{
    Q_OBJECT

private:
    // A folder, its scan, then changed in every way a folder changes: a file's content, a file
    // gone, a link's target, a file that became a folder and a folder that became a file, a file
    // made executable, new files in a new folder; one file large and unchanged.
    QTemporaryDir m_dir;
    WorkspaceScanner m_scanner;
    WorkspaceScan m_before;
    WorkspaceScan m_after;

    void changeTheFolder(const QString &root)
    {
        write(root + "/a.txt", "after\n");
        QVERIFY(QFile::remove(root + "/d/x.txt"));
        QVERIFY(QFile::remove(root + "/l"));
        QVERIFY(QFile::link(QStringLiteral("big.bin"), root + "/l"));
        QVERIFY(QFile::remove(root + "/t"));
        write(root + "/t/z.txt", "t is a folder now\n");
        QVERIFY(QDir(root + "/u").removeRecursively());
        write(root + "/u", "u is a file now\n");
        QVERIFY(QFile::setPermissions(root + "/run.sh", QFile::permissions(root + "/run.sh") |
                                                            QFile::ExeOwner | QFile::ExeGroup |
                                                            QFile::ExeOther));
        write(root + "/n/m.txt", "new\n");
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString root = m_dir.path() + "/folder";
        write(root + "/a.txt", "before\n");
        write(root + "/big.bin", QByteArray(256 * 1024, 'b'));
        write(root + "/d/x.txt", "deleted later\n");
        write(root + "/t", "t is a file\n");
        write(root + "/u/y.txt", "u is a folder\n");
        write(root + "/run.sh", "echo hi\n");
        QVERIFY(QFile::link(QStringLiteral("a.txt"), root + "/l"));
        m_before = m_scanner.scan(workspaceAt(root), -1);
        QVERIFY2(m_before.error.isEmpty(), qPrintable(m_before.error));
        // The previous content as a fill sandbox sees it, before the folder changes.
        QVERIFY(
            run(QStringLiteral("cp"), {QStringLiteral("-a"), root, m_dir.path() + "/previous"}));
        changeTheFolder(root);
        m_after = m_scanner.scan(workspaceAt(root), -1);
        QVERIFY2(m_after.error.isEmpty(), qPrintable(m_after.error));
        QVERIFY(m_after.contentHash != m_before.contentHash);
    }

    void withoutAPreviousContentEverythingIsSent()
    {
        const WorkspaceCache::Delta d = WorkspaceCache::delta(nullptr, m_after);
        QCOMPARE(pathsOf(d.changed->entries), pathsOf(m_after.entries));
        QCOMPARE(d.changed->bytes, m_after.bytes);
        QCOMPARE(d.deleted, QStringList());
    }

    void theSameContentSendsAndDeletesNothing()
    {
        const WorkspaceCache::Delta d = WorkspaceCache::delta(&m_after, m_after);
        QCOMPARE(pathsOf(d.changed->entries), QStringList());
        QCOMPARE(d.deleted, QStringList());
    }

    void onlyWhatChangedIsSent()
    {
        const WorkspaceCache::Delta d = WorkspaceCache::delta(&m_before, m_after);
        // Not big.bin, nor d (a folder both have), with the folders above what is sent.
        QCOMPARE(pathsOf(d.changed->entries),
                 QStringList({"a.txt", "l", "n", "n/m.txt", "run.sh", "t", "t/z.txt", "u"}));
        QCOMPARE(d.changed->files, 5);
        QVERIFY(d.changed->bytes < 1024);
        // A folder goes whole (u, not u/y.txt); a changed file or link goes before it is replaced.
        QStringList deleted = d.deleted;
        deleted.sort();
        QCOMPARE(deleted, QStringList({"a.txt", "d/x.txt", "l", "run.sh", "t", "u"}));
        QCOMPARE(d.changed->contentHash, m_after.contentHash);
    }

    // The fill's script over a copy of the previous content and the staged files: the result
    // is the new content, entry for entry.
    void theFillScriptMakesTheNewContent()
    {
        const QString root = m_dir.path() + "/folder";
        const QString fill = m_dir.path() + "/fill";
        const QString previous = m_dir.path() + "/previous";
        const WorkspaceCache::Delta d = WorkspaceCache::delta(&m_before, m_after);
        const QString stage = fill + u'/' + WorkspaceCache::stageName(m_after.contentHash);
        QVERIFY(QDir().mkpath(stage));
        // What the archive endpoint unpacks there: the changed entries, and the deletion list.
        for (const WorkspaceEntry &e : d.changed->entries) {
            const QString to = stage + u'/' + e.path;
            if (e.type == WorkspaceEntry::Type::Directory)
                QVERIFY(QDir().mkpath(to));
            else if (e.type == WorkspaceEntry::Type::Symlink)
                QVERIFY(QFile::link(e.linkTarget, to));
            else
                QVERIFY2(QFile::copy(root + u'/' + e.path, to), qPrintable(e.path));
        }
        QByteArray list;
        for (const QString &path : d.deleted)
            list += path.toUtf8() + '\0';
        write(fill + u'/' + WorkspaceCache::deletedListName(m_after.contentHash), list);
        QString script = WorkspaceCache::fillScript(m_after.contentHash);
        script.replace(QLatin1String(SandboxLayout::kWorkspaceFillDir), fill);
        script.replace(QLatin1String(SandboxLayout::kWorkspacePreviousDir), previous);
        QProcess sh;
        sh.start(QStringLiteral("sh"), {QStringLiteral("-c"), script});
        QVERIFY(sh.waitForFinished(30000));
        QVERIFY2(sh.exitCode() == 0, sh.readAllStandardError().constData());
        const WorkspaceScan filled = m_scanner.scan(workspaceAt(fill), -1);
        QVERIFY2(filled.error.isEmpty(), qPrintable(filled.error));
        QCOMPARE(pathsOf(filled.entries), pathsOf(m_after.entries));
        QCOMPARE(filled.contentHash, m_after.contentHash);
    }

    void namesAreTheContents()
    {
        QCOMPARE(WorkspaceCache::volumeName(m_after.contentHash),
                 QStringLiteral("code-sandbox-workspace-") +
                     QString::fromLatin1(m_after.contentHash.left(32)));
        QVERIFY(WorkspaceCache::volumeName(m_after.contentHash) !=
                WorkspaceCache::volumeName(m_before.contentHash));
        QVERIFY(WorkspaceCache::stageName(m_after.contentHash).startsWith(u'.'));
    }
};

QTEST_GUILESS_MAIN(TestWorkspaceCache)
#include "tst_workspacecache.moc"
