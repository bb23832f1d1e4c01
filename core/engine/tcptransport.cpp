#include "tcptransport.h"

#include <QFile>
#include <QSslKey>

namespace {

// A PEM key of whichever algorithm it is (Qt asks the caller to say).
QSslKey readKey(const QByteArray &pem)
{
    for (const QSsl::KeyAlgorithm algorithm : {QSsl::Rsa, QSsl::Ec, QSsl::Dsa}) {
        const QSslKey key(pem, algorithm, QSsl::Pem, QSsl::PrivateKey);
        if (!key.isNull())
            return key;
    }
    return {};
}

} // namespace

QSslConfiguration TcpTransport::tlsConfiguration(const EngineAddress &a, QString *error)
{
    QSslConfiguration c = QSslConfiguration::defaultConfiguration();
    c.setProtocol(QSsl::TlsV1_2OrLater);
    c.setPeerVerifyMode(QSslSocket::VerifyPeer);
    error->clear();
    // The locator refuses such an address already; a connection made some other way must not
    // fall back to every CA this machine trusts either.
    if (a.caFile.isEmpty() && !a.systemCa) {
        *error = QStringLiteral("TLS with no CA named for the engine is refused: the CA that "
                                "signed its certificate is the only trust root (give it, or ask "
                                "for this machine's store with --tls-ca system)");
        return c;
    }
    if (!a.caFile.isEmpty()) {
        const QList<QSslCertificate> ca = QSslCertificate::fromPath(a.caFile, QSsl::Pem);
        if (ca.isEmpty()) {
            *error =
                QStringLiteral("no certificate could be read from the CA file %1").arg(a.caFile);
            return c;
        }
        // Replaces the system's roots (and turns off loading them on demand).
        c.setCaCertificates(ca);
    }
    if (a.certFile.isEmpty() != a.keyFile.isEmpty()) {
        *error = QStringLiteral("a client certificate needs its key and the key its certificate");
        return c;
    }
    if (!a.certFile.isEmpty()) {
        const QList<QSslCertificate> chain = QSslCertificate::fromPath(a.certFile, QSsl::Pem);
        if (chain.isEmpty()) {
            *error = QStringLiteral("no certificate could be read from %1").arg(a.certFile);
            return c;
        }
        QFile keyFile(a.keyFile);
        const QSslKey key =
            keyFile.open(QIODevice::ReadOnly) ? readKey(keyFile.readAll()) : QSslKey();
        if (key.isNull()) {
            *error = QStringLiteral("no private key could be read from %1 (an encrypted key is "
                                    "not supported)")
                         .arg(a.keyFile);
            return c;
        }
        c.setLocalCertificateChain(chain);
        c.setPrivateKey(key);
    }
    return c;
}

TcpTransport::TcpTransport(const EngineAddress &address, QObject *parent)
    : SocketTransport(address, parent)
{
    connect(&m_socket, &QSslSocket::connected, this, &TcpTransport::onConnected);
    connect(&m_socket, &QSslSocket::encrypted, this, [this] { reportOpened(); });
    connect(&m_socket, &QSslSocket::sslErrors, this, [this](const QList<QSslError> &errors) {
        QStringList texts;
        for (const QSslError &e : errors)
            texts.append(e.errorString());
        m_sslErrors = texts.join(QStringLiteral("; "));
    });
    connect(&m_socket, &QSslSocket::disconnected, this, &TcpTransport::onDisconnected);
    connect(&m_socket, &QSslSocket::errorOccurred, this, &TcpTransport::onError);
}

void TcpTransport::doOpen()
{
    m_sslErrors.clear();
    m_brokenReason.clear();
    const EngineAddress &a = address();
    if (!a.tls) {
        m_socket.connectToHost(a.host, quint16(a.tcpPort()));
        return;
    }
    if (!QSslSocket::supportsSsl()) {
        // Reported from the event loop, like every other failure to connect.
        QMetaObject::invokeMethod(
            this,
            [this] {
                reportFailed(QStringLiteral("TLS is not available here (no Qt TLS backend)"));
            },
            Qt::QueuedConnection);
        return;
    }
    QString error;
    const QSslConfiguration config = tlsConfiguration(a, &error);
    if (!error.isEmpty()) {
        QMetaObject::invokeMethod(
            this, [this, error] { reportFailed(error); }, Qt::QueuedConnection);
        return;
    }
    m_socket.setSslConfiguration(config);
    m_socket.connectToHostEncrypted(a.host, quint16(a.tcpPort()));
}

void TcpTransport::onConnected()
{
    // Small writes (a program on an attached stdin) go out at once.
    m_socket.setSocketOption(QAbstractSocket::LowDelayOption, 1);
    m_socket.setSocketOption(QAbstractSocket::KeepAliveOption, 1);
    if (!address().tls)
        reportOpened();
}

void TcpTransport::onError(QAbstractSocket::SocketError error)
{
    QString reason = m_socket.errorString();
    if (error == QAbstractSocket::SslHandshakeFailedError && !m_sslErrors.isEmpty())
        reason = QStringLiteral("TLS handshake failed: %1").arg(m_sslErrors);
    else if (error == QAbstractSocket::SslHandshakeFailedError ||
             error == QAbstractSocket::SslInternalError)
        reason = QStringLiteral("TLS: %1").arg(reason);
    if (state() == State::Opening) {
        reportFailed(reason);
        return;
    }
    if (state() != State::Open || error == QAbstractSocket::RemoteHostClosedError)
        return; // the end of the connection is reported by onDisconnected
    // Broken while open (the engine refused our certificate after the handshake, say): told with
    // the close, or now when no close is coming.
    m_brokenReason = reason;
    if (m_socket.state() == QAbstractSocket::UnconnectedState)
        reportFailed(reason);
}

void TcpTransport::onDisconnected()
{
    if (state() == State::Opening) {
        reportFailed(m_sslErrors.isEmpty()
                         ? QStringLiteral("closed during the TLS handshake")
                         : QStringLiteral("TLS handshake failed: %1").arg(m_sslErrors));
        return;
    }
    reportEnd();
}
