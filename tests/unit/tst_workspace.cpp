#include "workspace.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

class tst_Workspace : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void names_data();
    void names();
    void parse_data();
    void parse();
    void parseCanonical();
    void defaults_data();
    void defaults();
    void patterns_data();
    void patterns();
    void applyNames();

private:
    QTemporaryDir m_dir;
};

void tst_Workspace::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("proj/sub")));
    QFile f(m_dir.filePath(QStringLiteral("file.txt")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    QVERIFY(QFile::link(m_dir.filePath(QStringLiteral("proj")),
                        m_dir.filePath(QStringLiteral("link"))));
}

void tst_Workspace::names_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("valid");

    QTest::newRow("plain") << QStringLiteral("data") << true;
    QTest::newRow("digits and marks") << QStringLiteral("0my_data-v1.2") << true;
    QTest::newRow("64 characters") << QString(64, u'a') << true;
    QTest::newRow("65 characters") << QString(65, u'a') << false;
    QTest::newRow("empty") << QString() << false;
    QTest::newRow("leading dot") << QStringLiteral(".hidden") << false;
    QTest::newRow("dot-dot") << QStringLiteral("..") << false;
    QTest::newRow("leading dash") << QStringLiteral("-x") << false;
    QTest::newRow("slash") << QStringLiteral("a/b") << false;
    QTest::newRow("space") << QStringLiteral("a b") << false;
    QTest::newRow("non-ascii") << QStringLiteral("données") << false;
    QTest::newRow("newline") << QStringLiteral("a\n") << false;
}

void tst_Workspace::names()
{
    QFETCH(QString, name);
    QFETCH(bool, valid);
    QCOMPARE(Workspace::isValidName(name), valid);
}

void tst_Workspace::parse_data()
{
    QTest::addColumn<QString>("argument"); // "@" stands for the temporary folder
    QTest::addColumn<QString>("name");     // empty: refused
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("rw");
    QTest::addColumn<QString>("reason"); // words of the refusal

    QTest::newRow("read-only") << "data=@/proj"
                               << "data"
                               << "@/proj" << false << QString();
    QTest::newRow(":rw") << "data=@/proj:rw"
                         << "data"
                         << "@/proj" << true << QString();
    QTest::newRow(":ro") << "data=@/proj:ro"
                         << "data"
                         << "@/proj" << false << QString();
    QTest::newRow("trailing slash") << "d=@/proj/"
                                    << "d"
                                    << "@/proj" << false << QString();
    QTest::newRow("dot segments") << "d=@/proj/sub/..:rw"
                                  << "d"
                                  << "@/proj" << true << QString();
    QTest::newRow("through a link") << "d=@/link/sub"
                                    << "d"
                                    << "@/proj/sub" << false << QString();
    QTest::newRow("no equals") << "@/proj" << QString() << QString() << false << "NAME=PATH";
    QTest::newRow("bad name") << "../x=@/proj" << QString() << QString() << false << "not valid";
    QTest::newRow("empty name") << "=@/proj" << QString() << QString() << false << "not valid";
    QTest::newRow("no path") << "d=" << QString() << QString() << false << "names no folder";
    QTest::newRow("only :rw") << "d=:rw" << QString() << QString() << false << "names no folder";
    QTest::newRow("missing") << "d=@/nope" << QString() << QString() << false << "does not exist";
    QTest::newRow("a file") << "d=@/file.txt" << QString() << QString() << false
                            << "is not a folder";
    QTest::newRow("the root") << "d=/" << QString() << QString() << false << "root";
    QTest::newRow("the root, dotted")
        << "d=/tmp/..:rw" << QString() << QString() << false << "root";
    QTest::newRow(":rw:always") << "d=@/proj:rw:always"
                                << "d"
                                << "@/proj" << true << "always";
    QTest::newRow(":rw:ask") << "d=@/proj:rw:ask"
                             << "d"
                             << "@/proj" << true << "ask";
    QTest::newRow("apply without :rw")
        << "d=@/proj:always" << QString() << QString() << false << "is for a copy-on-write";
}

void tst_Workspace::parse()
{
    QFETCH(QString, argument);
    QFETCH(QString, name);
    QFETCH(QString, path);
    QFETCH(bool, rw);
    QFETCH(QString, reason);

    const QString root = QFileInfo(m_dir.path()).canonicalFilePath();
    argument.replace(u'@', m_dir.path());
    path.replace(u'@', root);
    QString error;
    const std::optional<Workspace> ws = Workspace::parse(argument, &error);
    if (name.isEmpty()) {
        QVERIFY(!ws);
        QVERIFY2(error.contains(reason), qPrintable(error));
        QVERIFY(!error.contains(u'\n'));
        return;
    }
    QVERIFY2(ws, qPrintable(error));
    QCOMPARE(ws->name, name);
    QCOMPARE(ws->path, path);
    QCOMPARE(ws->mode, rw ? Workspace::Mode::CopyOnWrite : Workspace::Mode::ReadOnly);
    // A kept row's reason names its apply setting (never when it says none).
    QCOMPARE(Workspace::applyName(ws->apply), reason.isEmpty() ? QStringLiteral("never") : reason);
    QVERIFY(ws->exclude.isEmpty());
}

void tst_Workspace::parseCanonical()
{
    // A relative path is taken from the current folder.
    const QString before = QDir::currentPath();
    QVERIFY(QDir::setCurrent(m_dir.path()));
    QString error;
    const std::optional<Workspace> ws = Workspace::parse(QStringLiteral("p=proj/sub"), &error);
    QVERIFY(QDir::setCurrent(before));
    QVERIFY2(ws, qPrintable(error));
    QCOMPARE(ws->path, QFileInfo(m_dir.path()).canonicalFilePath() + QStringLiteral("/proj/sub"));
    QVERIFY(QDir::isAbsolutePath(ws->path));
    // "~" is the home folder (an argument after '=' is not expanded by every shell).
    const std::optional<Workspace> home = Workspace::parse(QStringLiteral("h=~:rw"), &error);
    QVERIFY2(home, qPrintable(error));
    QCOMPARE(home->path, QFileInfo(QDir::homePath()).canonicalFilePath());
    QCOMPARE(home->mode, Workspace::Mode::CopyOnWrite);
}

void tst_Workspace::defaults_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("isDir");
    QTest::addColumn<bool>("excluded");

    // Each default, at the top and deeper down.
    for (const QString &prefix : {QString(), QStringLiteral("deep/er/")}) {
        const auto row = [&](const char *name, const QString &path, bool isDir, bool excluded) {
            QTest::addRow("%s%s", qPrintable(prefix), name) << prefix + path << isDir << excluded;
        };
        row(".env", QStringLiteral(".env"), false, true);
        row(".env.local", QStringLiteral(".env.local"), false, true);
        row(".envrc", QStringLiteral(".envrc"), false, true);
        row(".ENV (case)", QStringLiteral(".ENV"), false, true);
        row("key.pem", QStringLiteral("key.pem"), false, true);
        row("server.key", QStringLiteral("server.key"), false, true);
        row("id_rsa", QStringLiteral("id_rsa"), false, true);
        row("id_ed25519", QStringLiteral("id_ed25519"), false, true);
        row("id_rsa.pub", QStringLiteral("id_rsa.pub"), false, true);
        row(".netrc", QStringLiteral(".netrc"), false, true);
        row(".npmrc", QStringLiteral(".npmrc"), false, true);
        row(".pypirc", QStringLiteral(".pypirc"), false, true);
        row(".aws/", QStringLiteral(".aws"), true, true);
        row(".aws/credentials", QStringLiteral(".aws/credentials"), false, true);
        row(".ssh/", QStringLiteral(".ssh"), true, true);
        row(".ssh/authorized_keys", QStringLiteral(".ssh/authorized_keys"), false, true);
        row(".gnupg/x/y", QStringLiteral(".gnupg/x/y"), false, true);
        // Not credentials.
        row("main.py", QStringLiteral("main.py"), false, false);
        row(".git/", QStringLiteral(".git"), true, false);
        row(".git/config", QStringLiteral(".git/config"), false, false);
        row(".git/hooks/pre-commit", QStringLiteral(".git/hooks/pre-commit"), false, false);
        row("environment.yml", QStringLiteral("environment.yml"), false, false);
        row("keys.py", QStringLiteral("keys.py"), false, false);
        row("a.key.txt", QStringLiteral("a.key.txt"), false, false);
        row("my_id_rsa", QStringLiteral("my_id_rsa"), false, false);
        // The file patterns keep folders of the same name in; the folder ones, files.
        row("id_tools/ (a folder)", QStringLiteral("id_tools"), true, false);
        row("id_tools/x.py", QStringLiteral("id_tools/x.py"), false, false);
        row(".aws (a file)", QStringLiteral(".aws"), false, false);
        row(".sshd/", QStringLiteral(".sshd"), true, false);
    }
}

void tst_Workspace::defaults()
{
    QFETCH(QString, path);
    QFETCH(bool, isDir);
    QFETCH(bool, excluded);
    QCOMPARE(Workspace().excludes(path, isDir), excluded);
}

void tst_Workspace::patterns_data()
{
    QTest::addColumn<QStringList>("exclude");
    QTest::addColumn<QStringList>("include");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("isDir");
    QTest::addColumn<bool>("excluded");

    const QStringList none;
    QTest::newRow("basename anywhere")
        << QStringList{"*.log"} << none << "a/b/x.log" << false << true;
    QTest::newRow("question mark") << QStringList{"?.tmp"} << none << "a.tmp" << false << true;
    QTest::newRow("question mark is one character")
        << QStringList{"?.tmp"} << none << "ab.tmp" << false << false;
    QTest::newRow("star within a name only")
        << QStringList{"data/*.csv"} << none << "data/sub/x.csv" << false << false;
    QTest::newRow("anchored") << QStringList{"data/*.csv"} << none << "data/x.csv" << false << true;
    QTest::newRow("anchored is from the root")
        << QStringList{"data/*.csv"} << none << "other/data/x.csv" << false << false;
    QTest::newRow("leading slash anchors")
        << QStringList{"/build"} << none << "build" << true << true;
    QTest::newRow("leading slash, deeper")
        << QStringList{"/build"} << none << "src/build" << true << false;
    QTest::newRow("directory pattern, a directory")
        << QStringList{"node_modules/"} << none << "web/node_modules" << true << true;
    QTest::newRow("directory pattern, inside it")
        << QStringList{"node_modules/"} << none << "web/node_modules/x/index.js" << false << true;
    QTest::newRow("directory pattern, a file")
        << QStringList{"node_modules/"} << none << "node_modules" << false << false;
    QTest::newRow("include re-admits a default")
        << none << QStringList{".env.example"} << ".env.example" << false << false;
    QTest::newRow("include re-admits only what it names")
        << none << QStringList{".env.example"} << ".env" << false << true;
    QTest::newRow("include re-admits an exclude")
        << QStringList{"*.log"} << QStringList{"keep.log"} << "keep.log" << false << false;
    QTest::newRow("include cannot reach into an excluded folder")
        << none << QStringList{"config"} << ".aws/config" << false << true;
    QTest::newRow("include of the folder re-admits it")
        << none << QStringList{".aws/"} << ".aws/config" << false << false;
    QTest::newRow("but not the credentials in it")
        << none << QStringList{".ssh/"} << ".ssh/id_rsa" << false << true;
    QTest::newRow("blank patterns ignored")
        << QStringList{"", "  "} << none << "x" << false << false;
    QTest::newRow("several stars")
        << QStringList{"*a*b*c*"} << none << "xxaxxbxxcxx" << false << true;
    QTest::newRow("several stars, no match")
        << QStringList{"*a*b*c*"} << none << "xxaxxcxxbxx" << false << false;
}

void tst_Workspace::patterns()
{
    QFETCH(QStringList, exclude);
    QFETCH(QStringList, include);
    QFETCH(QString, path);
    QFETCH(bool, isDir);
    QFETCH(bool, excluded);
    Workspace ws;
    ws.exclude = exclude;
    ws.include = include;
    QCOMPARE(ws.excludes(path, isDir), excluded);
}

void tst_Workspace::applyNames()
{
    for (auto apply : {Workspace::Apply::Never, Workspace::Apply::Ask, Workspace::Apply::Always})
        QCOMPARE(Workspace::parseApply(Workspace::applyName(apply)), apply);
    QCOMPARE(Workspace::parseApply(QStringLiteral(" ASK ")), Workspace::Apply::Ask);
    QVERIFY(!Workspace::parseApply(QStringLiteral("sometimes")));
    QCOMPARE(Workspace::modeName(Workspace::Mode::CopyOnWrite), QStringLiteral("copy-on-write"));
    QCOMPARE(Workspace::defaultExclusions().size(), 10);
    QVERIFY(Workspace::defaultExclusions().contains(QStringLiteral(".ssh/")));
}

QTEST_GUILESS_MAIN(tst_Workspace)
#include "tst_workspace.moc"
