// ProxyRequest: the head of what a sandbox sends the egress gateway — CONNECT host:port, or a
// plain-HTTP request with an absolute URI — with the sandbox's credential, refused with the
// status a client understands when it is anything else.
#include "proxyrequest.h"

#include <QTest>

using Status = ProxyRequest::Status;
using Kind = ProxyRequest::Kind;

class TestProxyRequest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void connect();
    void forward();
    void everyPrefixAsksForMore();
    void refuses_data();
    void refuses();
    void originHeadDropsTheProxysHeaders();
    void hostMustNameTheTarget_data();
    void hostMustNameTheTarget();
    void tunnelTargetInAbsoluteForm_data();
    void tunnelTargetInAbsoluteForm();
    void hugeHeadIsRefused();
    void requestInATunnel();

private:
    static ProxyRequest parse(const QByteArray &bytes)
    {
        return ProxyRequest::parse(bytes.constData(), size_t(bytes.size()));
    }
};

// "cs:token-1" in Basic.
static const QByteArray kAuth = "Proxy-Authorization: Basic Y3M6dG9rZW4tMQ==\r\n";

void TestProxyRequest::connect()
{
    const QByteArray head = "CONNECT Files.PythonHosted.org:443 HTTP/1.1\r\nHost: "
                            "files.pythonhosted.org:443\r\n" +
                            kAuth + "\r\n";
    // What follows the head is the tunnel's (a ClientHello here), not the head's.
    const ProxyRequest r = parse(head + "\x16\x03\x01");
    QCOMPARE(r.state(), Status::Ok);
    QCOMPARE(r.kind(), Kind::Connect);
    QCOMPARE(r.host(), std::string("files.pythonhosted.org"));
    QCOMPARE(r.port(), 443);
    QCOMPARE(r.credential(), std::string("token-1"));
    QCOMPARE(r.headBytes(), size_t(head.size()));
    // An IPv6 literal in brackets.
    const ProxyRequest v6 = parse("CONNECT [fd00::1]:8443 HTTP/1.1\r\n" + kAuth + "\r\n");
    QCOMPARE(v6.state(), Status::Ok);
    QCOMPARE(v6.host(), std::string("fd00::1"));
    QCOMPARE(v6.port(), 8443);
}

void TestProxyRequest::forward()
{
    const QByteArray head = "POST http://example.com:8080/upload?x=1 HTTP/1.1\r\nHost: "
                            "example.com:8080\r\n" +
                            kAuth + "Content-Length: 5\r\n\r\n";
    const ProxyRequest r = parse(head + "hello");
    QCOMPARE(r.state(), Status::Ok);
    QCOMPARE(r.kind(), Kind::Forward);
    QCOMPARE(r.method(), std::string("POST"));
    QCOMPARE(r.host(), std::string("example.com"));
    QCOMPARE(r.port(), 8080);
    QCOMPARE(r.headBytes(), size_t(head.size())); // the body follows
    const ProxyRequest plain = parse("GET http://example.com HTTP/1.0\r\n" + kAuth + "\r\n");
    QCOMPARE(plain.state(), Status::Ok);
    QCOMPARE(plain.port(), 80);
}

void TestProxyRequest::everyPrefixAsksForMore()
{
    const QByteArray head = "CONNECT pypi.org:443 HTTP/1.1\r\n" + kAuth + "\r\n";
    for (int n = 0; n < head.size(); ++n)
        QVERIFY2(parse(head.left(n)).state() == Status::NeedMore, qPrintable(QString::number(n)));
}

void TestProxyRequest::refuses_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("why");
    QTest::newRow("no credential")
        << QByteArray("CONNECT pypi.org:443 HTTP/1.1\r\n\r\n") << 407 << "credential";
    QTest::newRow("not Basic") << QByteArray(
                                      "CONNECT pypi.org:443 HTTP/1.1\r\nProxy-Authorization: "
                                      "Bearer abc\r\n\r\n")
                               << 407 << "Basic";
    QTest::newRow("bad base64") << QByteArray(
                                       "CONNECT pypi.org:443 HTTP/1.1\r\nProxy-Authorization: "
                                       "Basic ***\r\n\r\n")
                                << 407 << "Basic";
    QTest::newRow("no colon") << QByteArray("CONNECT pypi.org:443 HTTP/1.1\r\nProxy-Authorization: "
                                            "Basic dG9rZW4=\r\n\r\n")
                              << 407 << "Basic";
    QTest::newRow("CONNECT without port") << "CONNECT pypi.org HTTP/1.1\r\n" + kAuth + "\r\n"
                                          << 400 << "";
    QTest::newRow("origin-form") << "GET /index.html HTTP/1.1\r\nHost: x\r\n" + kAuth + "\r\n"
                                 << 400 << "absolute URI";
    QTest::newRow("https URI") << "GET https://example.com/ HTTP/1.1\r\n" + kAuth + "\r\n"
                               << 400 << "use CONNECT";
    QTest::newRow("user info") << "GET http://u:p@example.com/ HTTP/1.1\r\n" + kAuth + "\r\n"
                               << 400 << "user names";
    QTest::newRow("bad host") << "CONNECT exa_mple!.com:443 HTTP/1.1\r\n" + kAuth + "\r\n"
                              << 400 << "";
    QTest::newRow("garbage") << QByteArray("\x16\x03\x01\x02\x00\x01", 6) << 400
                             << "not an HTTP request";
    // Written on as it came, a header line that starts with whitespace would fold into the line
    // before it (the Host the gateway writes) at the origin.
    QTest::newRow("a header line starting with a space")
        << "GET http://a.test/ HTTP/1.1\r\n X: y\r\n" + kAuth + "\r\n"
        << 400 << "not a token";
    QTest::newRow("space in target") << "CONNECT a b:443 HTTP/1.1\r\n" + kAuth + "\r\n"
                                     << 400 << "";
}

void TestProxyRequest::refuses()
{
    QFETCH(QByteArray, request);
    const ProxyRequest r = parse(request);
    QCOMPARE(r.state(), Status::Bad);
    QTEST(r.status(), "status");
    QFETCH(QString, why);
    QVERIFY2(QString::fromStdString(r.error()).contains(why), r.error().c_str());
    QVERIFY(!r.error().empty());
}

void TestProxyRequest::originHeadDropsTheProxysHeaders()
{
    const ProxyRequest r =
        parse("GET http://[fd00::1]:8080/a?b=c HTTP/1.1\r\n" + kAuth +
              "Proxy-Connection: keep-alive\r\nAccept: */*\r\nConnection: keep-alive, x-secret\r\n"
              "Keep-Alive: 5\r\nUser-Agent: test\r\n\r\n");
    QCOMPARE(r.state(), Status::Ok);
    QCOMPARE(QByteArray::fromStdString(r.originHead()),
             QByteArray("GET /a?b=c HTTP/1.1\r\nHost: [fd00::1]:8080\r\nAccept: */*\r\n"
                        "User-Agent: test\r\nConnection: close\r\n\r\n"));
    // The client's own Host, when it names the target, is the target's authority as the
    // gateway writes it.
    const ProxyRequest withHost =
        parse("GET http://Example.com:80/ HTTP/1.1\r\nHost: EXAMPLE.com\r\n" + kAuth + "\r\n");
    QCOMPARE(withHost.state(), Status::Ok);
    QCOMPARE(QByteArray::fromStdString(withHost.originHead()),
             QByteArray("GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"));
}

void TestProxyRequest::hostMustNameTheTarget_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    const QByteArray get = "GET http://api.test/v1 HTTP/1.1\r\n";
    QTest::newRow("another host") << get + "Host: evil.test\r\n" << 421;
    QTest::newRow("another port") << get + "Host: api.test:8080\r\n" << 421;
    QTest::newRow("empty") << get + "Host: \r\n" << 421;
    QTest::newRow("user info") << get + "Host: me@api.test\r\n" << 421;
    QTest::newRow("a path") << get + "Host: api.test/x\r\n" << 421;
    QTest::newRow("two") << get + "Host: api.test\r\nHost: evil.test\r\n" << 400;
    QTest::newRow("two, the same") << get + "Host: api.test\r\nhost: api.test\r\n" << 400;
}

void TestProxyRequest::hostMustNameTheTarget()
{
    QFETCH(QByteArray, request);
    const ProxyRequest r = parse(request + kAuth + "\r\n");
    QCOMPARE(r.state(), Status::Bad);
    QTEST(r.status(), "status");
    QVERIFY(!r.error().empty());
}

void TestProxyRequest::tunnelTargetInAbsoluteForm_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("defaultPort");
    QTest::addColumn<int>("status"); // 0: read
    QTest::addColumn<QString>("host");
    QTest::addColumn<int>("port");
    QTest::newRow("https, its own")
        << QByteArray("GET https://api.test/v1 HTTP/1.1\r\nHost: api.test\r\n") << 443 << 0
        << "api.test" << 443;
    QTest::newRow("no Host") << QByteArray("GET https://api.test:8443/v1 HTTP/1.1\r\n") << 443 << 0
                             << "api.test" << 8443;
    QTest::newRow("another site, bound Host")
        << QByteArray("GET https://evil.test/x HTTP/1.1\r\nHost: api.test\r\n") << 443 << 421 << ""
        << 0;
    QTest::newRow("http in a plain tunnel")
        << QByteArray("GET http://evil.test/x HTTP/1.1\r\n") << 80 << 0 << "evil.test" << 80;
    QTest::newRow("another scheme")
        << QByteArray("GET ftp://api.test/x HTTP/1.1\r\n") << 443 << 400 << "" << 0;
}

void TestProxyRequest::tunnelTargetInAbsoluteForm()
{
    QFETCH(QByteArray, request);
    QFETCH(int, defaultPort);
    QFETCH(int, status);
    const QByteArray whole = request + "\r\n";
    const ProxyRequest r =
        ProxyRequest::parseInTunnel(whole.constData(), size_t(whole.size()), defaultPort);
    if (status != 0) {
        QCOMPARE(r.state(), Status::Bad);
        QCOMPARE(r.status(), status);
        return;
    }
    QCOMPARE(r.state(), Status::Ok);
    QTEST(QString::fromStdString(r.host()), "host");
    QTEST(r.port(), "port");
    // The origin gets the origin form.
    QVERIFY2(r.originHead().rfind("GET /", 0) == 0, r.originHead().c_str());
}

void TestProxyRequest::hugeHeadIsRefused()
{
    QByteArray head = "CONNECT pypi.org:443 HTTP/1.1\r\n" + kAuth;
    while (head.size() < int(ProxyRequest::kMaxHeadBytes) + 100)
        head += "X-Filler: " + QByteArray(100, 'a') + "\r\n";
    const ProxyRequest r = parse(head);
    QCOMPARE(r.state(), Status::Bad);
    QVERIFY(r.status() == 431);
    QByteArray many = "CONNECT pypi.org:443 HTTP/1.1\r\n" + kAuth;
    for (int i = 0; i < 150; ++i)
        many += "X-" + QByteArray::number(i) + ": 1\r\n";
    const ProxyRequest m = parse(many + "\r\n");
    QCOMPARE(m.state(), Status::Bad);
    QCOMPARE(m.status(), 431);
}

void TestProxyRequest::requestInATunnel()
{
    const QByteArray head = "GET /a HTTP/1.1\r\nHost: Example.com:8080\r\n\r\n";
    ProxyRequest r = ProxyRequest::parseInTunnel(head.constData(), size_t(head.size()));
    QCOMPARE(r.state(), Status::Ok);
    QCOMPARE(r.host(), std::string("example.com"));
    QCOMPARE(r.port(), 8080);
    QCOMPARE(r.headBytes(), size_t(head.size()));
    const QByteArray v6 = "GET / HTTP/1.1\r\nHost: [fd00::1]\r\n\r\n";
    r = ProxyRequest::parseInTunnel(v6.constData(), size_t(v6.size()));
    QCOMPARE(r.state(), Status::Ok);
    QCOMPARE(r.host(), std::string("fd00::1"));
    QCOMPARE(r.port(), 80);
    for (const QByteArray &bad :
         {QByteArray("GET / HTTP/1.1\r\n\r\n"), QByteArray("GET / HTTP/1.1\r\nHost: a b\r\n\r\n"),
          QByteArray("CONNECT x.com:443 HTTP/1.1\r\nHost: x.com\r\n\r\n")}) {
        r = ProxyRequest::parseInTunnel(bad.constData(), size_t(bad.size()));
        QVERIFY2(r.state() == Status::Bad, bad.constData());
        QCOMPARE(r.status(), 400);
    }
    const QByteArray part = "GET / HTTP/1.1\r\nHost: x";
    QCOMPARE(ProxyRequest::parseInTunnel(part.constData(), size_t(part.size())).state(),
             Status::NeedMore);
}

QTEST_GUILESS_MAIN(TestProxyRequest)
#include "tst_proxyrequest.moc"
