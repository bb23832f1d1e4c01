#pragma once

#include "exitmarkerscanner.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <functional>

class SandboxContainer;

// One snapshot or restore with a session's sandbox, between its calls. The loader (or cs-run)
// serves it on the stream calls come on: the header "<nonce> <size> snapshot" with {"max_bytes"},
// or "<nonce> 0 restore", answered by "<nonce> <rc>" on both output streams. A snapshot leaves
// state and record.json in /sandbox/.cs-snapshot, fetched with the rest of /sandbox in one archive
// through the backend's archive API (the same on every backend: Docker's endpoint, a pod's exec);
// a restore puts state and files.tar there first. Nothing the sandbox wrote is interpreted here
// but record.json, read as JSON.
class SnapshotExchange : public QObject
{
    Q_OBJECT
public:
    struct Taken
    {
        QString error;      // empty when taken
        QJsonObject record; // the loader's: kind, kept, not_kept (or error)
        QByteArray state;
        QByteArray files; // the tar of /sandbox
    };
    using TakenFn = std::function<void(const Taken &taken)>;
    // `restored`: the loader's record (restored, not_restored) and the error, empty when it
    // went in.
    using RestoredFn = std::function<void(const QJsonObject &record, const QString &error)>;

    // Takes a snapshot of at most `maxBytes` (state and files together).
    static void take(SandboxContainer *container, qint64 maxBytes, QObject *context,
                     const TakenFn &done);
    static void restore(SandboxContainer *container, const QByteArray &state,
                        const QByteArray &files, QObject *context, const RestoredFn &done);

private:
    SnapshotExchange(SandboxContainer *container, QObject *context);
    // Sends the header and body; `answered` gets the rc once both streams said it (-1: the
    // sandbox went away or did not answer in time, with why).
    void ask(const QByteArray &op, const QByteArray &body,
             const std::function<void(int rc, const QString &why)> &answered);
    void onOutput(int stream, const QByteArray &bytes);
    // Fetches the handover's record.json.
    void fetchRecord(const std::function<void(const QJsonObject &, const QString &error)> &done);
    // The workdir's archive taken apart: the loader's record and state from the handover folder,
    // and the files without it (packed again).
    static QString split(const QByteArray &tar, QJsonObject *record, QByteArray *state,
                         QByteArray *files);
    void finishWith(const std::function<void()> &call);

    // A snapshot of a large DataFrame takes seconds; past this the session is in trouble.
    static constexpr int kAnswerTimeoutMs = 120000;

    QPointer<SandboxContainer> m_container;
    QPointer<QObject> m_context;
    QByteArray m_nonce;
    ExitMarkerScanner m_out;
    ExitMarkerScanner m_err;
    QTimer m_timer;
    std::function<void(int rc, const QString &why)> m_answered;
};
