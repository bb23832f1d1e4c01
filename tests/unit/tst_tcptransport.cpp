#include "engineaddress.h"
#include "engineclient.h"
#include "enginereply.h"
#include "enginetransport.h"
#include "tst_kubepki.h"

#include <QSignalSpy>
#include <QSslKey>
#include <QSslServer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

namespace {

// A stand-in engine on a loopback port: answers every request head with a small version
// document, keeps the connection, and closes it after an answer when told to.
class FakeEngine : public QObject
{
public:
    bool closeAfterAnswer = false;
    int connections = 0;

    int handshakesStarted = 0; // TLS only

    quint16 listen()
    {
        m_server = std::make_unique<QTcpServer>();
        return start();
    }

    // TLS with `pki`'s certificate `name` (and its key), not asking for a client certificate.
    quint16 listenTls(const KubePki &pki, const QString &name)
    {
        QSslConfiguration c = QSslConfiguration::defaultConfiguration();
        c.setLocalCertificate(QSslCertificate::fromData(pki.read(name + ".crt")).value(0));
        c.setPrivateKey(QSslKey(pki.read(name + ".key"), QSsl::Ec));
        c.setPeerVerifyMode(QSslSocket::VerifyNone);
        auto server = std::make_unique<QSslServer>();
        server->setSslConfiguration(c);
        connect(server.get(), &QSslServer::startedEncryptionHandshake, this,
                [this] { ++handshakesStarted; });
        m_server = std::move(server);
        return start();
    }

private:
    quint16 start()
    {
        m_server->listen(QHostAddress::LocalHost);
        // A TLS connection is pending once its handshake is done.
        connect(m_server.get(), &QTcpServer::pendingConnectionAvailable, this, [this] {
            while (QTcpSocket *s = m_server->nextPendingConnection()) {
                ++connections;
                connect(s, &QTcpSocket::readyRead, this, [this, s] { answer(s); });
            }
        });
        return m_server->serverPort();
    }

    void answer(QTcpSocket *s)
    {
        m_buffers[s] += s->readAll();
        while (m_buffers[s].contains("\r\n\r\n")) {
            m_buffers[s].remove(0, m_buffers[s].indexOf("\r\n\r\n") + 4);
            const QByteArray body = R"({"ApiVersion":"1.41","Version":"1.0-fake"})";
            s->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                     QByteArray::number(body.size()) + "\r\n\r\n" + body);
            if (closeAfterAnswer)
                s->disconnectFromHost();
        }
    }

    std::unique_ptr<QTcpServer> m_server;
    QHash<QTcpSocket *, QByteArray> m_buffers;
};

EngineReply *waited(EngineReply *r)
{
    QSignalSpy spy(r, &EngineReply::finished);
    spy.wait(3 * EngineTransport::kConnectTimeoutMs);
    return r;
}

} // namespace

// Plain TCP to a loopback engine: requests, reuse of a kept-alive connection, and a connection
// the engine closed while idle not taken for reuse (the peek works on a TCP socket too).
class tst_TcpTransport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void reusesAKeptAliveConnection()
    {
        FakeEngine fake;
        const quint16 port = fake.listen();
        EngineClient engine(EngineAddress::parse(QStringLiteral("tcp://127.0.0.1:%1").arg(port)));
        QCOMPARE(engine.endpoint(), QStringLiteral("tcp://127.0.0.1:%1").arg(port));
        for (int i = 0; i < 3; ++i) {
            EngineReply *r = waited(engine.get("/version"));
            QVERIFY2(r->ok(), qPrintable(r->error().toString()));
            QCOMPARE(r->json().value(u"Version").toString(), QStringLiteral("1.0-fake"));
        }
        QCOMPARE(fake.connections, 1);
    }

    void aConnectionClosedWhileIdleIsNotReused()
    {
        FakeEngine fake;
        fake.closeAfterAnswer = true;
        const quint16 port = fake.listen();
        EngineClient engine(EngineAddress::parse(QStringLiteral("tcp://127.0.0.1:%1").arg(port)));
        for (int i = 0; i < 3; ++i) {
            EngineReply *r = waited(engine.get("/version"));
            QVERIFY2(r->ok(), qPrintable(r->error().toString()));
            // Give the close time to arrive on the idle connection before the next request.
            QTest::qWait(50);
        }
        QCOMPARE(fake.connections, 4); // the negotiation's and one per request
    }

    // TLS trusts the CA named for the engine and nothing else: without one nothing is sent (not
    // even a handshake); this machine's store, asked for, does not know the engine's CA; another
    // CA is refused; the engine's own CA is accepted.
    void tlsTrustsOnlyTheEnginesCa()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        KubePki pki(dir.filePath(QStringLiteral("pki")));
        const QString made = pki.make();
        QVERIFY2(made.isEmpty(), qPrintable(made));
        QVERIFY(QSslSocket::supportsSsl());
        FakeEngine fake;
        const quint16 port = fake.listenTls(pki, QStringLiteral("server"));
        EngineAddress a = EngineAddress::parse(QStringLiteral("tcp://127.0.0.1:%1").arg(port));
        a.tls = true;
        a.certFile = pki.path(QStringLiteral("alice.crt"));
        a.keyFile = pki.path(QStringLiteral("alice.key"));

        EngineClient noneEngine(a);
        EngineReply *none = waited(noneEngine.ping());
        QCOMPARE(int(none->error().kind), int(EngineError::Kind::Unreachable));
        QVERIFY2(none->error().message.contains(u"TLS with no CA named for the engine is refused"),
                 qPrintable(none->error().message));
        QCOMPARE(fake.handshakesStarted, 0);

        EngineAddress system = a;
        system.systemCa = true;
        EngineClient storeEngine(system);
        EngineReply *store = waited(storeEngine.ping());
        QVERIFY2(store->error().message.contains(u"TLS handshake failed"),
                 qPrintable(store->error().message));

        EngineAddress other = a;
        other.caFile = pki.path(QStringLiteral("other-ca.crt"));
        EngineClient wrongEngine(other);
        EngineReply *wrong = waited(wrongEngine.ping());
        QVERIFY2(wrong->error().message.contains(u"TLS handshake failed"),
                 qPrintable(wrong->error().message));
        QCOMPARE(fake.connections, 0);

        EngineAddress own = a;
        own.caFile = pki.path(QStringLiteral("ca.crt"));
        EngineClient okEngine(own);
        EngineReply *ok = waited(okEngine.get("/version"));
        QVERIFY2(ok->ok(), qPrintable(ok->error().toString()));
        QCOMPARE(ok->json().value(u"Version").toString(), QStringLiteral("1.0-fake"));
    }

    void refusedNamesTheAddress()
    {
        quint16 port;
        {
            QTcpServer probe;
            probe.listen(QHostAddress::LocalHost);
            port = probe.serverPort();
        }
        EngineClient engine(EngineAddress::parse(QStringLiteral("tcp://127.0.0.1:%1").arg(port)));
        EngineReply *r = waited(engine.ping());
        QCOMPARE(int(r->error().kind), int(EngineError::Kind::Unreachable));
        QCOMPARE(r->error().message,
                 QStringLiteral("cannot reach the container engine at tcp://127.0.0.1:%1: "
                                "Connection refused")
                     .arg(port));
    }
};

QTEST_GUILESS_MAIN(tst_TcpTransport)
#include "tst_tcptransport.moc"
