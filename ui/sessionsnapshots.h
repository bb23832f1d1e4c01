#pragma once

#include "sessionsnapshot.h"

#include <QList>
#include <QObject>
#include <QPointer>
#include <QSet>

class MonitorServer;
class RunListModel;
class SandboxSession;
class SessionManager;

// The window's part for sessions' snapshots (one is taken after every call of a session): the
// steps of this process's sessions as they are kept, and what a person does with them: Rewind
// here, Fork from here, Export, Delete, Import. Only this process's sessions are reachable: a
// headless instance's runs come through the monitor socket and its snapshots stay in that
// process, so for those runs (and for runs of instances that are gone) unavailable() says why
// not. Actions that take a while say progress(), then finished() or failed().
class SessionSnapshots : public QObject
{
    Q_OBJECT
public:
    // `model` is read (not owned); `monitor` may be null.
    SessionSnapshots(const QString &instanceId, RunListModel *model, MonitorServer *monitor,
                     QObject *parent = nullptr);

    // This process's sessions (null: none, and nothing is available).
    void setSessions(SessionManager *sessions);
    SessionManager *sessions() const;

    // A session's snapshots as they are kept now, oldest first.
    QList<SessionSnapshot> of(const QString &sessionId) const;
    // The snapshot kept after a run (a call of a session), or null.
    const SessionSnapshot *afterRun(const QString &runId) const;
    // The snapshot a live session of this process is at (its last, or the one it was rewound
    // to); "" when it has none or is not live.
    QString currentOf(const QString &sessionId) const;

    // Why the snapshot after `runId` cannot be exported or deleted from here; "" when it can.
    QString unavailable(const QString &runId) const;
    // The same for Rewind here, which needs the session live and idle.
    QString cannotRewind(const QString &runId) const;
    // The same for Fork from here, which needs the session's assistant still connected (the
    // fork is theirs).
    QString cannotFork(const QString &runId) const;

    // Start one; false (failed() said why) when it cannot.
    bool rewind(const QString &runId);
    bool fork(const QString &runId);
    // The error, or empty.
    QString exportTo(const QString &runId, const QString &path) const;
    QString remove(const QString &runId);
    // A .csnap file kept as `*id`, which any assistant may start a session from. The error, or
    // empty.
    QString importFrom(const QString &path, QString *id);

Q_SIGNALS:
    // A session's snapshots changed (one taken, one deleted): of() has them.
    // "": any session's (the caps dropped some).
    void snapshotsChanged(const QString &sessionId);
    // The step a session is at moved (a snapshot taken, a rewind), or it ended ("").
    void currentChanged(const QString &sessionId, const QString &snapshotId);
    // A fork made here is live: session `sessionId`, from the snapshot `origin`.
    void forked(const QString &sessionId, const QString &language, const QString &origin);
    void progress(const QString &message);
    void finished(const QString &message);
    void failed(const QString &error);

private:
    // The session of a run, and its owner ("" when the run is not of a session).
    QString sessionOfRun(const QString &runId) const;
    // What the loader could not bring back, for a message ("" when everything came).
    static QString notRestored(const QJsonObject &record);

    QString m_instanceId;
    RunListModel *m_model;
    QPointer<MonitorServer> m_monitor;
    QPointer<SessionManager> m_sessions;
    QSet<QString> m_rewinding; // sessions with a rewind of this window's under way
};
