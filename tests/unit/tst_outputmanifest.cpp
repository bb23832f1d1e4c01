// What the server chooses to fetch from a finished run's files, from the supervisor's listing:
// sparse and huge files, thousands of empty ones, a budget shared by all, and listings that lie.

#include "outputmanifest.h"

#include <QTest>

namespace {
QByteArray record(char type, qint64 size, const QByteArray &path)
{
    return QByteArray(1, type) + ' ' + QByteArray::number(size) + ' ' + path + '\0';
}

OutputManifest::Limits limits()
{
    return {5LL * 1024 * 1024, 20LL * 1024 * 1024, 100, 1000};
}

QStringList names(const QList<OutputFile> &files, bool included)
{
    QStringList out;
    for (const OutputFile &f : files)
        if (f.included == included)
            out.append(f.name);
    return out;
}
} // namespace

class tst_OutputManifest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void allFit()
    {
        const QByteArray listing =
            record('f', 3, "outputs/b.csv") + record('d', 4096, "outputs/sub") +
            record('f', 5, "outputs/sub/c.txt") + record('f', 100, ".plots/figure-0002.png") +
            record('l', 10, "outputs/link") + record('f', 7, ".plots/figure-0001.png") +
            record('f', 0, "outputs/a empty file");
        const OutputManifest m = OutputManifest::parse(listing, limits());
        const QList<OutputFile> files = m.listed();
        // Figures first, then output files by path; links and directories are not files.
        QStringList all;
        for (const OutputFile &f : files)
            all.append(f.name);
        QCOMPARE(all, QStringList({"figure-0001.png", "figure-0002.png", "a empty file", "b.csv",
                                   "sub/c.txt"}));
        QCOMPARE(names(files, false), QStringList());
        QCOMPARE(files.at(0).kind, OutputFile::Kind::Plot);
        QCOMPARE(files.at(2).kind, OutputFile::Kind::Output);
        QCOMPARE(files.at(4).size, qint64(5));
        QVERIFY(m.wholeFolder(OutputFile::Kind::Plot));
        QVERIFY(m.wholeFolder(OutputFile::Kind::Output));
        QCOMPARE(m.notes(), QStringList());
        // The archive of a folder may hold its files and a header for each entry, not more.
        const qint64 outputs = m.folderArchiveBytes(OutputFile::Kind::Output);
        QVERIFY(outputs >= 8 + 5 * 512);
        QVERIFY(outputs < 1024 * 1024);
    }

    // Image files the program saved at the top of its workdir come back as outputs, named as
    // they are there, among the output folder's files by name; each is fetched on its own.
    void workdirImages()
    {
        const QByteArray listing = record('f', 3, "outputs/b.csv") + record('f', 10, "chart.png") +
                                   record('f', 7, ".plots/figure-0001.png") +
                                   record('f', 4, "z.PDF") + record('f', 2, "a.jpeg") +
                                   record('l', 9, "link.png") + record('d', 0, "dir.png");
        const OutputManifest m = OutputManifest::parse(listing, limits());
        QStringList paths;
        const QList<OutputFile> files = m.listed(&paths);
        QStringList all;
        for (const OutputFile &f : files)
            all.append(f.name);
        QCOMPARE(all, QStringList({"figure-0001.png", "a.jpeg", "b.csv", "chart.png", "z.PDF"}));
        QCOMPARE(paths, QStringList({".plots/figure-0001.png", "a.jpeg", "outputs/b.csv",
                                     "chart.png", "z.PDF"}));
        QCOMPARE(files.at(3).kind, OutputFile::Kind::Output);
        QCOMPARE(names(files, false), QStringList());
        for (const OutputManifest::Entry &e : m.files())
            QCOMPARE(e.inWorkdir, !e.path.contains(u'/'));
        // The output folder still comes in one archive, holding only its own files.
        QVERIFY(m.wholeFolder(OutputFile::Kind::Output));
        QVERIFY(m.folderArchiveBytes(OutputFile::Kind::Output) < 3 + 3 * 4096 + 64 * 1024 + 1);
        QCOMPARE(m.notes(), QStringList());
        // The workdir's images count against the same limits.
        OutputManifest::Limits two = limits();
        two.maxFiles = 3;
        QCOMPARE(names(OutputManifest::parse(listing, two).listed(), true),
                 QStringList({"figure-0001.png", "a.jpeg", "b.csv"}));
        // Without files in the output folder, its archive is not wanted at all.
        QVERIFY(!OutputManifest::parse(record('f', 10, "chart.png"), limits())
                     .wholeFolder(OutputFile::Kind::Output));
    }

    // The output folder's file is what the program put there for the caller: a workdir image of
    // the same name is left out, and the result says so.
    void outputFolderWinsOverTheWorkdir()
    {
        const OutputManifest m = OutputManifest::parse(
            record('f', 10, "chart.png") + record('f', 20, "outputs/chart.png"), limits());
        QStringList paths;
        QCOMPARE(names(m.listed(&paths), true), QStringList({"chart.png"}));
        QCOMPARE(paths, QStringList({"outputs/chart.png"}));
        QCOMPARE(m.notes(), QStringList({"chart.png in the working directory was not returned: "
                                         "the output folder has a file of that name"}));
    }

    void whatIsAWorkdirImage_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("image");
        QTest::newRow("png") << QStringLiteral("chart.png") << true;
        QTest::newRow("upper case") << QStringLiteral("PHOTO.JPG") << true;
        for (const char *suffix : {"jpeg", "gif", "webp", "svg", "pdf"})
            QTest::newRow(suffix) << QStringLiteral("x.") + QLatin1String(suffix) << true;
        QTest::newRow("program") << QStringLiteral("main.py") << false;
        QTest::newRow("other file") << QStringLiteral("data.csv") << false;
        QTest::newRow("hidden") << QStringLiteral(".chart.png") << false;
        QTest::newRow("suffix only") << QStringLiteral(".png") << false;
        QTest::newRow("in a subfolder") << QStringLiteral("plots/chart.png") << false;
        QTest::newRow("tiff") << QStringLiteral("scan.tiff") << false;
        QTest::newRow("no dot") << QStringLiteral("png") << false;
        QTest::newRow("empty") << QString() << false;
    }

    void whatIsAWorkdirImage()
    {
        QFETCH(QString, path);
        QFETCH(bool, image);
        QCOMPARE(OutputManifest::isWorkdirImage(path), image);
        const OutputManifest m = OutputManifest::parse(record('f', 1, path.toUtf8()), limits());
        QCOMPARE(m.isEmpty(), !image);
    }

    // The case: a 64 GiB sparse file and 10,000 empty files.
    void sparseAndThousandsOfEmptyFiles()
    {
        QByteArray listing = record('f', 64LL << 30, "outputs/sparse.bin");
        for (int i = 0; i < 10000; ++i)
            listing += record('f', 0, "outputs/e" + QByteArray::number(i).rightJustified(5, '0'));
        const OutputManifest m = OutputManifest::parse(listing, limits());
        const QList<OutputFile> files = m.listed();
        QCOMPARE(files.size(), 1000);
        const QStringList included = names(files, true);
        QCOMPARE(included.size(), 100);
        QCOMPARE(included.first(), QStringLiteral("e00000"));
        QCOMPARE(included.last(), QStringLiteral("e00099"));
        QVERIFY(names(files, false).contains(QStringLiteral("sparse.bin")));
        QVERIFY(!m.wholeFolder(OutputFile::Kind::Output));
        const QString notes = m.notes().join(u'\n');
        QVERIFY2(notes.contains(QStringLiteral("sparse.bin (68719476736 bytes) was not returned: "
                                               "over the limit of 5242880 bytes per file")),
                 qPrintable(notes));
        QVERIFY2(notes.contains(QStringLiteral("9900 files were not returned: over the limit of "
                                               "100 files per run")),
                 qPrintable(notes));
        QVERIFY2(notes.contains(QStringLiteral("9001 more files are not listed")),
                 qPrintable(notes));
        // Nothing of the sparse file is ever asked for.
        for (const OutputManifest::Entry &e : m.files())
            QVERIFY(!(e.selected && e.size > 0));
    }

    void budgetSharedByAllFiles()
    {
        QByteArray listing;
        for (int i = 0; i < 5; ++i)
            listing += record('f', 5LL * 1024 * 1024, "outputs/part" + QByteArray::number(i));
        listing += record('f', 6LL * 1024 * 1024, "outputs/huge");
        listing += record('f', 1, "outputs/tiny");
        const OutputManifest m = OutputManifest::parse(listing, limits());
        QCOMPARE(names(m.listed(), true), QStringList({"part0", "part1", "part2", "part3"}));
        QCOMPARE(names(m.listed(), false), QStringList({"huge", "part4", "tiny"}));
        const QString notes = m.notes().join(u'\n');
        QVERIFY(notes.contains(QStringLiteral("huge (6291456 bytes) was not returned: over the "
                                              "limit of 5242880 bytes per file")));
        QVERIFY(notes.contains(QStringLiteral("part4 (5242880 bytes) was not returned: over the "
                                              "limit of 20971520 bytes for all files of a run")));
    }

    // A file's name is data, never part of the note's template.
    void namesWithPlaceholdersStayAsTheyAre()
    {
        const OutputManifest m =
            OutputManifest::parse(record('f', 6LL * 1024 * 1024, "outputs/%2 %1.bin"), limits());
        QCOMPARE(m.notes(), QStringList{QStringLiteral("%2 %1.bin (6291456 bytes) was not "
                                                       "returned: over the limit of 5242880 bytes "
                                                       "per file")});
    }

    void namedReasonsAreCounted()
    {
        QByteArray listing;
        for (int i = 0; i < 25; ++i)
            listing += record('f', 6LL * 1024 * 1024, "outputs/big" + QByteArray::number(i));
        const OutputManifest m = OutputManifest::parse(listing, limits());
        QCOMPARE(m.notes().size(), 11);
        QCOMPARE(m.notes().last(), QStringLiteral("15 more files were not returned: over the "
                                                  "limit of 5242880 bytes per file"));
    }

    void garbageIsSkipped_data()
    {
        QTest::addColumn<QByteArray>("listing");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("no fields") << QByteArray("x\0", 2);
        QTest::newRow("size not a number") << record('f', 0, "outputs/a").replace("0", "zz");
        QTest::newRow("negative size") << record('f', -5, "outputs/a");
        QTest::newRow("outside the folders") << record('f', 1, "main.py");
        QTest::newRow("image in a workdir subfolder") << record('f', 1, "data/x.png");
        QTest::newRow("image that climbs out") << record('f', 1, "../x.png");
        QTest::newRow("climbs out") << record('f', 1, "outputs/../../etc/passwd");
        QTest::newRow("long type") << QByteArray("ff 1 outputs/a\0", 15);
        QTest::newRow("folder itself") << record('f', 1, "outputs/");
    }

    void garbageIsSkipped()
    {
        QFETCH(QByteArray, listing);
        const OutputManifest m = OutputManifest::parse(listing, limits());
        QVERIFY(m.isEmpty());
        QCOMPARE(m.listed().size(), 0);
    }

    // A listing the program wrote itself (it can): directories by the hundred thousand must not
    // raise what an archive may hold, nor cost much to read.
    void fakeDirectoriesDoNotRaiseTheCap()
    {
        QByteArray listing = record('f', 3, "outputs/a");
        for (int i = 0; i < 300000; ++i)
            listing += record('d', 0, "outputs/d");
        const OutputManifest m = OutputManifest::parse(listing, limits());
        QCOMPARE(names(m.listed(), true), QStringList({"a"}));
        // Too many other entries: the file is fetched on its own, not with the folder.
        QVERIFY(!m.wholeFolder(OutputFile::Kind::Output));
        QVERIFY(m.folderArchiveBytes(OutputFile::Kind::Output) <=
                qint64(OutputManifest::kMaxOtherEntries + 2) * 4096 + 64 * 1024 + 3);
        QVERIFY(m.notes().join(u' ').contains(QStringLiteral("more than 20000 entries")));
        // With a few directories the folder is fetched whole, capped at what it holds.
        QByteArray few = record('f', 3, "outputs/a") + record('d', 0, "outputs/d");
        const OutputManifest small = OutputManifest::parse(few, limits());
        QVERIFY(small.wholeFolder(OutputFile::Kind::Output));
        QVERIFY(small.folderArchiveBytes(OutputFile::Kind::Output) < 100 * 1024);
        QVERIFY(small.hasEntries());
        QVERIFY(!OutputManifest::parse(QByteArray(), limits()).hasEntries());
    }

    // Every archive of a whole folder is capped by the run's budget, whatever the listing says.
    void folderCapFollowsTheBudget()
    {
        QByteArray listing;
        for (int i = 0; i < 100; ++i)
            listing += record('f', 200 * 1024, "outputs/f" + QByteArray::number(i));
        const OutputManifest m = OutputManifest::parse(listing, limits());
        QVERIFY(m.wholeFolder(OutputFile::Kind::Output));
        QVERIFY(m.folderArchiveBytes(OutputFile::Kind::Output) <=
                limits().total + 101 * 4096 + 64 * 1024);
    }

    void fullListingSaysSo()
    {
        QByteArray listing;
        for (int i = 0; i < OutputManifest::kMaxRecords; ++i)
            listing += record('d', 0, "outputs/d" + QByteArray::number(i));
        const OutputManifest m = OutputManifest::parse(listing, limits());
        QVERIFY(m.notes().join(u' ').contains(QStringLiteral("more than 20000 entries")));
    }
};

QTEST_GUILESS_MAIN(tst_OutputManifest)
#include "tst_outputmanifest.moc"
