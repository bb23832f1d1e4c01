#pragma once

#include "kubeerror.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>

// One request's answer from KubeClient: emits finished() once, always from the event loop; then
// ok() with the status and body, or error(). The client is its parent; a caller done with it
// deletes it (deleteLater).
class KubeReply : public QObject
{
    Q_OBJECT

public:
    using QObject::QObject;

    bool isFinished() const { return m_finished; }
    bool ok() const { return m_finished && !m_error.isError(); }
    int status() const { return m_status; }
    const QByteArray &body() const { return m_body; }
    QJsonObject json() const { return QJsonDocument::fromJson(m_body).object(); }
    const KubeError &error() const { return m_error; }

Q_SIGNALS:
    void finished();

private:
    friend class KubeClient;
    void finish(int status, const QByteArray &body, const KubeError &error);

    bool m_finished = false;
    int m_status = 0;
    QByteArray m_body;
    KubeError m_error;
};
