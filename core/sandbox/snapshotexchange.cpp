#include "snapshotexchange.h"

#include "sandboxcontainer.h"
#include "sandboxlayout.h"
#include "sandboxlog.h"
#include "tararchive.h"

#include <QJsonDocument>
#include <QRandomGenerator>

namespace {
// The handover folder: in the workdir, whose volume the engine's archive endpoint reaches (a
// tmpfs such as /tmp it does not); the loaders leave it out of what a restore clears and
// extracts, and remove it when the next call starts.
const QString kFolder = QStringLiteral("/sandbox/.cs-snapshot");
const QString kInArchive = QStringLiteral("sandbox/.cs-snapshot");
const QString kWorkspaces =
    QStringLiteral("sandbox/") + QLatin1String(SandboxLayout::kWorkspaceDirName);
// record.json is a few names and reasons; the loaders cut each reason short.
constexpr qint64 kRecordBytes = 1024 * 1024;

QByteArray makeNonce()
{
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    return QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex();
}
} // namespace

SnapshotExchange::SnapshotExchange(SandboxContainer *container, QObject *context)
    : QObject(container), m_container(container), m_context(context), m_nonce(makeNonce()),
      m_out(m_nonce), m_err(m_nonce)
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (m_answered)
            std::exchange(m_answered, nullptr)(-1, QStringLiteral("the sandbox did not answer in "
                                                                  "%1 s")
                                                       .arg(kAnswerTimeoutMs / 1000));
    });
    connect(container, &SandboxContainer::output, this, &SnapshotExchange::onOutput);
    connect(container, &SandboxContainer::removed, this, [this] {
        if (m_answered)
            std::exchange(m_answered, nullptr)(-1, QStringLiteral("the sandbox went away"));
    });
}

void SnapshotExchange::ask(const QByteArray &op, const QByteArray &body,
                           const std::function<void(int, const QString &)> &answered)
{
    m_answered = answered;
    m_timer.start(kAnswerTimeoutMs);
    m_container->write(m_nonce + ' ' + QByteArray::number(body.size()) + ' ' + op + '\n' + body);
}

void SnapshotExchange::onOutput(int stream, const QByteArray &bytes)
{
    ExitMarkerScanner &scanner = stream == 2 ? m_err : m_out;
    if (scanner.found())
        return;
    // Between calls the program prints nothing, unless a thread it left behind does: that is
    // not a call's output, and is dropped.
    const QByteArray stray = scanner.feed(bytes);
    if (!stray.isEmpty())
        qCDebug(lcSandbox) << "output between calls dropped:" << stray.size() << "bytes";
    // Both lines, so that nothing of this answer is left on a stream for the next call to read.
    if (m_out.found() && m_err.found() && m_answered) {
        m_timer.stop();
        std::exchange(m_answered, nullptr)(m_out.status(), QString());
    }
}

void SnapshotExchange::finishWith(const std::function<void()> &call)
{
    if (m_context)
        call();
    deleteLater();
}

void SnapshotExchange::fetchRecord(
    const std::function<void(const QJsonObject &, const QString &error)> &done)
{
    m_container->fetchFiles(kFolder + QStringLiteral("/record.json"), kRecordBytes, this,
                            [done](const SandboxContainer::Archive &a) {
                                if (!a.error.isEmpty()) {
                                    done({}, a.error);
                                    return;
                                }
                                QString error;
                                QJsonObject record;
                                for (const TarArchive::Entry &e :
                                     TarArchive::unpack(a.tar, a.tar.size(), &error))
                                    if (e.path == u"record.json")
                                        record = QJsonDocument::fromJson(e.data).object();
                                done(record, error);
                            });
}

QString SnapshotExchange::split(const QByteArray &tar, QJsonObject *record, QByteArray *state,
                                QByteArray *files)
{
    QList<TarArchive::Entry> kept;
    bool recorded = false;
    QString error;
    const bool read = TarArchive::read(
        tar,
        [&](TarArchive::Entry &entry, const TarArchive::ReadData &readData) {
            const bool handover =
                entry.path == kInArchive || entry.path.startsWith(kInArchive + u'/');
            // The session's workspaces are not its state: the folder is what they are (a
            // copy-on-write one starts again from it, see docs/sessions.md).
            const bool workspace =
                entry.path == kWorkspaces || entry.path.startsWith(kWorkspaces + u'/');
            if (workspace)
                return true;
            if (!handover) {
                if (!readData([&entry](QByteArrayView piece) { entry.data += piece; }))
                    return false;
                kept.append(entry);
            } else if (entry.path == kInArchive + QStringLiteral("/record.json")) {
                QByteArray data;
                if (!readData([&data](QByteArrayView piece) { data += piece; }))
                    return false;
                *record = QJsonDocument::fromJson(data.left(kRecordBytes)).object();
                recorded = true;
            } else if (entry.path == kInArchive + QStringLiteral("/state")) {
                if (!readData([state](QByteArrayView piece) { *state += piece; }))
                    return false;
            }
            return true;
        },
        &error);
    if (!read)
        return QStringLiteral("the session's files could not be read: ") + error;
    if (!recorded)
        return QStringLiteral("the sandbox left no record of it");
    *files = TarArchive::pack(kept, &error);
    return error;
}

void SnapshotExchange::take(SandboxContainer *container, qint64 maxBytes, QObject *context,
                            const TakenFn &done)
{
    auto *x = new SnapshotExchange(container, context);
    const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("max_bytes"), maxBytes}})
                                .toJson(QJsonDocument::Compact);
    x->ask("snapshot", body, [x, maxBytes, done](int rc, const QString &why) {
        if (rc < 0 || !x->m_container) {
            x->finishWith([done, why] { done(Taken{why, {}, {}, {}}); });
            return;
        }
        // One archive of the workdir: the files, and the handover the loader left in it.
        x->m_container->fetchFiles(
            QStringLiteral("/sandbox"), maxBytes + kRecordBytes, x,
            [x, rc, done](const SandboxContainer::Archive &a) {
                Taken taken;
                if (!a.error.isEmpty())
                    taken.error = a.tooLarge ? QStringLiteral("the session's files and state are "
                                                              "larger than the cap for a snapshot")
                                             : a.error;
                else
                    taken.error = split(a.tar, &taken.record, &taken.state, &taken.files);
                const QString refused = taken.record.value(u"error").toString();
                if (!refused.isEmpty())
                    taken.error = refused;
                else if (taken.error.isEmpty() && rc != 0)
                    taken.error = QStringLiteral("it ended with status %1").arg(rc);
                if (!taken.error.isEmpty()) {
                    taken.state.clear();
                    taken.files.clear();
                }
                x->finishWith([done, taken] { done(taken); });
            });
    });
}

void SnapshotExchange::restore(SandboxContainer *container, const QByteArray &state,
                               const QByteArray &files, QObject *context, const RestoredFn &done)
{
    auto *x = new SnapshotExchange(container, context);
    QList<TarArchive::Entry> entries;
    TarArchive::Entry folder;
    folder.path = QStringLiteral(".cs-snapshot");
    folder.isDirectory = true;
    folder.mode = 0700;
    entries.append(folder);
    for (const auto &[name, data] : {std::pair{QStringLiteral("state"), state},
                                     std::pair{QStringLiteral("files.tar"), files}}) {
        TarArchive::Entry e;
        e.path = QStringLiteral(".cs-snapshot/") + name;
        e.data = data;
        e.mode = 0600;
        entries.append(e);
    }
    QString error;
    const QByteArray tar = TarArchive::pack(entries, &error);
    if (!error.isEmpty()) {
        x->finishWith([done, error] { done({}, error); });
        return;
    }
    container->putFiles(QStringLiteral("/sandbox"), tar, x, [x, done](const QString &putError) {
        if (!putError.isEmpty() || !x->m_container) {
            const QString why =
                putError.isEmpty() ? QStringLiteral("the sandbox went away") : putError;
            x->finishWith([done, why] { done({}, why); });
            return;
        }
        x->ask("restore", QByteArray(), [x, done](int rc, const QString &why) {
            if (rc < 0 || !x->m_container) {
                x->finishWith([done, why] { done({}, why); });
                return;
            }
            x->fetchRecord([x, rc, done](const QJsonObject &record, const QString &error) {
                QString why = record.value(u"error").toString();
                if (why.isEmpty() && rc != 0)
                    why =
                        error.isEmpty() ? QStringLiteral("it ended with status %1").arg(rc) : error;
                x->finishWith([done, record, why] { done(record, why); });
            });
        });
    });
}
