#include "enginetransport.h"

#include "localtransport.h"
#include "sshtransport.h"
#include "tcptransport.h"

#include <QPointer>
#include <cerrno>
#include <sys/socket.h>

EngineTransport *EngineTransport::create(const EngineAddress &address, QObject *parent)
{
    switch (address.scheme) {
    case EngineAddress::Scheme::Tcp:
        return new TcpTransport(address, parent);
    case EngineAddress::Scheme::Ssh:
        return new SshTransport(address, parent);
    case EngineAddress::Scheme::Unix:
    case EngineAddress::Scheme::None:
        break;
    }
    return new LocalTransport(address, parent);
}

EngineTransport::EngineTransport(const EngineAddress &address, QObject *parent)
    : QObject(parent), m_address(address)
{
    m_connectTimer.setSingleShot(true);
    m_connectTimer.setInterval(kConnectTimeoutMs);
    connect(&m_connectTimer, &QTimer::timeout, this, &EngineTransport::onConnectTimeout);
}

void EngineTransport::open()
{
    if (m_state != State::Closed)
        return;
    m_state = State::Opening;
    m_connectTimer.start();
    doOpen();
}

void EngineTransport::abort()
{
    if (m_state == State::Closed)
        return;
    const bool wasOpen = m_state == State::Open;
    m_state = State::Closed;
    m_connectTimer.stop();
    doAbort();
    if (wasOpen)
        Q_EMIT closed();
}

void EngineTransport::reportOpened(bool established)
{
    if (m_state != State::Opening)
        return;
    m_state = State::Open;
    if (established)
        m_connectTimer.stop();
    Q_EMIT opened();
}

void EngineTransport::reportClosed()
{
    if (m_state == State::Closed)
        return;
    m_state = State::Closed;
    m_connectTimer.stop();
    Q_EMIT closed();
}

void EngineTransport::reportFailed(const QString &reason)
{
    if (m_state == State::Closed)
        return;
    m_state = State::Closed;
    m_connectTimer.stop();
    // Told first, so that what already arrived can still be read; torn down after.
    QPointer<EngineTransport> self(this);
    Q_EMIT failed(reason);
    if (self)
        doAbort();
}

void EngineTransport::onConnectTimeout()
{
    QString reason = QStringLiteral("not connected within %1 s").arg(kConnectTimeoutMs / 1000);
    const QString detail = timeoutDetail();
    if (!detail.isEmpty())
        reason += QStringLiteral(" (%1)").arg(detail);
    reportFailed(reason);
}

bool EngineTransport::descriptorIsQuiet(qintptr descriptor)
{
    // Peek without blocking: 0 is the engine's close still queued behind the last answer, data
    // is bytes nobody asked for; only "nothing yet" means the engine still expects a request.
    char byte;
    const auto n = ::recv(int(descriptor), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}
