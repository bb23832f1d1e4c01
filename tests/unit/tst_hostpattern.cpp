// HostPattern: the entries of an egress allow-list, parsed strictly (a typo must not widen what
// a sandbox reaches) and matched as DNS names compare.
#include "hostpattern.h"

#include <QTest>

class TestHostPattern : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void parses_data();
    void parses();
    void refuses_data();
    void refuses();
    void matches_data();
    void matches();
    void normalises();
};

void TestHostPattern::parses_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("host");
    QTest::addColumn<QString>("ports");
    QTest::addColumn<bool>("wildcard");
    QTest::addColumn<bool>("address");
    QTest::addColumn<QString>("written");
    QTest::newRow("name") << "api.github.com"
                          << "api.github.com"
                          << "80,443" << false << false << "api.github.com";
    QTest::newRow("upper case, trailing dot") << "PyPI.org."
                                              << "pypi.org"
                                              << "80,443" << false << false << "pypi.org";
    QTest::newRow("port") << "registry.npmjs.org:8443"
                          << "registry.npmjs.org"
                          << "8443" << false << false << "registry.npmjs.org:8443";
    QTest::newRow("wildcard") << "*.pythonhosted.org"
                              << "pythonhosted.org"
                              << "80,443" << true << false << "*.pythonhosted.org";
    QTest::newRow("wildcard and port") << "*.example.com:22"
                                       << "example.com"
                                       << "22" << true << false << "*.example.com:22";
    QTest::newRow("IPv4") << "10.0.0.5"
                          << "10.0.0.5"
                          << "80,443" << false << true << "10.0.0.5";
    QTest::newRow("IPv4 and port") << "10.0.0.5:5432"
                                   << "10.0.0.5"
                                   << "5432" << false << true << "10.0.0.5:5432";
    QTest::newRow("IPv6 in brackets") << "[FD00::1]:8080"
                                      << "fd00::1"
                                      << "8080" << false << true << "[fd00::1]:8080";
    QTest::newRow("IPv6 without port") << "[::1]"
                                       << "::1"
                                       << "80,443" << false << true << "[::1]";
    QTest::newRow("underscore label") << "_dmarc.example.com"
                                      << "_dmarc.example.com"
                                      << "80,443" << false << false << "_dmarc.example.com";
}

void TestHostPattern::parses()
{
    QFETCH(QString, text);
    std::string error;
    const auto p = HostPattern::parse(text.toStdString(), &error);
    QVERIFY2(p, error.c_str());
    QFETCH(QString, host);
    QCOMPARE(QString::fromStdString(p->host()), host);
    QStringList ports;
    for (int port : p->ports())
        ports << QString::number(port);
    QTEST(ports.join(u','), "ports");
    QTEST(p->isWildcard(), "wildcard");
    QTEST(p->isAddress(), "address");
    QTEST(QString::fromStdString(p->text()), "written");
}

void TestHostPattern::refuses_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("why");
    QTest::newRow("empty") << ""
                           << "not a host name";
    QTest::newRow("star alone") << "*"
                                << "* may only begin";
    QTest::newRow("star inside") << "api.*.com"
                                 << "* may only begin";
    QTest::newRow("star without dot") << "*example.com"
                                      << "* may only begin";
    QTest::newRow("whole TLD") << "*.com"
                               << "at least two labels";
    QTest::newRow("wildcard address") << "*.10.0.0.1"
                                      << "not an address";
    QTest::newRow("port zero") << "example.com:0"
                               << "1 to 65535";
    QTest::newRow("port too large") << "example.com:65536"
                                    << "1 to 65535";
    QTest::newRow("port not a number") << "example.com:https"
                                       << "1 to 65535";
    QTest::newRow("port missing") << "example.com:"
                                  << "port is missing";
    QTest::newRow("bare IPv6") << "fd00::1"
                               << "in brackets";
    QTest::newRow("unclosed bracket") << "[fd00::1"
                                      << "closing ]";
    QTest::newRow("junk after bracket") << "[::1]x"
                                        << "only :port";
    QTest::newRow("scheme") << "https://example.com"
                            << "without a scheme";
    QTest::newRow("path") << "example.com/x"
                          << "not a host name";
    QTest::newRow("space") << "exa mple.com"
                           << "not a host name";
    QTest::newRow("empty label") << "example..com"
                                 << "not a host name";
    QTest::newRow("hyphen edge") << "-example.com"
                                 << "not a host name";
    QTest::newRow("label of 64") << QString(64, u'a') + ".com"
                                 << "not a host name";
    QTest::newRow("user info") << "user@example.com"
                               << "not a host name";
}

void TestHostPattern::refuses()
{
    QFETCH(QString, text);
    QFETCH(QString, why);
    std::string error;
    QVERIFY(!HostPattern::parse(text.toStdString(), &error));
    QVERIFY2(QString::fromStdString(error).contains(why), error.c_str());
    // The message names the pattern as given, so a long list shows which entry is wrong.
    QVERIFY2(QString::fromStdString(error).startsWith(u'"' + text + u'"'), error.c_str());
}

void TestHostPattern::matches_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("host");
    QTest::addColumn<int>("port");
    QTest::addColumn<bool>("match");
    QTest::newRow("same name, 443") << "pypi.org"
                                    << "pypi.org" << 443 << true;
    QTest::newRow("same name, 80") << "pypi.org"
                                   << "pypi.org" << 80 << true;
    QTest::newRow("other port") << "pypi.org"
                                << "pypi.org" << 8080 << false;
    QTest::newRow("case and dot") << "pypi.org"
                                  << "PYPI.ORG." << 443 << true;
    QTest::newRow("subdomain of a name") << "pypi.org"
                                         << "files.pypi.org" << 443 << false;
    QTest::newRow("wildcard below") << "*.pythonhosted.org"
                                    << "files.pythonhosted.org" << 443 << true;
    QTest::newRow("wildcard deeper") << "*.example.com"
                                     << "a.b.example.com" << 443 << true;
    QTest::newRow("wildcard not the apex") << "*.example.com"
                                           << "example.com" << 443 << false;
    QTest::newRow("wildcard label boundary") << "*.example.com"
                                             << "badexample.com" << 443 << false;
    QTest::newRow("suffix lookalike") << "example.com"
                                      << "example.com.evil.net" << 443 << false;
    QTest::newRow("explicit port only") << "example.com:8443"
                                        << "example.com" << 443 << false;
    QTest::newRow("explicit port") << "example.com:8443"
                                   << "example.com" << 8443 << true;
    QTest::newRow("IPv6 literal host") << "[fd00::1]:8080"
                                       << "[FD00::1]" << 8080 << true;
    QTest::newRow("invalid host") << "example.com"
                                  << "exa mple.com" << 443 << false;
}

void TestHostPattern::matches()
{
    QFETCH(QString, pattern);
    QFETCH(QString, host);
    QFETCH(int, port);
    const auto p = HostPattern::parse(pattern.toStdString());
    QVERIFY(p);
    QTEST(p->matches(host.toStdString(), port), "match");
}

void TestHostPattern::normalises()
{
    QCOMPARE(HostPattern::normalise("Files.PythonHosted.org."),
             std::string("files.pythonhosted.org"));
    QCOMPARE(HostPattern::normalise("[::FFFF:127.0.0.1]"), std::string("::ffff:127.0.0.1"));
    QCOMPARE(HostPattern::normalise("bad_host!"), std::string());
    QCOMPARE(HostPattern::normalise(""), std::string());
}

QTEST_GUILESS_MAIN(TestHostPattern)
#include "tst_hostpattern.moc"
