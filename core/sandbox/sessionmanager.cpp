#include "sessionmanager.h"

#include "execution.h"
#include "language.h"
#include "sandboxlog.h"
#include "sandboxservice.h"
#include "sandboxsession.h"

#include <QPointer>
#include <QUuid>

namespace {
// How many ended sessions are remembered to explain later calls.
constexpr int kRememberEnded = 256;
} // namespace

SessionManager::SessionManager(SandboxService *sandbox, const Limits &limits, QObject *parent)
    : QObject(parent), m_sandbox(sandbox), m_limits(limits)
{
    m_expiry.setInterval(qBound(1000, m_limits.idleSec * 1000 / 10, 15000));
    connect(&m_expiry, &QTimer::timeout, this, &SessionManager::expireIdle);
    m_expiry.start();
}

SessionManager::~SessionManager()
{
    closeAll(QStringLiteral("the server stopped"));
}

void SessionManager::create(const QString &owner, const QString &languageName,
                            const QStringList &libraries, int timeoutSec, const RunNetwork &network,
                            const std::function<void(const QString &)> &progress,
                            const Created &done)
{
    const Language *language = m_sandbox->languages().find(languageName);
    if (!language) {
        done(nullptr, QStringLiteral("unsupported language '%1'; supported: %2")
                          .arg(languageName, m_sandbox->languages().names().join(u", ")));
        return;
    }
    if (m_sessions.size() >= m_limits.maxSessions) {
        done(nullptr, QStringLiteral("%1 sessions are open, the most this server allows; close "
                                     "one with close_session (list_sessions shows yours)")
                          .arg(m_sessions.size()));
        return;
    }
    if (!libraries.isEmpty()) {
        const QString refusal = m_sandbox->librariesRefusal(*language, libraries);
        if (!refusal.isEmpty()) {
            done(nullptr, refusal);
            return;
        }
    }
    // The id names the instance that holds the container, so that a call reaching another
    // instance (behind a load balancer, say) is told where its session lives.
    const QString id = QStringLiteral("s-%1-%2").arg(
        instanceTag(), QUuid::createUuid().toString(QUuid::Id128).left(12));
    const int timeout = m_sandbox->config().callTimeout().forCall(timeoutSec);
    auto *session = new SandboxSession(id, owner, *language, timeout, this);
    session->setLibraries(libraries);
    session->setNetwork(network);
    m_sessions.insert(id, session);
    connect(session, &SandboxSession::ended, this,
            [this, session](const QString &reason) { forget(session, reason); });

    QPointer<SandboxSession> guard(session);
    // Answered once: ready, or ended before it was.
    auto answered = std::make_shared<bool>(false);
    const auto answer = [guard, done, answered](const QString &error) {
        if (*answered)
            return;
        *answered = true;
        done(error.isEmpty() ? guard.data() : nullptr, error);
    };
    connect(session, &SandboxSession::ready, this, [this, answer, guard] {
        answer(QString());
        if (guard)
            Q_EMIT sessionCreated(guard);
    });
    connect(session, &SandboxSession::ended, this, [answer](const QString &reason) {
        answer(QStringLiteral("the session could not start: ") + reason);
    });
    const Language lang = *language;
    const auto start = [this, guard, lang, network](const QString &volume) {
        if (!guard || guard->state() == SandboxSession::State::Ended)
            return;
        QString error;
        SandboxContainer *container =
            m_sandbox->createSessionContainer(lang, network, volume, &error);
        if (container)
            guard->attach(container);
        else
            guard->end(error);
    };
    if (libraries.isEmpty()) {
        m_sandbox->whenSettled(session, [start] { start(QString()); });
        return;
    }
    m_sandbox->ensureLibraries(
        lang, libraries, progress,
        [guard, start](const QString &volume, const QString &error) {
            if (!guard)
                return;
            if (!error.isEmpty())
                guard->end(error);
            else
                start(volume);
        },
        network);
}

SessionAdmission SessionManager::lookup(const QString &id, const QString &owner) const
{
    using Refusal = SessionAdmission::Refusal;
    SessionAdmission verdict;
    SandboxSession *session = m_sessions.value(id);
    // Another client's session is reported like an unknown one: its existence is not theirs to
    // learn.
    if (session && session->owner() == owner) {
        verdict.refusal = Refusal::None;
        verdict.session = session;
    } else if (!session && m_ended.contains(id)) {
        verdict.refusal = Refusal::Ended;
        verdict.endedReason = m_ended.value(id);
    } else if (id.count(u'-') == 2 && id.section(u'-', 1, 1) != instanceTag()) {
        verdict.refusal = Refusal::OtherInstance;
        verdict.instance = id.section(u'-', 1, 1);
        verdict.here = instanceTag();
    }
    return verdict;
}

SessionAdmission SessionManager::admit(const QString &id, const QString &owner,
                                       const Language *language, bool withLibraries) const
{
    using Refusal = SessionAdmission::Refusal;
    SessionAdmission verdict = lookup(id, owner);
    if (!verdict.admitted())
        return verdict;
    const SandboxSession *session = verdict.session;
    if (language && session->language().name != language->name) {
        verdict.refusal = Refusal::OtherLanguage;
        verdict.asked = language->name;
    } else if (withLibraries) {
        verdict.refusal = Refusal::Libraries;
    } else if (session->state() == SandboxSession::State::Starting) {
        verdict.refusal = Refusal::Starting;
    } else if (session->state() == SandboxSession::State::Busy) {
        verdict.refusal = Refusal::Busy;
    }
    return verdict;
}

QString SessionManager::instanceTag() const
{
    QString tag;
    for (const QChar c : m_sandbox->config().instanceId)
        if (c.isLetterOrNumber() && c.unicode() < 128)
            tag += c.toLower();
    return tag.isEmpty() ? QStringLiteral("local") : tag.left(8);
}

Execution *SessionManager::execute(ExecutionRequest request)
{
    SandboxSession *session = request.session;
    Q_ASSERT(session);
    if (request.timeoutSec <= 0)
        request.timeoutSec = session->timeoutSec();
    // Its sandbox reaches what the session was given: the record and the questions say so.
    request.network = session->network();
    Execution *execution = m_sandbox->executeIn(session->container(), session->language(), request);
    session->begin(execution);
    return execution;
}

SessionAdmission SessionManager::close(const QString &id, const QString &owner)
{
    const SessionAdmission verdict = lookup(id, owner);
    if (verdict.admitted())
        verdict.session->end(QStringLiteral("closed with close_session"));
    return verdict;
}

QList<SandboxSession *> SessionManager::sessionsOf(const QString &owner) const
{
    QList<SandboxSession *> list;
    for (SandboxSession *s : m_sessions) {
        if (s->owner() == owner)
            list.append(s);
    }
    std::sort(list.begin(), list.end(),
              [](SandboxSession *a, SandboxSession *b) { return a->createdAt() < b->createdAt(); });
    return list;
}

void SessionManager::closeOwnedBy(const QString &owner)
{
    for (SandboxSession *s : sessionsOf(owner))
        s->end(QStringLiteral("its client disconnected"));
}

void SessionManager::closeAll(const QString &reason)
{
    const QList<SandboxSession *> all = m_sessions.values();
    for (SandboxSession *s : all)
        s->end(reason);
}

void SessionManager::expireIdle()
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QList<SandboxSession *> all = m_sessions.values();
    for (SandboxSession *s : all) {
        if (s->state() == SandboxSession::State::Idle &&
            s->lastUsedAt().secsTo(now) >= m_limits.idleSec)
            s->end(QStringLiteral("expired after %1 s without a call").arg(m_limits.idleSec));
    }
}

void SessionManager::forget(SandboxSession *session, const QString &reason)
{
    if (m_sessions.remove(session->id()) == 0)
        return;
    m_ended.insert(session->id(), reason);
    m_endedOrder.append(session->id());
    while (m_endedOrder.size() > kRememberEnded)
        m_ended.remove(m_endedOrder.takeFirst());
    Q_EMIT sessionEnded(session->id(), reason);
    session->deleteLater();
}
