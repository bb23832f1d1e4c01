#include "unifieddiff.h"

#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {
// Applies a unified diff to `before` as patch would, checking every context and removed line:
// a diff that does not describe `before` fails here.
QByteArray applyDiff(const QByteArray &before, const QString &diff, QString *error)
{
    QList<QByteArray> lines;
    for (qsizetype s = 0; s < before.size();) {
        qsizetype e = before.indexOf('\n', s);
        e = e < 0 ? before.size() : e + 1;
        lines.append(before.mid(s, e - s));
        s = e;
    }
    const QList<QByteArray> d = diff.toUtf8().split('\n');
    QList<QByteArray> out;
    qsizetype at = 0; // next line of `before`
    static const QRegularExpression hunk(
        QStringLiteral("^@@ -(\\d+)(?:,(\\d+))? \\+(\\d+)(?:,(\\d+))? @@$"));
    for (qsizetype i = 2; i < d.size(); ++i) {
        const QByteArray &l = d.at(i);
        if (l.isEmpty() && i == d.size() - 1)
            break;
        if (l.startsWith("@@")) {
            const auto m = hunk.match(QString::fromUtf8(l));
            if (!m.hasMatch()) {
                *error = QStringLiteral("bad hunk header %1").arg(QString::fromUtf8(l));
                return {};
            }
            const int oldStart = m.captured(1).toInt();
            const int oldCount = m.captured(2).isEmpty() ? 1 : m.captured(2).toInt();
            const qsizetype start = oldCount == 0 ? oldStart : oldStart - 1;
            while (at < start)
                out.append(lines.at(at++));
            continue;
        }
        const bool noNewline = i + 1 < d.size() && d.at(i + 1).startsWith("\\ No newline");
        const QByteArray text = l.mid(1) + (noNewline ? "" : "\n");
        if (l.startsWith(' ') || l.startsWith('-')) {
            if (at >= lines.size() || lines.at(at) != text) {
                *error = QStringLiteral("line %1 does not match: %2")
                             .arg(at + 1)
                             .arg(QString::fromUtf8(l));
                return {};
            }
            if (l.startsWith(' '))
                out.append(text);
            ++at;
        } else if (l.startsWith('+')) {
            out.append(text);
        } else if (!l.startsWith('\\')) {
            *error = QStringLiteral("unexpected line %1").arg(QString::fromUtf8(l));
            return {};
        }
        if (noNewline)
            ++i;
    }
    while (at < lines.size())
        out.append(lines.at(at++));
    return out.join();
}

QByteArray randomText(QRandomGenerator &rng, int lines, int alphabet)
{
    QByteArray t;
    for (int i = 0; i < lines; ++i)
        t += "line " + QByteArray::number(rng.bounded(alphabet)) + '\n';
    return t;
}

QByteArray mutate(QRandomGenerator &rng, const QByteArray &text)
{
    QList<QByteArray> lines = text.split('\n');
    lines.removeLast();
    const int edits = rng.bounded(1, 8);
    for (int e = 0; e < edits; ++e) {
        const int at = lines.isEmpty() ? 0 : rng.bounded(int(lines.size()));
        switch (rng.bounded(3)) {
        case 0:
            if (!lines.isEmpty())
                lines.removeAt(at);
            break;
        case 1:
            lines.insert(at, "new " + QByteArray::number(rng.bounded(1000)));
            break;
        default:
            if (!lines.isEmpty())
                lines[at] = "changed " + QByteArray::number(rng.bounded(1000));
        }
    }
    QByteArray out = lines.join('\n');
    if (!lines.isEmpty() && rng.bounded(4) != 0)
        out += '\n'; // sometimes without a newline at the end
    return out;
}
} // namespace

class tst_UnifiedDiff : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exact_data();
    void exact();
    void equalIsEmpty();
    void roundTrip();
    void againstPatch();
    void tooManyLines();
    void unrelatedFilesStayCorrect();
    void added();
    void isText_data();
    void isText();
    void countLines();
};

void tst_UnifiedDiff::exact_data()
{
    QTest::addColumn<QByteArray>("before");
    QTest::addColumn<QByteArray>("after");
    QTest::addColumn<QString>("diff");

    QTest::newRow("one line changed")
        << QByteArray("a\nb\nc\n") << QByteArray("a\nB\nc\n")
        << QStringLiteral("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    QTest::newRow("appended") << QByteArray("a\n") << QByteArray("a\nb\n")
                              << QStringLiteral(
                                     "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1,2 @@\n a\n+b\n");
    QTest::newRow("from empty") << QByteArray() << QByteArray("x\ny\n")
                                << QStringLiteral(
                                       "--- a/f.txt\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n");
    QTest::newRow("to empty") << QByteArray("x\n") << QByteArray()
                              << QStringLiteral("--- a/f.txt\n+++ b/f.txt\n@@ -1 +0,0 @@\n-x\n");
    QTest::newRow("newline added at the end")
        << QByteArray("a\nb") << QByteArray("a\nb\n")
        << QStringLiteral("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end "
                          "of file\n+b\n");
    QByteArray ten, tenChanged;
    for (int i = 1; i <= 20; ++i) {
        const QByteArray line = QByteArray::number(i) + '\n';
        ten += line;
        tenChanged += i == 2 ? QByteArray("two\n") : i == 18 ? QByteArray("eighteen\n") : line;
    }
    QTest::newRow("two hunks")
        << ten << tenChanged
        << QStringLiteral("--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
                          "@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n");
}

void tst_UnifiedDiff::exact()
{
    QFETCH(QByteArray, before);
    QFETCH(QByteArray, after);
    QFETCH(QString, diff);
    QCOMPARE(UnifiedDiff::of(before, after, QStringLiteral("f.txt")), diff);
}

void tst_UnifiedDiff::equalIsEmpty()
{
    QCOMPARE(UnifiedDiff::of("a\nb\n", "a\nb\n", QStringLiteral("f")), QString());
    QCOMPARE(UnifiedDiff::of({}, {}, QStringLiteral("f")), QString());
}

void tst_UnifiedDiff::roundTrip()
{
    QRandomGenerator rng(42);
    for (int round = 0; round < 400; ++round) {
        const QByteArray before = randomText(rng, rng.bounded(0, 60), 6);
        const QByteArray after = mutate(rng, before);
        const int context = rng.bounded(0, 4);
        const QString diff = UnifiedDiff::of(before, after, QStringLiteral("r.txt"), context);
        QString error;
        const QByteArray back = applyDiff(before, diff, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error + u'\n' + diff));
        QVERIFY2(back == after, qPrintable(diff));
    }
}

void tst_UnifiedDiff::againstPatch()
{
    // GNU patch reads what we write.
    const QString patch = QStandardPaths::findExecutable(QStringLiteral("patch"));
    if (patch.isEmpty())
        QSKIP("no patch(1) here");
    QRandomGenerator rng(7);
    QTemporaryDir dir;
    for (int round = 0; round < 20; ++round) {
        const QByteArray before = randomText(rng, 40, 8);
        const QByteArray after = mutate(rng, before);
        QFile f(dir.filePath(QStringLiteral("p.txt")));
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(before);
        f.close();
        QProcess p;
        p.setWorkingDirectory(dir.path());
        p.start(patch, {QStringLiteral("-p1"), QStringLiteral("--quiet"),
                        QStringLiteral("--no-backup-if-mismatch")});
        p.write(UnifiedDiff::of(before, after, QStringLiteral("p.txt")).toUtf8());
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), after);
        f.close();
    }
}

void tst_UnifiedDiff::tooManyLines()
{
    const QByteArray big = QByteArray("x\n").repeated(11);
    const QString note = UnifiedDiff::of(big, big + "y\n", QStringLiteral("big.txt"), 3, 10);
    QCOMPARE(note.count(u'\n'), 1);
    QVERIFY(note.contains(QStringLiteral("big.txt")));
    QVERIFY(note.contains(QStringLiteral("10 lines")));
    QVERIFY(!UnifiedDiff::of(big, big + "y\n", QStringLiteral("big.txt"), 3, 12).contains(u'('));
}

void tst_UnifiedDiff::unrelatedFilesStayCorrect()
{
    // Past the bound on differences the diff is coarse, but still applies.
    QRandomGenerator rng(3);
    QByteArray a, b;
    for (int i = 0; i < 4000; ++i) {
        a += "a" + QByteArray::number(rng.generate()) + '\n';
        b += "b" + QByteArray::number(rng.generate()) + '\n';
    }
    const QString diff = UnifiedDiff::of(a, b, QStringLiteral("u.txt"));
    QString error;
    QCOMPARE(applyDiff(a, diff, &error), b);
    QCOMPARE(error, QString());
}

void tst_UnifiedDiff::added()
{
    QCOMPARE(UnifiedDiff::ofAdded("one\ntwo\n", QStringLiteral("n.txt")),
             QStringLiteral("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"));
    QCOMPARE(UnifiedDiff::ofAdded({}, QStringLiteral("empty")), QString());
}

void tst_UnifiedDiff::isText_data()
{
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<bool>("text");

    QTest::newRow("ascii") << QByteArray("print('hi')\n") << true;
    QTest::newRow("empty") << QByteArray() << true;
    QTest::newRow("utf-8") << QStringLiteral("données été 😀\n").toUtf8() << true;
    QTest::newRow("nul") << QByteArray("a\0b", 3) << false;
    QTest::newRow("latin-1") << QByteArray("caf\xe9\n") << false;
    QTest::newRow("cut character at the end") << QByteArray("ab\xc3") << false;
    QTest::newRow("overlong") << QByteArray("\xc0\xaf") << false;
    // The first 8 KiB decide: a character cut by the probe's end is fine, a NUL past it unseen.
    QByteArray cut = QByteArray(8191, 'a') + QStringLiteral("é").toUtf8() + "rest";
    QTest::newRow("character across 8 KiB") << cut << true;
    QTest::newRow("nul after 8 KiB") << QByteArray(8192, 'a') + QByteArray(1, '\0') << true;
    QTest::newRow("png") << QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) << false;
}

void tst_UnifiedDiff::isText()
{
    QFETCH(QByteArray, data);
    QFETCH(bool, text);
    QCOMPARE(UnifiedDiff::isText(data), text);
}

void tst_UnifiedDiff::countLines()
{
    int added = 0, removed = 0;
    // A removed line that starts with "--" is counted, the headers are not.
    const QString diff = UnifiedDiff::of("a\n-- x\nb\n", "a\nb\nc\nd\n", QStringLiteral("f"));
    UnifiedDiff::countLines(diff, &added, &removed);
    QCOMPARE(added, 2);
    QCOMPARE(removed, 1);
}

QTEST_GUILESS_MAIN(tst_UnifiedDiff)
#include "tst_unifieddiff.moc"
