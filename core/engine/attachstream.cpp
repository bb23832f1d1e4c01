#include "attachstream.h"

#include "engineconnection.h"
#include "enginelog.h"
#include "enginereply.h"

AttachStream::AttachStream(EngineConnection *connection, bool tty, QObject *parent)
    : QObject(parent), m_connection(connection), m_tty(tty)
{
    connection->setParent(this);
    connect(connection, &EngineConnection::rawData, this, &AttachStream::onRawData);
    connect(connection, &EngineConnection::rawClosed, this, [this] {
        if (m_ended)
            return;
        m_ended = true;
        // Closed in the middle of a frame: output was lost, which a clean end would hide.
        if (!m_tty && m_decoder.hasPartialFrame())
            Q_EMIT failed(EngineError::of(
                EngineError::Kind::Closed,
                QStringLiteral("the container engine closed the attached stream in the middle "
                               "of an output frame; the end of the output is missing")));
        Q_EMIT ended();
    });
}

AttachStream::~AttachStream()
{
    if (m_connection) {
        // The close emits rawClosed; it must not reach this half-destroyed object.
        m_connection->disconnect(this);
        m_connection->closeRaw();
    }
}

void AttachStream::watch(EngineReply *reply)
{
    connect(reply, &EngineReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (!reply->ok() || reply->status() != 101) {
            // Docker answers 200 and hijacks when asked without Upgrade; we always ask with it,
            // so anything but 101 means the attach did not happen.
            EngineError err = reply->error();
            if (!err.isError())
                err = EngineError::of(
                    EngineError::Kind::Protocol,
                    QStringLiteral("attach was not upgraded (HTTP %1)").arg(reply->status()));
            Q_EMIT failed(err);
            return;
        }
        m_established = true;
        Q_EMIT established();
    });
}

void AttachStream::write(const QByteArray &bytes)
{
    if (m_connection)
        m_connection->writeRaw(bytes);
}

void AttachStream::close()
{
    if (m_connection)
        m_connection->closeRaw();
}

void AttachStream::onRawData(const QByteArray &bytes)
{
    if (m_tty) {
        Q_EMIT output(1, bytes);
        return;
    }
    QList<MultiplexDecoder::Frame> frames;
    const bool ok = m_decoder.feed(bytes, frames);
    for (const auto &f : frames)
        if (f.stream == 1 || f.stream == 2)
            Q_EMIT output(f.stream, f.data);
    if (!ok) {
        qCWarning(lcEngine) << "attach stream is not multiplexed; closing it";
        Q_EMIT failed(EngineError::of(EngineError::Kind::Protocol,
                                      QStringLiteral("garbled output stream from the engine")));
        close();
    }
}
