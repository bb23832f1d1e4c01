#include "enginereply.h"

#include <QJsonDocument>
#include <QMetaObject>

QJsonObject EngineReply::json() const
{
    return QJsonDocument::fromJson(m_body).object();
}

void EngineReply::complete(int status, QByteArray body)
{
    if (m_finished)
        return;
    m_status = status;
    m_body = std::move(body);
    // 101 is the engine agreeing to hijack the connection for attach.
    if (status != 101 && (status < 200 || status > 299)) {
        // The engine explains failures in {"message": "..."}; fall back to the raw body.
        QString message = QJsonDocument::fromJson(m_body).object().value(u"message").toString();
        if (message.isEmpty())
            message = QString::fromUtf8(m_body.left(300)).trimmed();
        m_error = EngineError::http(status, message);
    }
    finishLater();
}

void EngineReply::fail(const EngineError &error)
{
    if (m_finished)
        return;
    m_error = error;
    finishLater();
}

void EngineReply::finishLater()
{
    m_finished = true;
    QMetaObject::invokeMethod(this, &EngineReply::finished, Qt::QueuedConnection);
}
