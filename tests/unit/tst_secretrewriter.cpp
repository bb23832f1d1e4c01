// SecretRewriter: a sandbox's secrets put into the requests it sends to their hosts (and only
// there), and masked in whatever comes back, whole or in pieces.
#include "secretrewriter.h"

#include <QTest>

namespace {

// As the server makes them (EgressLease::placeholderFor): the '-' keeps them from reading as
// base64, so that one sent bare after "Basic " is still found.
const std::string kKeyPlaceholder = "csb-secret-API_KEY-00112233445566778899aabbccddeeff";
const std::string kKeyValue = "sk-live-Qm9ndXMga2V5IGZvciB0ZXN0cw";
const std::string kTokenPlaceholder = "csb-secret-TOKEN-ffeeddccbbaa99887766554433221100";
const std::string kTokenValue = "ghp_tokenvalue0123456789";

BoundSecret secret(const std::string &name, const std::string &placeholder,
                   const std::string &value, const std::vector<std::string> &hosts)
{
    BoundSecret s{name, placeholder, value, {}};
    for (const std::string &host : hosts)
        s.hosts.push_back(*HostPattern::parse(host));
    return s;
}

// API_KEY for api.test (ports 80 and 443), TOKEN for *.git.test:8443.
SecretRewriter twoSecrets()
{
    return SecretRewriter({secret("API_KEY", kKeyPlaceholder, kKeyValue, {"api.test"}),
                           secret("TOKEN", kTokenPlaceholder, kTokenValue, {"*.git.test:8443"})});
}

QByteArray bytes(const std::string &s)
{
    return QByteArray::fromStdString(s);
}

QStringList names(const std::vector<std::string> &list)
{
    QStringList out;
    for (const std::string &name : list)
        out << QString::fromStdString(name);
    return out;
}

} // namespace

class TestSecretRewriter : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void bindsOnlyToItsHosts();
    void plainHttpOnlyWhereThePortIsNamed();
    void injectsInTheRequestLineAndHeaderValues();
    void injectsInsideBasicCredentials();
    void leavesThePlaceholderForAnUnboundHost();
    void dropsAcceptEncodingAndExpect();
    void masksEveryValue();
    void masksTheLongestValueWhereOneBeginsAnother();
    void masksAcrossPieces_data();
    void masksAcrossPieces();
    void roundtripsBase64();
    void decodesBase64WithoutPadding();
    void refusesWhatIsNotBase64_data();
    void refusesWhatIsNotBase64();
};

void TestSecretRewriter::bindsOnlyToItsHosts()
{
    const SecretRewriter r = twoSecrets();
    QVERIFY(r.bindsTo("api.test", 443));
    QVERIFY(r.bindsTo("api.test", 80));
    QVERIFY(!r.bindsTo("api.test", 8443)); // a pattern without a port: 80 and 443 only
    QVERIFY(r.bindsTo("code.git.test", 8443));
    QVERIFY(!r.bindsTo("git.test", 8443)); // a wildcard covers the names below, not its suffix
    QVERIFY(!r.bindsTo("other.test", 443));
    QVERIFY(SecretRewriter().empty());
    QVERIFY(!SecretRewriter().bindsTo("api.test", 443));
}

void TestSecretRewriter::injectsInTheRequestLineAndHeaderValues()
{
    const SecretRewriter r = twoSecrets();
    const std::string head = "GET /v1/items?key=" + kKeyPlaceholder +
                             "&page=2 HTTP/1.1\r\n"
                             "Host: api.test\r\n"
                             "Authorization: Bearer " +
                             kKeyPlaceholder +
                             "\r\n"
                             "x-api-key: " +
                             kKeyPlaceholder +
                             "\r\n"
                             "User-Agent: curl/8.0\r\n"
                             "\r\n";
    std::vector<std::string> added;
    const std::string out = r.inject(head, "api.test", 443, &added);
    QCOMPARE(bytes(out), bytes("GET /v1/items?key=" + kKeyValue +
                               "&page=2 HTTP/1.1\r\n"
                               "Host: api.test\r\n"
                               "Authorization: Bearer " +
                               kKeyValue +
                               "\r\n"
                               "x-api-key: " +
                               kKeyValue +
                               "\r\n"
                               "User-Agent: curl/8.0\r\n"
                               "\r\n"));
    // Named once however often it was put in.
    QCOMPARE(names(added), QStringList{QStringLiteral("API_KEY")});
}

void TestSecretRewriter::injectsInsideBasicCredentials()
{
    const SecretRewriter r = twoSecrets();
    // user:password in base64, the password the placeholder: the host gets the value, encoded.
    const std::string head = "GET /repo.git/info/refs HTTP/1.1\r\nHost: code.git.test:8443\r\n"
                             "Authorization: Basic " +
                             SecretRewriter::encodeBase64("x-access-token:" + kTokenPlaceholder) +
                             "\r\n\r\n";
    std::vector<std::string> added;
    const std::string out = r.inject(head, "code.git.test", 8443, &added);
    const std::string prefix = "Authorization: Basic ";
    const size_t at = out.find(prefix);
    QVERIFY2(at != std::string::npos, out.c_str());
    const size_t end = out.find("\r\n", at);
    std::string credentials;
    QVERIFY(SecretRewriter::decodeBase64(out.substr(at + prefix.size(), end - at - prefix.size()),
                                         &credentials));
    QCOMPARE(bytes(credentials), bytes("x-access-token:" + kTokenValue));
    QCOMPARE(names(added), QStringList{QStringLiteral("TOKEN")});
    QVERIFY(out.find(kTokenPlaceholder) == std::string::npos);
    // A host that echoes the header sends the value's encoding back: the answer's masking
    // turns it into what the program sent.
    std::vector<std::pair<std::string, std::string>> echoes;
    added.clear();
    const std::string again = r.inject(head, "code.git.test", 8443, &added, nullptr, &echoes);
    QCOMPARE(echoes.size(), size_t(1));
    const std::string sentEncoded = SecretRewriter::encodeBase64("x-access-token:" + kTokenValue);
    const std::string asWritten =
        SecretRewriter::encodeBase64("x-access-token:" + kTokenPlaceholder);
    QCOMPARE(bytes(r.withEchoes(echoes).mask("{\"authorization\": \"Basic " + sentEncoded + "\"}")),
             bytes("{\"authorization\": \"Basic " + asWritten + "\"}"));
    // Without the echoes the encoding is not recognised (what withEchoes is for).
    QCOMPARE(bytes(r.mask(sentEncoded)), bytes(sentEncoded));

    // The scheme's name in any case; a placeholder sent bare (not base64) is replaced as it is.
    added.clear();
    const std::string bare =
        r.inject("GET / HTTP/1.1\r\nauthorization: basic " + kTokenPlaceholder + "\r\n\r\n",
                 "code.git.test", 8443, &added);
    QCOMPARE(bytes(bare),
             bytes("GET / HTTP/1.1\r\nauthorization: basic " + kTokenValue + "\r\n\r\n"));
    QCOMPARE(names(added), QStringList{QStringLiteral("TOKEN")});

    // Basic credentials without a placeholder go as they came, byte for byte.
    const std::string plain = "GET / HTTP/1.1\r\nAuthorization: Basic " +
                              SecretRewriter::encodeBase64("user:pass") + "\r\n\r\n";
    added.clear();
    QCOMPARE(bytes(r.inject(plain, "code.git.test", 8443, &added)), bytes(plain));
    QVERIFY(added.empty());
}

void TestSecretRewriter::leavesThePlaceholderForAnUnboundHost()
{
    const SecretRewriter r = twoSecrets();
    const std::string head = "POST /upload?key=" + kKeyPlaceholder +
                             " HTTP/1.1\r\nHost: other.test\r\nAuthorization: Bearer " +
                             kKeyPlaceholder + "\r\nX-Token: " + kTokenPlaceholder +
                             "\r\nAuthorization: Basic " +
                             SecretRewriter::encodeBase64("u:" + kKeyPlaceholder) + "\r\n\r\n";
    // Another host, the bound host on another port, the wildcard's own suffix: the value stays
    // in the gateway.
    for (const auto &[host, port] : std::vector<std::pair<std::string, int>>{
             {"other.test", 443}, {"api.test", 8443}, {"git.test", 8443}}) {
        std::vector<std::string> added;
        const std::string out = r.inject(head, host, port, &added);
        QCOMPARE(bytes(out), bytes(head));
        QVERIFY2(added.empty(), host.c_str());
    }
    // Bound to api.test only: TOKEN's placeholder stays where API_KEY's is replaced.
    std::vector<std::string> added;
    const std::string out = r.inject(head, "api.test", 443, &added);
    QVERIFY(out.find(kKeyPlaceholder) == std::string::npos);
    QVERIFY(out.find("X-Token: " + kTokenPlaceholder + "\r\n") != std::string::npos);
    QVERIFY(out.find(kTokenValue) == std::string::npos);
    QCOMPARE(names(added), QStringList{QStringLiteral("API_KEY")});
}

void TestSecretRewriter::dropsAcceptEncodingAndExpect()
{
    const SecretRewriter r = twoSecrets();
    const std::string head = "POST /v1/messages HTTP/1.1\r\n"
                             "Host: api.test\r\n"
                             "Accept-Encoding: gzip, br\r\n"
                             "Content-Type: application/json\r\n"
                             "EXPECT: 100-continue\r\n"
                             "Content-Length: 12\r\n"
                             "accept-encoding: zstd\r\n"
                             "X-Api-Key: " +
                             kKeyPlaceholder + "\r\n\r\n";
    std::vector<std::string> added;
    bool expectContinue = false;
    const std::string out = r.inject(head, "api.test", 443, &added, &expectContinue);
    // The others stay, in their order.
    QCOMPARE(bytes(out), bytes("POST /v1/messages HTTP/1.1\r\n"
                               "Host: api.test\r\n"
                               "Content-Type: application/json\r\n"
                               "Content-Length: 12\r\n"
                               "X-Api-Key: " +
                               kKeyValue + "\r\n\r\n"));
    QVERIFY(expectContinue);
    // Without Expect, and for a host without secrets, the flag is cleared.
    expectContinue = true;
    r.inject("GET / HTTP/1.1\r\nHost: api.test\r\n\r\n", "api.test", 443, &added, &expectContinue);
    QVERIFY(!expectContinue);
    expectContinue = false;
    const std::string elsewhere =
        r.inject("PUT / HTTP/1.1\r\nExpect: 100-continue\r\nAccept-Encoding: gzip\r\n\r\n",
                 "other.test", 443, nullptr, &expectContinue);
    // A host that gets no value keeps its compression (it cannot echo what it was not sent).
    QCOMPARE(bytes(elsewhere), QByteArray("PUT / HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n"));
    QVERIFY(expectContinue);
}

void TestSecretRewriter::masksEveryValue()
{
    const SecretRewriter r = twoSecrets();
    // Whatever the host it came from: an answer may echo any value the sandbox must not see.
    const std::string text = "{\"key\":\"" + kKeyValue + "\",\"token\":\"" + kTokenValue +
                             "\",\"again\":\"" + kKeyValue + kKeyValue + "\"}";
    QCOMPARE(bytes(r.mask(text)),
             bytes("{\"key\":\"" + kKeyPlaceholder + "\",\"token\":\"" + kTokenPlaceholder +
                   "\",\"again\":\"" + kKeyPlaceholder + kKeyPlaceholder + "\"}"));
    QCOMPARE(bytes(r.mask("nothing to hide")), QByteArray("nothing to hide"));
    QCOMPARE(bytes(r.mask("")), QByteArray());
    QCOMPARE(bytes(SecretRewriter().mask(kKeyValue)), bytes(kKeyValue));
}

void TestSecretRewriter::masksTheLongestValueWhereOneBeginsAnother()
{
    // Either order: the longer value is masked whole, not its start as the shorter one.
    const BoundSecret shorter =
        secret("SHORT", "csb-secret-SHORT-0000000000000000", "abc123", {"a.test"});
    const BoundSecret longer =
        secret("LONG", "csb-secret-LONG-11111111111111111", "abc123xyz", {"b.test"});
    for (const SecretRewriter &r :
         {SecretRewriter({shorter, longer}), SecretRewriter({longer, shorter})}) {
        QCOMPARE(bytes(r.mask("1 abc123xyz 2 abc123 3 abc123xy")),
                 QByteArray("1 csb-secret-LONG-11111111111111111 2 "
                            "csb-secret-SHORT-0000000000000000 3 "
                            "csb-secret-SHORT-0000000000000000xy"));
    }
}

void TestSecretRewriter::masksAcrossPieces_data()
{
    QTest::addColumn<bool>("prefixPair");
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("one value") << false
                               << bytes("Authorization: " + kKeyValue + "\r\n\r\n{\"echo\":\"" +
                                        kKeyValue + "\",\"t\":\"" + kTokenValue + "\"}");
    QTest::newRow("value at both ends") << false << bytes(kTokenValue + " and " + kTokenValue);
    QTest::newRow("no value") << false << QByteArray("a body without any secret in it");
    QTest::newRow("a value that begins another") << true << QByteArray("<abc123xyz|abc123|ab>");
}

void TestSecretRewriter::masksAcrossPieces()
{
    QFETCH(bool, prefixPair);
    QFETCH(QByteArray, text);
    const SecretRewriter r =
        prefixPair
            ? SecretRewriter(
                  {secret("SHORT", "csb-secret-SHORT-0000000000000000", "abc123", {"a.test"}),
                   secret("LONG", "csb-secret-LONG-11111111111111111", "abc123xyz", {"b.test"})})
            : twoSecrets();
    const QByteArray whole = bytes(r.mask(text.toStdString()));
    // Every place a stream can be cut in two, and one byte at a time.
    QByteArray firstDifference;
    for (qsizetype cut = 0; cut <= text.size() && firstDifference.isEmpty(); ++cut) {
        SecretRewriter::Masker masker(r);
        std::string out = masker.feed(text.constData(), size_t(cut));
        out += masker.feed(text.constData() + cut, size_t(text.size() - cut));
        out += masker.finish();
        if (bytes(out) != whole)
            firstDifference = "cut at " + QByteArray::number(cut) + ": " + bytes(out);
    }
    SecretRewriter::Masker bytewise(r);
    std::string out;
    for (char c : text)
        out += bytewise.feed(&c, 1);
    out += bytewise.finish();
    if (firstDifference.isEmpty() && bytes(out) != whole)
        firstDifference = "byte by byte: " + bytes(out);
    QVERIFY2(firstDifference.isEmpty(), (firstDifference + "\nexpected: " + whole).constData());
}

void TestSecretRewriter::roundtripsBase64()
{
    // Every length modulo 3, bytes that are not text, and the empty string.
    for (const std::string &data :
         {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
          std::string("user:" + kKeyValue), std::string("\0\xff\x80\n\r\t=", 7)}) {
        const std::string encoded = SecretRewriter::encodeBase64(data);
        QCOMPARE(encoded.size() % 4, size_t(0));
        std::string decoded = "not touched";
        QVERIFY2(SecretRewriter::decodeBase64(encoded, &decoded), encoded.c_str());
        QCOMPARE(bytes(decoded), bytes(data));
    }
    QCOMPARE(bytes(SecretRewriter::encodeBase64("user:pass")), QByteArray("dXNlcjpwYXNz"));
    QCOMPARE(bytes(SecretRewriter::encodeBase64("ab")), QByteArray("YWI="));
}

void TestSecretRewriter::decodesBase64WithoutPadding()
{
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"YQ", "a"}, {"YQ=", "a"}, {"YQ==", "a"}, {"YWI", "ab"}, {"YWI=", "ab"}, {"YWJj", "abc"}};
    for (const auto &[text, expected] : cases) {
        std::string decoded;
        QVERIFY2(SecretRewriter::decodeBase64(text, &decoded), text.c_str());
        QCOMPARE(bytes(decoded), bytes(expected));
    }
    // A value whose last bytes are zeros keeps them: only the padding is taken off.
    std::string decoded;
    QVERIFY(SecretRewriter::decodeBase64("YQAA", &decoded));
    QCOMPARE(bytes(decoded), QByteArray("a\0\0", 3));
}

void TestSecretRewriter::refusesWhatIsNotBase64_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("punctuation") << QByteArray("!!!!");
    QTest::newRow("a placeholder") << bytes(kKeyPlaceholder);
    QTest::newRow("url-safe alphabet") << QByteArray("ab-_");
    QTest::newRow("space inside") << QByteArray("YW Jj");
    QTest::newRow("one character") << QByteArray("Y");
    QTest::newRow("five characters") << QByteArray("YWJjZ");
    QTest::newRow("padding only") << QByteArray("====");
    QTest::newRow("three padding characters") << QByteArray("Y===");
    QTest::newRow("not ASCII") << QByteArray("YW\xc3\xa9");
    QTest::newRow("padding inside") << QByteArray("YQ==YQ==");
    QTest::newRow("padding first") << QByteArray("=YWJ");
}

void TestSecretRewriter::refusesWhatIsNotBase64()
{
    QFETCH(QByteArray, text);
    std::string decoded = "not touched";
    // EVP_DecodeBlock reads '=' as a zero wherever it is; decodeBase64 takes it only at the end.
    QVERIFY(!SecretRewriter::decodeBase64(text.toStdString(), &decoded));
    QCOMPARE(bytes(decoded), QByteArray("not touched"));
}

void TestSecretRewriter::plainHttpOnlyWhereThePortIsNamed()
{
    // API_KEY is bound to api.test without a port (80 and 443): in plain HTTP it is not put in,
    // though it is still masked. TOKEN names its port: put in there, in plain HTTP too.
    const SecretRewriter plain = twoSecrets().plainHttp();
    QVERIFY(twoSecrets().bindsTo("api.test", 80));
    QVERIFY(!plain.bindsTo("api.test", 80));
    QVERIFY(!plain.bindsTo("api.test", 443));
    QVERIFY(plain.bindsTo("x.git.test", 8443));
    std::vector<std::string> added;
    const std::string head =
        "GET /?k=" + kKeyPlaceholder + " HTTP/1.1\r\nX-Token: " + kTokenPlaceholder + "\r\n\r\n";
    QVERIFY(plain.inject(head, "api.test", 80, &added).find(kKeyValue) == std::string::npos);
    QVERIFY(added.empty());
    QVERIFY(plain.inject(head, "x.git.test", 8443, &added).find(kTokenValue) != std::string::npos);
    QCOMPARE(plain.mask("echo " + kKeyValue), "echo " + kKeyPlaceholder);
}

QTEST_APPLESS_MAIN(TestSecretRewriter)
#include "tst_secretrewriter.moc"
