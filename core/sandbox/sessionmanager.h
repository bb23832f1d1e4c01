#pragma once

#include "executionrequest.h"
#include "sessionadmission.h"

#include <QHash>
#include <QObject>
#include <QTimer>
#include <functional>

class Execution;
struct Language;
class SandboxService;
class SandboxSession;

// The stateful sessions of this server: created on request, each with its own container, used
// only by the MCP session that created it, ended on close, after being idle too long, when its
// MCP session goes, and at shutdown (the service removes every container it made).
class SessionManager : public QObject
{
    Q_OBJECT
public:
    struct Limits
    {
        int idleSec = 600;   // an idle session ends after this long
        int maxSessions = 8; // open at once, all clients together
    };

    SessionManager(SandboxService *sandbox, const Limits &limits, QObject *parent = nullptr);
    ~SessionManager() override;

    const Limits &limits() const { return m_limits; }
    SandboxService *sandbox() const { return m_sandbox; }

    using Created = std::function<void(SandboxSession *session, const QString &error)>;
    // Starts a session; `done` gets it once its container is ready, or an error. `timeoutSec`
    // (0: the server's default) applies to each call that does not give its own. `network`: its
    // sandbox's, decided once for all its runs (RunNetwork::decide).
    void create(const QString &owner, const QString &language, const QStringList &libraries,
                int timeoutSec, const RunNetwork &network,
                const std::function<void(const QString &)> &progress, const Created &done);
    // The owner's live session, or why there is none (unknown, ended, another instance's).
    SessionAdmission lookup(const QString &id, const QString &owner) const;
    // Whether a call in `language` (null: not checked), with libraries or not, may run in the
    // session now: the session, or the typed refusal. The one place these checks are made.
    SessionAdmission admit(const QString &id, const QString &owner, const Language *language,
                           bool withLibraries) const;
    // Runs the program in the request's session (admitted: see admit()).
    Execution *execute(ExecutionRequest request);
    // Ends the owner's session; the lookup says whether there was one.
    SessionAdmission close(const QString &id, const QString &owner);
    QList<SandboxSession *> sessionsOf(const QString &owner) const;
    int count() const { return int(m_sessions.size()); }
    // The MCP session `owner` went away: its sessions end.
    void closeOwnedBy(const QString &owner);
    void closeAll(const QString &reason);
    // Ends sessions idle for longer than the limit (also done every few seconds).
    void expireIdle();

    // The first 8 letters and digits of the instance's id: what session ids begin with.
    QString instanceTag() const;

Q_SIGNALS:
    void sessionCreated(SandboxSession *session);
    void sessionEnded(const QString &id, const QString &reason);

private:
    void forget(SandboxSession *session, const QString &reason);

    SandboxService *m_sandbox;
    Limits m_limits;
    QHash<QString, SandboxSession *> m_sessions; // live ones
    QHash<QString, QString> m_ended;             // id → why, so later calls hear why
    QStringList m_endedOrder;
    QTimer m_expiry;
};
