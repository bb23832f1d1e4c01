// cs-gateway, the egress gateway program, on loopback with no engine: its control channel
// (grant, revoke, verdict), plain-HTTP forwarding and CONNECT tunnels to origin servers the test
// runs, and every refusal — an unlisted host, a wrong credential, a name that resolves inward, an
// address through a name pattern, a TLS server name that is not the CONNECT host, no TLS at all,
// a held connection denied or unanswered — its chaining through an upstream proxy of the
// host's, and its end with stdin. And its secrets: put in for their hosts' requests (over TLS it
// terminates with a certificate from the authority it was sent), masked in the answers, kept from
// every other host, from its stdout and from its errors; a real host it cannot verify is not sent
// one.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslServer>
#include <QSslSocket>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

// With the openssl program, into `dir`: a CA (ca.pem) and world.test's certificate from it
// (server.pem, server.key), as a real host has; the authority the gateway signs with
// (authority.pem, authority.key: CA:TRUE, and a subject key identifier that the certificates it
// makes point to); and an unrelated CA (stranger.pem) for a trust store that lacks world.test's.
bool makeCertificates(const QString &dir)
{
    const auto run = [&dir](const QStringList &args) {
        QProcess p;
        p.setWorkingDirectory(dir);
        p.start(QStringLiteral("openssl"), args);
        if (p.waitForFinished(30000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0)
            return true;
        // Its progress dots otherwise: only a failure's words are worth showing.
        qWarning().noquote() << "openssl" << args.join(u' ') << "failed:" << p.errorString()
                             << p.readAllStandardError();
        return false;
    };
    QFile ext(dir + QStringLiteral("/ext"));
    if (!ext.open(QIODevice::WriteOnly) || ext.write("subjectAltName=DNS:world.test\n") < 0)
        return false;
    ext.close();
    // Self-signed, unencrypted key, valid for two days.
    const QStringList root = {"req", "-x509", "-nodes", "-days", "2"};
    return run(root + QStringList{"-newkey", "rsa:2048", "-keyout", "ca.key", "-out", "ca.pem",
                                  "-subj", "/CN=gateway test CA"}) &&
           run({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
                "server.csr", "-subj", "/CN=world.test"}) &&
           run({"x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext"}) &&
           run(root + QStringList{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout",
                                  "authority.key", "-out", "authority.pem", "-subj",
                                  "/CN=gateway test authority", "-addext",
                                  "basicConstraints=critical,CA:TRUE", "-addext",
                                  "keyUsage=critical,keyCertSign", "-addext",
                                  "subjectKeyIdentifier=hash"}) &&
           run(root + QStringList{"-newkey", "rsa:2048", "-keyout", "stranger.key", "-out",
                                  "stranger.pem", "-subj", "/CN=unrelated CA"});
}

// A secret as the server sends it: the sandbox holds the placeholder (EgressLease's form).
const QByteArray kPlaceholder = "csb-secret-API_KEY-0123456789abcdef0123456789abcdef";
const QByteArray kValue = "sk-live-5ecret-VALUE-4242";

} // namespace

class TestGateway : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void forwardsPlainHttpToAListedHost();
    void refusesWhatIsNotListed();
    void refusesAWrongOrRevokedCredential();
    void tunnelsTlsOnlyToTheNamedHost();
    void refusesNamesThatLeadInward();
    void asksAndFollowsTheVerdict();
    void chainsThroughAnUpstreamProxy();
    void endsWithItsControlChannel();
    void addsASecretOnlyForItsHost();
    void refusesAnUntrustedHost();
    void keepsASecretOutOfItsErrors();
    void refusesAHostHeaderThatIsNotTheTarget();
    void passesExactlyOneRequestAsItWasFramed();
    void checksTheTargetInsideATunnel();
    void boundsTheConnectionsOfOneSandbox();
    void goesStraightToTheHostsProxyLeavesOut();
    void writesAChunkedBodyAgainAndRefusesOneInHttp10();
    void aStuckTunnelDoesNotSpin();

private:
    // The origin: answers every connection with `reply` once it has a request head (or, for a
    // tunnel, any bytes), and keeps what it was sent.
    void startOrigin(const QByteArray &reply);
    void control(const QByteArray &line);
    // cred-a, from 127.0.0.1, may reach web.test on the origin's port (returned), once the
    // gateway said ok.
    QByteArray grantWebTest()
    {
        const QByteArray port = QByteArray::number(m_originPort);
        control("grant\tcred-a\t127.0.0.1\trefuse\tweb.test:" + port);
        nextEvent(QStringLiteral("ok"));
        return port;
    }
    QJsonObject nextEvent(const QString &kind, int timeoutMs = 10000);
    // Sends `request` to the gateway; returns what came back until the gateway closed.
    QByteArray exchange(const QByteArray &request, int timeoutMs = 15000);
    static QByteArray auth(const QByteArray &credential)
    {
        return "Proxy-Authorization: Basic " + ("cs:" + credential).toBase64() + "\r\n";
    }
    QByteArray hello() const
    {
        QFile f(QStringLiteral(CS_CLIENTHELLO_DATA "/clienthello-sni.bin"));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    QByteArray certificateFile(const QString &name) const
    {
        QFile f(m_certs.filePath(name));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    // world.test over TLS, with the certificate of ca.pem: keeps each request head, and answers
    // with the Authorization it got, in a header and in the body (as an API that echoes a key).
    void startTlsOrigin();
    // Sends the authority, and `trustFile` as the roots the gateway checks real hosts with.
    void setUpInterception(const QString &trustFile);
    // `credential`'s secret API_KEY (kPlaceholder, kValue) for world.test:<the TLS origin's
    // port> and `also`.
    void addSecret(const QByteArray &credential, const QByteArray &also = QByteArray());
    // As a sandbox: a CONNECT to world.test:<the TLS origin's port>, TLS that trusts the authority
    // alone, `request` (none: the gateway is to answer first); what came back over TLS until the
    // gateway closed.
    void throughTls(const QByteArray &credential, const QByteArray &request, QByteArray *answer);

    QProcess *m_gateway = nullptr;
    QTcpServer *m_origin = nullptr;
    QByteArray m_received;
    int m_port = 0;       // the gateway's
    int m_originPort = 0; // the origin's
    QByteArray m_out;
    QByteArray m_allOut; // everything the gateway printed that nextEvent read
    QTemporaryDir m_certs;
    QSslServer *m_tlsOrigin = nullptr;
    QByteArrayList m_tlsHeads; // what the TLS origin was sent
};

void TestGateway::initTestCase()
{
    QVERIFY(m_certs.isValid());
    QVERIFY2(makeCertificates(m_certs.path()), "openssl could not make the test certificates");
}

void TestGateway::startOrigin(const QByteArray &reply)
{
    m_origin = new QTcpServer(this);
    QVERIFY(m_origin->listen(QHostAddress::LocalHost));
    m_originPort = m_origin->serverPort();
    connect(m_origin, &QTcpServer::newConnection, this, [this, reply] {
        QTcpSocket *s = m_origin->nextPendingConnection();
        connect(s, &QTcpSocket::readyRead, s, [this, s, reply] {
            m_received += s->readAll();
            s->write(reply);
            s->disconnectFromHost();
        });
    });
}

void TestGateway::init()
{
    m_received.clear();
    m_out.clear();
    m_allOut.clear();
    m_tlsHeads.clear();
    startOrigin("HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    m_gateway = new QProcess(this);
    m_gateway->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_gateway->start(QStringLiteral(CS_GATEWAY_BIN),
                     {"--listen", "127.0.0.1:0", "--control-timeout-ms", "0", "--ask-timeout-ms",
                      "1500", "--hosts",
                      "web.test=127.0.0.1,tls.example.test=127.0.0.1,meta.lab.test=169.254.169.254,"
                      "inner.lab.test=127.0.0.2,direct.test=127.0.0.1,world.test=127.0.0.1,"
                      "plain.test=127.0.0.1,x.near.test=127.0.0.1",
                      "--public", "127.0.0.1/32"});
    QVERIFY(m_gateway->waitForStarted());
    const QJsonObject ready = nextEvent(QStringLiteral("ready"));
    m_port = ready.value(u"port").toInt();
    QVERIFY(m_port > 0);
}

void TestGateway::cleanup()
{
    if (m_gateway) {
        m_gateway->closeWriteChannel();
        if (!m_gateway->waitForFinished(5000))
            m_gateway->kill();
        m_gateway->waitForFinished(5000);
        delete m_gateway;
        m_gateway = nullptr;
    }
    delete m_origin;
    m_origin = nullptr;
    delete m_tlsOrigin;
    m_tlsOrigin = nullptr;
}

void TestGateway::control(const QByteArray &line)
{
    m_gateway->write(line + "\n");
    m_gateway->waitForBytesWritten(1000);
}

QJsonObject TestGateway::nextEvent(const QString &kind, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < timeoutMs) {
        int newline;
        while ((newline = m_out.indexOf('\n')) >= 0) {
            const QJsonObject event = QJsonDocument::fromJson(m_out.left(newline)).object();
            m_out.remove(0, newline + 1);
            if (event.value(u"ev").toString() == kind)
                return event;
        }
        if (!m_gateway->waitForReadyRead(200))
            QCoreApplication::processEvents();
        const QByteArray more = m_gateway->readAllStandardOutput();
        m_out += more;
        m_allOut += more;
    }
    return {};
}

QByteArray TestGateway::exchange(const QByteArray &request, int timeoutMs)
{
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, quint16(m_port));
    if (!client.waitForConnected(5000))
        return "(no connection)";
    client.write(request);
    QByteArray answer;
    QElapsedTimer clock;
    clock.start();
    while (client.state() == QAbstractSocket::ConnectedState && clock.elapsed() < timeoutMs) {
        client.waitForReadyRead(50); // the origin answers on this thread's event loop
        QCoreApplication::processEvents();
        answer += client.readAll();
    }
    answer += client.readAll();
    return answer;
}

void TestGateway::forwardsPlainHttpToAListedHost()
{
    control("grant\tcred-a\t127.0.0.1\trefuse\tweb.test:" + QByteArray::number(m_originPort));
    QCOMPARE(nextEvent(QStringLiteral("ok")).value(u"cred").toString(), QStringLiteral("cred-a"));
    const QByteArray port = QByteArray::number(m_originPort);
    const QByteArray answer =
        exchange("GET http://web.test:" + port + "/x?y=1 HTTP/1.1\r\nHost: Web.Test:" + port +
                 "\r\n" + auth("cred-a") + "Proxy-Connection: keep-alive\r\n\r\n");
    // Read and passed on as one answer, its length kept.
    QVERIFY2(answer.startsWith("HTTP/1.1 200 OK\r\n") && answer.contains("Content-Length: 5\r\n") &&
                 answer.endsWith("hello"),
             answer.constData());
    // The origin got the origin-form request without the proxy's headers, Host first.
    QVERIFY2(m_received.startsWith("GET /x?y=1 HTTP/1.1\r\nHost: web.test:" + port + "\r\n"),
             m_received.constData());
    QVERIFY(!m_received.contains("Proxy-"));
    QVERIFY(m_received.contains("Connection: close\r\n"));
    const QJsonObject conn = nextEvent(QStringLiteral("conn"));
    QCOMPARE(conn.value(u"verdict").toString(), QStringLiteral("allow"));
    QCOMPARE(conn.value(u"host").toString(), QStringLiteral("web.test"));
    QCOMPARE(conn.value(u"cred").toString(), QStringLiteral("cred-a"));
    const QJsonObject end = nextEvent(QStringLiteral("end"));
    QCOMPARE(end.value(u"id"), conn.value(u"id"));
    QCOMPARE(end.value(u"down").toInt(), answer.size());
}

void TestGateway::refusesWhatIsNotListed()
{
    control("grant\tcred-a\t127.0.0.1\trefuse\tweb.test:" + QByteArray::number(m_originPort) +
            ",*.0.0.1");
    nextEvent(QStringLiteral("ok"));
    // Another host, and the listed host on another port.
    QByteArray answer = exchange("CONNECT other.test:443 HTTP/1.1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 403 Forbidden"), answer.constData());
    QVERIFY2(answer.contains("other.test:443 is not on the allow-list"), answer.constData());
    QCOMPARE(nextEvent(QStringLiteral("conn")).value(u"verdict").toString(),
             QStringLiteral("deny"));
    answer = exchange("CONNECT web.test:1 HTTP/1.1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 403"), answer.constData());
    // An address is never reached through a name pattern its digits end like.
    answer = exchange("CONNECT 127.0.0.1:" + QByteArray::number(m_originPort) + " HTTP/1.1\r\n" +
                      auth("cred-a") + "\r\n");
    QVERIFY2(answer.contains("an address not on the allow-list"), answer.constData());
    QVERIFY(m_received.isEmpty());
    // A control line it cannot take is answered with why, and changes nothing.
    control("grant\tcred-x\t127.0.0.1\tmaybe\tweb.test");
    QVERIFY(nextEvent(QStringLiteral("error")).value(u"why").toString().contains(u"refuse or ask"));
    control("grant\tcred-x\t127.0.0.1\trefuse\t*.com");
    QVERIFY(nextEvent(QStringLiteral("error")).value(u"why").toString().contains(u"two labels"));
}

void TestGateway::refusesAWrongOrRevokedCredential()
{
    control("grant\tcred-a\t127.0.0.1\trefuse\tweb.test:" + QByteArray::number(m_originPort));
    nextEvent(QStringLiteral("ok"));
    const QByteArray request =
        "GET http://web.test:" + QByteArray::number(m_originPort) + "/ HTTP/1.1\r\n";
    QByteArray answer = exchange(request + auth("cred-b") + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 407") && answer.contains("Proxy-Authenticate: Basic"),
             answer.constData());
    answer = exchange(request + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 407"), answer.constData());
    // Bound to its sandbox's address: the same credential from elsewhere is refused.
    control("grant\tcred-c\t10.9.9.9\trefuse\tweb.test:" + QByteArray::number(m_originPort));
    nextEvent(QStringLiteral("ok"));
    QVERIFY(exchange(request + auth("cred-c") + "\r\n").startsWith("HTTP/1.1 407"));
    control("revoke\tcred-a");
    nextEvent(QStringLiteral("ok"));
    QVERIFY(exchange(request + auth("cred-a") + "\r\n").startsWith("HTTP/1.1 407"));
    QVERIFY(m_received.isEmpty());
}

void TestGateway::tunnelsTlsOnlyToTheNamedHost()
{
    const QByteArray port = QByteArray::number(m_originPort);
    control("grant\tcred-a\t127.0.0.1\trefuse\ttls.example.test:" + port + ",web.test:" + port);
    nextEvent(QStringLiteral("ok"));
    const QByteArray clientHello = hello(); // its server name: tls.example.test
    QVERIFY(!clientHello.isEmpty());
    // The CONNECT host and the server name agree: the hello reaches the origin as it was.
    QByteArray answer = exchange("CONNECT tls.example.test:" + port + " HTTP/1.1\r\n" +
                                 auth("cred-a") + "\r\n" + clientHello);
    QVERIFY2(answer.startsWith("HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.0 200 OK"),
             answer.constData());
    QCOMPARE(m_received, clientHello);
    QCOMPARE(nextEvent(QStringLiteral("conn")).value(u"verdict").toString(),
             QStringLiteral("allow"));
    // An allowed name fronting for another: the tunnel closes before a byte goes out.
    m_received.clear();
    answer = exchange("CONNECT web.test:" + port + " HTTP/1.1\r\n" + auth("cred-a") + "\r\n" +
                      clientHello);
    QCOMPARE(answer, QByteArray("HTTP/1.1 200 Connection Established\r\n\r\n"));
    QJsonObject conn = nextEvent(QStringLiteral("conn"));
    QCOMPARE(conn.value(u"verdict").toString(), QStringLiteral("deny"));
    QVERIFY2(conn.value(u"rule").toString().contains(u"tls.example.test is not web.test"),
             qPrintable(conn.value(u"rule").toString()));
    // Plain HTTP through a tunnel (as Node's undici sends http: URLs): its request must be for
    // the CONNECT's host and port.
    exchange("CONNECT web.test:" + port + " HTTP/1.1\r\n" + auth("cred-a") +
             "\r\nGET / HTTP/1.1\r\nHost: tls.example.test:" + port + "\r\n\r\n");
    conn = nextEvent(QStringLiteral("conn"));
    QCOMPARE(conn.value(u"verdict").toString(), QStringLiteral("deny"));
    const QString expected =
        QString::fromLatin1("is for tls.example.test:" + port + ", not web.test:" + port);
    QVERIFY2(conn.value(u"rule").toString().contains(expected),
             qPrintable(conn.value(u"rule").toString()));
    exchange("CONNECT web.test:" + port + " HTTP/1.1\r\n" + auth("cred-a") +
             "\r\nSSH-2.0-OpenSSH_9.2\r\n\r\n");
    conn = nextEvent(QStringLiteral("conn"));
    QVERIFY2(conn.value(u"rule").toString().startsWith(u"the tunnel started with neither TLS nor"),
             qPrintable(conn.value(u"rule").toString()));
    QVERIFY(m_received.isEmpty());
    const QByteArray inner = "GET /in HTTP/1.1\r\nHost: web.test:" + port + "\r\n\r\n";
    answer =
        exchange("CONNECT web.test:" + port + " HTTP/1.1\r\n" + auth("cred-a") + "\r\n" + inner);
    QVERIFY2(answer.endsWith("hello"), answer.constData());
    // Read as a forward is: one request, passed on with `Connection: close`.
    QCOMPARE(m_received,
             "GET /in HTTP/1.1\r\nHost: web.test:" + port + "\r\nConnection: close\r\n\r\n");
    QCOMPARE(nextEvent(QStringLiteral("conn")).value(u"verdict").toString(),
             QStringLiteral("allow"));
}

void TestGateway::refusesNamesThatLeadInward()
{
    control("grant\tcred-a\t127.0.0.1\trefuse\t*.lab.test:443");
    nextEvent(QStringLiteral("ok"));
    QByteArray answer =
        exchange("CONNECT meta.lab.test:443 HTTP/1.1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 403") &&
                 answer.contains("meta.lab.test resolves to 169.254.169.254, link-local"),
             answer.constData());
    answer = exchange("CONNECT inner.lab.test:443 HTTP/1.1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.contains("resolves to 127.0.0.2, loopback"), answer.constData());
    // Listed exactly, the same name passes the address check (and then finds nothing there).
    control("grant\tcred-a\t127.0.0.1\trefuse\tinner.lab.test:9");
    nextEvent(QStringLiteral("ok"));
    answer = exchange("CONNECT inner.lab.test:9 HTTP/1.1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 502") && answer.contains("cannot connect to 127.0.0.2"),
             answer.constData());
}

void TestGateway::asksAndFollowsTheVerdict()
{
    const QByteArray port = QByteArray::number(m_originPort);
    control("grant\tcred-b\t127.0.0.1\task\t");
    nextEvent(QStringLiteral("ok"));
    const QByteArray request =
        "GET http://web.test:" + port + "/ HTTP/1.1\r\n" + auth("cred-b") + "\r\n";
    for (const QByteArray &verdict : {QByteArray("allow"), QByteArray("deny"), QByteArray()}) {
        m_received.clear();
        QTcpSocket client;
        client.connectToHost(QHostAddress::LocalHost, quint16(m_port));
        QVERIFY(client.waitForConnected(5000));
        client.write(request);
        const QJsonObject ask = nextEvent(QStringLiteral("ask"));
        QCOMPARE(ask.value(u"host").toString(), QStringLiteral("web.test"));
        QCOMPARE(ask.value(u"port").toInt(), m_originPort);
        if (!verdict.isEmpty())
            control("verdict\t" + QByteArray::number(ask.value(u"id").toInteger()) + "\t" +
                    verdict);
        QByteArray answer;
        QElapsedTimer clock;
        clock.start();
        while (client.state() == QAbstractSocket::ConnectedState && clock.elapsed() < 10000) {
            client.waitForReadyRead(50);
            QCoreApplication::processEvents();
            answer += client.readAll();
        }
        answer += client.readAll();
        const QJsonObject conn = nextEvent(QStringLiteral("conn"));
        if (verdict == "allow") {
            QVERIFY2(answer.endsWith("hello"), answer.constData());
            QCOMPARE(conn.value(u"rule").toString(), QStringLiteral("allowed when asked"));
        } else {
            QVERIFY2(answer.startsWith("HTTP/1.1 403"), answer.constData());
            QVERIFY(m_received.isEmpty());
            QVERIFY2(conn.value(u"rule").toString().contains(
                         verdict.isEmpty() ? u"no answer in time" : u"denied when asked"),
                     qPrintable(conn.value(u"rule").toString()));
        }
    }
    // A verdict for a connection that no longer waits says so.
    control("verdict\t999\tallow");
    QVERIFY(nextEvent(QStringLiteral("error")).value(u"why").toString().contains(u"no connection"));
}

void TestGateway::chainsThroughAnUpstreamProxy()
{
    // The host's proxy: keeps what it was sent; a CONNECT gets 200 and then, once the tunnel's
    // first bytes come, the origin's answer; a request in absolute form the answer at once;
    // a CONNECT to refused.test a 407.
    QTcpServer proxy;
    QVERIFY(proxy.listen(QHostAddress::LocalHost));
    QByteArray proxied;
    connect(&proxy, &QTcpServer::newConnection, this, [&proxy, &proxied] {
        QTcpSocket *s = proxy.nextPendingConnection();
        connect(s, &QTcpSocket::readyRead, s, [s, &proxied] {
            const bool tunnel = s->property("tunnel").toBool();
            const QByteArray in = s->readAll();
            proxied += in;
            const QByteArray ok = "HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nproxied";
            if (tunnel) {
                s->write(ok);
                s->disconnectFromHost();
            } else if (in.startsWith("CONNECT refused.test")) {
                s->write("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n");
                s->disconnectFromHost();
            } else if (in.startsWith("CONNECT ")) {
                s->setProperty("tunnel", true);
                s->write("HTTP/1.1 200 Connection established\r\n\r\n");
            } else {
                s->write(ok);
                s->disconnectFromHost();
            }
        });
    });
    const QByteArray port = QByteArray::number(m_originPort);
    control("grant\tcred-a\t127.0.0.1\trefuse\ttls.example.test:" + port + ",web.test:" + port +
            ",nowhere.invalid,refused.test,*.lab.test:443,direct.test:" + port);
    nextEvent(QStringLiteral("ok"));
    control("upstream\t127.0.0.1:" + QByteArray::number(proxy.serverPort()) + "\t" +
            QByteArray("up:pw").toBase64() + "\t.direct.test,direct.test");
    QCOMPARE(nextEvent(QStringLiteral("ok")).value(u"upstream").toString(),
             QStringLiteral("127.0.0.1:%1").arg(proxy.serverPort()));
    const QByteArray upstreamAuth = "Proxy-Authorization: Basic " + QByteArray("up:pw").toBase64();

    // A tunnel: CONNECT to the host asked for, with the proxy's credential, never the
    // sandbox's; the server-name check still applies to what the sandbox sends.
    const QByteArray clientHello = hello();
    QByteArray answer = exchange("CONNECT tls.example.test:" + port + " HTTP/1.1\r\n" +
                                 auth("cred-a") + "\r\n" + clientHello);
    QVERIFY2(answer == "HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.0 200 OK\r\n"
                       "Content-Length: 7\r\n\r\nproxied",
             answer.constData());
    QCOMPARE(proxied, "CONNECT tls.example.test:" + port + " HTTP/1.1\r\nHost: tls.example.test:" +
                          port + "\r\n" + upstreamAuth + "\r\n\r\n" + clientHello);
    QCOMPARE(nextEvent(QStringLiteral("conn")).value(u"verdict").toString(),
             QStringLiteral("allow"));
    // Plain HTTP: the request in absolute form, without the sandbox's Proxy-* headers.
    proxied.clear();
    // A request pipelined after it (for another host) is not passed on.
    answer = exchange("GET http://web.test:" + port + "/x HTTP/1.1\r\nHost: web.test:" + port +
                      "\r\n" + auth("cred-a") +
                      "\r\nGET http://evil.test/y HTTP/1.1\r\nHost: evil.test\r\n\r\n"
                      "CONNECT evil.test:443 HTTP/1.1\r\n\r\n");
    QVERIFY2(answer.endsWith("proxied"), answer.constData());
    QVERIFY2(proxied.startsWith("GET http://web.test:" + port + "/x HTTP/1.1\r\nHost: web.test:" +
                                port + "\r\n" + upstreamAuth + "\r\n"),
             proxied.constData());
    QVERIFY2(!proxied.contains("evil.test"), proxied.constData());
    QVERIFY2(!proxied.contains(QByteArray("cs:cred-a").toBase64()), proxied.constData());
    // A name the gateway cannot resolve is the proxy's to resolve; one that resolves inward
    // is refused as before, proxy or not.
    proxied.clear();
    // (Its tunnel then starts with a hello for another name, and is closed at once.)
    answer = exchange("CONNECT nowhere.invalid:443 HTTP/1.1\r\n" + auth("cred-a") + "\r\n" +
                      clientHello);
    QVERIFY2(proxied.startsWith("CONNECT nowhere.invalid:443 HTTP/1.1\r\n"), proxied.constData());
    answer = exchange("CONNECT meta.lab.test:443 HTTP/1.1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 403") && answer.contains("169.254.169.254"),
             answer.constData());
    // The proxy's refusal reaches the sandbox as a 502 saying so.
    answer = exchange("CONNECT refused.test:443 HTTP/1.1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 502") &&
                 answer.contains("the upstream proxy refused the tunnel: HTTP/1.1 407"),
             answer.constData());
    // A no-proxy host goes straight to its address.
    proxied.clear();
    m_received.clear();
    answer =
        exchange("GET http://direct.test:" + port + "/d HTTP/1.1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.endsWith("hello"), answer.constData());
    QVERIFY(m_received.startsWith("GET /d HTTP/1.1\r\n"));
    QVERIFY(proxied.isEmpty());
    // And without an upstream, straight out again.
    control("upstream\t-\t-\t-");
    nextEvent(QStringLiteral("ok"));
    m_received.clear();
    answer = exchange("GET http://web.test:" + port + "/y HTTP/1.1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.endsWith("hello"), answer.constData());
    QVERIFY(proxied.isEmpty());
    control("upstream\tno-port\t-\t-");
    QVERIFY(nextEvent(QStringLiteral("error")).value(u"why").toString().contains(u"host:port"));
}

void TestGateway::endsWithItsControlChannel()
{
    m_gateway->closeWriteChannel();
    QVERIFY(m_gateway->waitForFinished(5000));
    QCOMPARE(m_gateway->exitCode(), 0);
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, quint16(m_port));
    QVERIFY(!client.waitForConnected(2000)); // nothing listens: no gateway, no way out
}

void TestGateway::startTlsOrigin()
{
    m_tlsOrigin = new QSslServer(this);
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setLocalCertificate(
        QSslCertificate::fromPath(m_certs.filePath(QStringLiteral("server.pem"))).value(0));
    QFile key(m_certs.filePath(QStringLiteral("server.key")));
    QVERIFY(key.open(QIODevice::ReadOnly));
    tls.setPrivateKey(QSslKey(&key, QSsl::Rsa));
    m_tlsOrigin->setSslConfiguration(tls);
    QVERIFY(m_tlsOrigin->listen(QHostAddress::LocalHost));
    // Qt hands a connection over once its handshake is done: one that the gateway broke off
    // (a certificate it did not trust) never shows here.
    connect(m_tlsOrigin, &QTcpServer::pendingConnectionAvailable, this, [this] {
        while (QTcpSocket *s = m_tlsOrigin->nextPendingConnection()) {
            connect(s, &QAbstractSocket::disconnected, s, &QObject::deleteLater);
            connect(s, &QIODevice::readyRead, s, [this, s] {
                const QByteArray in = s->property("in").toByteArray() + s->readAll();
                s->setProperty("in", in);
                const qsizetype end = in.indexOf("\r\n\r\n");
                if (end < 0)
                    return;
                const QByteArray head = in.left(end + 4);
                m_tlsHeads << head;
                QByteArray authorization;
                for (const QByteArray &line : head.split('\n'))
                    if (line.toLower().startsWith("authorization:"))
                        authorization = line.mid(14).trimmed();
                const QByteArray body = "you sent: " + authorization;
                // And in a header's name (the last word of Authorization: the key itself).
                s->write("HTTP/1.1 200 OK\r\nX-Echo: " + authorization + "\r\nX-Echo-" +
                         authorization.split(' ').last() + ": 1\r\nContent-Length: " +
                         QByteArray::number(body.size()) + "\r\n\r\n" + body);
                s->disconnectFromHost();
            });
        }
    });
}

void TestGateway::setUpInterception(const QString &trustFile)
{
    control("authority\t" + certificateFile(QStringLiteral("authority.pem")).toBase64() + "\t" +
            certificateFile(QStringLiteral("authority.key")).toBase64());
    QVERIFY(nextEvent(QStringLiteral("ok")).value(u"authority").toBool());
    control("trust\t" + certificateFile(trustFile).toBase64());
    QVERIFY(nextEvent(QStringLiteral("ok")).value(u"trust").toBool());
}

void TestGateway::addSecret(const QByteArray &credential, const QByteArray &also)
{
    control("secret\t" + credential + "\tAPI_KEY\t" + kPlaceholder + "\t" + kValue.toBase64() +
            "\tworld.test:" + QByteArray::number(m_tlsOrigin->serverPort()) +
            (also.isEmpty() ? QByteArray() : "," + also));
    const QJsonObject ok = nextEvent(QStringLiteral("ok"));
    QCOMPARE(ok.value(u"cred").toString(), QString::fromLatin1(credential));
    QCOMPARE(ok.value(u"secret").toString(), QStringLiteral("API_KEY"));
}

void TestGateway::throughTls(const QByteArray &credential, const QByteArray &request,
                             QByteArray *answer)
{
    const QByteArray target = "world.test:" + QByteArray::number(m_tlsOrigin->serverPort());
    QSslSocket client;
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    // The authority alone: a certificate that the gateway did not make for world.test fails.
    tls.setCaCertificates(
        QSslCertificate::fromPath(m_certs.filePath(QStringLiteral("authority.pem"))));
    client.setSslConfiguration(tls);
    client.setPeerVerifyName(QStringLiteral("world.test")); // and the TLS server name
    QByteArray received;
    connect(&client, &QIODevice::readyRead, &client, [&] { received += client.readAll(); });
    QStringList errors;
    connect(&client, &QSslSocket::sslErrors, &client, [&](const QList<QSslError> &list) {
        for (const QSslError &e : list)
            errors << e.errorString();
    });
    client.connectToHost(QHostAddress::LocalHost, quint16(m_port));
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), QAbstractSocket::ConnectedState, 5000);
    client.write("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n" + auth(credential) +
                 "\r\n");
    QTRY_VERIFY_WITH_TIMEOUT(
        received.contains("\r\n\r\n") || client.state() != QAbstractSocket::ConnectedState, 10000);
    QCOMPARE(received, QByteArray("HTTP/1.1 200 Connection Established\r\n\r\n"));
    received.clear();
    // The signal, not isEncrypted(): a gateway that answers at once may have closed (and the
    // socket forgotten its encryption) before the next look.
    bool encrypted = false;
    connect(&client, &QSslSocket::encrypted, &client, [&encrypted] { encrypted = true; });
    client.startClientEncryption();
    QTRY_VERIFY_WITH_TIMEOUT(encrypted || client.state() == QAbstractSocket::UnconnectedState,
                             10000);
    QVERIFY2(encrypted,
             qPrintable(client.errorString() + u' ' + errors.join(QStringLiteral("; "))));
    if (!request.isEmpty())
        client.write(request);
    // The gateway closes after one answer.
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), QAbstractSocket::UnconnectedState, 15000);
    received += client.readAll();
    *answer = received;
}

void TestGateway::addsASecretOnlyForItsHost()
{
    startTlsOrigin();
    if (QTest::currentTestFailed())
        return;
    setUpInterception(QStringLiteral("ca.pem"));
    if (QTest::currentTestFailed())
        return;
    const QByteArray tlsPort = QByteArray::number(m_tlsOrigin->serverPort());
    const QByteArray port = QByteArray::number(m_originPort);
    control("grant\tcred-s\t127.0.0.1\trefuse\tworld.test:" + tlsPort + ",plain.test:" + port +
            ",web.test:" + port);
    nextEvent(QStringLiteral("ok"));
    addSecret("cred-s", "plain.test:" + port);
    if (QTest::currentTestFailed())
        return;

    // Over TLS: the host gets the value where the sandbox wrote the placeholder, and no
    // Accept-Encoding (a compressed answer could not be searched for the value).
    QByteArray answer;
    throughTls("cred-s",
               "GET /x HTTP/1.1\r\nHost: world.test:" + tlsPort + "\r\nAuthorization: Bearer " +
                   kPlaceholder + "\r\nAccept-Encoding: gzip\r\nUser-Agent: test\r\n\r\n",
               &answer);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(m_tlsHeads.size(), 1);
    const QByteArray head = m_tlsHeads.first();
    QVERIFY2(head.startsWith("GET /x HTTP/1.1\r\n"), head.constData());
    QVERIFY2(head.contains("\r\nAuthorization: Bearer " + kValue + "\r\n"), head.constData());
    QVERIFY2(!head.contains(kPlaceholder), head.constData());
    QVERIFY2(!head.toLower().contains("accept-encoding"), head.constData());
    QVERIFY2(head.contains("\r\nUser-Agent: test\r\n"), head.constData());
    QVERIFY2(head.contains("\r\nConnection: close\r\n"), head.constData());
    // The origin echoed the value in a header and in its body: the sandbox sees the placeholder
    // in both, and the body up to the end of the connection (masking may change its length).
    QVERIFY2(answer.startsWith("HTTP/1.1 200 OK\r\n"), answer.constData());
    QVERIFY2(answer.contains("\r\nX-Echo: Bearer " + kPlaceholder + "\r\n"), answer.constData());
    QVERIFY2(answer.contains("\r\nX-Echo-" + kPlaceholder + ": 1\r\n"), answer.constData());
    QVERIFY2(answer.endsWith("\r\n\r\nyou sent: Bearer " + kPlaceholder), answer.constData());
    QVERIFY2(!answer.contains(kValue), answer.constData());
    QVERIFY2(!answer.toLower().contains("content-length"), answer.constData());
    const QJsonObject conn = nextEvent(QStringLiteral("conn"));
    QCOMPARE(conn.value(u"verdict").toString(), QStringLiteral("allow"));
    QCOMPARE(conn.value(u"host").toString(), QStringLiteral("world.test"));
    const QJsonObject secret = nextEvent(QStringLiteral("secret"));
    QCOMPARE(secret.value(u"id"), conn.value(u"id"));
    QCOMPARE(secret.value(u"names").toArray(), QJsonArray{QStringLiteral("API_KEY")});
    const QJsonObject end = nextEvent(QStringLiteral("end"));
    QCOMPARE(end.value(u"id"), conn.value(u"id"));
    QCOMPARE(end.value(u"down").toInt(), answer.size());

    // Plain HTTP to a host the secret is bound to: the same, without TLS (in the request line
    // too).
    m_received.clear();
    answer = exchange("GET http://plain.test:" + port + "/p?key=" + kPlaceholder +
                      " HTTP/1.1\r\nHost: plain.test:" + port + "\r\n" + auth("cred-s") +
                      "Authorization: Bearer " + kPlaceholder + "\r\n\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 200 OK\r\n") && answer.endsWith("hello"),
             answer.constData());
    QVERIFY2(m_received.startsWith("GET /p?key=" + kValue + " HTTP/1.1\r\n"),
             m_received.constData());
    QVERIFY2(m_received.contains("\r\nAuthorization: Bearer " + kValue + "\r\n"),
             m_received.constData());
    QCOMPARE(nextEvent(QStringLiteral("secret")).value(u"names").toArray(),
             QJsonArray{QStringLiteral("API_KEY")});
    nextEvent(QStringLiteral("end"));

    // Another host the sandbox may reach, that the secret is not bound to: the placeholder
    // arrives as it was sent, and the value stays in the gateway.
    m_received.clear();
    answer = exchange("GET http://web.test:" + port + "/w?key=" + kPlaceholder +
                      " HTTP/1.1\r\nHost: web.test:" + port + "\r\n" + auth("cred-s") +
                      "Authorization: Bearer " + kPlaceholder + "\r\n\r\n");
    QVERIFY2(answer.endsWith("hello"), answer.constData());
    QVERIFY2(m_received.startsWith("GET /w?key=" + kPlaceholder + " HTTP/1.1\r\n"),
             m_received.constData());
    QVERIFY2(m_received.contains("\r\nAuthorization: Bearer " + kPlaceholder + "\r\n"),
             m_received.constData());
    QVERIFY2(!m_received.contains(kValue), m_received.constData());
    const QJsonObject web = nextEvent(QStringLiteral("conn"));
    QCOMPARE(web.value(u"host").toString(), QStringLiteral("web.test"));
    QCOMPARE(nextEvent(QStringLiteral("end")).value(u"id"), web.value(u"id"));

    // All it printed, to its end: two requests got the secret, and the value never shows.
    m_gateway->closeWriteChannel();
    QVERIFY(m_gateway->waitForFinished(5000));
    m_allOut += m_gateway->readAllStandardOutput();
    QCOMPARE(m_allOut.count("\"ev\":\"secret\""), 2);
    QVERIFY2(!m_allOut.contains(kValue), m_allOut.constData());
    QVERIFY2(!m_allOut.contains(kValue.toBase64()), m_allOut.constData());
}

void TestGateway::refusesAnUntrustedHost()
{
    startTlsOrigin();
    if (QTest::currentTestFailed())
        return;
    // Roots that world.test's CA is not among: the gateway cannot tell the real host from one
    // that would collect the value.
    setUpInterception(QStringLiteral("stranger.pem"));
    if (QTest::currentTestFailed())
        return;
    control("grant\tcred-s\t127.0.0.1\trefuse\tworld.test:" +
            QByteArray::number(m_tlsOrigin->serverPort()));
    nextEvent(QStringLiteral("ok"));
    addSecret("cred-s");
    if (QTest::currentTestFailed())
        return;
    QByteArray answer;
    // No request: the gateway answers before it reads one (a request it did not read would
    // make its close a reset, and the answer could be lost).
    throughTls("cred-s", QByteArray(), &answer);
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(answer.startsWith("HTTP/1.1 502 "), answer.constData());
    QVERIFY2(answer.contains("cannot reach world.test securely: its certificate is not trusted ("),
             answer.constData());
    const QJsonObject conn = nextEvent(QStringLiteral("conn"));
    QCOMPARE(conn.value(u"verdict").toString(), QStringLiteral("error"));
    QVERIFY2(conn.value(u"rule").toString().contains(u"not trusted"),
             qPrintable(conn.value(u"rule").toString()));
    QVERIFY(m_tlsHeads.isEmpty());
    QVERIFY(!m_allOut.contains("\"ev\":\"secret\""));
}

void TestGateway::keepsASecretOutOfItsErrors()
{
    control("grant\tcred-s\t127.0.0.1\trefuse\tworld.test");
    nextEvent(QStringLiteral("ok"));
    // What a secret's line carries must not come back out, whatever is wrong with it.
    const QByteArray notBase64 = "hunter2*not-base64!";
    const auto quiet = [this](const QByteArray &line, const QString &why) {
        control(line);
        const QJsonObject error = nextEvent(QStringLiteral("error"));
        QVERIFY2(error.value(u"why").toString().contains(why),
                 qPrintable(error.value(u"why").toString()));
    };
    quiet("secret\tcred-s\tAPI_KEY\t" + kPlaceholder + "\t" + notBase64 + "\tworld.test",
          QStringLiteral("a value in base64"));
    quiet("secret\tcred-none\tAPI_KEY\t" + kPlaceholder + "\t" + kValue.toBase64() + "\tworld.test",
          QStringLiteral("grant first"));
    quiet("secret\tcred-s\tAPI_KEY\tshort\t" + kValue.toBase64() + "\tworld.test",
          QStringLiteral("16 characters"));
    quiet("secret\tcred-s\tAPI_KEY\t" + kPlaceholder + "\t" + kValue.toBase64() + "\t*.com",
          QStringLiteral("two labels"));
    quiet("secret\tcred-s\tAPI_KEY\t" + kPlaceholder + "\t" + kValue.toBase64(),
          QStringLiteral("hosts"));
    // The authority's key, and a trust store, are no more quoted.
    quiet("authority\t" + QByteArray("-----BEGIN PRIVATE KEY-----").toBase64() + "\t" +
              kValue.toBase64(),
          QStringLiteral("do not load"));
    quiet("trust\t" + notBase64, QStringLiteral("PEM bundle in base64"));
    if (QTest::currentTestFailed())
        return;
    // Nothing went through: the gateway still answers, and none of it was printed.
    control("ping");
    QVERIFY(!nextEvent(QStringLiteral("pong")).isEmpty());
    for (const QByteArray &text : {notBase64, kValue, kValue.toBase64(), kPlaceholder,
                                   QByteArray("-----BEGIN PRIVATE KEY-----").toBase64()})
        QVERIFY2(!m_allOut.contains(text), m_allOut.constData());
}

void TestGateway::refusesAHostHeaderThatIsNotTheTarget()
{
    // An origin behind a shared front routes by Host: a forward's Host must name its target.
    const QByteArray port = grantWebTest();
    const QByteArray line = "GET http://web.test:" + port + "/ HTTP/1.1\r\n";
    QByteArray answer = exchange(line + "Host: evil.test\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 421 Misdirected Request") &&
                 answer.contains("the Host header names evil.test"),
             answer.constData());
    answer = exchange(line + "Host: web.test:1\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 421"), answer.constData());
    answer = exchange(line + "Host: web.test:" + port + "\r\nHost: evil.test\r\n" + auth("cred-a") +
                      "\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 400") && answer.contains("more than one Host"),
             answer.constData());
    QVERIFY(m_received.isEmpty());
    // Without a Host header, the target's authority is the one the origin gets.
    answer = exchange("GET http://web.test:" + port + "/ HTTP/1.0\r\n" + auth("cred-a") + "\r\n");
    QVERIFY2(answer.endsWith("hello"), answer.constData());
    QVERIFY2(m_received.startsWith("GET / HTTP/1.0\r\nHost: web.test:" + port + "\r\n"),
             m_received.constData());
}

void TestGateway::passesExactlyOneRequestAsItWasFramed()
{
    const QByteArray port = grantWebTest();
    // A request pipelined after an allowed one is not passed on.
    const QByteArray first = "GET http://web.test:" + port +
                             "/one HTTP/1.1\r\nHost: web.test:" + port + "\r\n" + auth("cred-a") +
                             "\r\n";
    QByteArray answer =
        exchange(first + "GET http://evil.test/two HTTP/1.1\r\nHost: evil.test\r\n\r\n");
    QVERIFY2(answer.endsWith("hello"), answer.constData());
    QVERIFY2(m_received.startsWith("GET /one HTTP/1.1\r\n"), m_received.constData());
    QVERIFY2(!m_received.contains("evil.test") && !m_received.contains("/two"),
             m_received.constData());
    // A chunked upload keeps its framing: the origin can tell where it ends.
    m_received.clear();
    const QByteArray chunks = "5\r\nhello\r\n0\r\n\r\n";
    answer = exchange("POST http://web.test:" + port + "/up HTTP/1.1\r\nHost: web.test:" + port +
                      "\r\n" + auth("cred-a") + "Transfer-Encoding: chunked\r\n\r\n" + chunks +
                      "GET /smuggled HTTP/1.1\r\nHost: web.test\r\n\r\n");
    QVERIFY2(answer.endsWith("hello"), answer.constData());
    QVERIFY2(m_received.contains("\r\nTransfer-Encoding: chunked\r\n"), m_received.constData());
    QVERIFY2(m_received.endsWith("\r\n\r\n" + chunks), m_received.constData());
    QVERIFY(!m_received.contains("/smuggled"));
}

void TestGateway::checksTheTargetInsideATunnel()
{
    const QByteArray port = grantWebTest();
    // Plain HTTP in a tunnel: a target in absolute form counts, whatever Host says.
    exchange("CONNECT web.test:" + port + " HTTP/1.1\r\n" + auth("cred-a") +
             "\r\nGET http://evil.test/x HTTP/1.1\r\nHost: web.test:" + port + "\r\n\r\n");
    QJsonObject conn = nextEvent(QStringLiteral("conn"));
    QCOMPARE(conn.value(u"verdict").toString(), QStringLiteral("deny"));
    QVERIFY2(conn.value(u"rule").toString().contains(u"Host header names web.test"),
             qPrintable(conn.value(u"rule").toString()));
    exchange("CONNECT web.test:" + port + " HTTP/1.1\r\n" + auth("cred-a") +
             "\r\nGET http://evil.test/x HTTP/1.1\r\n\r\n");
    conn = nextEvent(QStringLiteral("conn"));
    QVERIFY2(conn.value(u"rule").toString().contains(u"is for evil.test:80"),
             qPrintable(conn.value(u"rule").toString()));
    QVERIFY(m_received.isEmpty());
    // The same host in absolute form goes, in origin form.
    const QByteArray answer = exchange("CONNECT web.test:" + port + " HTTP/1.1\r\n" +
                                       auth("cred-a") + "\r\nGET http://web.test:" + port +
                                       "/abs HTTP/1.1\r\nHost: web.test:" + port + "\r\n\r\n");
    QVERIFY2(answer.endsWith("hello"), answer.constData());
    QVERIFY2(m_received.startsWith("GET /abs HTTP/1.1\r\n"), m_received.constData());

    // Inside TLS the gateway terminates for a secret's host: another site's absolute target
    // with the bound host's Host is refused before the value goes anywhere.
    startTlsOrigin();
    if (QTest::currentTestFailed())
        return;
    setUpInterception(QStringLiteral("ca.pem"));
    if (QTest::currentTestFailed())
        return;
    const QByteArray tlsPort = QByteArray::number(m_tlsOrigin->serverPort());
    control("grant\tcred-s\t127.0.0.1\trefuse\tworld.test:" + tlsPort);
    nextEvent(QStringLiteral("ok"));
    addSecret("cred-s");
    if (QTest::currentTestFailed())
        return;
    QByteArray tlsAnswer;
    throughTls("cred-s",
               "GET https://evil.test/steal HTTP/1.1\r\nHost: world.test:" + tlsPort +
                   "\r\nAuthorization: Bearer " + kPlaceholder + "\r\n\r\n",
               &tlsAnswer);
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(tlsAnswer.startsWith("HTTP/1.1 421"), tlsAnswer.constData());
    QVERIFY(m_tlsHeads.isEmpty());
    // Its own authority in absolute form: passed on in origin form, with the value.
    throughTls("cred-s",
               "GET https://world.test:" + tlsPort + "/ok HTTP/1.1\r\nHost: world.test:" + tlsPort +
                   "\r\nAuthorization: Bearer " + kPlaceholder + "\r\n\r\n",
               &tlsAnswer);
    QCOMPARE(m_tlsHeads.size(), 1);
    QVERIFY2(m_tlsHeads.first().startsWith("GET /ok HTTP/1.1\r\nHost: world.test:" + tlsPort),
             m_tlsHeads.first().constData());
    QVERIFY(m_tlsHeads.first().contains(kValue));
}

void TestGateway::boundsTheConnectionsOfOneSandbox()
{
    // Two sandboxes: one at 127.0.0.1 holds far more connections than its share, silent; the
    // other, at 127.0.0.2, goes on being served, and the gateway goes on running.
    const QByteArray port = grantWebTest();
    control("grant\tcred-b\t127.0.0.2\trefuse\tweb.test:" + port);
    nextEvent(QStringLiteral("ok"));
    std::vector<std::unique_ptr<QTcpSocket>> held;
    for (int i = 0; i < 100; ++i) {
        held.push_back(std::make_unique<QTcpSocket>());
        held.back()->connectToHost(QHostAddress::LocalHost, quint16(m_port));
    }
    int refused = 0;
    QElapsedTimer clock;
    clock.start();
    while (refused < 36 && clock.elapsed() < 10000) {
        QCoreApplication::processEvents();
        QTest::qWait(50);
        refused = 0;
        for (const auto &socket : held)
            if (socket->bytesAvailable() > 0 || socket->property("seen").isValid()) {
                if (!socket->property("seen").isValid())
                    socket->setProperty("seen", socket->readAll());
                QVERIFY2(socket->property("seen").toByteArray().startsWith(
                             "HTTP/1.1 429 Too Many Requests"),
                         socket->property("seen").toByteArray().constData());
                ++refused;
            }
    }
    // Exactly those past its share: the gateway serves no more of one sandbox's at once.
    QCOMPARE(refused, 100 - 64);
    QTcpSocket other;
    QVERIFY(other.bind(QHostAddress(QStringLiteral("127.0.0.2"))));
    other.connectToHost(QHostAddress::LocalHost, quint16(m_port));
    QVERIFY(other.waitForConnected(5000));
    other.write("GET http://web.test:" + port + "/b HTTP/1.1\r\nHost: web.test:" + port + "\r\n" +
                auth("cred-b") + "\r\n");
    QByteArray answer;
    QTRY_VERIFY_WITH_TIMEOUT((answer += other.readAll()).endsWith("hello"), 10000);
    QCOMPARE(m_gateway->state(), QProcess::Running);
    // Its connections end, and with them the count: the first sandbox is served again.
    held.clear();
    QTRY_VERIFY_WITH_TIMEOUT(exchange("GET http://web.test:" + port +
                                      "/a HTTP/1.1\r\nHost: web.test:" + port + "\r\n" +
                                      auth("cred-a") + "\r\n")
                                 .endsWith("hello"),
                             10000);
}

void TestGateway::goesStraightToTheHostsProxyLeavesOut()
{
    // NO_PROXY's suffix forms ("*.near.test", ".near.test") are kept: x.near.test is reached
    // straight, not through the host's proxy (which does not answer here).
    const QByteArray port = QByteArray::number(m_originPort);
    control("grant\tcred-a\t127.0.0.1\trefuse\tx.near.test:" + port);
    nextEvent(QStringLiteral("ok"));
    for (const QByteArray &noProxy : {QByteArray("*.near.test"), QByteArray(".near.test")}) {
        control("upstream\t127.0.0.1:1\t-\tother.test," + noProxy);
        nextEvent(QStringLiteral("ok"));
        const QByteArray answer =
            exchange("GET http://x.near.test:" + port + "/n HTTP/1.1\r\nHost: x.near.test:" + port +
                     "\r\n" + auth("cred-a") + "\r\n");
        QVERIFY2(answer.endsWith("hello"), noProxy + ": " + answer);
    }
}

void TestGateway::writesAChunkedBodyAgainAndRefusesOneInHttp10()
{
    const QByteArray port = grantWebTest();
    const QByteArray head = "POST http://web.test:" + port +
                            "/c HTTP/1.1\r\nHost: web.test:" + port + "\r\n" + auth("cred-a") +
                            "Transfer-Encoding: chunked\r\n\r\n";
    // A chunk extension and a trailer: the origin gets plain sizes, no extension, no trailer.
    QByteArray answer = exchange(head + "5;name=x\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n");
    QVERIFY2(answer.endsWith("hello"), answer.constData());
    QVERIFY2(m_received.endsWith("\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), m_received.constData());
    m_received.clear();
    answer =
        exchange("POST http://web.test:" + port + "/c HTTP/1.0\r\nHost: web.test:" + port + "\r\n" +
                 auth("cred-a") + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 400") && answer.contains("HTTP/1.0"), answer.constData());
    QVERIFY(m_received.isEmpty());
}

void TestGateway::aStuckTunnelDoesNotSpin()
{
    // A tunnel whose origin has sent its answer and closed while the client, having ended its
    // own side, reads nothing: the gateway waits for the client (bounded by the idle time)
    // without burning a CPU. CPU time from /proc, over seconds, far apart for a spin.
    QTcpServer origin;
    QVERIFY(origin.listen(QHostAddress::LocalHost));
    connect(&origin, &QTcpServer::newConnection, this, [&origin] {
        QTcpSocket *s = origin.nextPendingConnection();
        connect(s, &QTcpSocket::readyRead, s, [s] {
            s->readAll();
            s->write(QByteArray(4 * 1024 * 1024, 'x'));
            s->disconnectFromHost();
        });
    });
    const QByteArray port = QByteArray::number(origin.serverPort());
    control("grant\tcred-a\t127.0.0.1\trefuse\ttls.example.test:" + port);
    nextEvent(QStringLiteral("ok"));
    QTcpSocket client;
    client.setReadBufferSize(4096);
    client.setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, 4096);
    client.connectToHost(QHostAddress::LocalHost, quint16(m_port));
    QVERIFY(client.waitForConnected(5000));
    client.write("CONNECT tls.example.test:" + port + " HTTP/1.1\r\n" + auth("cred-a") + "\r\n" +
                 hello());
    QVERIFY(client.waitForBytesWritten(5000));
    QCOMPARE(nextEvent(QStringLiteral("conn")).value(u"verdict").toString(),
             QStringLiteral("allow"));
    ::shutdown(int(client.socketDescriptor()), SHUT_WR);
    // The origin's 4 MiB fill the buffers on the way, then it closes.
    QTest::qWait(1500);
    const auto cpuMs = [this] {
        QFile stat(QStringLiteral("/proc/%1/stat").arg(m_gateway->processId()));
        if (!stat.open(QIODevice::ReadOnly))
            return -1LL;
        const QList<QByteArray> fields = stat.readAll().split(')').last().split(' ');
        // utime and stime, fields 14 and 15 of the whole line (12 and 13 after "pid (comm)").
        return (fields.value(12).toLongLong() + fields.value(13).toLongLong()) * 1000 /
               sysconf(_SC_CLK_TCK);
    };
    const qint64 before = cpuMs();
    QTest::qWait(4000);
    const qint64 used = cpuMs() - before;
    QVERIFY2(before >= 0 && used < 1000,
             qPrintable(QStringLiteral("%1 ms of CPU in 4 s").arg(used)));
}

QTEST_GUILESS_MAIN(TestGateway)
#include "tst_gateway.moc"
