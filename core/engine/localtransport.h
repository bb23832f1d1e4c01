#pragma once

#include "sockettransport.h"

#include <QLocalSocket>

// An engine on this machine, through its unix socket (Docker's /var/run/docker.sock, Podman's).
class LocalTransport : public SocketTransport<QLocalSocket>
{
    Q_OBJECT
public:
    LocalTransport(const EngineAddress &address, QObject *parent = nullptr);

protected:
    void doOpen() override;

private:
    void onError(QLocalSocket::LocalSocketError error);
    QString describe(QLocalSocket::LocalSocketError error) const;
};
