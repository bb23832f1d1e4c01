#pragma once

#include "mcptransport.h"

#include <QList>

// A transport without I/O: tests push client messages in and read what the session sent back.
class RecordingTransport : public McpTransport
{
    Q_OBJECT
public:
    using McpTransport::McpTransport;

    void respond(const QJsonValue &, const QJsonObject &response) override
    {
        m_sent.append(response);
    }
    void notify(const QJsonObject &message, const QJsonValue &) override { m_sent.append(message); }

    // Bytes as a stdio line would bring them: parsed and classified by the body alone.
    void receive(const QByteArray &bytes) { Q_EMIT messageReceived(McpMessage::parse(bytes)); }
    void close() { Q_EMIT closed(); }

    const QList<QJsonObject> &sent() const { return m_sent; }
    QList<QJsonObject> takeSent()
    {
        QList<QJsonObject> out;
        out.swap(m_sent);
        return out;
    }

private:
    QList<QJsonObject> m_sent;
};
