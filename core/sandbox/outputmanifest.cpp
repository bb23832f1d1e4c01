#include "outputmanifest.h"

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

int folderIndex(OutputFile::Kind kind)
{
    return kind == OutputFile::Kind::Plot ? 0 : 1;
}
} // namespace

OutputManifest OutputManifest::parse(const QByteArray &listing, const Limits &limits)
{
    OutputManifest m;
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
        else
            continue;
        if (record.at(0) != 'f') {
            ++m.m_otherEntries[folderIndex(e.kind)];
            continue;
        }
        e.path = path;
        e.name = path.section(u'/', 1);
        e.size = size;
        m.m_files.append(e);
    }
    std::sort(m.m_files.begin(), m.m_files.end(), [](const Entry &a, const Entry &b) {
        if (a.kind != b.kind)
            return a.kind == OutputFile::Kind::Plot;
        return a.path < b.path;
    });

    QStringList perFile, overTotal;
    int perFileMore = 0, overTotalMore = 0, overCount = 0, selected = 0;
    qint64 total = 0;
    // Left out by the count alone, rather than by size.
    QList<bool> byCount(m.m_files.size(), false);
    for (qsizetype i = 0; i < m.m_files.size(); ++i) {
        Entry &e = m.m_files[i];
        if (e.size > limits.perFile) {
            if (perFile.size() < kNamedPerReason)
                perFile.append(QStringLiteral("%1 (%2 bytes) was not returned: over the limit of "
                                              "%3 bytes per file")
                                   .arg(e.name)
                                   .arg(e.size)
                                   .arg(limits.perFile));
            else
                ++perFileMore;
        } else if (total + e.size > limits.total) {
            if (overTotal.size() < kNamedPerReason)
                overTotal.append(QStringLiteral("%1 (%2 bytes) was not returned: over the limit "
                                                "of %3 bytes for all files of a run")
                                     .arg(e.name)
                                     .arg(e.size)
                                     .arg(limits.total));
            else
                ++overTotalMore;
        } else if (selected >= limits.maxFiles) {
            byCount[i] = true;
            ++overCount;
        } else {
            e.selected = true;
            total += e.size;
            ++selected;
        }
    }
    m.m_notes = perFile;
    if (perFileMore > 0)
        m.m_notes.append(QStringLiteral("%1 more files were not returned: over the limit of %2 "
                                        "bytes per file")
                             .arg(perFileMore)
                             .arg(limits.perFile));
    m.m_notes += overTotal;
    if (overTotalMore > 0)
        m.m_notes.append(QStringLiteral("%1 more files were not returned: over the limit of %2 "
                                        "bytes for all files of a run")
                             .arg(overTotalMore)
                             .arg(limits.total));
    if (overCount > 0)
        m.m_notes.append(QStringLiteral("%1 files were not returned: over the limit of %2 files "
                                        "per run")
                             .arg(overCount)
                             .arg(limits.maxFiles));

    // Every returned file is named; then those left out for their size (what a caller most
    // needs to hear of), then those over the count, up to the listing's limit, in result order.
    int room = qMax(0, limits.maxListed - selected);
    for (const bool countOnly : {false, true}) {
        for (int i = 0; i < m.m_files.size() && room > 0; ++i) {
            if (!m.m_files.at(i).selected && byCount.at(i) == countOnly) {
                m.m_listed.append(i);
                --room;
            }
        }
    }
    for (int i = 0; i < m.m_files.size(); ++i)
        if (m.m_files.at(i).selected)
            m.m_listed.append(i);
    std::sort(m.m_listed.begin(), m.m_listed.end());
    const int unlisted = int(m.m_files.size() - m.m_listed.size());
    if (unlisted > 0)
        m.m_notes.append(QStringLiteral("%1 more files are not listed (a run lists at most %2)")
                             .arg(unlisted)
                             .arg(limits.maxListed));
    if (records >= kMaxRecords)
        m.m_notes.append(QStringLiteral("the output folders hold more than %1 entries; only the "
                                        "first %1 were looked at")
                             .arg(kMaxRecords));
    return m;
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
        if (e.kind != kind)
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
        if (e.kind == kind && e.selected)
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

QList<OutputFile> OutputManifest::listed() const
{
    QList<OutputFile> files;
    for (int i : m_listed) {
        const Entry &e = m_files.at(i);
        OutputFile f;
        f.kind = e.kind;
        f.name = e.name;
        f.size = e.size;
        f.included = e.selected;
        files.append(f);
    }
    return files;
}
