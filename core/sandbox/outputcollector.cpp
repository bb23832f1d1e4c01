#include "outputcollector.h"

#include "sandboxlayout.h"
#include "sandboxlog.h"
#include "tararchive.h"

#include <QMimeDatabase>
#include <QSet>

namespace {
QString folderOf(OutputFile::Kind kind)
{
    return QString::fromLatin1(kind == OutputFile::Kind::Plot ? SandboxLayout::kPlotsDir
                                                              : SandboxLayout::kOutputDir);
}
} // namespace

OutputCollector::OutputCollector(SandboxContainer *container, const OutputManifest::Limits &limits,
                                 QObject *parent)
    : QObject(parent), m_container(container), m_limits(limits)
{}

void OutputCollector::start(bool plots, bool outputs)
{
    m_plots = plots;
    m_outputs = outputs;
    if (plots && !outputs) {
        // Figures alone (the usual plotting call): their folder in one archive, cut off at the
        // run's budget, stands in for the listing; each archive request costs the engine some
        // 45 ms whatever its size. Only when they are larger together does the listing say
        // which fit.
        ++m_pending;
        get(folderOf(OutputFile::Kind::Plot), OutputManifest::fileArchiveBytes(m_limits.total),
            [this](const SandboxContainer::Archive &a) {
                if (a.tooLarge) {
                    m_pending = 0;
                    fetchListing();
                } else {
                    onUnlisted(a, OutputFile::Kind::Plot);
                }
            });
        return;
    }
    fetchListing();
}

void OutputCollector::fetchListing()
{
    get(QString::fromLatin1(OutputManifest::kPath), OutputManifest::kMaxBytes,
        [this](const SandboxContainer::Archive &a) { onListing(a); });
}

void OutputCollector::get(const QString &path, qint64 maxBytes,
                          const SandboxContainer::Fetched &done)
{
    if (!m_container) {
        // (From the event loop, as an answer would come.)
        QMetaObject::invokeMethod(
            this,
            [done] {
                SandboxContainer::Archive gone;
                gone.error = QStringLiteral("the sandbox is gone");
                done(gone);
            },
            Qt::QueuedConnection);
        return;
    }
    m_container->fetchFiles(path, maxBytes, this, done);
}

void OutputCollector::onListing(const SandboxContainer::Archive &listing)
{
    QList<TarArchive::Entry> entries;
    if (listing.error.isEmpty())
        entries = TarArchive::unpack(listing.tar, OutputManifest::kMaxBytes);
    if (entries.isEmpty() || entries.first().isDirectory) {
        // No listing: an image whose supervisor could not write one (a find without -printf).
        qCDebug(lcSandbox).noquote()
            << "no listing of the output files; fetching them capped:" << listing.error;
        fetchUnlisted();
        return;
    }
    m_manifest = OutputManifest::parse(entries.first().data, m_limits);
    if (!m_manifest.hasEntries()) {
        // The supervisor said there were files but listed none: a find that cannot print the
        // listing, or a workdir so full that the listing could not be written.
        fetchUnlisted();
        return;
    }
    m_notes = m_manifest.notes();
    fetchListed();
}

void OutputCollector::fetchListed()
{
    for (const auto kind : {OutputFile::Kind::Plot, OutputFile::Kind::Output}) {
        QStringList wanted;
        for (const OutputManifest::Entry &e : m_manifest.files())
            if (e.kind == kind && e.selected)
                wanted.append(e.path);
        if (wanted.isEmpty())
            continue;
        // One archive when it holds just what is wanted (the usual case: a few small files);
        // else one per file, so that what is left out is never read. An image file at the top
        // of the workdir always comes on its own: the workdir's archive holds everything else.
        const bool whole = m_manifest.wholeFolder(kind);
        if (whole)
            fetch(folderOf(kind), m_manifest.folderArchiveBytes(kind), QString(), QString());
        for (const OutputManifest::Entry &e : m_manifest.files())
            if (e.kind == kind && e.selected && (e.inWorkdir || !whole))
                fetch(QString::fromLatin1(SandboxLayout::kWorkdir) + u'/' + e.path,
                      OutputManifest::fileArchiveBytes(e.size), e.path.section(u'/', -1), e.path);
    }
    if (m_pending == 0)
        done();
}

void OutputCollector::fetch(const QString &path, qint64 maxBytes, const QString &archivedAs,
                            const QString &listedAs)
{
    ++m_pending;
    get(path, maxBytes, [this, archivedAs, listedAs](const SandboxContainer::Archive &a) {
        onArchive(a, archivedAs, listedAs);
    });
}

void OutputCollector::onArchive(const SandboxContainer::Archive &archive, const QString &archivedAs,
                                const QString &listedAs)
{
    // A folder's archive names its entries as listed ("outputs/a.csv"); one file's archive names
    // it by its base name.
    const bool folder = listedAs.isEmpty();
    QString error = archive.error;
    if (error.isEmpty()) {
        const QList<TarArchive::Entry> entries =
            TarArchive::unpack(archive.tar, m_limits.total, &error, m_limits.perFile);
        for (const TarArchive::Entry &e : entries) {
            if (e.isDirectory || (!folder && e.path != archivedAs))
                continue;
            const QString path = folder ? e.path : listedAs;
            if (e.omitted)
                m_errors.insert(path, QStringLiteral("it grew past the limit of %1 bytes per "
                                                     "file after the program ended")
                                          .arg(m_limits.perFile));
            else
                m_data.insert(path, e.data);
        }
    }
    if (!error.isEmpty()) {
        qCInfo(lcSandbox).noquote() << "output files:" << error;
        if (!folder)
            m_errors.insert(listedAs, error);
        else
            m_notes.append(QStringLiteral("could not fetch the output files: %1").arg(error));
    }
    if (--m_pending == 0)
        done();
}

void OutputCollector::fetchUnlisted()
{
    for (const auto kind : {OutputFile::Kind::Plot, OutputFile::Kind::Output}) {
        if (!(kind == OutputFile::Kind::Plot ? m_plots : m_outputs))
            continue;
        ++m_pending;
        // Cut off at the run's budget: without a listing, a folder whose archive is larger
        // cannot be told apart from a sparse file that only claims its size.
        get(folderOf(kind), OutputManifest::fileArchiveBytes(m_limits.total),
            [this, kind](const SandboxContainer::Archive &a) { onUnlisted(a, kind); });
    }
    if (m_pending == 0)
        done();
}

void OutputCollector::onUnlisted(const SandboxContainer::Archive &archive, OutputFile::Kind kind)
{
    const QString what =
        kind == OutputFile::Kind::Plot ? QStringLiteral("figures") : QStringLiteral("output files");
    QString error = archive.error;
    if (archive.tooLarge)
        error = QStringLiteral("together they are larger than the limit of %1 bytes for all files "
                               "of a run, and the sandbox could not list them")
                    .arg(m_limits.total);
    if (archive.error.isEmpty()) {
        // The archive itself stands in for the listing, so the same limits choose.
        const QList<TarArchive::Entry> entries =
            TarArchive::unpack(archive.tar, m_limits.total, &error, m_limits.perFile);
        for (const TarArchive::Entry &e : entries) {
            if (e.isDirectory)
                continue;
            m_unlistedListing += "f " + QByteArray::number(e.size) + ' ' + e.path.toUtf8() + '\0';
            if (!e.omitted)
                m_data.insert(e.path, e.data);
        }
    }
    if (!error.isEmpty())
        m_notes.append(QStringLiteral("could not fetch the %1: %2").arg(what, error));
    if (--m_pending > 0)
        return;
    const QStringList notes = m_notes;
    m_manifest = OutputManifest::parse(m_unlistedListing, m_limits);
    m_notes = notes + m_manifest.notes();
    done();
}

void OutputCollector::done()
{
    static const QMimeDatabase mimeTypes;
    QStringList paths;
    QList<OutputFile> files = m_manifest.listed(&paths);
    qint64 total = 0;
    int missing = 0;
    QString why;
    for (qsizetype i = 0; i < files.size(); ++i) {
        OutputFile &f = files[i];
        if (f.included) {
            const QString &path = paths.at(i);
            const auto it = m_data.constFind(path);
            // (A file that grew after it was listed still counts against the run's budget.)
            if (it != m_data.cend() && total + it->size() <= m_limits.total) {
                f.data = *it;
                f.size = f.data.size();
                total += f.size;
            } else {
                f.included = false;
                if (missing++ == 0)
                    why = it != m_data.cend()
                              ? QStringLiteral("it grew past the run's limit after the program "
                                               "ended")
                              : m_errors.value(path, QStringLiteral("it was gone or changed when "
                                                                    "it was fetched"));
            }
        }
        f.mimeType = mimeTypes.mimeTypeForFileNameAndData(f.name, f.data).name();
    }
    if (missing > 0)
        m_notes.append(
            QStringLiteral("%1 listed file(s) could not be returned: %2").arg(missing).arg(why));
    Q_EMIT finished(files, m_notes);
}
