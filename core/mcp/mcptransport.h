#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QObject>

// What a session needs from a transport: incoming messages as raw bytes (the session parses
// them, so garbage is answered by protocol rules) and a way to send one message.
class McpTransport : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    virtual void send(const QJsonObject &message) = 0;
    // A message that belongs to a client request in flight (its response, progress, logs, or a
    // request the server makes while serving it). Transports with several streams (HTTP) send it
    // on that request's stream; others just send it.
    virtual void sendRelated(const QJsonObject &message, const QJsonValue &relatedRequestId)
    {
        Q_UNUSED(relatedRequestId);
        send(message);
    }

Q_SIGNALS:
    void messageReceived(const QByteArray &bytes);
    void closed();
};
