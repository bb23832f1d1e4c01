#include "kubestream.h"

#include "kubelog.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkRequest>
#include <QSslCertificate>
#include <QSslError>
#include <QUrlQuery>
#include <QWebSocket>
#include <QWebSocketHandshakeOptions>

namespace {

const QString kV5 = QStringLiteral("v5.channel.k8s.io");
const QString kV4 = QStringLiteral("v4.channel.k8s.io");

QUrl streamUrl(const KubeAccess &access, const QString &pod, const QString &what,
               const QUrlQuery &query)
{
    QUrl url = access.server;
    url.setScheme(url.scheme() == u"http" ? QStringLiteral("ws") : QStringLiteral("wss"));
    url.setPath(
        access.server.path() +
        QStringLiteral("/api/v1/namespaces/%1/pods/%2/%3").arg(access.namespaceName, pod, what));
    url.setQuery(query);
    return url;
}

// RFC 6125 as far as a cluster's certificate needs it: the name itself, or a wildcard for its
// first label.
bool certificateNames(const QSslCertificate &cert, const QString &name)
{
    const QString wanted = name.toLower();
    QStringList names = cert.subjectAlternativeNames().values(QSsl::DnsEntry);
    names += cert.subjectAlternativeNames().values(QSsl::IpAddressEntry);
    if (names.isEmpty())
        names = cert.subjectInfo(QSslCertificate::CommonName);
    for (const QString &n : std::as_const(names)) {
        const QString candidate = n.toLower();
        if (candidate == wanted)
            return true;
        if (candidate.startsWith(QLatin1String("*.")) && wanted.contains(u'.') &&
            wanted.mid(wanted.indexOf(u'.')) == candidate.mid(1))
            return true;
    }
    return false;
}

} // namespace

KubeStream *KubeStream::attach(const KubeAccess &access, const QString &pod,
                               const QString &container, QObject *parent)
{
    QUrlQuery query;
    query.addQueryItem(QStringLiteral("container"), container);
    query.addQueryItem(QStringLiteral("stdin"), QStringLiteral("true"));
    query.addQueryItem(QStringLiteral("stdout"), QStringLiteral("true"));
    query.addQueryItem(QStringLiteral("stderr"), QStringLiteral("true"));
    return new KubeStream(access, streamUrl(access, pod, QStringLiteral("attach"), query), parent);
}

KubeStream *KubeStream::exec(const KubeAccess &access, const QString &pod, const QString &container,
                             const QStringList &command, bool withStdin, QObject *parent)
{
    QUrlQuery query;
    query.addQueryItem(QStringLiteral("container"), container);
    for (const QString &arg : command)
        query.addQueryItem(QStringLiteral("command"),
                           QString::fromLatin1(QUrl::toPercentEncoding(arg)));
    if (withStdin)
        query.addQueryItem(QStringLiteral("stdin"), QStringLiteral("true"));
    query.addQueryItem(QStringLiteral("stdout"), QStringLiteral("true"));
    query.addQueryItem(QStringLiteral("stderr"), QStringLiteral("true"));
    return new KubeStream(access, streamUrl(access, pod, QStringLiteral("exec"), query), parent);
}

KubeStream::KubeStream(const KubeAccess &access, const QUrl &url, QObject *parent)
    : QObject(parent), m_access(access), m_url(url)
{
    m_handshake.setSingleShot(true);
    connect(&m_handshake, &QTimer::timeout, this, [this] {
        fail(QStringLiteral("no WebSocket upgrade from %1 within %2 s")
                 .arg(m_access.server.toString(QUrl::RemoveUserInfo))
                 .arg(kHandshakeTimeoutMs / 1000));
    });
    m_handshake.start(kHandshakeTimeoutMs);
    // From the event loop, so that the caller has connected first.
    QMetaObject::invokeMethod(this, &KubeStream::open, Qt::QueuedConnection);
}

KubeStream::~KubeStream()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket->deleteLater();
    }
}

void KubeStream::open()
{
    if (m_done)
        return;
    QPointer<KubeStream> self(this);
    m_access.credentials->fetch([self](const KubeCredential &credential) {
        if (!self || self->m_done)
            return;
        if (!credential.ok()) {
            self->fail(credential.error);
            return;
        }
        auto *socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest, self);
        self->m_socket = socket;
        QSslConfiguration ssl = self->m_access.ssl;
        if (!credential.certificateChain.isEmpty()) {
            ssl.setLocalCertificateChain(credential.certificateChain);
            ssl.setPrivateKey(credential.privateKey);
        }
        socket->setSslConfiguration(ssl);
        QNetworkRequest request(self->m_url);
        if (!credential.token.isEmpty())
            request.setRawHeader("Authorization", "Bearer " + credential.token);
        if (!self->m_access.peerVerifyName.isEmpty())
            request.setPeerVerifyName(self->m_access.peerVerifyName);
        QWebSocketHandshakeOptions options;
        options.setSubprotocols({kV5, kV4});

        connect(socket, &QWebSocket::sslErrors, self, [self, socket](const QList<QSslError> &e) {
            const QString name = self->m_access.peerVerifyName;
            if (name.isEmpty())
                return;
            // Only a host name that is not the URL's, on a certificate that names tls-server-name.
            for (const QSslError &error : e)
                if (error.error() != QSslError::HostNameMismatch ||
                    !certificateNames(error.certificate(), name))
                    return;
            socket->ignoreSslErrors(e);
        });
        connect(socket, &QWebSocket::connected, self, [self, socket] {
            self->m_handshake.stop();
            self->m_protocol = socket->subprotocol();
            if (self->m_protocol != kV5 && self->m_protocol != kV4) {
                self->fail(QStringLiteral("the API server did not agree on a stream protocol "
                                          "(%1 or %2)")
                               .arg(kV5, kV4));
                return;
            }
            self->m_established = true;
            qCDebug(lcKube).noquote()
                << "stream" << self->m_url.path() << "established with" << self->m_protocol;
            Q_EMIT self->established();
        });
        connect(socket, &QWebSocket::binaryMessageReceived, self, &KubeStream::onMessage);
        connect(socket, &QWebSocket::disconnected, self, &KubeStream::onDisconnected);
        // A refused upgrade or a failed connection: disconnected() may not follow while the
        // socket never connected.
        connect(socket, qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), self.data(),
                [self, socket](QAbstractSocket::SocketError) {
                    if (!self->m_established)
                        self->fail(QStringLiteral("the API server refused the stream %1: %2")
                                       .arg(self->m_url.path(), socket->errorString()));
                });
        socket->open(request, options);
    });
}

void KubeStream::write(const QByteArray &bytes)
{
    if (!m_socket || !m_established || m_done)
        return;
    // One message per write; the server takes them in order.
    m_socket->sendBinaryMessage(char(Stdin) + bytes);
}

bool KubeStream::closeStdin()
{
    if (!canCloseStdin() || !m_socket || m_done)
        return false;
    m_socket->sendBinaryMessage(QByteArray{char(Close), char(Stdin)});
    return true;
}

void KubeStream::close()
{
    m_done = true;
    m_handshake.stop();
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->close();
    }
}

void KubeStream::onMessage(const QByteArray &message)
{
    if (m_done || message.isEmpty())
        return;
    const int channel = quint8(message.at(0));
    const QByteArray payload = message.mid(1);
    switch (channel) {
    case Stdout:
    case Stderr:
        if (!payload.isEmpty())
            Q_EMIT output(channel, payload);
        break;
    case Error:
        // The Status may come in more than one message; the last complete one counts.
        m_status = QJsonDocument::fromJson(payload).object();
        break;
    default:
        break;
    }
}

void KubeStream::onDisconnected()
{
    if (m_done)
        return;
    if (!m_established) {
        const QString why = m_socket ? m_socket->errorString() : QString();
        fail(QStringLiteral("the API server refused the stream %1: %2")
                 .arg(m_url.path(), why.isEmpty() ? QStringLiteral("connection closed") : why));
        return;
    }
    if (m_status.isEmpty()) {
        // A server ends every stream with its Status: without one the connection broke (the API
        // server or the node went away), and what came may not be all.
        fail(QStringLiteral("the stream %1 broke: %2")
                 .arg(m_url.path(), m_socket && !m_socket->errorString().isEmpty()
                                        ? m_socket->errorString()
                                        : QStringLiteral("closed without the server's Status")));
        return;
    }
    m_done = true;
    Q_EMIT finished();
}

void KubeStream::fail(const QString &error)
{
    if (m_done)
        return;
    m_done = true;
    m_handshake.stop();
    m_error = error;
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
    qCDebug(lcKube).noquote() << "stream" << m_url.path() << "failed:" << error;
    Q_EMIT failed(error);
}

int KubeStream::exitCode() const
{
    const QString status = m_status.value(u"status").toString();
    if (status == u"Success")
        return 0;
    if (m_status.value(u"reason").toString() != u"NonZeroExitCode")
        return -1;
    for (const QJsonValue &cause : m_status.value(u"details").toObject().value(u"causes").toArray())
        if (cause[u"reason"].toString() == u"ExitCode") {
            bool ok = false;
            const int code = cause[u"message"].toString().toInt(&ok);
            return ok ? code : -1;
        }
    return -1;
}

QString KubeStream::message() const
{
    if (!m_error.isEmpty())
        return m_error;
    return m_status.value(u"message").toString();
}
