// What OutputCollector asks a sandbox for: the archive requests it makes (each costs the engine
// some 45 ms) and what it returns, against a sandbox that serves archives made here.

#include "outputcollector.h"
#include "outputmanifest.h"
#include "sandboxcontainer.h"
#include "sandboxlayout.h"
#include "tararchive.h"

#include <QSignalSpy>
#include <QTest>

namespace {

// Serves fetchFiles() from a tree of files held here, as Docker's archive endpoint does: a folder
// as a tar whose entries are named after the folder, a file by its base name; cut off past the
// asked-for size. Records every path asked for.
class ArchiveContainer : public SandboxContainer
{
public:
    explicit ArchiveContainer(QObject *parent)
        : SandboxContainer(QStringLiteral("archive"), QStringLiteral("image"), parent)
    {
        m_state = State::Ready;
    }

    QMap<QString, QByteArray> files; // "/sandbox/.plots/figure-0001.png" → content
    QStringList asked;

    void prepare() override {}
    void write(const QByteArray &) override {}
    void putFiles(const QString &, const QByteArray &, QObject *, const Done &done) override
    {
        done({});
    }
    void fetchFiles(const QString &path, qint64 maxBytes, QObject *, const Fetched &done) override
    {
        asked.append(path);
        const QString base = path.section(u'/', 0, -2);
        QList<TarArchive::Entry> entries;
        for (auto it = files.cbegin(); it != files.cend(); ++it)
            if (it.key() == path || it.key().startsWith(path + u'/'))
                entries.append({it.key().mid(base.size() + 1), it.value(), 0644, false});
        Archive a;
        if (entries.isEmpty()) {
            a.error = QStringLiteral("no such file");
        } else {
            a.tar = TarArchive::pack(entries);
            if (a.tar.size() > maxBytes) {
                a.tar.truncate(maxBytes);
                a.tooLarge = true;
                a.error = QStringLiteral("larger than %1 bytes").arg(maxBytes);
            }
        }
        done(a);
    }
    void exitStatus(QObject *, const Exited &done) override { done(0, {}); }
    void interrupt() override {}

protected:
    void closeStream() override {}
    void sendRemove() override { confirmRemoved(); }
};

const QString kPlots = QString::fromLatin1(SandboxLayout::kPlotsDir);
const QString kListing = QString::fromLatin1(OutputManifest::kPath);

QByteArray listingOf(const QMap<QString, QByteArray> &files)
{
    QByteArray listing;
    for (auto it = files.cbegin(); it != files.cend(); ++it)
        listing += "f " + QByteArray::number(it.value().size()) + ' ' +
                   it.key().mid(int(qstrlen(SandboxLayout::kWorkdir)) + 1).toUtf8() + '\0';
    return listing;
}

QList<OutputFile> collect(ArchiveContainer &c, const OutputManifest::Limits &limits, bool plots,
                          bool outputs, QStringList *notes = nullptr)
{
    OutputCollector collector(&c, limits);
    QSignalSpy spy(&collector, &OutputCollector::finished);
    collector.start(plots, outputs);
    if (spy.isEmpty() && !spy.wait(5000))
        return {};
    if (notes)
        *notes = spy.first().at(1).toStringList();
    return spy.first().first().value<QList<OutputFile>>();
}

} // namespace

class tst_OutputCollector : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void figuresAloneComeInOneRequest();
    void figuresLargerThanTheBudgetTogetherGoByTheListing();
    void outputFilesGoByTheListing();
};

void tst_OutputCollector::figuresAloneComeInOneRequest()
{
    ArchiveContainer c(this);
    c.files.insert(kPlots + QStringLiteral("/figure-0001.png"), QByteArray(2000, 'a'));
    c.files.insert(kPlots + QStringLiteral("/figure-0002.png"), QByteArray(3000, 'b'));
    c.files.insert(kListing, listingOf({{kPlots + QStringLiteral("/figure-0001.png"), {}}}));
    OutputManifest::Limits limits;
    const QList<OutputFile> files = collect(c, limits, true, false);
    QCOMPARE(c.asked, QStringList{kPlots});
    QCOMPARE(files.size(), 2);
    QCOMPARE(files.at(0).name, QStringLiteral("figure-0001.png"));
    QCOMPARE(files.at(0).kind, OutputFile::Kind::Plot);
    QCOMPARE(files.at(0).data, QByteArray(2000, 'a'));
    QCOMPARE(files.at(1).data, QByteArray(3000, 'b'));
    QVERIFY(files.at(1).included);
}

void tst_OutputCollector::figuresLargerThanTheBudgetTogetherGoByTheListing()
{
    ArchiveContainer c(this);
    QMap<QString, QByteArray> figures;
    for (int i = 1; i <= 3; ++i)
        figures.insert(kPlots + QStringLiteral("/figure-000%1.png").arg(i),
                       QByteArray(100000, 'x'));
    c.files = figures;
    c.files.insert(kListing, listingOf(figures));
    OutputManifest::Limits limits;
    // One fits; the three together are larger than the archive asked for.
    limits.total = 150000;
    QStringList notes;
    const QList<OutputFile> files = collect(c, limits, true, false, &notes);
    // The folder was too large; the listing chose, and what fits came.
    QCOMPARE(c.asked.value(0), kPlots);
    QCOMPARE(c.asked.value(1), kListing);
    QCOMPARE(files.size(), 3);
    QVERIFY(files.at(0).included && files.at(0).data == QByteArray(100000, 'x'));
    QVERIFY(!files.at(1).included);
    QVERIFY(!files.at(2).included);
    QCOMPARE(c.asked.size(), 3); // the one that fits, on its own
}

void tst_OutputCollector::outputFilesGoByTheListing()
{
    ArchiveContainer c(this);
    const QString csv = QString::fromLatin1(SandboxLayout::kOutputDir) + QStringLiteral("/a.csv");
    c.files.insert(csv, "x,y\n");
    c.files.insert(kPlots + QStringLiteral("/figure-0001.png"), QByteArray(100, 'p'));
    c.files.insert(
        kListing, listingOf({{csv, "x,y\n"},
                             {kPlots + QStringLiteral("/figure-0001.png"), QByteArray(100, 'p')}}));
    OutputManifest::Limits limits;
    const QList<OutputFile> files = collect(c, limits, true, true);
    QCOMPARE(c.asked.value(0), kListing);
    QCOMPARE(files.size(), 2);
}

QTEST_GUILESS_MAIN(tst_OutputCollector)
#include "tst_outputcollector.moc"
