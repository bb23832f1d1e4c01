#include "tararchive.h"
#include "workspaceapplier.h"
#include "workspacetestfiles.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <functional>
#include <sys/stat.h>
#include <unistd.h>

using Kind = WorkspaceChange::Kind;

using namespace WorkspaceTestFiles;

namespace {
QByteArray read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

int modeOf(const QString &path)
{
    struct stat st;
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 ? int(st.st_mode & 07777) : -1;
}

// Every path under `root` with its content (or "<dir>" / "-> target"): a folder's whole state.
QMap<QString, QByteArray> snapshot(const QString &root)
{
    QMap<QString, QByteArray> state;
    QDirIterator it(root, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString p = it.next();
        const QFileInfo info = it.fileInfo();
        state.insert(p.mid(root.size()), info.isSymLink() ? "-> " + info.symLinkTarget().toUtf8()
                                         : info.isDir()   ? QByteArray("<dir>")
                                                          : read(p));
    }
    return state;
}

WorkspaceChange added(const QString &path, const QByteArray &content, int mode = 0644)
{
    WorkspaceChange c;
    c.kind = Kind::Added;
    c.path = path;
    c.content = content;
    c.size = content.size();
    c.sha256 = QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex();
    c.mode = mode;
    return c;
}

} // namespace

class tst_WorkspaceApplier : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void applies();
    void conflicts();
    void excludedNamesNeverWritten();
    void neverThroughAHostSymlink();
    void neverOntoAHostSymlink();
    void hostileNames();
    void checksTheContent();
    void deletesOnlyWhatTheScanKnew();
    void otherWorkspace();
    void noTemporaryFilesLeft();

private:
    WorkspaceChangeSet changesFrom(const std::function<void(Entries *)> &edit);
    WorkspaceChangeSet handMade(const QList<WorkspaceChange> &changes) const;
    QString path(const QString &rel) const { return m_dir->filePath(rel); }

    // The workspace and a folder beside it, both in one temporary folder: a write that escaped
    // would land in it (and go with it), never in the system's temporary folder.
    std::unique_ptr<QTemporaryDir> m_base;
    std::unique_ptr<QDir> m_dir;
    std::unique_ptr<QDir> m_outside;
    Workspace m_ws;
    WorkspaceScanner m_scanner;
    WorkspaceScan m_scan;
};

void tst_WorkspaceApplier::init()
{
    m_base = std::make_unique<QTemporaryDir>();
    QVERIFY(m_base->isValid());
    QVERIFY(QDir(m_base->path()).mkpath(QStringLiteral("folder/inner")));
    QVERIFY(QDir(m_base->path()).mkpath(QStringLiteral("outside")));
    // Two levels down, so that "../" and "../../" both stay in the temporary folder.
    m_dir = std::make_unique<QDir>(m_base->filePath(QStringLiteral("folder/inner")));
    m_outside = std::make_unique<QDir>(m_base->filePath(QStringLiteral("outside")));
    write(path("main.py"), "print('a')\n");
    write(path("old.txt"), "old\n");
    write(path("move.txt"), "move me\n");
    write(path("src/lib.py"), "x = 1\n");
    write(m_outside->filePath("victim.txt"), "outside\n");
    m_ws = Workspace();
    m_ws.name = QStringLiteral("data");
    m_ws.path = QFileInfo(m_dir->absolutePath()).canonicalFilePath();
    m_ws.mode = Workspace::Mode::CopyOnWrite;
    m_scan = m_scanner.scan(m_ws, -1);
    QCOMPARE(m_scan.error, QString());
}

WorkspaceChangeSet tst_WorkspaceApplier::changesFrom(const std::function<void(Entries *)> &edit)
{
    QString error;
    const QByteArray sent =
        WorkspaceScanner::pack(m_ws, m_scan, m_ws.name, WorkspaceScanner::PackAs::Writable, &error);
    Entries entries = TarArchive::unpack(sent, kBig, &error);
    edit(&entries);
    const WorkspaceChangeSet set =
        WorkspaceChangeSet::compute(m_scan, TarArchive::pack(entries), kBig, kBig, 10000, &error);
    return set;
}

WorkspaceChangeSet tst_WorkspaceApplier::handMade(const QList<WorkspaceChange> &changes) const
{
    WorkspaceChangeSet set;
    set.workspace = m_ws.name;
    set.changes = changes;
    return set;
}

void tst_WorkspaceApplier::applies()
{
    const WorkspaceChangeSet set = changesFrom([](Entries *e) {
        setFile(e, "data/main.py", "print('b')\n", 0755);
        setFile(e, "data/new/deeper/n.txt", "new\n", 0600);
        remove(e, "data/old.txt");
        remove(e, "data/move.txt");
        setFile(e, "data/src/moved.txt", "move me\n");
    });
    QCOMPARE(set.changes.size(), 4);
    const WorkspaceApplyResult result = WorkspaceApplier::apply(m_ws, m_scan, set);
    QCOMPARE(result.conflicts, QStringList());
    QCOMPARE(result.failed, QStringList());
    QCOMPARE(result.applied,
             (QStringList{"main.py", "new/deeper/n.txt", "old.txt", "src/moved.txt"}));
    QCOMPARE(read(path("main.py")), QByteArray("print('b')\n"));
    QCOMPARE(modeOf(path("main.py")), 0755);
    QCOMPARE(read(path("new/deeper/n.txt")), QByteArray("new\n"));
    QCOMPARE(modeOf(path("new/deeper/n.txt")), 0600);
    QVERIFY(!QFileInfo::exists(path("old.txt")));
    QVERIFY(!QFileInfo::exists(path("move.txt")));
    QCOMPARE(read(path("src/moved.txt")), QByteArray("move me\n"));
    QCOMPARE(read(path("src/lib.py")), QByteArray("x = 1\n"));
    // Set-uid never lands.
    const WorkspaceApplyResult suid =
        WorkspaceApplier::apply(m_ws, m_scan, handMade({added("tool", "t", 06755)}));
    QCOMPARE(suid.applied, QStringList{"tool"});
    QCOMPARE(modeOf(path("tool")), 0755);
}

void tst_WorkspaceApplier::conflicts()
{
    const WorkspaceChangeSet set = changesFrom([](Entries *e) {
        setFile(e, "data/main.py", "print('sandbox')\n");
        setFile(e, "data/src/lib.py", "x = 2\n");
        setFile(e, "data/fresh.txt", "sandbox\n");
        remove(e, "data/old.txt");
        remove(e, "data/move.txt");
        setFile(e, "data/moved.txt", "move me\n");
    });
    // Meanwhile, on the host:
    write(path("main.py"), "print('host')\n"); // changed
    write(path("fresh.txt"), "host\n");        // appeared
    write(path("old.txt"), "old, edited\n");   // changed, then deleted in the sandbox
    QVERIFY(QFile::remove(path("move.txt")));  // gone
    const WorkspaceApplyResult result = WorkspaceApplier::apply(m_ws, m_scan, set);
    QCOMPARE(result.applied, QStringList{"src/lib.py"});
    QCOMPARE(result.failed, QStringList());
    QVERIFY(listedWith(result.conflicts, "main.py", "changed since the run started"));
    QVERIFY(listedWith(result.conflicts, "fresh.txt", "appeared"));
    QVERIFY(listedWith(result.conflicts, "old.txt", "changed since the run started"));
    QVERIFY(listedWith(result.conflicts, "move.txt", "changed since the run started"));
    QCOMPARE(result.conflicts.size(), 4);
    // All left alone.
    QCOMPARE(read(path("main.py")), QByteArray("print('host')\n"));
    QCOMPARE(read(path("fresh.txt")), QByteArray("host\n"));
    QCOMPARE(read(path("old.txt")), QByteArray("old, edited\n"));
    QVERIFY(!QFileInfo::exists(path("moved.txt")));
    // A change of the modification time alone is a change too.
    m_scan = m_scanner.scan(m_ws, -1);
    const WorkspaceChangeSet again =
        changesFrom([](Entries *e) { setFile(e, "data/src/lib.py", "x = 3\n"); });
    QCOMPARE(again.changes.size(), 1);
    QFile lib(path("src/lib.py"));
    QVERIFY(lib.open(QIODevice::ReadWrite));
    QVERIFY(lib.setFileTime(QDateTime::currentDateTime().addSecs(-3600),
                            QFileDevice::FileModificationTime));
    lib.close();
    QCOMPARE(WorkspaceApplier::apply(m_ws, m_scan, again).conflicts.size(), 1);
}

void tst_WorkspaceApplier::excludedNamesNeverWritten()
{
    const WorkspaceChangeSet set = changesFrom([](Entries *e) {
        setFile(e, "data/.env", "TOKEN=stolen\n");
        setFile(e, "data/.ssh/authorized_keys", "ssh-ed25519 AAAA attacker\n");
        setFile(e, "data/sub/id_rsa", "key\n");
        setFile(e, "data/fine.txt", "fine\n");
    });
    QCOMPARE(set.changes.size(), 4);
    Workspace ws = m_ws;
    ws.exclude = QStringList{"*.txt"};
    WorkspaceApplyResult result = WorkspaceApplier::apply(ws, m_scan, set);
    QCOMPARE(result.applied, QStringList());
    QCOMPARE(result.failed.size(), 4);
    QVERIFY(listedWith(result.failed, ".env", "rules keep this name out"));
    QVERIFY(listedWith(result.failed, ".ssh/authorized_keys", "rules keep this name out"));
    QVERIFY(!QFileInfo::exists(path(".env")));
    QVERIFY(!QFileInfo::exists(path(".ssh")));
    QVERIFY(!QFileInfo::exists(path("sub")));
    // Without the extra rule, the plain file goes in and the credentials still do not.
    result = WorkspaceApplier::apply(m_ws, m_scan, set);
    QCOMPARE(result.applied, QStringList{"fine.txt"});
    QCOMPARE(result.failed.size(), 3);
}

void tst_WorkspaceApplier::neverThroughAHostSymlink()
{
    // Links in the folder to the outside: the scan left them out, the sandbox made real folders
    // of those names, and the change set writes under them.
    QVERIFY(QFile::link(m_outside->absolutePath(), path("escape")));
    QCOMPARE(::symlink("../../", QFile::encodeName(path("src/up")).constData()), 0);
    m_scan = m_scanner.scan(m_ws, -1);
    QVERIFY(!m_scan.find("escape"));
    const WorkspaceChangeSet set = changesFrom([](Entries *e) {
        setFile(e, "data/escape/pwned.txt", "pwned\n");
        setFile(e, "data/escape/victim.txt", "overwritten\n");
        setFile(e, "data/src/up/pwned2.txt", "pwned\n");
    });
    QCOMPARE(set.changes.size(), 3);
    const QMap<QString, QByteArray> outsideBefore = snapshot(m_outside->absolutePath());
    const QString parent = QFileInfo(m_dir->absolutePath()).dir().path();
    const WorkspaceApplyResult result = WorkspaceApplier::apply(m_ws, m_scan, set);
    QCOMPARE(result.applied, QStringList());
    QCOMPARE(result.failed.size(), 3);
    QVERIFY2(listedWith(result.failed, "escape/pwned.txt", "symbolic link"),
             qPrintable(result.failed.join(u'\n')));
    QVERIFY(listedWith(result.failed, "src/up/pwned2.txt", "symbolic link"));
    QCOMPARE(snapshot(m_outside->absolutePath()), outsideBefore);
    QCOMPARE(read(m_outside->filePath("victim.txt")), QByteArray("outside\n"));
    QVERIFY(!QFileInfo::exists(parent + QStringLiteral("/pwned2.txt")));
}

void tst_WorkspaceApplier::neverOntoAHostSymlink()
{
    // The last component a link on the host, made after the scan: an added file there is a
    // conflict, and the link's target is untouched.
    const WorkspaceChangeSet set = changesFrom([](Entries *e) { setFile(e, "data/late", "x\n"); });
    QVERIFY(QFile::link(m_outside->filePath("victim.txt"), path("late")));
    const WorkspaceApplyResult result = WorkspaceApplier::apply(m_ws, m_scan, set);
    QVERIFY(listedWith(result.conflicts, "late", "appeared"));
    QCOMPARE(read(m_outside->filePath("victim.txt")), QByteArray("outside\n"));
    QVERIFY(QFileInfo(path("late")).isSymLink());
    // A file of the scan replaced by a link: a modification is a conflict.
    const WorkspaceChangeSet modify =
        changesFrom([](Entries *e) { setFile(e, "data/main.py", "print('b')\n"); });
    QVERIFY(QFile::remove(path("main.py")));
    QVERIFY(QFile::link(m_outside->filePath("victim.txt"), path("main.py")));
    QCOMPARE(WorkspaceApplier::apply(m_ws, m_scan, modify).conflicts.size(), 1);
    QCOMPARE(read(m_outside->filePath("victim.txt")), QByteArray("outside\n"));
}

void tst_WorkspaceApplier::hostileNames()
{
    // A change set that did not come from compute (a tampered history, a bug): every name is
    // checked again.
    const QMap<QString, QByteArray> outsideBefore = snapshot(m_outside->absolutePath());
    const QString parent = QFileInfo(m_dir->absolutePath()).dir().path();
    const QString escape = QStringLiteral("../../outside/victim.txt");
    const QString absolute = m_base->filePath(QStringLiteral("abs.txt"));
    const WorkspaceApplyResult result = WorkspaceApplier::apply(
        m_ws, m_scan,
        handMade({added("../evil.txt", "e"), added(escape, "e"), added(absolute, "e"),
                  added("a/../../evil2.txt", "e"), added(QString::fromLatin1("n\0ul", 4), "e"),
                  added("", "e"), added("ctl\x1b", "e")}));
    QCOMPARE(result.applied, QStringList());
    QCOMPARE(result.failed.size(), 7);
    // Shown escaped: a name cannot inject lines or terminal sequences into what is reported.
    QVERIFY(listedWith(result.failed, "ctl\\x1b", "control character"));
    QVERIFY(listedWith(result.failed, "n\\x00ul", "NUL"));
    QCOMPARE(snapshot(m_outside->absolutePath()), outsideBefore);
    QVERIFY(!QFileInfo::exists(parent + "/evil.txt"));
    QVERIFY(!QFileInfo::exists(parent + "/evil2.txt"));
    QVERIFY(!QFileInfo::exists(absolute));
}

void tst_WorkspaceApplier::checksTheContent()
{
    WorkspaceChange c = added("a.txt", "right");
    c.content = "wrong";
    WorkspaceApplyResult result = WorkspaceApplier::apply(m_ws, m_scan, handMade({c}));
    QVERIFY(listedWith(result.failed, "a.txt", "does not match its digest"));
    QVERIFY(!QFileInfo::exists(path("a.txt")));
    // A modification of a path the scan did not have as a file.
    WorkspaceChange m = added("src", "x");
    m.kind = Kind::Modified;
    result = WorkspaceApplier::apply(m_ws, m_scan, handMade({m}));
    QVERIFY(listedWith(result.failed, "src", "was not a file"));
    QVERIFY(QFileInfo(path("src")).isDir());
    // A modification measured against another starting point.
    m = added("main.py", "print('b')\n");
    m.kind = Kind::Modified;
    m.oldSha256 = QCryptographicHash::hash("print('other')\n", QCryptographicHash::Sha256).toHex();
    result = WorkspaceApplier::apply(m_ws, m_scan, handMade({m}));
    QVERIFY(listedWith(result.failed, "main.py", "not of the scan"));
    QCOMPARE(read(path("main.py")), QByteArray("print('a')\n"));
}

void tst_WorkspaceApplier::deletesOnlyWhatTheScanKnew()
{
    write(path("unknown.txt"), "after the scan\n");
    WorkspaceChange d;
    d.kind = Kind::Deleted;
    d.path = QStringLiteral("unknown.txt");
    WorkspaceChange dir = d;
    dir.path = QStringLiteral("src");
    const WorkspaceApplyResult result = WorkspaceApplier::apply(m_ws, m_scan, handMade({d, dir}));
    QCOMPARE(result.applied, QStringList());
    QCOMPARE(result.failed.size(), 2);
    QVERIFY(QFileInfo::exists(path("unknown.txt")));
    QVERIFY(QFileInfo::exists(path("src/lib.py")));
}

void tst_WorkspaceApplier::otherWorkspace()
{
    WorkspaceChangeSet set = handMade({added("a.txt", "a")});
    set.workspace = QStringLiteral("other");
    const WorkspaceApplyResult result = WorkspaceApplier::apply(m_ws, m_scan, set);
    QCOMPARE(result.applied, QStringList());
    QVERIFY(listedWith(result.failed, "a.txt", "workspace 'other'"));
    QVERIFY(!QFileInfo::exists(path("a.txt")));
}

void tst_WorkspaceApplier::noTemporaryFilesLeft()
{
    const WorkspaceChangeSet set = changesFrom([](Entries *e) {
        for (int i = 0; i < 20; ++i)
            setFile(e, QStringLiteral("data/d%1/f%2").arg(i % 4).arg(i), QByteArray::number(i));
        setFile(e, "data/main.py", "print('b')\n");
    });
    // One of them fails half-way: its folder is a file on the host by now.
    write(path("d3"), "a file where a folder goes");
    const WorkspaceApplyResult result = WorkspaceApplier::apply(m_ws, m_scan, set);
    QCOMPARE(result.applied.size(), 16);
    QCOMPARE(result.failed.size(), 5);
    QDirIterator it(m_dir->absolutePath(), QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    int files = 0;
    while (it.hasNext()) {
        const QString p = it.next();
        QVERIFY2(!p.contains(QStringLiteral(".cs-apply-")), qPrintable(p));
        ++files;
    }
    QCOMPARE(files, 5 + 1 + 3 + 15); // before (with src/), d3, the three new folders, their files
}

QTEST_GUILESS_MAIN(tst_WorkspaceApplier)
#include "tst_workspaceapplier.moc"
