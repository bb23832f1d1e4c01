#include "sandboxsite.h"

#include "sandboxcontainer.h"
#include "sandboxlog.h"

SandboxSite::SandboxSite(SandboxBackend *backend, int index, QObject *parent)
    : QObject(parent), m_backend(backend), m_index(index)
{
    m_next.setSingleShot(true);
    connect(&m_next, &QTimer::timeout, this, &SandboxSite::check);
    m_quietTimer.setSingleShot(true);
    connect(&m_quietTimer, &QTimer::timeout, this, &SandboxSite::flushRemovals);
    m_removalDeadline.setSingleShot(true);
    connect(&m_removalDeadline, &QTimer::timeout, this, &SandboxSite::flushRemovals);
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        markDown(QStringLiteral("it did not answer within %1 s").arg(kAnswerTimeoutMs / 1000),
                 false);
        schedule(1000);
    });
}

SandboxSite::~SandboxSite() = default;

void SandboxSite::deferRemoval(SandboxContainer *container)
{
    m_deferred.append(container);
    if (!m_removalDeadline.isActive())
        m_removalDeadline.start(kMaxRemovalDelayMs);
    while (m_deferred.size() > kMaxDeferredRemovals) {
        if (SandboxContainer *oldest = m_deferred.takeFirst())
            oldest->removeOnceEnded();
    }
}

void SandboxSite::quiet()
{
    if (!m_deferred.isEmpty())
        m_quietTimer.start(kQuietMs);
}

void SandboxSite::flushRemovals()
{
    m_quietTimer.stop();
    m_removalDeadline.stop();
    const auto waiting = m_deferred;
    m_deferred.clear();
    for (SandboxContainer *c : waiting)
        if (c)
            c->removeOnceEnded();
}

QString SandboxSite::stateName(State state)
{
    switch (state) {
    case State::Up:
        return QStringLiteral("up");
    case State::Down:
        return QStringLiteral("down");
    case State::Unknown:
        break;
    }
    return QStringLiteral("unknown");
}

void SandboxSite::watch()
{
    m_watching = true;
    check();
}

void SandboxSite::stopWatching()
{
    m_watching = false;
    m_next.stop();
    m_deadline.stop();
}

void SandboxSite::checkNow()
{
    if (m_watching && !m_asking)
        check();
}

void SandboxSite::reportLost(const QString &error)
{
    if (!m_watching)
        return;
    markDown(error, false);
    if (!m_asking)
        schedule(200);
}

void SandboxSite::schedule(int delayMs)
{
    if (m_watching)
        m_next.start(delayMs);
}

void SandboxSite::check()
{
    if (!m_watching)
        return;
    // One question at a time: an engine that hangs is not sent a pile of them. One that has hung
    // for half a minute is asked on a new connection anyway (a dropped ssh link, say).
    if (m_asking && m_askedAt.elapsed() < 30000) {
        if (m_askedAt.elapsed() >= kGiveUpMs)
            markDown(QStringLiteral("it has not answered for %1 s").arg(m_askedAt.elapsed() / 1000),
                     true);
        schedule(qMin(kMaxBackoffMs, 1000 << qMin(m_failures, 4)));
        return;
    }
    m_asking = true;
    m_askedAt.start();
    m_deadline.start(kAnswerTimeoutMs);
    m_backend->health(true, this, [this](const SandboxBackend::Health &h) { answered(h); });
}

void SandboxSite::answered(const SandboxBackend::Health &health)
{
    m_asking = false;
    m_deadline.stop();
    if (!health.reachable) {
        markDown(health.error, true);
        schedule(qMin(kMaxBackoffMs, 1000 << qMin(m_failures, 4)));
        return;
    }
    m_failures = 0;
    const State previous = m_state;
    if (m_state != State::Up) {
        m_state = State::Up;
        m_confirmed = false;
        m_error.clear();
        if (previous == State::Down) {
            qCInfo(lcSandbox).noquote() << "engine" << endpoint() << "answers again";
            Q_EMIT stateChanged(this, previous);
        }
    }
    if (!m_described)
        describe();
    schedule(kCheckIntervalMs);
}

void SandboxSite::markDown(const QString &error, bool confirmed)
{
    if (confirmed)
        ++m_failures;
    m_error = error.isEmpty() ? QStringLiteral("it does not answer") : error;
    if (m_state != State::Down) {
        const State previous = m_state;
        m_state = State::Down;
        m_confirmed = false;
        qCWarning(lcSandbox).noquote() << "engine" << endpoint() << "is down:" << m_error;
        Q_EMIT stateChanged(this, previous);
    }
    if (confirmed && !m_confirmed) {
        m_confirmed = true;
        Q_EMIT unreachable(this);
    }
}

void SandboxSite::describe()
{
    m_described = true;
    m_backend->health(false, this, [this](const SandboxBackend::Health &h) {
        if (!h.reachable) {
            m_described = false; // asked again once it answers
            return;
        }
        m_health = h;
        Q_EMIT described(this);
    });
}
