#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QObject>

// What a session needs from a transport: incoming messages as raw bytes (the session parses
// them, so garbage is answered by protocol rules) and a way to send one message.
class McpTransport : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    virtual void send(const QJsonObject &message) = 0;

Q_SIGNALS:
    void messageReceived(const QByteArray &bytes);
    void closed();
};
