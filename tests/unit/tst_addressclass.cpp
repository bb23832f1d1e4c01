// AddressClass: the addresses a listed name may not lead to unless that exact host is listed —
// the machine, its networks, cloud metadata — in every spelling IPv6 has for an IPv4 address.
#include "addressclass.h"

#include <QTest>

class TestAddressClass : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void classifies_data();
    void classifies();
};

void TestAddressClass::classifies_data()
{
    QTest::addColumn<QString>("address");
    QTest::addColumn<QString>("reason"); // "" = out there
    QTest::newRow("public v4") << "93.184.216.34"
                               << "";
    QTest::newRow("documentation range (npm here)") << "203.0.113.80"
                                                    << "";
    QTest::newRow("just below 10/8") << "9.255.255.255"
                                     << "";
    QTest::newRow("10/8") << "10.1.2.3"
                          << "private (10.0.0.0/8)";
    QTest::newRow("just above 10/8") << "11.0.0.0"
                                     << "";
    QTest::newRow("172.16/12 low") << "172.16.0.1"
                                   << "private (172.16.0.0/12)";
    QTest::newRow("172.16/12 high") << "172.31.255.255"
                                    << "private (172.16.0.0/12)";
    QTest::newRow("172.32 is public") << "172.32.0.1"
                                      << "";
    QTest::newRow("192.168/16") << "192.168.1.1"
                                << "private (192.168.0.0/16)";
    QTest::newRow("loopback") << "127.0.0.1"
                              << "loopback";
    QTest::newRow("loopback /8") << "127.255.0.9"
                                 << "loopback";
    QTest::newRow("metadata") << "169.254.169.254"
                              << "link-local (169.254.0.0/16, where cloud metadata services live)";
    QTest::newRow("CGNAT") << "100.64.0.1"
                           << "shared address space (100.64.0.0/10)";
    QTest::newRow("above CGNAT") << "100.128.0.1"
                                 << "";
    QTest::newRow("this network") << "0.0.0.0"
                                  << "this network (0.0.0.0/8)";
    QTest::newRow("multicast") << "224.0.0.1"
                               << "multicast";
    QTest::newRow("reserved") << "240.0.0.1"
                              << "reserved (240.0.0.0/4)";
    QTest::newRow("broadcast") << "255.255.255.255"
                               << "reserved (240.0.0.0/4)";
    QTest::newRow("benchmarking") << "198.18.0.1"
                                  << "benchmarking (198.18.0.0/15)";
    QTest::newRow("public v6") << "2606:4700::1111"
                               << "";
    QTest::newRow("v6 loopback") << "::1"
                                 << "loopback";
    QTest::newRow("v6 unspecified") << "::"
                                    << "unspecified";
    QTest::newRow("v6 ULA") << "fd00::1"
                            << "unique local (fc00::/7)";
    QTest::newRow("v6 link-local") << "fe80::1"
                                   << "link-local (fe80::/10)";
    QTest::newRow("v6 site-local") << "fec0::1"
                                   << "site-local (fec0::/10)";
    QTest::newRow("v6 multicast") << "ff02::1"
                                  << "multicast";
    QTest::newRow("mapped loopback") << "::ffff:127.0.0.1"
                                     << "IPv4 inside IPv6: loopback";
    QTest::newRow("mapped metadata")
        << "::ffff:169.254.169.254"
        << "IPv4 inside IPv6: link-local (169.254.0.0/16, where cloud metadata services live)";
    QTest::newRow("mapped public") << "::ffff:93.184.216.34"
                                   << "";
    QTest::newRow("compatible private") << "::10.0.0.1"
                                        << "IPv4 inside IPv6: private (10.0.0.0/8)";
    QTest::newRow("NAT64 private") << "64:ff9b::10.0.0.1"
                                   << "IPv4 inside IPv6: private (10.0.0.0/8)";
    QTest::newRow("6to4 loopback") << "2002:7f00:1::"
                                   << "IPv4 inside 6to4: loopback";
    QTest::newRow("6to4 public") << "2002:5db8:d822::"
                                 << "";
    QTest::newRow("a name") << "example.com"
                            << "not an address";
    QTest::newRow("v4 with port") << "10.0.0.1:80"
                                  << "not an address";
    QTest::newRow("octal-looking") << "010.0.0.1"
                                   << "not an address";
}

void TestAddressClass::classifies()
{
    QFETCH(QString, address);
    QTEST(QString::fromStdString(AddressClass::restriction(address.toStdString())), "reason");
}

QTEST_GUILESS_MAIN(TestAddressClass)
#include "tst_addressclass.moc"
