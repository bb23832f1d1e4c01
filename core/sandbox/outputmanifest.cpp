#include "outputmanifest.h"

#include <QSet>
#include <algorithm>

namespace {
// A tar entry costs a 512-byte header, a PAX header (another 1 KiB and more for a long name)
// and padding to 512 bytes; the archive ends with two zero blocks, padded to 10 KiB.
constexpr qint64 kHeaderBytes = 4096;
constexpr qint64 kArchiveSlack = 64 * 1024;
// Reasons are named one by one up to this many files; the rest are counted.
constexpr int kNamedPerReason = 10;

const QString kPlotsPrefix = QStringLiteral(".plots/");
const QString kOutputsPrefix = QStringLiteral("outputs/");
// As the supervisors (cs-run's workdir_images, the loaders) list them: the formats a client
// shows as images, and the vector formats figures are saved in.
const QStringList kImageSuffixes = {QStringLiteral(".png"),  QStringLiteral(".jpg"),
                                    QStringLiteral(".jpeg"), QStringLiteral(".gif"),
                                    QStringLiteral(".webp"), QStringLiteral(".svg"),
                                    QStringLiteral(".pdf")};

int folderIndex(OutputFile::Kind kind)
{
    return kind == OutputFile::Kind::Plot ? 0 : 1;
}
} // namespace

bool OutputManifest::isWorkdirImage(const QString &path)
{
    if (path.isEmpty() || path.startsWith(u'.') || path.contains(u'/'))
        return false;
    for (const QString &suffix : kImageSuffixes)
        if (path.size() > suffix.size() && path.endsWith(suffix, Qt::CaseInsensitive))
            return true;
    return false;
}

OutputManifest OutputManifest::parse(const QByteArray &listing, const Limits &limits)
{
    OutputManifest m;
    const int records = m.read(listing);
    const QStringList shadowed = m.dropShadowedImages();
    std::sort(m.m_files.begin(), m.m_files.end(), [](const Entry &a, const Entry &b) {
        if (a.kind != b.kind)
            return a.kind == OutputFile::Kind::Plot;
        return a.name < b.name;
    });

    const QList<bool> byCount = m.choose(limits);
    m.chooseListed(limits, byCount);
    m.m_notes += shadowed;
    if (records >= kMaxRecords)
        m.m_notes.append(QStringLiteral("the output folders hold more than %1 entries; only the "
                                        "first %1 were looked at")
                             .arg(kMaxRecords));
    return m;
}

int OutputManifest::read(const QByteArray &listing)
{
    int records = 0;
    // Walked in place, not split: a listing of 4 MiB of empty records must not cost a hundred
    // times that; and no further than a supervisor writes.
    for (qsizetype at = 0; at < listing.size() && records < kMaxRecords;) {
        qsizetype end = listing.indexOf('\0', at);
        if (end < 0)
            end = listing.size();
        const QByteArrayView record(listing.constData() + at, end - at);
        at = end + 1;
        if (record.isEmpty())
            continue;
        ++records;
        // "<type> <size> <path>": the path may hold spaces, so only the first two split.
        const qsizetype s1 = record.indexOf(' ');
        const qsizetype s2 = s1 < 0 ? -1 : record.indexOf(' ', s1 + 1);
        if (s1 != 1 || s2 < 0)
            continue;
        bool ok = false;
        const qint64 size = record.sliced(s1 + 1, s2 - s1 - 1).toLongLong(&ok);
        const QString path = QString::fromUtf8(record.sliced(s2 + 1));
        if (!ok || size < 0 || path.contains(QLatin1String("/../")) || path.endsWith(u'/'))
            continue;
        Entry e;
        if (path.startsWith(kPlotsPrefix))
            e.kind = OutputFile::Kind::Plot;
        else if (path.startsWith(kOutputsPrefix))
            e.kind = OutputFile::Kind::Output;
        else if (isWorkdirImage(path))
            e.inWorkdir = true;
        else
            continue;
        if (record.at(0) != 'f') {
            // (The supervisors list only files of the workdir itself.)
            if (!e.inWorkdir)
                ++m_otherEntries[folderIndex(e.kind)];
            continue;
        }
        e.path = path;
        e.name = e.inWorkdir ? path : path.section(u'/', 1);
        e.size = size;
        m_files.append(e);
    }
    return records;
}

QStringList OutputManifest::dropShadowedImages()
{
    QSet<QString> outputs;
    for (const Entry &e : std::as_const(m_files))
        if (e.kind == OutputFile::Kind::Output && !e.inWorkdir)
            outputs.insert(e.name);
    QStringList notes;
    int unnamed = 0;
    m_files.removeIf([&](const Entry &e) {
        if (!e.inWorkdir || !outputs.contains(e.name))
            return false;
        if (notes.size() < kNamedPerReason)
            notes.append(QStringLiteral("%1 in the working directory was not returned: the "
                                        "output folder has a file of that name")
                             .arg(e.name));
        else
            ++unnamed;
        return true;
    });
    if (unnamed > 0)
        notes.append(QStringLiteral("%1 more files in the working directory were not returned: "
                                    "the output folder has files of their names")
                         .arg(unnamed));
    return notes;
}

// One reason a file is left out: the first few files are named in a note each, the rest counted.
class OutputManifest::Reason
{
public:
    Reason(QString one, QString more) : m_one(std::move(one)), m_more(std::move(more)) {}
    // Files over a byte limit: "over the limit of N bytes per file".
    static Reason over(qint64 limit, const char *scope)
    {
        const QString why =
            QStringLiteral("over the limit of %1 bytes %2").arg(limit).arg(QLatin1String(scope));
        return Reason(QStringLiteral("%1 (%2 bytes) was not returned: ") + why,
                      QStringLiteral("%1 more files were not returned: ") + why);
    }
    void add(const Entry &e)
    {
        if (m_named.size() < kNamedPerReason)
            // (In one pass: a name holding "%2" must stay as it is.)
            m_named.append(m_one.arg(e.name, QString::number(e.size)));
        else
            ++m_others;
    }
    QStringList notes() const
    {
        return m_others > 0 ? m_named + QStringList{m_more.arg(m_others)} : m_named;
    }

private:
    QString m_one, m_more;
    QStringList m_named;
    int m_others = 0;
};

QList<bool> OutputManifest::choose(const Limits &limits)
{
    Reason perFile = Reason::over(limits.perFile, "per file");
    Reason overTotal = Reason::over(limits.total, "for all files of a run");
    int overCount = 0;
    qint64 total = 0;
    m_selected = 0;
    // Left out by the count alone, rather than by size.
    QList<bool> byCount(m_files.size(), false);
    for (qsizetype i = 0; i < m_files.size(); ++i) {
        Entry &e = m_files[i];
        if (e.size > limits.perFile) {
            perFile.add(e);
        } else if (total + e.size > limits.total) {
            overTotal.add(e);
        } else if (m_selected >= limits.maxFiles) {
            byCount[i] = true;
            ++overCount;
        } else {
            e.selected = true;
            total += e.size;
            ++m_selected;
        }
    }
    m_notes = perFile.notes() + overTotal.notes();
    if (overCount > 0)
        m_notes.append(QStringLiteral("%1 files were not returned: over the limit of %2 files "
                                      "per run")
                           .arg(overCount)
                           .arg(limits.maxFiles));
    return byCount;
}

void OutputManifest::chooseListed(const Limits &limits, const QList<bool> &byCount)
{
    // Every returned file is named; then those left out for their size (what a caller most
    // needs to hear of), then those over the count, up to the listing's limit, in result order.
    int room = qMax(0, limits.maxListed - m_selected);
    for (const bool countOnly : {false, true}) {
        for (int i = 0; i < m_files.size() && room > 0; ++i) {
            if (!m_files.at(i).selected && byCount.at(i) == countOnly) {
                m_listed.append(i);
                --room;
            }
        }
    }
    for (int i = 0; i < m_files.size(); ++i)
        if (m_files.at(i).selected)
            m_listed.append(i);
    std::sort(m_listed.begin(), m_listed.end());
    const int unlisted = int(m_files.size() - m_listed.size());
    if (unlisted > 0)
        m_notes.append(QStringLiteral("%1 more files are not listed (a run lists at most %2)")
                           .arg(unlisted)
                           .arg(limits.maxListed));
}

bool OutputManifest::wholeFolder(OutputFile::Kind kind) const
{
    // A folder of many directories or links costs a header each in its archive: past a few, the
    // files are fetched one by one, so that the listing (which the program can write) cannot
    // raise what an archive may hold.
    if (m_otherEntries[folderIndex(kind)] > kMaxOtherEntries)
        return false;
    bool any = false;
    for (const Entry &e : m_files) {
        if (e.kind != kind || e.inWorkdir)
            continue;
        if (!e.selected)
            return false;
        any = true;
    }
    return any;
}

qint64 OutputManifest::folderArchiveBytes(OutputFile::Kind kind) const
{
    qint64 bytes = kArchiveSlack +
                   kHeaderBytes * (1 + qMin(m_otherEntries[folderIndex(kind)], kMaxOtherEntries));
    for (const Entry &e : m_files)
        if (e.kind == kind && e.selected && !e.inWorkdir)
            bytes += e.size + kHeaderBytes;
    return bytes;
}

bool OutputManifest::hasEntries() const
{
    return !m_files.isEmpty() || m_otherEntries[0] > 0 || m_otherEntries[1] > 0;
}

qint64 OutputManifest::fileArchiveBytes(qint64 size)
{
    return size + kHeaderBytes + kArchiveSlack;
}

QList<OutputFile> OutputManifest::listed(QStringList *paths) const
{
    QList<OutputFile> files;
    for (int i : m_listed) {
        const Entry &e = m_files.at(i);
        if (paths)
            paths->append(e.path);
        OutputFile f;
        f.kind = e.kind;
        f.name = e.name;
        f.size = e.size;
        f.included = e.selected;
        files.append(f);
    }
    return files;
}
