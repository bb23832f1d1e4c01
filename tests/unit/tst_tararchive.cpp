#include "tararchive.h"

#include <QTest>
#include <limits>

using Entries = QList<TarArchive::Entry>;
Q_DECLARE_METATYPE(TarArchive::Entry)

namespace {
TarArchive::Entry file(const QString &path, const QByteArray &data, int mode = 0644)
{
    TarArchive::Entry e;
    e.path = path;
    e.data = data;
    e.mode = mode;
    return e;
}

TarArchive::Entry directory(const QString &path, int mode = 0755)
{
    TarArchive::Entry e;
    e.path = path;
    e.mode = mode;
    e.isDirectory = true;
    return e;
}

QByteArray pattern(qsizetype size, int seed)
{
    QByteArray b(size, Qt::Uninitialized);
    quint32 x = quint32(seed) * 2654435761u + 1;
    for (qsizetype i = 0; i < size; ++i) {
        x = x * 1103515245u + 12345u;
        b[i] = char(x >> 24);
    }
    return b;
}

QByteArray everyByte()
{
    QByteArray b;
    for (int i = 0; i < 256; ++i)
        b.append(char(i));
    return b;
}

const qint64 kUnlimited = std::numeric_limits<qint64>::max();
} // namespace

class tst_TarArchive : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void emptyArchive();
    void unpackGarbage_data();
    void unpackGarbage();
    void sizeLimit_data();
    void sizeLimit();
    void fileLimit_data();
    void fileLimit();
};

void tst_TarArchive::roundTrip_data()
{
    QTest::addColumn<Entries>("entries");

    QTest::newRow("one file") << Entries{file("main.py", "print('hi')\n")};
    QTest::newRow("directory with files")
        << Entries{directory("data"), file("data/a.txt", "A\n"), directory("data/sub"),
                   file("data/sub/b.csv", "x,y\n1,2\n")};
    QTest::newRow("utf-8 names") << Entries{file(QStringLiteral("日本語/ファイル.txt"), "jp"),
                                            file(QStringLiteral("ünïcödé.py"), "u"),
                                            file(QStringLiteral("plot 😀 (1).png"), "p")};
    QTest::newRow("binary data") << Entries{file("all.bin", everyByte().repeated(4)),
                                            file("noise.bin", pattern(10000, 1))};
    QTest::newRow("empty file") << Entries{file("empty.txt", QByteArray())};
    QTest::newRow("empty file between others")
        << Entries{file("a", "1"), file("empty", QByteArray()), file("b", "2")};
    QTest::newRow("modes") << Entries{file("run.sh", "#!/bin/sh\n", 0755),
                                      file("secret", "s", 0600), directory("pub", 0700)};
    QTest::newRow("path longer than ustar's 100 bytes")
        << Entries{file(QString("deep/").repeated(30) + "file.txt", "deep")};
    QTest::newRow("exact block size")
        << Entries{file("512.bin", pattern(512, 2)), file("513.bin", pattern(513, 3))};
    QTest::newRow("3 MiB") << Entries{file("big.bin", pattern(3 * 1024 * 1024, 4))};
    QTest::newRow("no entries") << Entries();
}

void tst_TarArchive::roundTrip()
{
    QFETCH(Entries, entries);

    QString error;
    const QByteArray tar = TarArchive::pack(entries, &error);
    QCOMPARE(error, QString());
    QVERIFY(!tar.isEmpty());
    QCOMPARE(tar.size() % 512, qsizetype(0));

    const Entries back = TarArchive::unpack(tar, kUnlimited, &error);
    QCOMPARE(error, QString());
    QCOMPARE(back.size(), entries.size());
    for (qsizetype i = 0; i < entries.size(); ++i) {
        const QString where = QStringLiteral("entry %1").arg(i);
        QCOMPARE(back.at(i).path, entries.at(i).path);
        QVERIFY2(back.at(i).data == entries.at(i).data, qPrintable(where));
        QCOMPARE(back.at(i).mode, entries.at(i).mode);
        QCOMPARE(back.at(i).isDirectory, entries.at(i).isDirectory);
        QCOMPARE(back.at(i).size, entries.at(i).isDirectory ? 0 : entries.at(i).data.size());
        QVERIFY(!back.at(i).omitted);
    }
}

void tst_TarArchive::emptyArchive()
{
    // Two zero blocks are a complete archive with nothing in it.
    QString error;
    QVERIFY(TarArchive::unpack(QByteArray(1024, '\0'), kUnlimited, &error).isEmpty());
    QCOMPARE(error, QString());
}

void tst_TarArchive::unpackGarbage_data()
{
    QTest::addColumn<QByteArray>("input");

    const QByteArray valid = TarArchive::pack({file("f.bin", pattern(2000, 5))});
    QByteArray badChecksum = valid;
    badChecksum[0] = 'g'; // the name is covered by the header checksum

    QTest::newRow("empty input") << QByteArray();
    QTest::newRow("text") << QByteArray("this is not a tar archive\n");
    QTest::newRow("random bytes") << pattern(4096, 6);
    QTest::newRow("json error body") << QByteArray(R"({"message":"Could not find the file"})");
    QTest::newRow("truncated in the data") << valid.left(700);
    QTest::newRow("truncated in the header") << valid.left(100);
    QTest::newRow("bad header checksum") << badChecksum;
}

void tst_TarArchive::unpackGarbage()
{
    QFETCH(QByteArray, input);

    QString error;
    const Entries entries = TarArchive::unpack(input, kUnlimited, &error);
    QVERIFY2(!error.isEmpty(), "garbage must be reported");
    QVERIFY(entries.isEmpty());
    // Without somewhere to put the message it must still just fail.
    QVERIFY(TarArchive::unpack(input, kUnlimited).isEmpty());
}

void tst_TarArchive::sizeLimit_data()
{
    QTest::addColumn<Entries>("entries");
    QTest::addColumn<qint64>("maxTotalBytes");
    QTest::addColumn<QString>("error");
    QTest::addColumn<int>("unpacked"); // entries returned before the limit was hit

    const Entries two = {file("a", pattern(100, 7)), file("b", pattern(100, 8))};
    QTest::newRow("exactly at the limit") << two << qint64(200) << QString() << 2;
    QTest::newRow("one byte over")
        << two << qint64(199) << QStringLiteral("archive content exceeds 199 bytes") << 1;
    QTest::newRow("first file too big")
        << two << qint64(99) << QStringLiteral("archive content exceeds 99 bytes") << 0;
    QTest::newRow("zero limit") << Entries{file("one", "1")} << qint64(0)
                                << QStringLiteral("archive content exceeds 0 bytes") << 0;
    QTest::newRow("directories and empty files are free")
        << Entries{directory("d"), file("d/empty", QByteArray())} << qint64(0) << QString() << 2;
    QTest::newRow("large file") << Entries{file("big", pattern(1024 * 1024, 9))}
                                << qint64(1024 * 1024 - 1)
                                << QStringLiteral("archive content exceeds 1048575 bytes") << 0;
}

void tst_TarArchive::sizeLimit()
{
    QFETCH(Entries, entries);
    QFETCH(qint64, maxTotalBytes);
    QFETCH(QString, error);
    QFETCH(int, unpacked);

    QString actualError;
    const Entries back = TarArchive::unpack(TarArchive::pack(entries), maxTotalBytes, &actualError);
    QCOMPARE(actualError, error);
    QCOMPARE(int(back.size()), unpacked);
    for (qsizetype i = 0; i < back.size(); ++i)
        QVERIFY(back.at(i).data == entries.at(i).data);
}

void tst_TarArchive::fileLimit_data()
{
    QTest::addColumn<Entries>("entries");
    QTest::addColumn<qint64>("maxTotalBytes");
    QTest::addColumn<qint64>("maxFileBytes");
    QTest::addColumn<QString>("error");
    QTest::addColumn<int>("unpacked");
    QTest::addColumn<QStringList>("omitted"); // paths listed without their data

    const Entries hundred = {file("a", pattern(100, 10))};
    QTest::newRow("no per-file limit") << Entries{file("big", pattern(5000, 11))} << kUnlimited
                                       << qint64(-1) << QString() << 1 << QStringList();
    QTest::newRow("file at the limit read")
        << hundred << kUnlimited << qint64(100) << QString() << 1 << QStringList();
    QTest::newRow("one byte over omitted")
        << hundred << kUnlimited << qint64(99) << QString() << 1 << QStringList{"a"};
    QTest::newRow("zero limit keeps empty files")
        << Entries{file("one", "1"), file("empty", QByteArray())} << kUnlimited << qint64(0)
        << QString() << 2 << QStringList{"one"};
    QTest::newRow("directories unaffected")
        << Entries{directory("d"), file("d/x", "xyz")} << kUnlimited << qint64(0) << QString() << 2
        << QStringList{"d/x"};
    QTest::newRow("omitted file between others")
        << Entries{file("a", pattern(10, 12)), file("big", pattern(5000, 13)),
                   file("b", pattern(10, 14))}
        << kUnlimited << qint64(1000) << QString() << 3 << QStringList{"big"};
    QTest::newRow("several omitted")
        << Entries{file("x", pattern(600, 15)), file("y", pattern(700, 16)),
                   file("z", pattern(500, 17))}
        << kUnlimited << qint64(500) << QString() << 3 << QStringList{"x", "y"};
    QTest::newRow("omitted files do not count toward the total")
        << Entries{file("big", pattern(1000, 18)), file("a", pattern(100, 19)),
                   file("b", pattern(100, 20))}
        << qint64(200) << qint64(500) << QString() << 3 << QStringList{"big"};
    QTest::newRow("read files still count")
        << Entries{file("a", pattern(300, 21)), file("big", pattern(1000, 22)),
                   file("b", pattern(300, 23))}
        << qint64(500) << qint64(500) << QStringLiteral("archive content exceeds 500 bytes") << 2
        << QStringList{"big"};
    QTest::newRow("omitted even under the total")
        << Entries{file("a", pattern(300, 24))} << qint64(1000) << qint64(200) << QString() << 1
        << QStringList{"a"};
    QTest::newRow("3 MiB omitted, small one read")
        << Entries{file("big.bin", pattern(3 * 1024 * 1024, 25)), file("small.txt", "hi\n")}
        << qint64(1024 * 1024) << qint64(1024 * 1024) << QString() << 2 << QStringList{"big.bin"};
}

void tst_TarArchive::fileLimit()
{
    QFETCH(Entries, entries);
    QFETCH(qint64, maxTotalBytes);
    QFETCH(qint64, maxFileBytes);
    QFETCH(QString, error);
    QFETCH(int, unpacked);
    QFETCH(QStringList, omitted);

    QString actualError;
    const Entries back =
        TarArchive::unpack(TarArchive::pack(entries), maxTotalBytes, &actualError, maxFileBytes);
    QCOMPARE(actualError, error);
    QCOMPARE(int(back.size()), unpacked);
    for (qsizetype i = 0; i < back.size(); ++i) {
        const TarArchive::Entry &e = back.at(i);
        QCOMPARE(e.path, entries.at(i).path);
        QCOMPARE(e.isDirectory, entries.at(i).isDirectory);
        // The size is known whether or not the data was read.
        QCOMPARE(e.size, e.isDirectory ? 0 : entries.at(i).data.size());
        QCOMPARE(e.omitted, omitted.contains(e.path));
        if (e.omitted)
            QVERIFY(e.data.isEmpty());
        else
            QVERIFY2(e.data == entries.at(i).data, qPrintable(e.path));
    }
}

QTEST_GUILESS_MAIN(tst_TarArchive)
#include "tst_tararchive.moc"
