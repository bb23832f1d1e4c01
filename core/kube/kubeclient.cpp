#include "kubeclient.h"

#include "kubelog.h"

#include <QJsonDocument>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QTimer>
#include <QUrl>

struct KubeClient::Call
{
    QByteArray verb;
    QString path;
    QByteArray body;
    QPointer<KubeReply> reply;
    bool retried = false;
    // What the current attempt saw.
    QByteArray received;
    QStringList sslErrors;
    bool tooLarge = false;
    bool timedOut = false;
};

KubeClient::KubeClient(const KubeAccess &access, QObject *parent)
    : QObject(parent), m_access(access)
{
    // Kubernetes never redirects an API call; following one would carry the token elsewhere.
    m_nam.setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
}

KubeReply *KubeClient::get(const QString &path)
{
    return start("GET", path, {});
}

KubeReply *KubeClient::list(const QString &path, const QStringList &selector)
{
    if (selector.isEmpty())
        return get(path);
    return get(path + QStringLiteral("?labelSelector=") +
               QString::fromLatin1(QUrl::toPercentEncoding(selector.join(u','))));
}

KubeReply *KubeClient::post(const QString &path, const QJsonObject &body)
{
    return start("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

KubeReply *KubeClient::del(const QString &path, const QJsonObject &body)
{
    return start("DELETE", path,
                 body.isEmpty() ? QByteArray()
                                : QJsonDocument(body).toJson(QJsonDocument::Compact));
}

KubeReply *KubeClient::ping()
{
    return get(QStringLiteral("/version"));
}

KubeReply *KubeClient::start(const QByteArray &verb, const QString &path, const QByteArray &body)
{
    auto call = std::make_shared<Call>();
    call->verb = verb;
    call->path = path;
    call->body = body;
    call->reply = new KubeReply(this);
    // Sent from the event loop, so that finished() never comes before the caller connected.
    QMetaObject::invokeMethod(
        this, [this, call] { send(call); }, Qt::QueuedConnection);
    return call->reply;
}

QUrl KubeClient::urlFor(const QString &path) const
{
    // The server URL may carry a prefix (a proxying front end such as Rancher's).
    QUrl url = m_access.server;
    const qsizetype q = path.indexOf(u'?');
    url.setPath(m_access.server.path() + (q < 0 ? path : path.left(q)));
    if (q >= 0)
        url.setQuery(path.mid(q + 1));
    return url;
}

QString KubeClient::what(const Call &call) const
{
    return QStringLiteral("%1 %2").arg(QString::fromLatin1(call.verb), call.path);
}

void KubeClient::send(const std::shared_ptr<Call> &call)
{
    if (!call->reply)
        return; // the caller gave up on it
    QPointer<KubeClient> self(this);
    m_access.credentials->fetch([self, call](const KubeCredential &credential) {
        if (!self || !call->reply)
            return;
        if (!credential.ok()) {
            call->reply->finish(0, {},
                                KubeError{KubeError::Kind::Credentials, 0, {}, credential.error});
            return;
        }
        self->transmit(call, credential);
    });
}

void KubeClient::transmit(const std::shared_ptr<Call> &call, const KubeCredential &credential)
{
    call->received.clear();
    call->sslErrors.clear();
    call->tooLarge = false;
    call->timedOut = false;

    QNetworkRequest request(urlFor(call->path));
    QSslConfiguration ssl = m_access.ssl;
    if (!credential.certificateChain.isEmpty()) {
        ssl.setLocalCertificateChain(credential.certificateChain);
        ssl.setPrivateKey(credential.privateKey);
    }
    request.setSslConfiguration(ssl);
    if (!m_access.peerVerifyName.isEmpty())
        request.setPeerVerifyName(m_access.peerVerifyName);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setRawHeader("Accept", "application/json");
#ifdef CODE_SANDBOX_VERSION
    request.setHeader(QNetworkRequest::UserAgentHeader,
                      QByteArrayLiteral("code-sandbox/" CODE_SANDBOX_VERSION));
#endif
    if (!credential.token.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + credential.token);
    if (!call->body.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader,
                          QByteArrayLiteral("application/json"));

    qCDebug(lcKube).noquote() << what(*call) << "to" << m_access.server.toString();
    QNetworkReply *reply = m_nam.sendCustomRequest(request, call->verb, call->body);

    auto *deadline = new QTimer(reply);
    deadline->setSingleShot(true);
    connect(deadline, &QTimer::timeout, reply, [call, reply] {
        call->timedOut = true;
        reply->abort();
    });
    deadline->start(m_timeoutMs);

    const qint64 cap = m_maxBodyBytes;
    connect(reply, &QNetworkReply::metaDataChanged, reply, [call, reply, cap] {
        bool known = false;
        const qint64 length =
            reply->header(QNetworkRequest::ContentLengthHeader).toLongLong(&known);
        if (known && length > cap) {
            call->tooLarge = true;
            reply->abort();
        }
    });
    connect(reply, &QNetworkReply::readyRead, reply, [call, reply, cap] {
        call->received += reply->read(cap + 1 - call->received.size());
        if (call->received.size() > cap) {
            call->tooLarge = true;
            reply->abort();
        }
    });
    connect(reply, &QNetworkReply::sslErrors, reply, [call](const QList<QSslError> &errors) {
        // Not ignored: the connection fails with them, and the message says which.
        for (const QSslError &e : errors)
            call->sslErrors.append(e.errorString());
    });
    connect(reply, &QNetworkReply::finished, this,
            [this, call, reply] { onFinished(call, reply); });
}

void KubeClient::onFinished(const std::shared_ptr<Call> &call, QNetworkReply *reply)
{
    reply->deleteLater();
    if (!call->reply)
        return;
    if (!call->tooLarge && reply->isOpen()) {
        call->received += reply->read(m_maxBodyBytes + 1 - call->received.size());
        call->tooLarge = call->received.size() > m_maxBodyBytes;
    }
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QString server = m_access.server.toString();
    KubeError error;
    if (call->tooLarge) {
        error = {KubeError::Kind::TooLarge,
                 status,
                 {},
                 QStringLiteral("the answer to %1 from %2 is larger than %3 bytes")
                     .arg(what(*call), server)
                     .arg(m_maxBodyBytes)};
    } else if (call->timedOut) {
        error = {KubeError::Kind::Timeout,
                 0,
                 {},
                 QStringLiteral("no answer to %1 from %2 within %3 s")
                     .arg(what(*call), server)
                     .arg(m_timeoutMs / 1000.0)};
    } else if (status == 0) {
        const bool tls =
            !call->sslErrors.isEmpty() || reply->error() == QNetworkReply::SslHandshakeFailedError;
        if (tls) {
            const QString why = call->sslErrors.isEmpty()
                                    ? reply->errorString()
                                    : call->sslErrors.join(QStringLiteral("; "));
            error = {KubeError::Kind::Tls,
                     0,
                     {},
                     QStringLiteral("TLS with the API server of %1 failed: %2")
                         .arg(m_access.description(), why)};
        } else {
            error = {KubeError::Kind::Unreachable,
                     0,
                     {},
                     QStringLiteral("cannot reach the API server of %1: %2")
                         .arg(m_access.description(), reply->errorString())};
        }
    } else if (status == 401 && !call->retried && m_access.credentials->canRefresh()) {
        // The token may have rotated or expired early: fetch it again and retry once, on a new
        // connection in case a plugin's client certificate changed.
        qCInfo(lcKube).noquote() << what(*call) << "was refused (401): fetching"
                                 << m_access.credentials->describe() << "again";
        call->retried = true;
        m_access.credentials->invalidate();
        m_nam.clearConnectionCache();
        send(call);
        return;
    } else if (status >= 400) {
        error = KubeError::fromHttp(status, call->received);
    } else if (status >= 300) {
        error = {KubeError::Kind::Http,
                 status,
                 {},
                 QStringLiteral("the API server redirected %1 (HTTP %2), which is not followed")
                     .arg(what(*call))
                     .arg(status)};
    }
    if (error.isError())
        qCDebug(lcKube).noquote() << what(*call) << "failed:" << error.message;
    call->reply->finish(status, call->tooLarge ? QByteArray() : call->received, error);
}
