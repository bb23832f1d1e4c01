#include "sandboxsession.h"

#include "execution.h"
#include "sandboxcontainer.h"
#include "sandboxlog.h"
#include "workspacetransfer.h"

SandboxSession::SandboxSession(const QString &id, const QString &owner, const Language &language,
                               int timeoutSec, QObject *parent)
    : QObject(parent), m_id(id), m_owner(owner), m_language(language), m_timeoutSec(timeoutSec),
      m_createdAt(QDateTime::currentDateTimeUtc()), m_lastUsedAt(m_createdAt)
{}

QString SandboxSession::stateName(State state)
{
    switch (state) {
    case State::Starting:
        return QStringLiteral("starting");
    case State::Idle:
        return QStringLiteral("idle");
    case State::Busy:
        return QStringLiteral("busy");
    case State::Ended:
        return QStringLiteral("ended");
    }
    return QString();
}

void SandboxSession::attach(SandboxContainer *container)
{
    m_container = container;
    connect(container, &SandboxContainer::ready, this, &SandboxSession::onContainerReady);
    connect(container, &SandboxContainer::failed, this, [this](const QString &message) {
        end(QStringLiteral("its sandbox failed: ") + message);
    });
    // The container went away under the session (killed, the engine lost it, shutdown).
    connect(container, &SandboxContainer::removed, this, [this] {
        if (m_state != State::Ended)
            end(QStringLiteral("its sandbox stopped"));
    });
}

void SandboxSession::replaceContainer(SandboxContainer *container)
{
    if (SandboxContainer *old = m_container) {
        // Its removal is not the session's end.
        disconnect(old, nullptr, this, nullptr);
        old->remove();
    }
    if (m_workspaces)
        m_workspaces->forgetHeld();
    setState(State::Starting);
    attach(container);
}

void SandboxSession::setSnapshotting(bool on)
{
    m_snapshotting = on;
    if (on)
        return;
    for (const auto &then : std::exchange(m_afterSnapshot, {}))
        then();
}

void SandboxSession::afterSnapshot(const std::function<void()> &then)
{
    if (m_snapshotting && m_state != State::Ended)
        m_afterSnapshot.append(then);
    else
        then();
}

void SandboxSession::onContainerReady()
{
    const auto becomeReady = [this] {
        if (m_state == State::Starting)
            setState(State::Idle);
        Q_EMIT ready();
    };
    if (!m_workspaces || m_state != State::Starting) {
        becomeReady();
        return;
    }
    Q_EMIT progress(QStringLiteral("copying the workspaces into the session's sandbox"));
    m_workspaces->send(m_container, [this, becomeReady](const QString &error) {
        if (m_state == State::Ended)
            return;
        if (error.isEmpty())
            becomeReady();
        else
            end(error);
    });
}

void SandboxSession::setWorkspaces(WorkspaceTransfer *workspaces)
{
    workspaces->setParent(this);
    m_workspaces = workspaces;
}

QStringList SandboxSession::workspaceNames() const
{
    QStringList names;
    if (m_workspaces)
        for (const WorkspaceRun &run : m_workspaces->runs())
            names.append(run.workspace.name);
    return names;
}

void SandboxSession::begin(Execution *execution)
{
    ++m_calls;
    m_lastUsedAt = QDateTime::currentDateTimeUtc();
    setState(State::Busy);
    connect(execution, &Execution::finished, this, [this, execution] {
        m_lastUsedAt = QDateTime::currentDateTimeUtc();
        if (m_state == State::Ended)
            return;
        if (execution->endedSession()) {
            const QStringList notes = execution->result().notes;
            QString reason = QStringLiteral("its sandbox stopped during a call");
            for (const QString &note : notes) {
                if (note.startsWith(u"the session ended: "))
                    reason = note.mid(19);
            }
            end(reason);
            return;
        }
        setState(State::Idle);
    });
}

void SandboxSession::end(const QString &reason)
{
    if (m_state == State::Ended)
        return;
    m_endReason = reason;
    setState(State::Ended);
    qCInfo(lcSandbox).noquote() << "session" << m_id << "ended:" << reason;
    if (m_container)
        m_container->remove();
    // What waited for a snapshot hears of the end now.
    setSnapshotting(false);
    Q_EMIT ended(reason);
}

void SandboxSession::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}
