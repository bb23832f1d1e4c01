#pragma once

#include "executionresult.h"
#include "outputmanifest.h"
#include "sandboxcontainer.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>

// Fetches what a finished program left for the caller — figures, output files, image files at
// the top of its workdir — from its still running container, within the run's limits, holding no
// more than those limits in memory whatever the program wrote: the supervisor's listing says what
// exists, only what fits is asked for, and every archive is cut off at the size the listing
// promised (see OutputManifest). Figures alone come in one archive, cut off at the run's budget,
// without the listing, unless they are larger than that together.
class OutputCollector : public QObject
{
    Q_OBJECT
public:
    OutputCollector(SandboxContainer *container, const OutputManifest::Limits &limits,
                    QObject *parent = nullptr);

    // `plots`, `outputs`: the folders the supervisor said hold something.
    void start(bool plots, bool outputs);

Q_SIGNALS:
    void finished(const QList<OutputFile> &files, const QStringList &notes);

private:
    void get(const QString &path, qint64 maxBytes, const SandboxContainer::Fetched &done);
    void fetchListing();
    void onListing(const SandboxContainer::Archive &listing);
    void fetchListed();
    void fetch(const QString &path, qint64 maxBytes, const QString &archivedAs,
               const QString &listedAs);
    void onArchive(const SandboxContainer::Archive &archive, const QString &archivedAs,
                   const QString &listedAs);
    void fetchUnlisted();
    void onUnlisted(const SandboxContainer::Archive &archive, OutputFile::Kind kind);
    void done();

    QPointer<SandboxContainer> m_container;
    OutputManifest::Limits m_limits;
    OutputManifest m_manifest;
    bool m_plots = false;
    bool m_outputs = false;
    int m_pending = 0;
    // Listed path ("outputs/a.csv") → content, or why it could not be had.
    QHash<QString, QByteArray> m_data;
    QHash<QString, QString> m_errors;
    QStringList m_notes;
    // Without a listing (an image whose find cannot list): one made from the archives.
    QByteArray m_unlistedListing;
};
