#pragma once

#include "enginetransport.h"

#include <QLocalSocket>

// An engine on this machine, through its unix socket (Docker's /var/run/docker.sock, Podman's).
class LocalTransport : public EngineTransport
{
    Q_OBJECT
public:
    LocalTransport(const EngineAddress &address, QObject *parent = nullptr);
    ~LocalTransport() override;

    void write(const QByteArray &bytes) override;
    QByteArray readAll() override { return m_socket.readAll(); }
    qint64 bytesAvailable() const override { return m_socket.bytesAvailable(); }
    bool isReusable() const override;

protected:
    void doOpen() override;
    void doAbort() override;

private:
    void onError(QLocalSocket::LocalSocketError error);
    QString describe(QLocalSocket::LocalSocketError error) const;

    QLocalSocket m_socket;
    QString m_brokenReason; // an error while open, reported with the close that follows
};
