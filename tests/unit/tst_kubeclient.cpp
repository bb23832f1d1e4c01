#include "kubeclient.h"
#include "kubeconfig.h"
#include "tst_kubepki.h"

#include <QFile>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QSslKey>
#include <QSslSocket>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <functional>

namespace {

// A stand-in API server on a loopback port, over real TLS (QSslSocket on a QTcpServer, as Qt
// 6.4 has no QSslServer): it presents the certificate it is given, asks for a client
// certificate from the client CA when told to, and answers each request with what `answer`
// returns. It records what it saw, so that the test can check the token and the certificate.
class ApiServer : public QTcpServer
{
public:
    struct Request
    {
        QByteArray method;
        QByteArray path;
        QByteArray authorization;
        QByteArray contentType;
        QByteArray body;
        QString clientCommonName; // empty: no client certificate
    };
    struct Answer
    {
        int status = 200;
        QByteArray body;
    };

    ApiServer(const KubePki &pki, const QString &certName, bool requireClientCert)
    {
        m_config = QSslConfiguration::defaultConfiguration();
        m_config.setLocalCertificate(
            QSslCertificate::fromData(pki.read(certName + ".crt")).value(0));
        m_config.setPrivateKey(QSslKey(pki.read(certName + ".key"), QSsl::Ec));
        if (requireClientCert) {
            m_config.setPeerVerifyMode(QSslSocket::VerifyPeer);
            m_config.setCaCertificates(QSslCertificate::fromData(pki.read("client-ca.crt")));
        } else {
            m_config.setPeerVerifyMode(QSslSocket::VerifyNone);
        }
        listen(QHostAddress::LocalHost);
    }

    QString url() const { return QStringLiteral("https://127.0.0.1:%1").arg(serverPort()); }

    std::function<Answer(const Request &)> answer = [](const Request &) {
        return Answer{200, "{\"major\":\"1\",\"minor\":\"30\",\"gitVersion\":\"v1.30.0-test\"}"};
    };
    QList<Request> requests;
    int handshakes = 0; // completed
    int failedHandshakes = 0;

protected:
    void incomingConnection(qintptr descriptor) override
    {
        auto *s = new QSslSocket(this);
        if (!s->setSocketDescriptor(descriptor)) {
            delete s;
            return;
        }
        s->setSslConfiguration(m_config);
        connect(s, &QSslSocket::encrypted, this, [this] { ++handshakes; });
        connect(s, &QSslSocket::sslErrors, this,
                [this](const QList<QSslError> &) { ++failedHandshakes; });
        connect(s, &QSslSocket::readyRead, this, [this, s] { read(s); });
        connect(s, &QSslSocket::disconnected, s, &QObject::deleteLater);
        s->startServerEncryption();
    }

private:
    void read(QSslSocket *s)
    {
        QByteArray &buffer = m_buffers[s];
        buffer += s->readAll();
        const qsizetype headEnd = buffer.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return;
        Request r;
        const QList<QByteArray> lines = buffer.left(headEnd).split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        r.method = first.value(0);
        r.path = first.value(1);
        qsizetype length = 0;
        for (const QByteArray &line : lines.mid(1)) {
            const qsizetype colon = line.indexOf(':');
            const QByteArray name = line.left(colon).trimmed().toLower();
            const QByteArray value = line.mid(colon + 1).trimmed();
            if (name == "authorization")
                r.authorization = value;
            else if (name == "content-type")
                r.contentType = value;
            else if (name == "content-length")
                length = value.toLongLong();
        }
        if (buffer.size() < headEnd + 4 + length)
            return;
        r.body = buffer.mid(headEnd + 4, length);
        buffer.remove(0, headEnd + 4 + length);
        if (!s->peerCertificate().isNull())
            r.clientCommonName =
                s->peerCertificate().subjectInfo(QSslCertificate::CommonName).value(0);
        requests.append(r);
        const Answer a = answer(r);
        s->write("HTTP/1.1 " + QByteArray::number(a.status) +
                 " X\r\nContent-Type: application/json\r\nContent-Length: " +
                 QByteArray::number(a.body.size()) + "\r\nConnection: close\r\n\r\n" + a.body);
        s->disconnectFromHost();
    }

    QSslConfiguration m_config;
    QHash<QSslSocket *, QByteArray> m_buffers;
};

KubeReply *waited(KubeReply *r)
{
    if (!r->isFinished()) {
        QSignalSpy spy(r, &KubeReply::finished);
        spy.wait(20000);
    }
    return r;
}

void write(const QString &path, const QByteArray &content, bool executable = false)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(content);
    f.close();
    if (executable)
        f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
}

} // namespace

class tst_KubeClient : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_pki = new KubePki(m_dir.filePath(QStringLiteral("pki")));
        const QString error = m_pki->make();
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(QSslSocket::supportsSsl());
    }
    void cleanupTestCase() { delete m_pki; }

    // The bearer token goes to a server whose certificate the cluster's CA signed; /version
    // comes back.
    void bearerTokenToTheClustersServer()
    {
        ApiServer server(*m_pki, QStringLiteral("server"), false);
        const KubeConfig::Result r = resolve(server.url(), "    token: secret-token-1\n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        KubeClient client(r.access);
        KubeReply *reply = waited(client.ping());
        QVERIFY2(reply->ok(), qPrintable(reply->error().toString()));
        QCOMPARE(reply->status(), 200);
        QCOMPARE(reply->json().value(u"gitVersion").toString(), QStringLiteral("v1.30.0-test"));
        QCOMPARE(server.requests.size(), 1);
        QCOMPARE(server.requests[0].method, QByteArray("GET"));
        QCOMPARE(server.requests[0].path, QByteArray("/version"));
        QCOMPARE(server.requests[0].authorization, QByteArray("Bearer secret-token-1"));
    }

    // The cluster's CA is the only root: a server with a certificate from another CA is refused
    // before any request (and so any token) reaches it; trusting that CA instead works.
    void aServerFromAnotherCaIsRefused()
    {
        ApiServer server(*m_pki, QStringLiteral("other-server"), false);
        KubeConfig::Result r = resolve(server.url(), "    token: secret-token-1\n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        KubeClient client(r.access);
        KubeReply *reply = waited(client.ping());
        QVERIFY(reply->isFinished());
        QCOMPARE(int(reply->error().kind), int(KubeError::Kind::Tls));
        QVERIFY2(reply->error().message.startsWith(
                     QStringLiteral("TLS with the API server of context test (%1, namespace "
                                    "default) failed: ")
                         .arg(server.url())),
                 qPrintable(reply->error().message));
        QVERIFY(!reply->error().message.contains(QStringLiteral("secret")));
        QVERIFY(server.requests.isEmpty());
        QCOMPARE(server.handshakes, 0);

        r = resolve(server.url(), "    token: secret-token-1\n", QStringLiteral("other-ca.crt"));
        KubeClient trusting(r.access);
        QVERIFY2(waited(trusting.ping())->ok(), "the same server passes with its own CA");
    }

    // tls-server-name: a certificate for kube.test only is accepted at 127.0.0.1 when the
    // cluster names it, and refused otherwise.
    void tlsServerName()
    {
        ApiServer server(*m_pki, QStringLiteral("named"), false);
        KubeConfig::Result r = resolve(server.url(), "    token: t\n");
        KubeClient without(r.access);
        QCOMPARE(int(waited(without.ping())->error().kind), int(KubeError::Kind::Tls));
        r = resolve(server.url(), "    token: t\n", QStringLiteral("ca.crt"),
                    "    tls-server-name: kube.test\n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        KubeClient named(r.access);
        KubeReply *reply = waited(named.ping());
        QVERIFY2(reply->ok(), qPrintable(reply->error().toString()));
    }

    // Mutual TLS: the server wants a certificate from the client CA; the kubeconfig's (files
    // relative to it) is presented. Without it the handshake fails.
    void mutualTls()
    {
        ApiServer server(*m_pki, QStringLiteral("server"), true);
        KubeConfig::Result r = resolve(server.url(), "    client-certificate: ../pki/alice.crt\n"
                                                     "    client-key: ../pki/alice.key\n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        KubeClient client(r.access);
        KubeReply *reply = waited(client.ping());
        QVERIFY2(reply->ok(), qPrintable(reply->error().toString()));
        QCOMPARE(server.requests.size(), 1);
        QCOMPARE(server.requests[0].clientCommonName, QStringLiteral("alice"));
        QVERIFY(server.requests[0].authorization.isEmpty());

        r = resolve(server.url(), "    token: t\n");
        KubeClient anonymous(r.access);
        reply = waited(anonymous.ping());
        QVERIFY(reply->isFinished());
        QVERIFY(reply->error().isError());
        QCOMPARE(server.requests.size(), 1);
    }

    // A 403 with the API server's Status body becomes its message, as kubectl shows it; the
    // POST carried its JSON body.
    void forbiddenBecomesTheStatusMessage()
    {
        ApiServer server(*m_pki, QStringLiteral("server"), false);
        server.answer = [](const ApiServer::Request &) {
            return ApiServer::Answer{
                403,
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                "\"message\":\"pods is forbidden: User \\\"alice\\\" cannot create resource "
                "\\\"pods\\\" "
                "in API group \\\"\\\" in the namespace \\\"sandbox\\\"\",\"reason\":\"Forbidden\","
                "\"details\":{\"kind\":\"pods\"},\"code\":403}"};
        };
        const KubeConfig::Result r = resolve(server.url(), "    token: t\n");
        KubeClient client(r.access);
        KubeReply *reply = waited(client.post(QStringLiteral("/api/v1/namespaces/sandbox/pods"),
                                              QJsonObject{{QStringLiteral("kind"), "Pod"}}));
        QCOMPARE(int(reply->error().kind), int(KubeError::Kind::Http));
        QCOMPARE(reply->error().status, 403);
        QCOMPARE(reply->error().reason, QStringLiteral("Forbidden"));
        QCOMPARE(reply->error().message,
                 QStringLiteral("the cluster refused (Forbidden): pods is forbidden: User "
                                "\"alice\" cannot create resource \"pods\" in API group \"\" in "
                                "the namespace \"sandbox\""));
        QCOMPARE(server.requests.size(), 1);
        QCOMPARE(server.requests[0].method, QByteArray("POST"));
        QCOMPARE(server.requests[0].path, QByteArray("/api/v1/namespaces/sandbox/pods"));
        QCOMPARE(server.requests[0].contentType, QByteArray("application/json"));
        QCOMPARE(QJsonDocument::fromJson(server.requests[0].body).object().value(u"kind"),
                 QJsonValue(QStringLiteral("Pod")));
    }

    // A 401 makes an exec plugin run again and the request go once more, with the new token;
    // a second 401 is the answer.
    void execTokenRefreshedOnceOn401()
    {
        ApiServer server(*m_pki, QStringLiteral("server"), false);
        QTemporaryDir dir;
        const QString runs = dir.filePath(QStringLiteral("runs"));
        write(dir.filePath(QStringLiteral("cred.sh")),
              "#!/bin/sh\necho run >> " + runs.toUtf8() + "\nn=$(wc -l < " + runs.toUtf8() +
                  ")\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
                  "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"exec-%s\"}}' \"$n\"\n",
              true);
        server.answer = [](const ApiServer::Request &r) {
            if (r.authorization == "Bearer exec-2")
                return ApiServer::Answer{200, "{\"kind\":\"PodList\",\"items\":[]}"};
            return ApiServer::Answer{401,
                                     "{\"kind\":\"Status\",\"status\":\"Failure\","
                                     "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\","
                                     "\"code\":401}"};
        };
        const KubeConfig::Result r = resolve(
            server.url(), "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                          "      command: " +
                              dir.filePath(QStringLiteral("cred.sh")).toUtf8() + "\n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        KubeClient client(r.access);
        KubeReply *reply = waited(client.get(QStringLiteral("/api/v1/namespaces/default/pods")));
        QVERIFY2(reply->ok(), qPrintable(reply->error().toString()));
        QCOMPARE(reply->json().value(u"kind").toString(), QStringLiteral("PodList"));
        QCOMPARE(server.requests.size(), 2);
        QCOMPARE(server.requests[0].authorization, QByteArray("Bearer exec-1"));
        QCOMPARE(server.requests[1].authorization, QByteArray("Bearer exec-2"));

        // exec-2 is cached; the server now refuses it and exec-3 too: one retry, then the 401.
        server.answer = [](const ApiServer::Request &) {
            return ApiServer::Answer{401, "{\"kind\":\"Status\",\"message\":\"Unauthorized\","
                                          "\"reason\":\"Unauthorized\",\"code\":401}"};
        };
        reply = waited(client.get(QStringLiteral("/api/v1/namespaces/default/pods")));
        QCOMPARE(reply->error().status, 401);
        QCOMPARE(server.requests.size(), 4);
        QCOMPARE(server.requests[2].authorization, QByteArray("Bearer exec-2"));
        QCOMPARE(server.requests[3].authorization, QByteArray("Bearer exec-3"));
    }

    // An exec plugin's client certificate is presented for mutual TLS.
    void execClientCertificate()
    {
        ApiServer server(*m_pki, QStringLiteral("server"), true);
        QTemporaryDir dir;
        const QJsonObject credential{
            {QStringLiteral("apiVersion"), QStringLiteral("client.authentication.k8s.io/v1")},
            {QStringLiteral("kind"), QStringLiteral("ExecCredential")},
            {QStringLiteral("status"),
             QJsonObject{{QStringLiteral("clientCertificateData"),
                          QString::fromUtf8(m_pki->read(QStringLiteral("alice.crt")))},
                         {QStringLiteral("clientKeyData"),
                          QString::fromUtf8(m_pki->read(QStringLiteral("alice.key")))}}}};
        write(dir.filePath(QStringLiteral("cred.json")), QJsonDocument(credential).toJson());
        write(dir.filePath(QStringLiteral("cred.sh")),
              "#!/bin/sh\ncat " + dir.filePath(QStringLiteral("cred.json")).toUtf8() + "\n", true);
        const KubeConfig::Result r =
            resolve(server.url(), "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                                  "      command: " +
                                      dir.filePath(QStringLiteral("cred.sh")).toUtf8() + "\n");
        QVERIFY2(r.ok(), qPrintable(r.error));
        KubeClient client(r.access);
        KubeReply *reply = waited(client.ping());
        QVERIFY2(reply->ok(), qPrintable(reply->error().toString()));
        QCOMPARE(server.requests.value(0).clientCommonName, QStringLiteral("alice"));
    }

    // A body past the client's cap is not kept; a DELETE carries its options.
    void bodyCapAndDelete()
    {
        ApiServer server(*m_pki, QStringLiteral("server"), false);
        server.answer = [](const ApiServer::Request &r) {
            if (r.method == "DELETE")
                return ApiServer::Answer{200, "{\"kind\":\"Pod\"}"};
            return ApiServer::Answer{200, "[\"" + QByteArray(5000, 'x') + "\"]"};
        };
        const KubeConfig::Result r = resolve(server.url(), "    token: t\n");
        KubeClient client(r.access);
        client.setMaxBodyBytes(1000);
        KubeReply *reply = waited(client.get(QStringLiteral("/api/v1/pods")));
        QCOMPARE(int(reply->error().kind), int(KubeError::Kind::TooLarge));
        QVERIFY(reply->body().isEmpty());
        reply = waited(client.del(QStringLiteral("/api/v1/namespaces/default/pods/p1"),
                                  QJsonObject{{QStringLiteral("gracePeriodSeconds"), 0}}));
        QVERIFY2(reply->ok(), qPrintable(reply->error().toString()));
        QCOMPARE(server.requests.last().method, QByteArray("DELETE"));
        QCOMPARE(server.requests.last().body, QByteArray("{\"gracePeriodSeconds\":0}"));
    }

    void unreachable()
    {
        quint16 port;
        {
            QTcpServer probe;
            probe.listen(QHostAddress::LocalHost);
            port = probe.serverPort();
        }
        const KubeConfig::Result r =
            resolve(QStringLiteral("https://127.0.0.1:%1").arg(port), "    token: t\n");
        KubeClient client(r.access);
        KubeReply *reply = waited(client.ping());
        QCOMPARE(int(reply->error().kind), int(KubeError::Kind::Unreachable));
        QVERIFY2(reply->error().message.startsWith(
                     QStringLiteral("cannot reach the API server of context test "
                                    "(https://127.0.0.1:%1, namespace default): ")
                         .arg(port)),
                 qPrintable(reply->error().message));
    }

private:
    // A kubeconfig in its own folder beside the certificates: the cluster at `server` with
    // `caFile` as its CA (as data), and `user` as the user's body.
    KubeConfig::Result resolve(const QString &server, const QByteArray &user,
                               const QString &caFile = QStringLiteral("ca.crt"),
                               const QByteArray &clusterExtra = {})
    {
        const QString path = m_dir.filePath(QStringLiteral("conf/config"));
        QDir().mkpath(m_dir.filePath(QStringLiteral("conf")));
        write(path, "current-context: test\nclusters:\n- name: c\n  cluster:\n    server: " +
                        server.toUtf8() +
                        "\n    certificate-authority-data: " + m_pki->read(caFile).toBase64() +
                        "\n" + clusterExtra + "users:\n- name: u\n  user:\n" + user +
                        "contexts:\n- {name: test, context: {cluster: c, user: u}}\n");
        QProcessEnvironment env;
        env.insert(QStringLiteral("KUBECONFIG"), path);
        env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
        KubeConfig::Options o;
        o.serviceAccountDir = QStringLiteral("/nonexistent");
        return KubeConfig::resolve(KubeTarget::parse(QStringLiteral("k8s://")), env, o);
    }

    QTemporaryDir m_dir;
    KubePki *m_pki = nullptr;
};

QTEST_GUILESS_MAIN(tst_KubeClient)
#include "tst_kubeclient.moc"
