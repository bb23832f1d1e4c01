#include "tararchive.h"
#include "workspacechangeset.h"
#include "workspacescanner.h"
#include "workspacetestfiles.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <functional>
#include <sys/stat.h>
#include <unistd.h>

using Type = TarArchive::Entry::Type;
using Kind = WorkspaceChange::Kind;
Q_DECLARE_METATYPE(TarArchive::Entry)

using namespace WorkspaceTestFiles;

namespace {
TarArchive::Entry entry(const QString &path, Type type, const QByteArray &data = {},
                        const QString &link = {})
{
    TarArchive::Entry e;
    e.path = path;
    e.type = type;
    e.isDirectory = type == Type::Directory;
    e.data = data;
    e.linkTarget = link;
    e.mode = type == Type::Directory ? 0755 : 0644;
    return e;
}

QByteArray sha(const QByteArray &data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}
} // namespace

class tst_WorkspaceChangeSet : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void unchanged();
    void allKinds();
    void modeOnly();
    void excludedNameIsAdded();
    void hostileEntries_data();
    void hostileEntries();
    void duplicates();
    void caps();
    void entryCap();
    void bigUnchangedFile();
    void damagedArchiveDeletesNothing();
    void otherLayoutDeletesNothing();
    void links();
    void emptyFilesAreNotRenames();
    void diffCut();
    void noDiffWhenTheHostChanged();
    void failedScan();
    void jsonRoundTrip();
    void jsonTampered_data();
    void jsonTampered();
    void summaryCapsNames();

private:
    // The archive the engine returns for the sandbox's /workspace/data: the folder as packed for
    // the sandbox, then changed by `edit` (as the program would).
    QByteArray sandboxTar(const std::function<void(Entries *)> &edit = {});
    WorkspaceChangeSet compute(const QByteArray &tar, QString *error = nullptr,
                               qint64 maxTotal = kBig, qint64 maxFile = kBig,
                               int maxEntries = 1000);
    QString path(const QString &rel) const { return m_dir->filePath(rel); }

    std::unique_ptr<QTemporaryDir> m_dir;
    Workspace m_ws;
    WorkspaceScanner m_scanner;
    WorkspaceScan m_scan;
};

void tst_WorkspaceChangeSet::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    write(path("main.py"), "import sys\nprint('a')\nprint('b')\nprint('c')\n");
    write(path("old.txt"), "old\n");
    write(path("data.bin"), QByteArray("\x89PNG\0\0\x01", 7));
    write(path("move.txt"), "move me\n");
    write(path("keep/keep.txt"), "keep\n");
    write(path("run.sh"), "#!/bin/sh\n");
    m_ws = Workspace();
    m_ws.name = QStringLiteral("data");
    m_ws.path = QFileInfo(m_dir->path()).canonicalFilePath();
    m_ws.mode = Workspace::Mode::CopyOnWrite;
    m_scan = m_scanner.scan(m_ws, -1);
    QCOMPARE(m_scan.error, QString());
}

QByteArray tst_WorkspaceChangeSet::sandboxTar(const std::function<void(Entries *)> &edit)
{
    QString error;
    const QByteArray sent =
        WorkspaceScanner::pack(m_ws, m_scan, m_ws.name, WorkspaceScanner::PackAs::Writable, &error);
    Entries skipped;
    Entries entries = TarArchive::unpack(sent, kBig, &error, -1, &skipped);
    entries.append(skipped); // the links too
    if (edit)
        edit(&entries);
    return TarArchive::pack(entries, &error);
}

WorkspaceChangeSet tst_WorkspaceChangeSet::compute(const QByteArray &tar, QString *error,
                                                   qint64 maxTotal, qint64 maxFile, int maxEntries)
{
    QString ignored;
    return WorkspaceChangeSet::compute(m_scan, tar, maxTotal, maxFile, maxEntries,
                                       error ? error : &ignored);
}

void tst_WorkspaceChangeSet::unchanged()
{
    QString error;
    const WorkspaceChangeSet set = compute(sandboxTar(), &error);
    QCOMPARE(error, QString());
    QVERIFY(set.isEmpty());
    QCOMPARE(set.workspace, QStringLiteral("data"));
    QCOMPARE(set.summary(), QStringLiteral("workspace data: no changes"));
}

void tst_WorkspaceChangeSet::allKinds()
{
    QString error;
    const WorkspaceChangeSet set =
        compute(sandboxTar([](Entries *e) {
                    setFile(e, "data/main.py",
                            "import sys\nprint('A')\nprint('b')\nprint('c')\nx = 1\ny = 2\n");
                    setFile(e, "data/a.csv", "a,b\n1,2\n");
                    setFile(e, "data/data.bin", QByteArray("\x89PNG\0\0\x02", 7));
                    remove(e, "data/old.txt");
                    remove(e, "data/move.txt");
                    e->append(entry("data/moved", Type::Directory));
                    setFile(e, "data/moved/move.txt", "move me\n");
                    setFile(e, "data/out.bin", QByteArray(3, '\0'));
                }),
                &error);
    QCOMPARE(error, QString());
    QStringList paths;
    for (const WorkspaceChange &c : set.changes)
        paths.append(c.path);
    QCOMPARE(paths,
             (QStringList{"a.csv", "data.bin", "main.py", "moved/move.txt", "old.txt", "out.bin"}));
    const WorkspaceChange *main = changeAt(set, "main.py");
    QCOMPARE(main->kind, Kind::Modified);
    QVERIFY(!main->binary);
    QCOMPARE(main->linesAdded, 3);
    QCOMPARE(main->linesRemoved, 1);
    QCOMPARE(main->diff, QStringLiteral("--- a/main.py\n+++ b/main.py\n@@ -1,4 +1,6 @@\n import "
                                        "sys\n-print('a')\n+print('A')\n print('b')\n print('c')\n"
                                        "+x = 1\n+y = 2\n"));
    QCOMPARE(main->oldSha256, m_scan.find("main.py")->sha256);
    QCOMPARE(main->sha256, sha(main->content));
    QCOMPARE(main->oldSize, qint64(44));
    const WorkspaceChange *added = changeAt(set, "a.csv");
    QCOMPARE(added->kind, Kind::Added);
    QCOMPARE(added->content, QByteArray("a,b\n1,2\n"));
    QCOMPARE(added->size, qint64(8));
    QVERIFY(added->diff.startsWith(QStringLiteral("--- /dev/null\n+++ b/a.csv\n")));
    QCOMPARE(added->linesAdded, 2);
    const WorkspaceChange *bin = changeAt(set, "data.bin");
    QCOMPARE(bin->kind, Kind::Modified);
    QVERIFY(bin->binary);
    QVERIFY(bin->diff.isEmpty());
    QCOMPARE(bin->linesAdded, -1);
    QVERIFY(changeAt(set, "out.bin")->binary);
    const WorkspaceChange *moved = changeAt(set, "moved/move.txt");
    QCOMPARE(moved->kind, Kind::Renamed);
    QCOMPARE(moved->from, QStringLiteral("move.txt"));
    QCOMPARE(moved->content, QByteArray("move me\n"));
    const WorkspaceChange *deleted = changeAt(set, "old.txt");
    QCOMPARE(deleted->kind, Kind::Deleted);
    QCOMPARE(deleted->oldSha256, sha("old\n"));
    QVERIFY(deleted->content.isEmpty());
    QCOMPARE(set.bytes,
             qint64(set.changes.at(0).size + set.changes.at(1).size + set.changes.at(2).size +
                    set.changes.at(3).size + set.changes.at(5).size));
    QVERIFY(set.refused.isEmpty());
    QCOMPARE(set.summary(), QStringLiteral("workspace data: 2 added (a.csv, out.bin), 2 modified "
                                           "(data.bin (binary), main.py +3 −1), 1 deleted "
                                           "(old.txt), 1 renamed (move.txt → moved/move.txt)"));
}

void tst_WorkspaceChangeSet::modeOnly()
{
    QString error;
    WorkspaceChangeSet set =
        compute(sandboxTar([](Entries *e) {
                    setFile(e, "data/run.sh", "#!/bin/sh\n", 0755);
                    setFile(e, "data/old.txt", "old\n", 0600); // not the executable bit: no change
                }),
                &error);
    QCOMPARE(set.changes.size(), 1);
    QCOMPARE(set.changes.at(0).path, QStringLiteral("run.sh"));
    QCOMPARE(set.changes.at(0).kind, Kind::Modified);
    QCOMPARE(set.changes.at(0).mode, 0755);
    QCOMPARE(set.changes.at(0).oldMode, 0644);
    QVERIFY(set.changes.at(0).diff.isEmpty());
    // Set-uid never comes back.
    set = compute(sandboxTar([](Entries *e) { setFile(e, "data/new", "x", 04755); }), &error);
    QCOMPARE(set.changes.at(0).mode, 0755);
    // A file whose content changed keeps the folder's bits when it is as executable as it was:
    // the copy's others are the engine's (a cached volume's 0644), never to widen a private
    // file's when applied.
    QVERIFY(QFile::setPermissions(path("old.txt"), QFile::ReadOwner | QFile::WriteOwner));
    m_scan = m_scanner.scan(m_ws, -1);
    set =
        compute(sandboxTar([](Entries *e) { setFile(e, "data/old.txt", "new\n", 0644); }), &error);
    QCOMPARE(set.changes.size(), 1);
    QCOMPARE(set.changes.at(0).kind, Kind::Modified);
    QCOMPARE(set.changes.at(0).mode, 0600);
    QCOMPARE(set.changes.at(0).oldMode, 0600);
}

void tst_WorkspaceChangeSet::excludedNameIsAdded()
{
    // Excluded names were never sent: a program writing one makes an ordinary Added change
    // (the applier refuses to write it).
    const WorkspaceChangeSet set =
        compute(sandboxTar([](Entries *e) { setFile(e, "data/.env", "TOKEN=x\n"); }));
    QCOMPARE(set.changes.size(), 1);
    QCOMPARE(set.changes.at(0).kind, Kind::Added);
    QCOMPARE(set.changes.at(0).path, QStringLiteral(".env"));
}

void tst_WorkspaceChangeSet::hostileEntries_data()
{
    QTest::addColumn<Entries>("extra");
    QTest::addColumn<QString>("shown"); // the refused line's path
    QTest::addColumn<QString>("reason");

    QTest::newRow("dot-dot") << Entries{entry("data/../evil", Type::File, "x")} << "../evil"
                             << "'..' component";
    QTest::newRow("dot-dot deeper")
        << Entries{entry("data/a/../../x", Type::File, "x")} << "a/../../x"
        << "'..' component";
    QTest::newRow("dot") << Entries{entry("data/./x", Type::File, "x")} << "./x"
                         << "'.' component";
    QTest::newRow("absolute") << Entries{entry("/abs", Type::File, "x")} << "/abs"
                              << "outside data/";
    QTest::newRow("absolute under the name")
        << Entries{entry("data//etc/passwd", Type::File, "x")} << "/etc/passwd"
        << "absolute";
    QTest::newRow("outside the name") << Entries{entry("other/x", Type::File, "x")} << "other/x"
                                      << "outside data/";
    QTest::newRow("a name's prefix")
        << Entries{entry("database/x", Type::File, "x")} << "database/x"
        << "outside data/";
    QTest::newRow("control character") << Entries{entry("data/a\nb", Type::File, "x")} << "a\\x0ab"
                                       << "control character";
    QTest::newRow("escape character")
        << Entries{entry("data/a\x1b[2Jb", Type::File, "x")} << "a\\x1b[2Jb"
        << "control character";
    QTest::newRow("symlink out") << Entries{entry("data/l", Type::Symlink, {}, "/etc/passwd")}
                                 << "l"
                                 << "is a symbolic link (to /etc/passwd)";
    QTest::newRow("symlink in") << Entries{entry("data/l", Type::Symlink, {}, "main.py")} << "l"
                                << "is a symbolic link (to main.py)";
    QTest::newRow("hard link") << Entries{entry("data/h", Type::HardLink, {}, "data/main.py")}
                               << "h"
                               << "is a hard link (to data/main.py)";
    QTest::newRow("fifo") << Entries{entry("data/p", Type::Fifo)} << "p"
                          << "is a FIFO";
    QTest::newRow("char device") << Entries{entry("data/d", Type::CharDevice)} << "d"
                                 << "is a device";
    QTest::newRow("block device") << Entries{entry("data/b", Type::BlockDevice)} << "b"
                                  << "is a device";
    QTest::newRow("file under a symlink") << Entries{entry("data/l", Type::Symlink, {}, "/etc"),
                                                     entry("data/l/cron", Type::File, "x")}
                                          << "l/cron"
                                          << "under l, which is not a folder";
    QTest::newRow("the folder itself a link")
        << Entries{entry("data", Type::Symlink, {}, "/")} << "data"
        << "itself";
}

void tst_WorkspaceChangeSet::hostileEntries()
{
    QFETCH(Entries, extra);
    QFETCH(QString, shown);
    QFETCH(QString, reason);

    QString error;
    const QByteArray tar = sandboxTar([&](Entries *e) { e->append(extra); });
    QVERIFY(!tar.isEmpty());
    const WorkspaceChangeSet set = compute(tar, &error);
    QCOMPARE(error, QString());
    QVERIFY2(set.changes.isEmpty(), qPrintable(set.summary()));
    QVERIFY2(listedWith(set.refused, shown, reason), qPrintable(set.refused.join(u'\n')));
    QVERIFY(set.refusedCount >= 1);
    QVERIFY(!set.isEmpty());
    QVERIFY(set.summary().endsWith(QStringLiteral("refused")));
}

void tst_WorkspaceChangeSet::duplicates()
{
    // The same path twice (a file, then a link): neither is a change, and it is not deleted.
    const WorkspaceChangeSet set = compute(sandboxTar([](Entries *e) {
        setFile(e, "data/main.py", "changed\n");
        e->append(entry("data/main.py", Type::Symlink, {}, "/etc/passwd"));
        e->append(entry("data/n.txt", Type::File, "one"));
        e->append(entry("data/n.txt", Type::File, "two"));
    }));
    QVERIFY2(set.changes.isEmpty(), qPrintable(set.summary()));
    QVERIFY(listedWith(set.refused, "main.py", "twice"));
    QVERIFY(listedWith(set.refused, "n.txt", "twice"));
}

void tst_WorkspaceChangeSet::caps()
{
    QString error;
    const QByteArray tar = sandboxTar([](Entries *e) {
        setFile(e, "data/big.bin", QByteArray(200, 'b'));
        setFile(e, "data/a", QByteArray(60, 'a'));
        setFile(e, "data/b", QByteArray(60, 'b'));
        setFile(e, "data/c", QByteArray(60, 'c'));
    });
    const WorkspaceChangeSet set = compute(tar, &error, 150, 100);
    QCOMPARE(error, QString());
    QVERIFY(listedWith(set.refused, "big.bin", "is 200 bytes, over the cap of 100 bytes per file"));
    QVERIFY(listedWith(set.refused, "c", "past the cap of 150 bytes of changed content"));
    QCOMPARE(set.changes.size(), 2);
    QCOMPARE(set.bytes, qint64(120));
    QCOMPARE(set.refusedCount, 2);
}

void tst_WorkspaceChangeSet::entryCap()
{
    // Three new files first (after data itself, which does not count), then the 7 entries sent.
    const QByteArray tar = sandboxTar([](Entries *e) {
        for (int i = 2; i >= 0; --i)
            e->insert(1, entry(QStringLiteral("data/new%1").arg(i), Type::File, "n"));
    });
    QString error;
    WorkspaceChangeSet set = compute(tar, &error, kBig, kBig, 2);
    QCOMPARE(error, QString());
    QCOMPARE(set.changes.size(), 2);
    QVERIFY(listedWith(set.refused, "new2", "past the cap of 2 entries"));
    // The files of the scan past the cap are not deleted, nor anything else said of them.
    QCOMPARE(set.refusedCount, 1 + 7);
    QVERIFY(listedWith(set.refused, "old.txt", "past the cap"));
    QVERIFY(!changeAt(set, "old.txt"));
    set = compute(tar, &error, kBig, kBig, 10);
    QCOMPARE(set.changes.size(), 3);
    QCOMPARE(set.refusedCount, 0);
    set = compute(tar, &error, kBig, kBig, 9);
    QCOMPARE(set.changes.size(), 3);
    QCOMPARE(set.refusedCount, 1);
}

void tst_WorkspaceChangeSet::bigUnchangedFile()
{
    // Over the per-file cap but as it was sent: no change, nothing refused.
    write(path("huge.bin"), QByteArray(5000, 'h'));
    m_scan = m_scanner.scan(m_ws, -1);
    QString error;
    WorkspaceChangeSet set = compute(sandboxTar(), &error, kBig, 1000);
    QCOMPARE(error, QString());
    QVERIFY(set.isEmpty());
    set =
        compute(sandboxTar([](Entries *e) { setFile(e, "data/huge.bin", QByteArray(5000, 'H')); }),
                &error, kBig, 1000);
    QVERIFY(set.changes.isEmpty());
    QVERIFY(listedWith(set.refused, "huge.bin", "over the cap"));
}

void tst_WorkspaceChangeSet::damagedArchiveDeletesNothing()
{
    const QByteArray tar = sandboxTar([](Entries *e) {
        remove(e, "data/old.txt");
        setFile(e, "data/pad.bin", QByteArray(4000, 'p'));
        setFile(e, "data/zz.txt", "last");
    });
    QString error;
    QVERIFY(compute(tar, &error).changes.size() >= 2);
    error.clear();
    // Cut in the last file's data: the entries before it were all read, old.txt was not among
    // them, and still nothing is deleted.
    const qsizetype cutAt = tar.indexOf("last") + 2;
    QVERIFY(cutAt > 2);
    const WorkspaceChangeSet cut = compute(tar.left(cutAt), &error);
    QVERIFY(!error.isEmpty());
    QVERIFY(error.contains(QStringLiteral("damaged")));
    QVERIFY(cut.changes.isEmpty());
    error.clear();
    QVERIFY(compute(QByteArray("not a tar at all"), &error).changes.isEmpty());
    QVERIFY(!error.isEmpty());
}

void tst_WorkspaceChangeSet::otherLayoutDeletesNothing()
{
    // Laid out otherwise than "data/..." (a "./" prefix, another folder's name): an error, not
    // every file of the scan deleted.
    for (const QString &prefix : {QStringLiteral("./data"), QStringLiteral("other")}) {
        const QByteArray tar = sandboxTar([&](Entries *e) {
            for (TarArchive::Entry &entry : *e)
                entry.path.replace(0, 4, prefix);
        });
        QString error;
        const WorkspaceChangeSet set = compute(tar, &error);
        QVERIFY2(error.contains(QStringLiteral("does not hold the folder 'data'")),
                 qPrintable(error));
        QVERIFY(set.changes.isEmpty());
    }
    QString error;
    QVERIFY(compute(TarArchive::pack({}), &error).changes.isEmpty());
    QVERIFY(!error.isEmpty());
}

void tst_WorkspaceChangeSet::links()
{
    QCOMPARE(::symlink("main.py", QFile::encodeName(path("link")).constData()), 0);
    m_scan = m_scanner.scan(m_ws, -1);
    QVERIFY(m_scan.find("link"));
    QVERIFY(compute(sandboxTar()).isEmpty()); // back as sent
    WorkspaceChangeSet set = compute(sandboxTar([](Entries *e) { remove(e, "data/link"); }));
    QVERIFY(set.changes.isEmpty());
    QVERIFY(listedWith(set.refused, "link", "removed"));
    set = compute(sandboxTar([](Entries *e) {
        remove(e, "data/link");
        e->append(entry("data/link", Type::Symlink, {}, "/etc/shadow"));
    }));
    QVERIFY(set.changes.isEmpty());
    QVERIFY(listedWith(set.refused, "link", "symbolic link (to /etc/shadow)"));
    // A file turned into a link is refused, not deleted.
    set = compute(sandboxTar([](Entries *e) {
        remove(e, "data/old.txt");
        e->append(entry("data/old.txt", Type::Symlink, {}, "/etc/shadow"));
    }));
    QVERIFY(set.changes.isEmpty());
}

void tst_WorkspaceChangeSet::emptyFilesAreNotRenames()
{
    write(path("empty1"), "");
    m_scan = m_scanner.scan(m_ws, -1);
    const WorkspaceChangeSet set = compute(sandboxTar([](Entries *e) {
        remove(e, "data/empty1");
        setFile(e, "data/empty2", "");
    }));
    QCOMPARE(set.changes.size(), 2);
    QCOMPARE(changeAt(set, "empty1")->kind, Kind::Deleted);
    QCOMPARE(changeAt(set, "empty2")->kind, Kind::Added);
}

void tst_WorkspaceChangeSet::diffCut()
{
    QByteArray before, after;
    for (int i = 0; i < 4000; ++i) {
        before += "line " + QByteArray::number(i) + " of the text before the program ran\n";
        after += "LINE " + QByteArray::number(i) + " of the text after the program ran\n";
    }
    write(path("long.txt"), before);
    m_scan = m_scanner.scan(m_ws, -1);
    const WorkspaceChangeSet set =
        compute(sandboxTar([&](Entries *e) { setFile(e, "data/long.txt", after); }));
    const WorkspaceChange *c = changeAt(set, "long.txt");
    QVERIFY(c);
    QVERIFY(c->diff.toUtf8().size() <= WorkspaceChangeSet::kMaxDiffBytes + 100);
    QVERIFY(c->diff.toUtf8().size() > WorkspaceChangeSet::kMaxDiffBytes / 2);
    QVERIFY(c->diff.endsWith(QStringLiteral("more lines)\n")));
    QVERIFY(c->diff.contains(QStringLiteral("... diff cut (")));
    QCOMPARE(c->linesAdded, 4000); // counted on the whole diff
    QCOMPARE(c->linesRemoved, 4000);
}

void tst_WorkspaceChangeSet::noDiffWhenTheHostChanged()
{
    const QByteArray tar = sandboxTar([](Entries *e) { setFile(e, "data/old.txt", "new\n"); });
    write(path("old.txt"), "host\n"); // after the scan
    const WorkspaceChangeSet set = compute(tar);
    const WorkspaceChange *c = changeAt(set, "old.txt");
    QCOMPARE(c->kind, Kind::Modified);
    QVERIFY(c->diff.isEmpty()); // the old text is no longer there to compare with
    QCOMPARE(c->content, QByteArray("new\n"));
}

void tst_WorkspaceChangeSet::failedScan()
{
    WorkspaceScan failed = m_scan;
    failed.error = QStringLiteral("over the cap");
    QString error;
    const WorkspaceChangeSet set =
        WorkspaceChangeSet::compute(failed, sandboxTar(), kBig, kBig, 100, &error);
    QVERIFY(error.contains(QStringLiteral("failed")));
    QVERIFY(set.changes.isEmpty());
}

void tst_WorkspaceChangeSet::jsonRoundTrip()
{
    const WorkspaceChangeSet set = compute(sandboxTar([](Entries *e) {
        setFile(e, "data/main.py", "print('new')\n");
        setFile(e, "data/a.csv", "a\n");
        setFile(e, "data/b.bin", QByteArray(5, '\0'), 0755);
        remove(e, "data/old.txt");
        remove(e, "data/move.txt");
        setFile(e, "data/moved.txt", "move me\n");
        e->append(entry("data/l", Type::Symlink, {}, "/x"));
    }));
    QCOMPARE(set.changes.size(), 5);
    const QJsonObject json = set.toJson(true);
    // Through text, as the history keeps it.
    const QJsonObject reread = QJsonDocument::fromJson(QJsonDocument(json).toJson()).object();
    QString error;
    const WorkspaceChangeSet back = WorkspaceChangeSet::fromJson(reread, &error);
    QCOMPARE(error, QString());
    QCOMPARE(back.workspace, set.workspace);
    QCOMPARE(back.refused, set.refused);
    QCOMPARE(back.refusedCount, set.refusedCount);
    QCOMPARE(back.bytes, set.bytes);
    QCOMPARE(back.changes.size(), set.changes.size());
    for (qsizetype i = 0; i < set.changes.size(); ++i) {
        const WorkspaceChange &a = set.changes.at(i), &b = back.changes.at(i);
        QCOMPARE(b.kind, a.kind);
        QCOMPARE(b.path, a.path);
        QCOMPARE(b.from, a.from);
        QCOMPARE(b.size, a.size);
        QCOMPARE(b.oldSize, a.oldSize);
        QCOMPARE(b.sha256, a.sha256);
        QCOMPARE(b.oldSha256, a.oldSha256);
        QCOMPARE(b.mode, a.mode);
        QCOMPARE(b.oldMode, a.oldMode);
        QCOMPARE(b.binary, a.binary);
        QCOMPARE(b.diff, a.diff);
        QCOMPARE(b.linesAdded, a.linesAdded);
        QCOMPARE(b.linesRemoved, a.linesRemoved);
        QCOMPARE(b.content, a.content);
    }
    QCOMPARE(back.summary(), set.summary());
    // Without content: what a model reads; the lists and their fields, no bytes.
    const QJsonObject light = set.toJson(false);
    QVERIFY(!QJsonDocument(light).toJson().contains("\"content\""));
    QCOMPARE(light.value("added").toArray().size(), 2);
    QCOMPARE(light.value("renamed").toArray().at(0).toObject().value("from").toString(),
             QStringLiteral("move.txt"));
    QCOMPARE(light.value("modified").toArray().at(0).toObject().value("old_mode").toString(),
             QStringLiteral("0644"));
    QVERIFY(!WorkspaceChangeSet::fromJson(light, &error).changes.size());
    QVERIFY(error.contains(QStringLiteral("content")));
}

void tst_WorkspaceChangeSet::jsonTampered_data()
{
    QTest::addColumn<QString>("list");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QJsonValue>("value");
    QTest::addColumn<QString>("reason");

    const QString evil = QString::fromLatin1(QByteArray("evil").toBase64());
    QTest::newRow("content swapped") << "added"
                                     << "content" << QJsonValue(evil) << "content";
    QTest::newRow("content not base64") << "added"
                                        << "content" << QJsonValue("@@@") << "base64";
    QTest::newRow("digest swapped")
        << "added"
        << "sha256" << QJsonValue(QString::fromLatin1(sha("evil"))) << "content";
    QTest::newRow("digest not hex") << "added"
                                    << "sha256" << QJsonValue("xyz") << "SHA-256";
    QTest::newRow("path dot-dot") << "added"
                                  << "path" << QJsonValue("../.bashrc") << "'..'";
    QTest::newRow("path absolute") << "added"
                                   << "path" << QJsonValue("/etc/cron.d/x") << "absolute";
    QTest::newRow("path with NUL") << "added"
                                   << "path" << QJsonValue(QString::fromLatin1("a\0b", 3)) << "NUL";
    QTest::newRow("path missing") << "added"
                                  << "path" << QJsonValue() << "missing";
    QTest::newRow("set-uid mode") << "added"
                                  << "mode" << QJsonValue("4755") << "mode";
    QTest::newRow("mode with a newline") << "added"
                                         << "mode" << QJsonValue("0644\n") << "mode";
    QTest::newRow("digest with a newline")
        << "added"
        << "sha256" << QJsonValue(QString::fromLatin1(sha("a\n") + '\n')) << "SHA-256";
    QTest::newRow("mode as number") << "added"
                                    << "mode" << QJsonValue(420) << "mode";
    QTest::newRow("negative size") << "added"
                                   << "size" << QJsonValue(-1) << "size";
    QTest::newRow("rename from dot-dot") << "renamed"
                                         << "from" << QJsonValue("../x") << "'..'";
    QTest::newRow("same path twice") << "renamed"
                                     << "path" << QJsonValue("a.csv") << "twice";
    QTest::newRow("deleted without digest") << "deleted"
                                            << "old_sha256" << QJsonValue() << "SHA-256";
    QTest::newRow("workspace name") << QString() << "workspace" << QJsonValue("../x") << "name";
    QTest::newRow("bytes") << QString() << "bytes" << QJsonValue(1) << "bytes";
    QTest::newRow("list not a list") << QString() << "added" << QJsonValue("x") << "not a list";
}

void tst_WorkspaceChangeSet::jsonTampered()
{
    QFETCH(QString, list);
    QFETCH(QString, key);
    QFETCH(QJsonValue, value);
    QFETCH(QString, reason);

    const WorkspaceChangeSet set = compute(sandboxTar([](Entries *e) {
        setFile(e, "data/a.csv", "a\n");
        remove(e, "data/old.txt");
        remove(e, "data/move.txt");
        setFile(e, "data/moved.txt", "move me\n");
    }));
    QJsonObject json = set.toJson(true);
    QString error;
    QVERIFY(WorkspaceChangeSet::fromJson(json, &error).changes.size() == 3); // as it was: fine
    if (list.isEmpty()) {
        json.insert(key, value);
    } else {
        QJsonArray changes = json.value(list).toArray();
        QJsonObject first = changes.at(0).toObject();
        if (value.isNull())
            first.remove(key);
        else
            first.insert(key, value);
        changes[0] = first;
        json.insert(list, changes);
    }
    const WorkspaceChangeSet back = WorkspaceChangeSet::fromJson(json, &error);
    QVERIFY(back.changes.isEmpty());
    QVERIFY2(error.contains(reason), qPrintable(error));
}

void tst_WorkspaceChangeSet::summaryCapsNames()
{
    const WorkspaceChangeSet set = compute(sandboxTar([](Entries *e) {
        for (int i = 0; i < 8; ++i)
            setFile(e, QStringLiteral("data/n%1").arg(i), "x");
    }));
    QCOMPARE(set.summary(),
             QStringLiteral("workspace data: 8 added (n0, n1, n2, n3, n4, and 3 more)"));
}

QTEST_GUILESS_MAIN(tst_WorkspaceChangeSet)
#include "tst_workspacechangeset.moc"
