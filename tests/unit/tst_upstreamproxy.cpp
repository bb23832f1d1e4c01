// UpstreamProxy: the host's proxy the egress gateway goes out through, read from the variables
// the command line hands to installs (HTTPS_PROXY before HTTP_PROXY, either case), with its
// credential for Proxy-Authorization and NO_PROXY's hosts; what cannot be chained is said.
#include "upstreamproxy.h"

#include <QTest>

class TestUpstreamProxy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void reads_data()
    {
        QTest::addColumn<QStringList>("env");
        QTest::addColumn<QString>("hostPort"); // "" when none
        QTest::addColumn<QByteArray>("basic");
        QTest::addColumn<QStringList>("noProxy");
        QTest::addColumn<QString>("error");
        QTest::newRow("none") << QStringList{"HOME=/h"} << "" << QByteArray() << QStringList()
                              << "";
        QTest::newRow("an empty variable names none")
            << QStringList{"HTTPS_PROXY="} << "" << QByteArray() << QStringList() << "";
        QTest::newRow("https first")
            << QStringList{"HTTP_PROXY=http://a:1", "HTTPS_PROXY=http://b:2"} << "b:2"
            << QByteArray() << QStringList() << "";
        QTest::newRow("lower case, http only")
            << QStringList{"http_proxy=http://proxy.corp:3128"} << "proxy.corp:3128" << QByteArray()
            << QStringList() << "";
        QTest::newRow("no scheme, no port")
            << QStringList{"HTTPS_PROXY=proxy.corp"} << "proxy.corp:80" << QByteArray()
            << QStringList() << "";
        QTest::newRow("a credential, percent-encoded")
            << QStringList{"HTTPS_PROXY=http://me%40corp:p%3Ass@10.0.0.5:8080/"} << "10.0.0.5:8080"
            << QByteArray("me@corp:p:ss").toBase64() << QStringList() << "";
        QTest::newRow("IPv6") << QStringList{"HTTPS_PROXY=http://[fd00::5]:3128"}
                              << "[fd00::5]:3128" << QByteArray() << QStringList() << "";
        QTest::newRow("no_proxy, trimmed")
            << QStringList{"HTTPS_PROXY=http://p:1", "no_proxy=localhost, .corp ,,10.1.2.3"}
            << "p:1" << QByteArray() << QStringList{"localhost", ".corp", "10.1.2.3"} << "";
        QTest::newRow("NO_PROXY before no_proxy")
            << QStringList{"HTTPS_PROXY=http://p:1", "no_proxy=b", "NO_PROXY=a"} << "p:1"
            << QByteArray() << QStringList{"a"} << "";
        QTest::newRow("socks cannot be chained")
            << QStringList{"HTTPS_PROXY=socks5://s:1080"} << "" << QByteArray() << QStringList()
            << "HTTPS_PROXY is a socks5:// proxy; the egress gateway chains only to http:// "
               "proxies";
        QTest::newRow("nor a TLS proxy")
            << QStringList{"HTTPS_PROXY=https://p:443"} << "" << QByteArray() << QStringList()
            << "HTTPS_PROXY is a https:// proxy; the egress gateway chains only to http:// proxies";
        QTest::newRow("not a URL") << QStringList{"HTTP_PROXY=http://"} << "" << QByteArray()
                                   << QStringList() << "HTTP_PROXY is not a proxy URL";
    }
    void reads()
    {
        QFETCH(QStringList, env);
        QFETCH(QString, hostPort);
        QFETCH(QByteArray, basic);
        QFETCH(QStringList, noProxy);
        QFETCH(QString, error);
        const UpstreamProxy proxy = UpstreamProxy::fromEnv(env);
        QCOMPARE(proxy.isSet(), !hostPort.isEmpty());
        if (proxy.isSet())
            QCOMPARE(proxy.hostPort(), hostPort);
        QCOMPARE(proxy.basicCredential(), basic);
        QCOMPARE(proxy.noProxy(), noProxy);
        QCOMPARE(proxy.error(), error);
    }

    void describesWithoutTheCredential()
    {
        const UpstreamProxy proxy =
            UpstreamProxy::fromEnv({QStringLiteral("https_proxy=http://u:secret@p.corp:3128")});
        QCOMPARE(proxy.describe(), QStringLiteral("https_proxy (http://p.corp:3128)"));
    }

    void knowsTheVariablesItReads()
    {
        for (const char *name : {"HTTP_PROXY", "https_proxy", "No_Proxy", "ALL_PROXY"})
            QVERIFY2(UpstreamProxy::isProxyVariable(QString::fromLatin1(name)), name);
        for (const char *name : {"PROXY", "PIP_INDEX_URL", "npm_config_proxy_x", ""})
            QVERIFY2(!UpstreamProxy::isProxyVariable(QString::fromLatin1(name)), name);
    }
};

QTEST_GUILESS_MAIN(TestUpstreamProxy)
#include "tst_upstreamproxy.moc"
