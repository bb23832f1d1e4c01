#include "tararchive.h"
#include "workspacescanner.h"
#include "workspacetestfiles.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace WorkspaceTestFiles;

namespace {
Workspace workspaceAt(const QString &path, const QString &name = QStringLiteral("data"))
{
    Workspace ws;
    ws.name = name;
    ws.path = QFileInfo(path).canonicalFilePath();
    ws.mode = Workspace::Mode::CopyOnWrite;
    return ws;
}

QStringList pathsOf(const WorkspaceScan &scan)
{
    QStringList paths;
    for (const WorkspaceEntry &e : scan.entries)
        paths.append(e.path);
    return paths;
}

const qint64 kNoCap = -1;
} // namespace

class tst_WorkspaceScanner : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void entries();
    void defaultExclusions();
    void includeReadmits();
    void symlinks();
    void fifoSkippedWithoutHanging();
    void specialBits();
    void unfitNames();
    void unreadableFile();
    void byteCap();
    void entryCap();
    void secondScanHashesNothing();
    void contentHash();
    void folderGone();
    void packReadOnly();
    void packReadWrite();
    void packWithoutPrefix();
    void packEndsWithTheTrailingEntries();
    void packRefusesAChangedFile();
    void packNeverFollowsASwappedDirectory();
    void readFile();
    void formatSize_data();
    void formatSize();

private:
    QString path(const QString &rel) const { return m_dir->filePath(rel); }
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QTemporaryDir> m_outside;
};

void tst_WorkspaceScanner::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_outside = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid() && m_outside->isValid());
}

void tst_WorkspaceScanner::entries()
{
    write(path("main.py"), "print('hi')\n");
    write(path("data/in.csv"), "a,b\n1,2\n");
    write(path("data/sub/deep.txt"), "deep\n");
    write(path("data-x"), "sorts between data and data/ as a string");
    write(path("run.sh"), "#!/bin/sh\n", 0755);
    QVERIFY(QDir(path("empty")).mkpath(QStringLiteral(".")));
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(workspaceAt(m_dir->path()), kNoCap);
    QCOMPARE(scan.error, QString());
    QCOMPARE(scan.name, QStringLiteral("data"));
    QCOMPARE(pathsOf(scan), (QStringList{"data", "data-x", "data/in.csv", "data/sub",
                                         "data/sub/deep.txt", "empty", "main.py", "run.sh"}));
    QCOMPARE(scan.files, 5);
    QCOMPARE(scan.bytes, qint64(12 + 8 + 5 + 40 + 10));
    QCOMPARE(scan.excluded, 0);
    QVERIFY(scan.skipped.isEmpty());
    const WorkspaceEntry *main = scan.find(QStringLiteral("main.py"));
    QVERIFY(main);
    QCOMPARE(main->type, WorkspaceEntry::Type::File);
    QCOMPARE(main->size, qint64(12));
    QCOMPARE(main->sha256,
             QCryptographicHash::hash("print('hi')\n", QCryptographicHash::Sha256).toHex());
    QCOMPARE(main->mode, 0644);
    QVERIFY(main->mtimeMs > 0);
    QCOMPARE(scan.find(QStringLiteral("run.sh"))->mode, 0755);
    QCOMPARE(scan.find(QStringLiteral("data/sub"))->type, WorkspaceEntry::Type::Directory);
    QVERIFY(!scan.find(QStringLiteral("nope")));
    QCOMPARE(scan.root, QFileInfo(m_dir->path()).canonicalFilePath());
}

void tst_WorkspaceScanner::defaultExclusions()
{
    const QStringList secrets = {".env",
                                 ".env.local",
                                 "server.pem",
                                 "tls.key",
                                 "id_rsa",
                                 "id_ed25519.pub",
                                 ".netrc",
                                 ".npmrc",
                                 ".pypirc",
                                 ".aws/credentials",
                                 ".ssh/authorized_keys",
                                 ".gnupg/pubring.kbx",
                                 "deep/down/.env.production",
                                 "deep/down/.ssh/id_ecdsa"};
    for (const QString &s : secrets)
        write(path(s), "secret");
    write(path("app.py"), "ok");
    write(path("deep/down/keep.txt"), "ok");
    write(path(".git/config"), "[core]\n");
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(workspaceAt(m_dir->path()), kNoCap);
    QCOMPARE(scan.error, QString());
    for (const QString &s : secrets) {
        QVERIFY2(!scan.find(s), qPrintable(s));
        QVERIFY2(!pathsOf(scan).join(u' ').contains(QStringLiteral("secret")), qPrintable(s));
    }
    QVERIFY(!scan.find(QStringLiteral(".aws")));
    QVERIFY(!scan.find(QStringLiteral("deep/down/.ssh")));
    QCOMPARE(pathsOf(scan), (QStringList{".git", ".git/config", "app.py", "deep", "deep/down",
                                         "deep/down/keep.txt"}));
    // The 14 minus the three inside the three directories, plus deep/down/.ssh once.
    QCOMPARE(scan.excluded, 9 + 3 + 1 + 1);
}

void tst_WorkspaceScanner::includeReadmits()
{
    write(path(".env"), "SECRET=1");
    write(path(".env.example"), "SECRET=");
    write(path("build/out.o"), "obj");
    Workspace ws = workspaceAt(m_dir->path());
    ws.include = QStringList{".env.example"};
    ws.exclude = QStringList{"build/"};
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(ws, kNoCap);
    QCOMPARE(pathsOf(scan), QStringList{".env.example"});
    QCOMPARE(scan.excluded, 2);
}

void tst_WorkspaceScanner::symlinks()
{
    write(path("sub/a.txt"), "a");
    write(m_outside->filePath("x"), "outside");
    QVERIFY(QFile::link("/etc/passwd", path("passwd")));
    QVERIFY(QFile::link("../x", path("up"))); // relative, leaves the folder
    QCOMPARE(::symlink("../../x", QFile::encodeName(path("sub/up2")).constData()), 0);
    QCOMPARE(::symlink("sub/a.txt", QFile::encodeName(path("inside")).constData()), 0);
    QCOMPARE(::symlink("../sub", QFile::encodeName(path("sub/self")).constData()), 0);
    QCOMPARE(::symlink(QFile::encodeName(m_outside->path()).constData(),
                       QFile::encodeName(path("out")).constData()),
             0);
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(workspaceAt(m_dir->path()), kNoCap);
    QCOMPARE(scan.error, QString());
    QVERIFY2(listedWith(scan.skipped, "passwd", "absolute path (/etc/passwd)"),
             qPrintable(scan.skipped.join('\n')));
    QVERIFY(listedWith(scan.skipped, "up", "leaving the folder (to ../x)"));
    QVERIFY(listedWith(scan.skipped, "sub/up2", "leaving the folder"));
    QVERIFY(listedWith(scan.skipped, "out", "absolute path"));
    QCOMPARE(scan.skippedCount, 4);
    const WorkspaceEntry *inside = scan.find(QStringLiteral("inside"));
    QVERIFY(inside);
    QCOMPARE(inside->type, WorkspaceEntry::Type::Symlink);
    QCOMPARE(inside->linkTarget, QStringLiteral("sub/a.txt"));
    QCOMPARE(scan.find(QStringLiteral("sub/self"))->linkTarget, QStringLiteral("../sub"));
    // Never followed: nothing of /etc or of the outside folder, nothing under the link to sub.
    QCOMPARE(pathsOf(scan), (QStringList{"inside", "sub", "sub/a.txt", "sub/self"}));
    QCOMPARE(scan.files, 1);
}

void tst_WorkspaceScanner::fifoSkippedWithoutHanging()
{
    write(path("a.txt"), "a");
    QCOMPARE(::mkfifo(QFile::encodeName(path("pipe")).constData(), 0644), 0);
    QVERIFY(QDir(path("sub")).mkpath(QStringLiteral(".")));
    QCOMPARE(::mkfifo(QFile::encodeName(path("sub/pipe2")).constData(), 0644), 0);
    QElapsedTimer timer;
    timer.start();
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(workspaceAt(m_dir->path()), kNoCap);
    QVERIFY(timer.elapsed() < 5000);
    QCOMPARE(scan.error, QString());
    QVERIFY(listedWith(scan.skipped, "pipe", "FIFO"));
    QVERIFY(listedWith(scan.skipped, "sub/pipe2", "FIFO"));
    QCOMPARE(pathsOf(scan), (QStringList{"a.txt", "sub"}));
}

void tst_WorkspaceScanner::specialBits()
{
    write(path("tool"), "#!/bin/sh\n", 04755);
    write(path("group"), "g", 02750);
    QVERIFY(QDir(path("shared")).mkpath(QStringLiteral(".")));
    QCOMPARE(::chmod(QFile::encodeName(path("shared")).constData(), 01777), 0);
    struct stat st;
    QCOMPARE(::stat(QFile::encodeName(path("tool")).constData(), &st), 0);
    QVERIFY(st.st_mode & S_ISUID); // the file system kept it: the test means something
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(workspaceAt(m_dir->path()), kNoCap);
    QCOMPARE(scan.find(QStringLiteral("tool"))->mode, 0755);
    QCOMPARE(scan.find(QStringLiteral("group"))->mode, 0750);
    QCOMPARE(scan.find(QStringLiteral("shared"))->mode, 0777);
}

void tst_WorkspaceScanner::unfitNames()
{
    write(path("ok.txt"), "ok");
    write(path("new\nline"), "x");
    const QByteArray latin1 = QFile::encodeName(m_dir->path()) + "/caf\xe9";
    const int fd = ::open(latin1.constData(), O_WRONLY | O_CREAT, 0644);
    QVERIFY(fd >= 0);
    ::close(fd);
    write(path(QStringLiteral("e\u0301.txt")), "nfd"); // "é" decomposed
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(workspaceAt(m_dir->path()), kNoCap);
    QCOMPARE(pathsOf(scan), QStringList{"ok.txt"});
    QCOMPARE(scan.skippedCount, 3);
    QVERIFY(listedWith(scan.skipped, "new\\x0aline", "control character"));
    QVERIFY(scan.skipped.join('\n').contains(QStringLiteral("not valid UTF-8")));
    QVERIFY(listedWith(scan.skipped, QStringLiteral("e\u0301.txt"), "normalization form C"));
}

void tst_WorkspaceScanner::unreadableFile()
{
    if (::geteuid() == 0)
        QSKIP("root reads files of any mode");
    write(path("secret"), "s", 0000);
    write(path("ok"), "ok");
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(workspaceAt(m_dir->path()), kNoCap);
    QCOMPARE(scan.error, QString());
    QCOMPARE(pathsOf(scan), QStringList{"ok"});
    QVERIFY(listedWith(scan.skipped, "secret", "ermission"));
}

void tst_WorkspaceScanner::byteCap()
{
    write(path("a.bin"), QByteArray(2000, 'a'));
    write(path("b/b.bin"), QByteArray(1000, 'b'));
    WorkspaceScanner scanner;
    WorkspaceScan scan = scanner.scan(workspaceAt(m_dir->path()), 1024);
    QCOMPARE(scan.error,
             QStringLiteral("workspace 'data' holds 2.9 KiB, over the --workspace-max of 1 KiB"));
    QCOMPARE(scan.hashed, 0); // found before any file was read
    scan = scanner.scan(workspaceAt(m_dir->path()), 3000);
    QCOMPARE(scan.error, QString());
    QCOMPARE(scan.bytes, qint64(3000));
}

void tst_WorkspaceScanner::entryCap()
{
    for (int i = 0; i < 6; ++i)
        write(path(QStringLiteral("f%1").arg(i)), "x");
    WorkspaceScanner scanner;
    scanner.setMaxEntries(5);
    WorkspaceScan scan = scanner.scan(workspaceAt(m_dir->path()), kNoCap);
    QCOMPARE(scan.error, QStringLiteral("workspace 'data' holds more than 5 files and folders, "
                                        "over the limit of 5"));
    scanner.setMaxEntries(6);
    scan = scanner.scan(workspaceAt(m_dir->path()), kNoCap);
    QCOMPARE(scan.error, QString());
    // Excluded names do not count.
    write(path(".env"), "x");
    QCOMPARE(scanner.scan(workspaceAt(m_dir->path()), kNoCap).error, QString());
}

void tst_WorkspaceScanner::secondScanHashesNothing()
{
    for (int i = 0; i < 20; ++i)
        write(path(QStringLiteral("d%1/f%2.txt").arg(i % 3).arg(i)), QByteArray::number(i));
    const Workspace ws = workspaceAt(m_dir->path());
    WorkspaceScanner scanner;
    const WorkspaceScan first = scanner.scan(ws, kNoCap);
    QCOMPARE(first.hashed, 20);
    const WorkspaceScan second = scanner.scan(ws, kNoCap);
    QCOMPARE(second.hashed, 0);
    QCOMPARE(second.contentHash, first.contentHash);
    for (const WorkspaceEntry &e : first.entries)
        QCOMPARE(second.find(e.path)->sha256, e.sha256);
    // One file rewritten (same size): that one alone is read again, and its digest is new.
    write(path("d1/f4.txt"), "X");
    const WorkspaceScan third = scanner.scan(ws, kNoCap);
    QCOMPARE(third.hashed, 1);
    QVERIFY(third.contentHash != first.contentHash);
    QCOMPARE(third.find(QStringLiteral("d1/f4.txt"))->sha256,
             QCryptographicHash::hash("X", QCryptographicHash::Sha256).toHex());
    // Another scanner remembers nothing.
    QCOMPARE(WorkspaceScanner().scan(ws, kNoCap).hashed, 20);
}

void tst_WorkspaceScanner::contentHash()
{
    QTemporaryDir other;
    for (const QString &root : {m_dir->path(), other.path()}) {
        write(root + "/a.txt", "A");
        write(root + "/s/b.txt", "B");
        QCOMPARE(::symlink("s/b.txt", QFile::encodeName(root + "/l").constData()), 0);
    }
    WorkspaceScanner scanner;
    const QByteArray one = scanner.scan(workspaceAt(m_dir->path()), kNoCap).contentHash;
    QCOMPARE(one.size(), 64);
    QCOMPARE(scanner.scan(workspaceAt(other.path(), "other"), kNoCap).contentHash, one);
    QCOMPARE(::chmod(QFile::encodeName(other.filePath("a.txt")).constData(), 0600), 0);
    const QByteArray mode = scanner.scan(workspaceAt(other.path()), kNoCap).contentHash;
    QVERIFY(mode != one);
    write(other.filePath("a.txt"), "A", 0644);
    QCOMPARE(scanner.scan(workspaceAt(other.path()), kNoCap).contentHash, one);
    write(other.filePath("s/c.txt"), "");
    QVERIFY(scanner.scan(workspaceAt(other.path()), kNoCap).contentHash != one);
}

void tst_WorkspaceScanner::folderGone()
{
    Workspace ws = workspaceAt(m_dir->path());
    m_dir.reset();
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(ws, kNoCap);
    QVERIFY(scan.error.contains(QStringLiteral("cannot be read")));
    QVERIFY(scan.error.contains(ws.path));
}

void tst_WorkspaceScanner::packReadOnly()
{
    write(path("main.py"), "print(1)\n");
    write(path("bin/run"), "#!/bin/sh\n", 0750);
    write(path("private.txt"), "p", 0600);
    QCOMPARE(::symlink("bin/run", QFile::encodeName(path("run")).constData()), 0);
    const Workspace ws = workspaceAt(m_dir->path());
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(ws, kNoCap);
    QString error;
    const QByteArray tar = WorkspaceScanner::pack(ws, scan, QStringLiteral("data"),
                                                  WorkspaceScanner::PackAs::ReadOnly, &error);
    QCOMPARE(error, QString());
    QList<TarArchive::Entry> skipped;
    const QList<TarArchive::Entry> back = TarArchive::unpack(tar, 1 << 20, &error, -1, &skipped);
    QCOMPARE(error, QString());
    QStringList paths;
    for (const TarArchive::Entry &e : back) {
        paths.append(e.path);
        QCOMPARE(e.uid, 0);
        QCOMPARE(e.gid, 0);
    }
    QCOMPARE(paths,
             (QStringList{"data", "data/bin", "data/bin/run", "data/main.py", "data/private.txt"}));
    QCOMPARE(back.at(0).mode, 0555);
    QVERIFY(back.at(0).isDirectory);
    QCOMPARE(back.at(1).mode, 0555);
    QCOMPARE(back.at(2).mode, 0555); // executable
    QCOMPARE(back.at(2).data, QByteArray("#!/bin/sh\n"));
    QCOMPARE(back.at(3).mode, 0444);
    QCOMPARE(back.at(4).mode, 0444); // readable by the sandbox's user, whatever it was here
    QCOMPARE(skipped.size(), 1);
    QCOMPARE(skipped.at(0).path, QStringLiteral("data/run"));
    QCOMPARE(skipped.at(0).type, TarArchive::Entry::Type::Symlink);
    QCOMPARE(skipped.at(0).linkTarget, QStringLiteral("bin/run"));
    QCOMPARE(skipped.at(0).uid, 0);
    QCOMPARE(back.at(3).mtimeMs / 1000, scan.find(QStringLiteral("main.py"))->mtimeMs / 1000);
}

void tst_WorkspaceScanner::packReadWrite()
{
    write(path("tool"), "t", 04755);
    write(path("private.txt"), "p", 0600);
    QVERIFY(QDir(path("d")).mkpath(QStringLiteral(".")));
    QCOMPARE(::chmod(QFile::encodeName(path("d")).constData(), 0700), 0);
    const Workspace ws = workspaceAt(m_dir->path());
    WorkspaceScanner scanner;
    QString error;
    const QByteArray tar =
        WorkspaceScanner::pack(ws, scanner.scan(ws, kNoCap), QStringLiteral("data"),
                               WorkspaceScanner::PackAs::Writable, &error);
    QCOMPARE(error, QString());
    const QList<TarArchive::Entry> back = TarArchive::unpack(tar, 1 << 20, &error);
    QCOMPARE(back.size(), 4);
    for (const TarArchive::Entry &e : back) {
        QCOMPARE(e.uid, 1000);
        QCOMPARE(e.gid, 1000);
    }
    QCOMPARE(back.at(0).mode, 0755); // data itself
    QCOMPARE(back.at(1).path, QStringLiteral("data/d"));
    QCOMPARE(back.at(1).mode, 0700);
    QCOMPARE(back.at(2).mode, 0600);
    QCOMPARE(back.at(3).path, QStringLiteral("data/tool"));
    QCOMPARE(back.at(3).mode, 0755); // set-uid dropped
}

void tst_WorkspaceScanner::packWithoutPrefix()
{
    write(path("a"), "a");
    const Workspace ws = workspaceAt(m_dir->path());
    WorkspaceScanner scanner;
    QString error;
    const QByteArray tar = WorkspaceScanner::pack(ws, scanner.scan(ws, kNoCap), QString(),
                                                  WorkspaceScanner::PackAs::Writable, &error);
    const QList<TarArchive::Entry> back = TarArchive::unpack(tar, 1 << 20, &error);
    QCOMPARE(back.size(), 1);
    QCOMPARE(back.at(0).path, QStringLiteral("a"));
}

void tst_WorkspaceScanner::packEndsWithTheTrailingEntries()
{
    // A session's version of a workspace and the link to it, last: the engine unpacks in order.
    write(path("a.txt"), "a");
    write(path("z/b.txt"), "b");
    const Workspace ws = workspaceAt(m_dir->path());
    WorkspaceScanner scanner;
    TarArchive::Entry link;
    link.path = QStringLiteral("w/data");
    link.type = TarArchive::Entry::Type::Symlink;
    link.linkTarget = QStringLiteral(".v/data-0123456789ab");
    link.uid = link.gid = 0;
    QString error;
    const QByteArray tar = WorkspaceScanner::pack(
        ws, scanner.scan(ws, kNoCap), QStringLiteral("w/.v/data-0123456789ab"),
        WorkspaceScanner::PackAs::ReadOnly, &error, {link});
    QCOMPARE(error, QString());
    QStringList order;
    QVERIFY(TarArchive::read(tar, [&](TarArchive::Entry &e, const TarArchive::ReadData &) {
        order.append(e.type == TarArchive::Entry::Type::Symlink ? e.path + " -> " + e.linkTarget
                                                                : e.path);
        return true;
    }));
    QCOMPARE(order, (QStringList{"w/.v/data-0123456789ab", "w/.v/data-0123456789ab/a.txt",
                                 "w/.v/data-0123456789ab/z", "w/.v/data-0123456789ab/z/b.txt",
                                 "w/data -> .v/data-0123456789ab"}));
}

void tst_WorkspaceScanner::packRefusesAChangedFile()
{
    write(path("a.txt"), "one");
    write(path("b.txt"), "two");
    const Workspace ws = workspaceAt(m_dir->path());
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(ws, kNoCap);
    write(path("b.txt"), "TWO"); // same size, other content
    QString error;
    QCOMPARE(WorkspaceScanner::pack(ws, scan, QStringLiteral("data"),
                                    WorkspaceScanner::PackAs::ReadOnly, &error),
             QByteArray());
    QVERIFY2(error.contains(QStringLiteral("'b.txt' changed since the scan")), qPrintable(error));
    QFile::remove(path("b.txt"));
    error.clear();
    QCOMPARE(WorkspaceScanner::pack(ws, scan, QStringLiteral("data"),
                                    WorkspaceScanner::PackAs::ReadOnly, &error),
             QByteArray());
    QVERIFY(error.contains(QStringLiteral("'b.txt' changed")));
    // A failed scan is never packed.
    WorkspaceScan failed = scan;
    failed.error = QStringLiteral("over the cap");
    QCOMPARE(WorkspaceScanner::pack(ws, failed, QStringLiteral("data"),
                                    WorkspaceScanner::PackAs::ReadOnly, &error),
             QByteArray());
    QVERIFY(error.contains(QStringLiteral("the scan failed")));
}

void tst_WorkspaceScanner::packNeverFollowsASwappedDirectory()
{
    write(path("sub/a.txt"), "inside");
    const Workspace ws = workspaceAt(m_dir->path());
    WorkspaceScanner scanner;
    const WorkspaceScan scan = scanner.scan(ws, kNoCap);
    // The directory becomes a link to a folder outside holding a file of the same name and
    // content: pack must not read through it.
    write(m_outside->filePath("a.txt"), "inside");
    QVERIFY(QDir(path("sub")).removeRecursively());
    QVERIFY(QFile::link(m_outside->path(), path("sub")));
    QString error;
    QCOMPARE(WorkspaceScanner::pack(ws, scan, QStringLiteral("data"),
                                    WorkspaceScanner::PackAs::ReadOnly, &error),
             QByteArray());
    QVERIFY2(error.contains(QStringLiteral("symbolic link")), qPrintable(error));
}

void tst_WorkspaceScanner::readFile()
{
    write(path("d/a.txt"), "hello");
    write(m_outside->filePath("x"), "outside");
    QVERIFY(QFile::link(m_outside->path(), path("o")));
    QVERIFY(QFile::link(m_outside->filePath("x"), path("lx")));
    const QString root = m_dir->path();
    QString error;
    QCOMPARE(WorkspaceScanner::readFile(root, QStringLiteral("d/a.txt"), 100, &error),
             QByteArray("hello"));
    QVERIFY(!WorkspaceScanner::readFile(root, QStringLiteral("d/a.txt"), 4, &error));
    QVERIFY(error.contains(QStringLiteral("larger")));
    QVERIFY(!WorkspaceScanner::readFile(root, QStringLiteral("o/x"), 100, &error));
    QVERIFY(error.contains(QStringLiteral("symbolic link")));
    QVERIFY(!WorkspaceScanner::readFile(root, QStringLiteral("lx"), 100, &error));
    QVERIFY(!WorkspaceScanner::readFile(root, QStringLiteral("d"), 100, &error));
    QVERIFY(!WorkspaceScanner::readFile(root, QStringLiteral("missing"), 100, &error));
}

void tst_WorkspaceScanner::formatSize_data()
{
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("text");
    QTest::newRow("bytes") << qint64(812) << QStringLiteral("812 bytes");
    QTest::newRow("1 KiB") << qint64(1024) << QStringLiteral("1 KiB");
    QTest::newRow("4.2 KiB") << qint64(4300) << QStringLiteral("4.2 KiB");
    QTest::newRow("200 MiB") << qint64(200) * 1024 * 1024 << QStringLiteral("200 MiB");
    QTest::newRow("1.5 GiB") << qint64(3) * 512 * 1024 * 1024 << QStringLiteral("1.5 GiB");
}

void tst_WorkspaceScanner::formatSize()
{
    QFETCH(qint64, bytes);
    QFETCH(QString, text);
    QCOMPARE(WorkspaceScanner::formatSize(bytes), text);
}

QTEST_GUILESS_MAIN(tst_WorkspaceScanner)
#include "tst_workspacescanner.moc"
