#include "workdirpath.h"

#include <QTest>

class tst_WorkdirPath : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void normalize_data();
    void normalize();
    void withoutErrorString_data() { normalize_data(); }
    void withoutErrorString();
};

void tst_WorkdirPath::normalize_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("normalized"); // empty: refused
    QTest::addColumn<QString>("reason");     // a word the refusal must contain

    // Accepted.
    QTest::newRow("file") << QStringLiteral("a.txt") << QStringLiteral("a.txt") << QString();
    QTest::newRow("nested") << QStringLiteral("data/in.csv") << QStringLiteral("data/in.csv")
                            << QString();
    QTest::newRow("dot segments") << QStringLiteral("./a/./b") << QStringLiteral("a/b")
                                  << QString();
    QTest::newRow("dot-dot inside") << QStringLiteral("a/../b") << QStringLiteral("b") << QString();
    QTest::newRow("dot-dot back to the top")
        << QStringLiteral("a/b/../../c") << QStringLiteral("c") << QString();
    QTest::newRow("doubled slash") << QStringLiteral("a//b") << QStringLiteral("a/b") << QString();
    QTest::newRow("trailing slash") << QStringLiteral("a/b/") << QStringLiteral("a/b") << QString();
    QTest::newRow("absolute in the workdir")
        << QStringLiteral("/sandbox/x/y") << QStringLiteral("x/y") << QString();
    QTest::newRow("absolute with dot segments")
        << QStringLiteral("/sandbox/./x/../y") << QStringLiteral("y") << QString();
    QTest::newRow("absolute with doubled slash")
        << QStringLiteral("//sandbox//x") << QStringLiteral("x") << QString();
    QTest::newRow("three dots is a name")
        << QStringLiteral("...") << QStringLiteral("...") << QString();
    QTest::newRow("dot-dot prefix of a name")
        << QStringLiteral("..data/x") << QStringLiteral("..data/x") << QString();
    QTest::newRow("hidden file") << QStringLiteral(".env") << QStringLiteral(".env") << QString();
    QTest::newRow("utf-8 name") << QStringLiteral("données/été 😀.csv")
                                << QStringLiteral("données/été 😀.csv") << QString();
    QTest::newRow("relative sandbox folder")
        << QStringLiteral("sandbox/x") << QStringLiteral("sandbox/x") << QString();
    QTest::newRow("1024 characters") << QString(1024, u'a') << QString(1024, u'a') << QString();

    // Refused.
    QTest::newRow("absolute escaping the workdir")
        << QStringLiteral("/sandbox/../etc/x") << QString() << QStringLiteral("outside");
    QTest::newRow("parent") << QStringLiteral("../x") << QString() << QStringLiteral("escapes");
    QTest::newRow("parent alone") << QStringLiteral("..") << QString() << QStringLiteral("escapes");
    QTest::newRow("parent after a folder")
        << QStringLiteral("a/../../x") << QString() << QStringLiteral("escapes");
    QTest::newRow("parent hidden by dot segments")
        << QStringLiteral("./a/./../../x") << QString() << QStringLiteral("escapes");
    QTest::newRow("outside absolute")
        << QStringLiteral("/etc/passwd") << QString() << QStringLiteral("outside");
    QTest::newRow("root") << QStringLiteral("/") << QString() << QStringLiteral("outside");
    QTest::newRow("workdir as a name prefix")
        << QStringLiteral("/sandboxed/x") << QString() << QStringLiteral("outside");
    QTest::newRow("tmp") << QStringLiteral("/tmp/x") << QString() << QStringLiteral("outside");
    QTest::newRow("empty") << QString() << QString() << QStringLiteral("empty");
    QTest::newRow("blank") << QStringLiteral("   ") << QString() << QStringLiteral("empty");
    QTest::newRow("newline") << QStringLiteral("\n") << QString() << QStringLiteral("empty");
    QTest::newRow("dot") << QStringLiteral(".") << QString() << QStringLiteral("itself");
    QTest::newRow("dot slash") << QStringLiteral("./") << QString() << QStringLiteral("itself");
    QTest::newRow("folder and back")
        << QStringLiteral("a/..") << QString() << QStringLiteral("itself");
    QTest::newRow("workdir") << QStringLiteral("/sandbox") << QString() << QStringLiteral("itself");
    QTest::newRow("workdir with slash")
        << QStringLiteral("/sandbox/") << QString() << QStringLiteral("itself");
    QTest::newRow("workdir with dot")
        << QStringLiteral("/sandbox/.") << QString() << QStringLiteral("itself");
    QTest::newRow("nul") << QStringLiteral("a") + QChar(0) + QStringLiteral(".txt") << QString()
                         << QStringLiteral("NUL");
    QTest::newRow("nul alone") << QString(QChar(0)) << QString() << QStringLiteral("NUL");
    QTest::newRow("1025 characters")
        << QString(1025, u'a') << QString() << QStringLiteral("longer");
    QTest::newRow("1025 characters inside the workdir")
        << QStringLiteral("/sandbox/") + QString(1016, u'a') << QString()
        << QStringLiteral("longer");
}

void tst_WorkdirPath::normalize()
{
    QFETCH(QString, path);
    QFETCH(QString, normalized);
    QFETCH(QString, reason);

    QString error;
    QCOMPARE(WorkdirPath::normalize(path, &error), normalized);
    if (reason.isEmpty()) {
        QCOMPARE(error, QString());
        return;
    }
    QVERIFY2(error.contains(reason), qPrintable(error));
    // The message names the path (its start, for long ones) so the caller can find the file.
    QVERIFY2(error.contains(u'\'' + path.left(200) + u'\''), qPrintable(error));
    QVERIFY2(error.size() < 300, qPrintable(error));
}

void tst_WorkdirPath::withoutErrorString()
{
    QFETCH(QString, path);
    QFETCH(QString, normalized);

    QCOMPARE(WorkdirPath::normalize(path, nullptr), normalized);
}

QTEST_GUILESS_MAIN(tst_WorkdirPath)
#include "tst_workdirpath.moc"
