// ClientHello: the server name a TLS client sends first through a CONNECT tunnel, read from real
// ClientHellos (made by OpenSSL through Python's ssl module: tests/unit/data/clienthello-*.bin),
// from every prefix of them, from one split over two records, and from damaged copies.
#include "clienthello.h"

#include <QFile>
#include <QRandomGenerator>
#include <QTest>

using Status = ClientHello::Status;

class TestClientHello : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void readsTheServerName();
    void noNameWithoutSni();
    void everyPrefixAsksForMore();
    void gathersAHelloSplitOverRecords();
    void plainHttpIsNotTls();
    void damagedLengthsAreMalformed();
    void garbageNeverReadsPastTheEnd();
    void anEncryptedHelloHidesItsName();

private:
    static QByteArray fixture(const char *name);
    static ClientHello::Result parse(const QByteArray &bytes)
    {
        return ClientHello::parse(reinterpret_cast<const uint8_t *>(bytes.constData()),
                                  size_t(bytes.size()));
    }
};

QByteArray TestClientHello::fixture(const char *name)
{
    QFile f(QStringLiteral(CS_CLIENTHELLO_DATA "/") + QLatin1String(name));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing fixture %s", name);
    return f.readAll();
}

void TestClientHello::readsTheServerName()
{
    const ClientHello::Result r = parse(fixture("clienthello-sni.bin"));
    QCOMPARE(r.status, Status::ServerName);
    // Sent as "tls.Example.test": compared in lower case, as names are.
    QCOMPARE(r.serverName, std::string("tls.example.test"));
    // Bytes after the hello (a pipelined early-data record) change nothing.
    QCOMPARE(parse(fixture("clienthello-sni.bin") + QByteArray(40, '\x17')).serverName,
             std::string("tls.example.test"));
}

void TestClientHello::noNameWithoutSni()
{
    const ClientHello::Result r = parse(fixture("clienthello-nosni.bin"));
    QCOMPARE(r.status, Status::NoName);
    QVERIFY(r.serverName.empty());
}

void TestClientHello::everyPrefixAsksForMore()
{
    const QByteArray hello = fixture("clienthello-sni.bin");
    for (int n = 0; n < hello.size(); ++n)
        QVERIFY2(parse(hello.left(n)).status == Status::NeedMore, qPrintable(QString::number(n)));
}

void TestClientHello::gathersAHelloSplitOverRecords()
{
    // The same handshake message framed as two records, cut at every point of its first 100
    // bytes (the name comes later, so each cut needs both records).
    const QByteArray hello = fixture("clienthello-sni.bin");
    const QByteArray message = hello.mid(5);
    auto record = [&](const QByteArray &payload) {
        QByteArray r = hello.left(3);
        r.append(char(payload.size() >> 8)).append(char(payload.size() & 0xff));
        return r + payload;
    };
    for (int cut = 1; cut < 100; ++cut) {
        const QByteArray split = record(message.left(cut)) + record(message.mid(cut));
        const ClientHello::Result r = parse(split);
        QCOMPARE(r.status, Status::ServerName);
        QCOMPARE(r.serverName, std::string("tls.example.test"));
        QCOMPARE(parse(split.left(5 + cut + 3)).status, Status::NeedMore);
    }
}

void TestClientHello::plainHttpIsNotTls()
{
    QCOMPARE(parse("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n").status, Status::NotTls);
    QCOMPARE(parse("SSH-2.0-OpenSSH_9.2\r\n").status, Status::NotTls);
    QCOMPARE(parse(QByteArray("\x15\x03\x01\x00\x02\x02\x28", 7)).status, Status::NotTls); // alert
    QCOMPARE(parse(QByteArray("\x16\x02\x00\x00\x01\x01", 6)).status, Status::NotTls);     // SSL 2
}

void TestClientHello::damagedLengthsAreMalformed()
{
    const QByteArray hello = fixture("clienthello-sni.bin");
    // The handshake is no ClientHello (a ServerHello type).
    QByteArray serverHello = hello;
    serverHello[5] = 0x02;
    QCOMPARE(parse(serverHello).status, Status::Malformed);
    // An empty record.
    QCOMPARE(parse(QByteArray("\x16\x03\x01\x00\x00", 5)).status, Status::Malformed);
    // A handshake message longer than any hello may be.
    QByteArray huge("\x16\x03\x01\x00\x04", 5);
    huge.append(QByteArray("\x01\x01\x00\x00", 4));
    QCOMPARE(parse(huge).status, Status::Malformed);
    // The extensions' length claims more than the message holds.
    QByteArray cut = hello;
    const int extensionsAt = 5 + 4 + 2 + 32 + 1 + uchar(hello[5 + 4 + 2 + 32]);
    const int suites = uchar(cut[extensionsAt]) << 8 | uchar(cut[extensionsAt + 1]);
    const int compression = extensionsAt + 2 + suites;
    const int extensions = compression + 1 + uchar(cut[compression]);
    cut[extensions] = char(0xff);
    QCOMPARE(parse(cut).status, Status::Malformed);
}

void TestClientHello::garbageNeverReadsPastTheEnd()
{
    // Random flips in a real hello: any status but never a read outside the buffer (ASan and
    // the sanitized run check that), and a name only when the flips left one.
    const QByteArray hello = fixture("clienthello-sni.bin");
    QRandomGenerator random(20261202);
    for (int i = 0; i < 3000; ++i) {
        QByteArray bytes = hello;
        for (int flips = 1 + int(random.bounded(4)); flips > 0; --flips)
            bytes[int(random.bounded(bytes.size()))] = char(random.bounded(256));
        const QByteArray copy = bytes.left(int(random.bounded(bytes.size() + 1)));
        const ClientHello::Result r = parse(copy);
        if (r.status == Status::ServerName)
            QVERIFY(!r.serverName.empty());
    }
}

void TestClientHello::anEncryptedHelloHidesItsName()
{
    // The SNI fixture with an encrypted_client_hello extension (0xfe0d) added at the end: its
    // server name is the cover of a shared front, not the host it reaches.
    QByteArray hello = fixture("clienthello-sni.bin");
    const auto length = [&](int at, int size) {
        int n = 0;
        for (int i = 0; i < size; ++i)
            n = (n << 8) | quint8(hello.at(at + i));
        return n;
    };
    const auto setLength = [&](int at, int size, int n) {
        for (int i = size - 1; i >= 0; --i, n >>= 8)
            hello[at + i] = char(n & 0xff);
    };
    // record (5), handshake header (4), version (2), random (32), then the variable fields.
    int at = 5 + 4 + 2 + 32;
    at += 1 + length(at, 1); // session id
    at += 2 + length(at, 2); // cipher suites
    at += 1 + length(at, 1); // compression methods
    const int extensions = length(at, 2);
    const QByteArray ech = QByteArray::fromHex("fe0d000400010203");
    QCOMPARE(at + 2 + extensions, hello.size()); // the extensions end the record
    hello.append(ech);
    setLength(at, 2, extensions + int(ech.size()));
    setLength(6, 3, length(6, 3) + int(ech.size()));
    setLength(3, 2, length(3, 2) + int(ech.size()));
    const ClientHello::Result r = parse(hello);
    QCOMPARE(r.status, Status::EncryptedName);
    QVERIFY(r.serverName.empty());
}

QTEST_GUILESS_MAIN(TestClientHello)
#include "tst_clienthello.moc"
