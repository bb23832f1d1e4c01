#pragma once

#include "sockettransport.h"

#include <QSslConfiguration>
#include <QSslSocket>

// An engine on a TCP port: plain (only where EngineLocator allowed it), or TLS with the
// address's CA as the only trust root (this machine's store only when the address says
// systemCa; neither: refused), its client certificate and key, and the peer's name checked
// against the host, through Qt's TLS backend.
class TcpTransport : public SocketTransport<QSslSocket>
{
    Q_OBJECT
public:
    TcpTransport(const EngineAddress &address, QObject *parent = nullptr);

    // The TLS settings for an address: its CA as the only root (the system's only with
    // systemCa), its client certificate and key, TLS 1.2 or later, the peer verified. Empty
    // `error` when they could be read; an address with neither a CA nor systemCa is an error.
    static QSslConfiguration tlsConfiguration(const EngineAddress &address, QString *error);

protected:
    void doOpen() override;

private:
    void onConnected();
    void onError(QAbstractSocket::SocketError error);
    void onDisconnected();

    QString m_sslErrors; // why the handshake failed, in Qt's words
};
