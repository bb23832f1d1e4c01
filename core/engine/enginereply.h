#pragma once

#include "engineerror.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>

// The answer to one engine request. Emits finished() exactly once, from the event loop (never
// from inside the call that created it), so callers can connect after issuing the request.
class EngineReply : public QObject
{
    Q_OBJECT
public:
    explicit EngineReply(QObject *parent = nullptr) : QObject(parent) {}

    bool isFinished() const { return m_finished; }
    int status() const { return m_status; }
    const QByteArray &body() const { return m_body; }
    QJsonObject json() const;
    const EngineError &error() const { return m_error; }
    bool ok() const { return m_finished && !m_error.isError(); }

    // Calls `done` when the answer is in, while `context` lives; the reply deletes itself after,
    // either way. For callers that only want the answer.
    template <typename F> void then(QObject *context, F &&done)
    {
        connect(this, &EngineReply::finished, context, std::forward<F>(done));
        connect(this, &EngineReply::finished, this, &QObject::deleteLater);
    }

    // Used by the connection that carries the request.
    void complete(int status, QByteArray body);
    void fail(const EngineError &error);

Q_SIGNALS:
    void finished();

private:
    void finishLater();

    bool m_finished = false;
    int m_status = 0;
    QByteArray m_body;
    EngineError m_error;
};
