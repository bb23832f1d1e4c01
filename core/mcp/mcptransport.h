#pragma once

#include "mcpmessage.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QObject>

// What a session needs from a transport: each incoming message parsed, with its era (garbage
// arrives as an Invalid message, which the session answers by protocol rules), and two ways out
// that say what a message is, so no transport has to guess it from JSON keys.
class McpTransport : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    // The answer (a JSON-RPC result or error) to the client's request `id`. Transports with a
    // stream per request (HTTP) send it on that request's stream and end it there.
    virtual void respond(const QJsonValue &id, const QJsonObject &response) = 0;
    // A notification, or a request of the server's. `relatedRequestId`: the client request in
    // flight it belongs to (its progress, logs, or a question asked while serving it), which
    // transports with several streams (HTTP) send it on; undefined when it belongs to none.
    virtual void notify(const QJsonObject &message,
                        const QJsonValue &relatedRequestId = QJsonValue::Undefined) = 0;

Q_SIGNALS:
    void messageReceived(const McpMessage &message);
    void closed();
};
