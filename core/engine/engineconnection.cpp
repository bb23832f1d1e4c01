#include "engineconnection.h"

#include "enginelog.h"
#include "enginereply.h"
#include "enginetransport.h"

EngineConnection::EngineConnection(const EngineAddress &address, QObject *parent)
    : QObject(parent), m_address(address), m_transport(EngineTransport::create(address, this))
{
    connect(m_transport, &EngineTransport::opened, this, &EngineConnection::onOpened);
    connect(m_transport, &EngineTransport::readyRead, this, &EngineConnection::onReadyRead);
    connect(m_transport, &EngineTransport::closed, this, [this] { onClosed(); });
    connect(m_transport, &EngineTransport::failed, this, &EngineConnection::onFailed);
    m_answerTimer.setSingleShot(true);
    connect(&m_answerTimer, &QTimer::timeout, this, &EngineConnection::onAnswerTimeout);
}

EngineConnection::~EngineConnection()
{
    // Closing the stream emits signals; none may reach this half-destroyed object.
    m_transport->disconnect(this);
    m_transport->abort();
}

void EngineConnection::send(const EngineRequest &request, EngineReply *reply)
{
    m_reply = reply;
    m_busy = true;
    m_gotBytes = false;
    m_parser.reset();
    m_parser.setMaxBodySize(request.maxBodyBytes);
    m_what = request.method + ' ' + request.path;
    if (m_answerTimeoutMs > 0)
        m_answerTimer.start(m_answerTimeoutMs);
    qCDebug(lcEngine) << request.method << request.path;
    const QByteArray bytes = request.serialize();
    if (m_transport->state() == EngineTransport::State::Open) {
        m_transport->write(bytes);
    } else {
        m_pendingWrite = bytes;
        if (m_transport->state() == EngineTransport::State::Closed)
            m_transport->open();
    }
}

bool EngineConnection::isReusable() const
{
    return !m_busy && !m_raw && m_transport->isReusable();
}

void EngineConnection::writeRaw(const QByteArray &bytes)
{
    if (m_raw && m_transport->state() == EngineTransport::State::Open)
        m_transport->write(bytes);
}

void EngineConnection::closeRaw()
{
    m_transport->abort();
}

void EngineConnection::onOpened()
{
    if (!m_pendingWrite.isEmpty()) {
        m_transport->write(m_pendingWrite);
        m_pendingWrite.clear();
    }
}

void EngineConnection::onReadyRead()
{
    if (m_raw) {
        const QByteArray bytes = m_transport->readAll();
        if (!bytes.isEmpty())
            Q_EMIT rawData(bytes);
        return;
    }
    processBuffer();
}

void EngineConnection::processBuffer()
{
    const QByteArray bytes = m_transport->readAll();
    if (bytes.isEmpty())
        return;
    m_gotBytes = true;
    if (m_answerTimer.isActive())
        m_answerTimer.start(); // the engine is answering; the timeout counts from now
    if (!m_busy) {
        // Bytes nobody asked for: the connection can no longer be trusted.
        qCWarning(lcEngine) << "unexpected bytes on an idle engine connection";
        m_transport->abort();
        return;
    }
    const qsizetype used = m_parser.feed(bytes);
    switch (m_parser.state()) {
    case HttpResponseParser::State::Incomplete:
        return;
    case HttpResponseParser::State::Error:
        // The rest of an oversized answer is never read: the connection goes, and the engine
        // stops producing it.
        if (m_parser.bodyTooLarge())
            failCurrent(EngineError::of(
                EngineError::Kind::TooLarge,
                QStringLiteral("the container engine's answer to %1 was cut off: %2")
                    .arg(QString::fromLatin1(m_what),
                         QString::fromLatin1(m_parser.errorString()))));
        else
            failCurrent(
                EngineError::of(EngineError::Kind::Protocol,
                                QStringLiteral("malformed answer from the container engine: %1")
                                    .arg(QString::fromLatin1(m_parser.errorString()))));
        m_transport->abort();
        return;
    case HttpResponseParser::State::Upgraded: {
        m_raw = true;
        m_busy = false;
        m_answerTimer.stop();
        if (m_reply)
            m_reply->complete(m_parser.status(), QByteArray());
        const QByteArray rest = bytes.mid(used);
        if (!rest.isEmpty())
            Q_EMIT rawData(rest);
        return;
    }
    case HttpResponseParser::State::Complete: {
        m_busy = false;
        m_answerTimer.stop();
        const bool keep = m_parser.keepAlive() && used == bytes.size();
        if (m_reply)
            m_reply->complete(m_parser.status(), m_parser.takeBody());
        m_reply.clear();
        if (keep) {
            Q_EMIT idle(this);
        } else {
            m_transport->abort();
        }
        return;
    }
    }
}

void EngineConnection::onClosed(const QString &reason)
{
    const QString because = reason.isEmpty() ? QString() : QStringLiteral(": ") + reason;
    // An answer that arrived together with the close is read before the close counts.
    if (!m_raw && m_busy && m_transport->bytesAvailable() > 0)
        processBuffer();
    if (m_raw) {
        // Drain what arrived together with the close before reporting the end.
        if (m_transport->bytesAvailable() > 0) {
            const QByteArray bytes = m_transport->readAll();
            Q_EMIT rawData(bytes);
        }
        if (!reason.isEmpty())
            qCInfo(lcEngine).noquote()
                << "attached stream to" << m_address.display() << "ended" << because;
        Q_EMIT rawClosed();
    } else if (m_busy) {
        m_parser.finishOnEof();
        if (m_parser.state() == HttpResponseParser::State::Complete) {
            m_busy = false;
            m_answerTimer.stop();
            if (m_reply)
                m_reply->complete(m_parser.status(), m_parser.takeBody());
        } else {
            failCurrent(EngineError::of(
                EngineError::Kind::Closed,
                QStringLiteral("the container engine closed the connection mid-answer (%1)%2")
                    .arg(QString::fromLatin1(m_parser.errorString()),
                         reason.isEmpty()
                             ? QString()
                             : QStringLiteral("; %1: %2").arg(m_address.display(), reason))));
        }
    }
    Q_EMIT gone(this);
}

EngineError EngineConnection::unreachable(const QString &reason) const
{
    if (m_address.scheme == EngineAddress::Scheme::Unix)
        return EngineError::of(
            EngineError::Kind::Unreachable,
            QStringLiteral("cannot reach the container engine at %1 (%2). Is Docker running? "
                           "Start it (e.g. 'sudo systemctl start docker', or 'dockerd &') or "
                           "point --engine at its socket.")
                .arg(m_address.display(), reason));
    return EngineError::of(EngineError::Kind::Unreachable,
                           QStringLiteral("cannot reach the container engine at %1: %2")
                               .arg(m_address.display(), reason));
}

void EngineConnection::onFailed(const QString &reason)
{
    // Nothing of the answer yet: the engine was never reached (or refused us, as a TLS engine
    // that wants a client certificate does after the handshake).
    if (m_busy && !m_gotBytes && !m_raw && m_transport->bytesAvailable() == 0) {
        failCurrent(unreachable(reason));
        Q_EMIT gone(this);
        return;
    }
    onClosed(reason);
}

void EngineConnection::onAnswerTimeout()
{
    if (!m_busy || m_raw)
        return;
    failCurrent(EngineError::of(
        EngineError::Kind::Timeout,
        QStringLiteral("the container engine at %1 did not answer %2 within %3 s; it may be "
                       "overloaded or hung (try 'docker info', or restart it)")
            .arg(m_address.display(), QString::fromLatin1(m_what))
            .arg(m_answerTimeoutMs / 1000.0)));
    // A late answer must not be taken for the next request's: the connection goes.
    const bool open = m_transport->state() == EngineTransport::State::Open;
    m_transport->abort();
    if (!open) // no closed() follows to report it
        Q_EMIT gone(this);
}

void EngineConnection::failCurrent(const EngineError &error)
{
    m_answerTimer.stop();
    m_busy = false;
    if (m_reply)
        m_reply->fail(error);
    m_reply.clear();
}
