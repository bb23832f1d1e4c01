#include "engineaddress.h"
#include "engineclient.h"
#include "enginereply.h"
#include "enginetransport.h"

#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

namespace {

// A stand-in engine on a loopback port: answers every request head with a small version
// document, keeps the connection, and closes it after an answer when told to.
class FakeEngine : public QObject
{
public:
    bool closeAfterAnswer = false;
    int connections = 0;

    quint16 listen()
    {
        m_server.listen(QHostAddress::LocalHost);
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server.nextPendingConnection()) {
                ++connections;
                connect(s, &QTcpSocket::readyRead, this, [this, s] { answer(s); });
            }
        });
        return m_server.serverPort();
    }

private:
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

    QTcpServer m_server;
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
