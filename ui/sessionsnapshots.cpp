#include "sessionsnapshots.h"

#include "monitorserver.h"
#include "runlistmodel.h"
#include "sandboxsession.h"
#include "sessionmanager.h"
#include "uilog.h"

#include <QJsonArray>
#include <QJsonObject>

namespace {
// What SessionManager says when a session ended because its MCP client went: a fork would be
// owned by a client that is gone, and no one could use it.
const QString kClientGone = QStringLiteral("its client disconnected");
} // namespace

SessionSnapshots::SessionSnapshots(const QString &instanceId, RunListModel *model,
                                   MonitorServer *monitor, QObject *parent)
    : QObject(parent), m_instanceId(instanceId), m_model(model), m_monitor(monitor)
{}

void SessionSnapshots::setSessions(SessionManager *sessions)
{
    if (m_sessions)
        disconnect(m_sessions, nullptr, this, nullptr);
    m_sessions = sessions;
    if (!m_sessions)
        return;
    connect(m_sessions, &SessionManager::snapshotTaken, this,
            [this](SandboxSession *, const SessionSnapshot &snapshot) {
                Q_EMIT snapshotsChanged(snapshot.sessionId);
                Q_EMIT currentChanged(snapshot.sessionId, snapshot.id);
            });
    connect(m_sessions, &SessionManager::snapshotsRemoved, this,
            [this](const QString &sessionId) { Q_EMIT snapshotsChanged(sessionId); });
    connect(m_sessions, &SessionManager::sessionEnded, this,
            [this](const QString &id) { Q_EMIT currentChanged(id, QString()); });
}

SessionManager *SessionSnapshots::sessions() const
{
    return m_sessions;
}

QList<SessionSnapshot> SessionSnapshots::of(const QString &sessionId) const
{
    return m_sessions && m_sessions->snapshots() ? m_sessions->snapshots()->of(sessionId)
                                                 : QList<SessionSnapshot>();
}

const SessionSnapshot *SessionSnapshots::afterRun(const QString &runId) const
{
    return m_sessions ? m_sessions->snapshotAfterRun(runId) : nullptr;
}

QString SessionSnapshots::currentOf(const QString &sessionId) const
{
    if (!m_sessions)
        return QString();
    const SessionAdmission live = m_sessions->lookup(sessionId, m_sessions->ownerOf(sessionId));
    return live.session ? live.session->lastSnapshot() : QString();
}

QString SessionSnapshots::sessionOfRun(const QString &runId) const
{
    const RunRecord *run = m_model->run(runId);
    return run ? run->sessionId : QString();
}

QString SessionSnapshots::unavailable(const QString &runId) const
{
    const RunRecord *run = m_model->run(runId);
    if (!run || run->sessionId.isEmpty())
        return QStringLiteral("Only a call in a session (create_session) has a snapshot.");
    if (run->instanceId != m_instanceId) {
        if (m_monitor && m_monitor->hasInstance(run->instanceId))
            return QStringLiteral(
                "This session runs in a headless instance (an assistant's own --stdio or --http "
                "server): its snapshots are kept in that process, out of this window's reach. "
                "Its assistant has list_snapshots, rewind_session and fork_session.");
        return QStringLiteral("The server that ran this session has stopped, and its snapshots "
                              "went with it.");
    }
    if (!m_sessions)
        return QStringLiteral("This window serves no sessions.");
    if (!m_sessions->snapshots())
        return QStringLiteral("This server keeps no snapshots of sessions (--snapshot-max 0).");
    if (afterRun(runId))
        return QString();
    if (!run->isFinished())
        return QStringLiteral("The run has not ended: its snapshot is taken when it does.");
    const SessionAdmission live =
        m_sessions->lookup(run->sessionId, m_sessions->ownerOf(run->sessionId));
    if (live.session && live.session->snapshotting())
        return QStringLiteral("Its snapshot is being taken.");
    return QStringLiteral("No snapshot is kept after this run: it could not be taken, or the "
                          "snapshot caps (--snapshot-max) let it go.");
}

QString SessionSnapshots::cannotRewind(const QString &runId) const
{
    if (const QString why = unavailable(runId); !why.isEmpty())
        return why;
    const QString sessionId = sessionOfRun(runId);
    if (m_rewinding.contains(sessionId))
        return QStringLiteral("The session is being rewound.");
    using Refusal = SessionAdmission::Refusal;
    const SessionAdmission verdict =
        m_sessions->admit(sessionId, m_sessions->ownerOf(sessionId), nullptr, false);
    switch (verdict.refusal) {
    case Refusal::None:
        return QString();
    case Refusal::Busy:
        return QStringLiteral("The session is running a call: rewind it once the call ends.");
    case Refusal::Starting:
        return QStringLiteral("The session is starting: rewind it once it is ready.");
    case Refusal::Ended:
        return QStringLiteral("The session ended (%1): Fork from here starts a new session at "
                              "this step.")
            .arg(verdict.endedReason);
    default:
        return QStringLiteral("The session is no longer live: Fork from here starts a new "
                              "session at this step.");
    }
}

QString SessionSnapshots::cannotFork(const QString &runId) const
{
    if (const QString why = unavailable(runId); !why.isEmpty())
        return why;
    const QString sessionId = sessionOfRun(runId);
    const QString owner = m_sessions->ownerOf(sessionId);
    const SessionAdmission verdict = m_sessions->lookup(sessionId, owner);
    if (owner.isEmpty() ||
        (verdict.refusal == SessionAdmission::Refusal::Ended && verdict.endedReason == kClientGone))
        return QStringLiteral("The session's assistant has disconnected: a fork would belong to "
                              "no one. Export the snapshot and import it instead; any assistant "
                              "can then start a session from it (create_session's "
                              "from_snapshot).");
    return QString();
}

bool SessionSnapshots::rewind(const QString &runId)
{
    if (const QString why = cannotRewind(runId); !why.isEmpty()) {
        Q_EMIT failed(why);
        return false;
    }
    const QString sessionId = sessionOfRun(runId);
    const QString snapshotId = afterRun(runId)->id;
    SandboxSession *session = m_sessions->lookup(sessionId, m_sessions->ownerOf(sessionId)).session;
    m_rewinding.insert(sessionId);
    qCInfo(lcUi).noquote() << "rewinding session" << sessionId << "to" << snapshotId
                           << "from the window";
    Q_EMIT progress(QStringLiteral("Rewinding session %1 to %2…").arg(sessionId, snapshotId));
    QPointer<SessionSnapshots> self(this);
    m_sessions->rewind(
        session, snapshotId,
        [self](const QString &message) {
            if (self)
                Q_EMIT self->progress(message);
        },
        [self, sessionId, snapshotId](SandboxSession *restored, const QJsonObject &record,
                                      const QString &error) {
            if (!self)
                return;
            self->m_rewinding.remove(sessionId);
            if (!restored) {
                Q_EMIT self->failed(QStringLiteral("Session %1 was not rewound to %2: %3")
                                        .arg(sessionId, snapshotId, error));
                return;
            }
            // Its assistant did not ask for this: its next call's result says so, once.
            restored->setSnapshotNote(QStringLiteral("a person rewound this session to snapshot "
                                                     "%1 from the Code Sandbox window: its "
                                                     "variables and files are that step's")
                                          .arg(snapshotId));
            Q_EMIT self->currentChanged(sessionId, snapshotId);
            Q_EMIT self->finished(QStringLiteral("Session %1 is back at %2, in a fresh sandbox: "
                                                 "its assistant's next call starts from "
                                                 "there.%3")
                                      .arg(sessionId, snapshotId, notRestored(record)));
        });
    return true;
}

bool SessionSnapshots::fork(const QString &runId)
{
    if (const QString why = cannotFork(runId); !why.isEmpty()) {
        Q_EMIT failed(why);
        return false;
    }
    const QString sessionId = sessionOfRun(runId);
    const QString snapshotId = afterRun(runId)->id;
    qCInfo(lcUi).noquote() << "forking session" << sessionId << "at" << snapshotId
                           << "from the window";
    Q_EMIT progress(QStringLiteral("Starting a session from %1…").arg(snapshotId));
    QPointer<SessionSnapshots> self(this);
    m_sessions->fork(
        m_sessions->ownerOf(sessionId), snapshotId, false,
        [self](const QString &message) {
            if (self)
                Q_EMIT self->progress(message);
        },
        [self, snapshotId](SandboxSession *session, const QJsonObject &record,
                           const QString &error) {
            if (!self)
                return;
            if (!session) {
                Q_EMIT self->failed(
                    QStringLiteral("No session from %1: %2").arg(snapshotId, error));
                return;
            }
            Q_EMIT self->forked(session->id(), session->language().name, snapshotId);
            Q_EMIT self->finished(
                QStringLiteral("Session %1 starts from %2; it is its assistant's, which sees it "
                               "with list_sessions.%3")
                    .arg(session->id(), snapshotId, notRestored(record)));
        });
    return true;
}

QString SessionSnapshots::exportTo(const QString &runId, const QString &path) const
{
    if (const QString why = unavailable(runId); !why.isEmpty())
        return why;
    return m_sessions->exportSnapshot(afterRun(runId)->id, path);
}

QString SessionSnapshots::remove(const QString &runId)
{
    if (const QString why = unavailable(runId); !why.isEmpty())
        return why;
    const QString sessionId = sessionOfRun(runId);
    const QString snapshotId = afterRun(runId)->id;
    const SessionAdmission live = m_sessions->lookup(sessionId, m_sessions->ownerOf(sessionId));
    // A kept session comes back from the step it is at: that one stays while it is kept.
    if (live.session && live.session->kept() && live.session->lastSnapshot() == snapshotId)
        return QStringLiteral("Session %1 is kept, and comes back from this step (it is at it "
                              "now): this snapshot stays.")
            .arg(sessionId);
    // (snapshotsRemoved tells the tree.)
    m_sessions->removeSnapshot(snapshotId);
    qCInfo(lcUi).noquote() << "snapshot" << snapshotId << "deleted from the window";
    return QString();
}

QString SessionSnapshots::importFrom(const QString &path, QString *id)
{
    if (!m_sessions)
        return QStringLiteral("This window serves no sessions.");
    const QString error = m_sessions->importSnapshot(path, id);
    if (error.isEmpty())
        qCInfo(lcUi).noquote() << "snapshot" << *id << "imported from the window";
    return error;
}

QString SessionSnapshots::notRestored(const QJsonObject &record)
{
    QStringList names;
    for (const QJsonValue &v : record.value(u"not_restored").toArray())
        names.append(v.toObject().value(u"name").toString());
    return names.isEmpty()
               ? QString()
               : QStringLiteral(" Not brought back: %1.").arg(names.join(QStringLiteral(", ")));
}
