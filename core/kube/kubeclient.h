#pragma once

#include "kubeaccess.h"
#include "kubecredential.h"
#include "kubereply.h"

#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QObject>
#include <QStringList>
#include <memory>

class QNetworkReply;

// The Kubernetes API over HTTPS, minimal: JSON requests (get, post, del) with the access's TLS
// configuration (its CA as the only trust root, its client certificate, tls-server-name) and
// its bearer token, fetched before each request (a plugin's answer is cached; a rotated token
// file is re-read). A 401 makes a token file or exec plugin credential be fetched again and the
// request sent once more. Bodies are capped, requests have a deadline, redirects are not
// followed (they would carry the token elsewhere), and a non-2xx answer becomes a KubeError
// with the server's Status message. Watches and WebSocket streams are not here.
class KubeClient : public QObject
{
    Q_OBJECT

public:
    static constexpr qint64 kDefaultMaxBodyBytes = 16 * 1024 * 1024;
    static constexpr int kDefaultTimeoutMs = 30000;

    explicit KubeClient(const KubeAccess &access, QObject *parent = nullptr);

    const KubeAccess &access() const { return m_access; }
    void setMaxBodyBytes(qint64 bytes) { m_maxBodyBytes = bytes; }
    void setTimeoutMs(int ms) { m_timeoutMs = ms; }

    // `path` is the API path with its query: /api/v1/namespaces/NS/pods?labelSelector=…
    KubeReply *get(const QString &path);
    // The collection at `path` with only the objects that have all of `selector` ("key=value",
    // values as Kubernetes labels take them; none: all).
    KubeReply *list(const QString &path, const QStringList &selector);
    KubeReply *post(const QString &path, const QJsonObject &body);
    KubeReply *del(const QString &path, const QJsonObject &body = QJsonObject());
    // GET /version: whether the server answers and takes our credentials' TLS.
    KubeReply *ping();

private:
    struct Call;

    KubeReply *start(const QByteArray &verb, const QString &path, const QByteArray &body);
    void send(const std::shared_ptr<Call> &call);
    void transmit(const std::shared_ptr<Call> &call, const KubeCredential &credential);
    void onFinished(const std::shared_ptr<Call> &call, QNetworkReply *reply);
    QUrl urlFor(const QString &path) const;
    QString what(const Call &call) const;

    KubeAccess m_access;
    QNetworkAccessManager m_nam;
    qint64 m_maxBodyBytes = kDefaultMaxBodyBytes;
    int m_timeoutMs = kDefaultTimeoutMs;
};
