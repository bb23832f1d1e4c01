// GatewayProtocol: the egress gateway's commands and events read back as they were written, in
// the bytes the server and the gateway exchanged before the protocol had a class of its own (an
// image and a server of either kind talk to each other), and a line from the other process that
// is not one of them is refused with its Fault, whole. Both ends use it: the gateway's
// Gateway::control on commands, the server's EgressGateway on what it writes and reads.
#include "egressgateway.h"
#include "gateway.h"
#include "gatewayprotocol.h"

#include <QRegularExpression>
#include <QTest>

namespace {

using P = GatewayProtocol;
using Fault = P::Fault;

const std::string kPlaceholder = "csb-secret-API_KEY-00112233445566778899aabbccddeeff";

std::string listed(const std::vector<std::string> &items)
{
    std::string out = "[";
    for (const std::string &item : items)
        out += item + "|";
    return out + "]";
}

// Every field of a command or an event, in the test's own words (not the protocol's), so that
// what read back is compared field by field.
std::string describe(const P::Grant &c)
{
    return "grant " + c.credential + " " + c.source + " " + (c.ask ? "ask " : "refuse ") +
           listed(c.patterns);
}
std::string describe(const P::Revoke &c)
{
    return "revoke " + c.credential;
}
std::string describe(const P::Verdict &c)
{
    return "verdict " + std::to_string(c.connection) + (c.allow ? " allow" : " deny");
}
std::string describe(const P::Upstream &c)
{
    return "upstream " + c.host + " " + std::to_string(c.port) + " " + c.basic + " " +
           listed(c.noProxy);
}
std::string describe(const P::Ping &)
{
    return "ping";
}
std::string describe(const P::Authority &c)
{
    return "authority " + c.certificatePem + " " + c.keyPem;
}
std::string describe(const P::Trust &c)
{
    return "trust " + c.bundlePem;
}
std::string describe(const P::Secret &c)
{
    return "secret " + c.credential + " " + c.name + " " + c.placeholder + " " + c.value + " " +
           listed(c.hosts);
}
std::string describe(const P::Ready &e)
{
    return "ready " + std::to_string(e.port);
}
std::string describe(const P::Pong &)
{
    return "pong";
}
std::string describe(const P::Ok &e)
{
    return "ok " + std::to_string(int(e.of)) + " " + e.credential + " " + e.name + " " + e.upstream;
}
std::string describe(const P::Error &e)
{
    return "error " + e.line + " " + e.why;
}
std::string describe(const P::Ask &e)
{
    return "ask " + std::to_string(e.id) + " " + e.credential + " " + e.host + " " +
           std::to_string(e.port);
}
std::string describe(const P::Connection &e)
{
    return "conn " + std::to_string(e.id) + " " + e.credential + " " + e.host + " " +
           std::to_string(e.port) + " " + std::to_string(int(e.outcome)) + " " + e.rule;
}
std::string describe(const P::End &e)
{
    return "end " + std::to_string(e.id) + " " + std::to_string(e.up) + " " +
           std::to_string(e.down) + " " + std::to_string(e.ms);
}
std::string describe(const P::SecretsUsed &e)
{
    return "secret " + std::to_string(e.id) + " " + listed(e.names);
}
template <class... Ts> QByteArray describe(const std::variant<Ts...> &value)
{
    return QByteArray::fromStdString(std::visit([](const auto &v) { return describe(v); }, value));
}

QByteArray bytes(const std::string &s)
{
    return QByteArray::fromStdString(s);
}

std::string many(size_t count, const std::string &item, char by)
{
    std::string out;
    for (size_t i = 0; i < count; ++i)
        out += (i > 0 ? std::string(1, by) : std::string()) + item;
    return out;
}

// The server's side of the channel, scripted: what it writes is kept, what the gateway says is
// handed to it as the gateway's output.
class ScriptedGateway : public EgressGateway
{
public:
    QByteArrayList written;

    void say(const std::string &line) { onOutput(1, bytes(line) + '\n'); }

protected:
    void startGateway() override {}
    void removeGateway() override {}
    void finishShutdown() override { shutdownDone(); }
    void writeControl(const QByteArray &bytes) override { written.append(bytes); }
    bool closeControl() override { return true; }
    EgressEndpoint where() const override
    {
        return {QStringLiteral("net"), QStringLiteral("10.0.0.1"), kPort, {}, {}};
    }
};

} // namespace

class TestGatewayProtocol : public QObject
{
    Q_OBJECT

private:
    // Rows of the _data functions, a kind at a time.
    void malformedLines();
    void malformedValues();
    void malformedKeys();
    void malformedObjects();
    void malformedEventFields();

private Q_SLOTS:
    void commandsReadBackAsWritten_data();
    void commandsReadBackAsWritten();
    void malformedCommandsAreRefused_data();
    void malformedCommandsAreRefused();
    void encodeRefusesWhatWouldNotReadBack_data();
    void encodeRefusesWhatWouldNotReadBack();
    void aLineWithAKeyIsNeverQuoted();
    void eventsReadBackAsWritten_data();
    void eventsReadBackAsWritten();
    void malformedEventsAreRefused_data();
    void malformedEventsAreRefused();
    void eventTextsAreCutToWhatIsRead();
    void theGatewayAnswersTypedCommands();
    void theServerWritesCommandsAndReadsEvents();
};

void TestGatewayProtocol::commandsReadBackAsWritten_data()
{
    QTest::addColumn<P::Command>("command");
    QTest::addColumn<QByteArray>("line"); // as the server wrote it before
    QTest::newRow("grant") << P::Command(P::Grant{"cred-a",
                                                  "10.0.0.2",
                                                  false,
                                                  {"api.example.com", "*.example.org:8443"}})
                           << QByteArray("grant\tcred-a\t10.0.0.2\trefuse\tapi.example.com,"
                                         "*.example.org:8443");
    QTest::newRow("grant, asking, no hosts") << P::Command(P::Grant{"cred-b", "fd00::5", true, {}})
                                             << QByteArray("grant\tcred-b\tfd00::5\task\t");
    QTest::newRow("revoke") << P::Command(P::Revoke{"cred-a"}) << QByteArray("revoke\tcred-a");
    QTest::newRow("verdict allow")
        << P::Command(P::Verdict{42, true}) << QByteArray("verdict\t42\tallow");
    QTest::newRow("verdict deny, the largest id")
        << P::Command(P::Verdict{18446744073709551615u, false})
        << QByteArray("verdict\t18446744073709551615\tdeny");
    QTest::newRow("upstream")
        << P::Command(P::Upstream{"proxy.corp", 3128, "dTpw", {"localhost", ".corp.example", "*"}})
        << QByteArray("upstream\tproxy.corp:3128\tdTpw\tlocalhost,"
                      ".corp.example,*");
    QTest::newRow("upstream v6") << P::Command(P::Upstream{"fd00::1", 8080, {}, {}})
                                 << QByteArray("upstream\t[fd00::1]:8080\t-\t-");
    QTest::newRow("no upstream") << P::Command(P::Upstream{}) << QByteArray("upstream\t-\t-\t-");
    QTest::newRow("ping") << P::Command(P::Ping{}) << QByteArray("ping");
    QTest::newRow("authority") << P::Command(P::Authority{"-----CERT-----\n", "-----KEY-----\n"})
                               << "authority\t" + QByteArray("-----CERT-----\n").toBase64() + "\t" +
                                      QByteArray("-----KEY-----\n").toBase64();
    QTest::newRow("trust") << P::Command(P::Trust{"-----BUNDLE-----\n"})
                           << "trust\t" + QByteArray("-----BUNDLE-----\n").toBase64();
    // A value is bytes: a tab, a newline, a NUL in it travel in base64.
    const std::string value("sk\t\n\0\xff-live", 11);
    QTest::newRow("secret")
        << P::Command(P::Secret{
               "cred-a", "API_KEY", kPlaceholder, value, {"api.example.com", "*.example.org"}})
        << "secret\tcred-a\tAPI_KEY\t" + bytes(kPlaceholder) + "\t" + bytes(value).toBase64() +
               "\tapi.example.com,*.example.org";
}

void TestGatewayProtocol::commandsReadBackAsWritten()
{
    QFETCH(P::Command, command);
    QFETCH(QByteArray, line);
    std::string why;
    const std::string written = P::encode(command, &why);
    QCOMPARE(bytes(written), line);
    QVERIFY(why.empty());
    const P::DecodedCommand decoded = P::decodeCommand(written);
    QVERIFY2(decoded.command, decoded.why.c_str());
    QCOMPARE(decoded.fault, Fault::None);
    QCOMPARE(describe(*decoded.command), describe(command));
}

void TestGatewayProtocol::malformedCommandsAreRefused_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<Fault>("fault");
    QTest::addColumn<QString>("why"); // in the reason
    malformedLines();
    malformedValues();
    malformedKeys();
}

void TestGatewayProtocol::malformedLines()
{
    const QByteArray grant = "grant\tcred\t10.0.0.2\trefuse\t";
    QTest::newRow("empty") << QByteArray() << Fault::Empty << "an empty line";
    QTest::newRow("too long") << "trust\t" + QByteArray(int(P::kMaxCommandLine), 'A')
                              << Fault::TooLong << "longer than";
    QTest::newRow("unknown") << QByteArray("hello\tworld") << Fault::Unknown
                             << "not a control line";
    QTest::newRow("a name in another case")
        << QByteArray("PING") << Fault::Unknown << "not a control line";
    QTest::newRow("a field short")
        << QByteArray("grant\tcred\t10.0.0.2\trefuse") << Fault::FieldCount << "grant takes";
    // A tab inside a value is another field.
    QTest::newRow("a tab in a value")
        << grant + "a.test\tb.test" << Fault::FieldCount << "grant takes";
    QTest::newRow("ping with a field")
        << QByteArray("ping\t") << Fault::FieldCount << "ping takes nothing";
    QTest::newRow("no credential") << QByteArray("grant\t\t10.0.0.2\trefuse\ta.test")
                                   << Fault::BadField << "credential is empty";
    QTest::newRow("credential too long") << "revoke\t" + QByteArray(int(P::kMaxWord) + 1, 'c')
                                         << Fault::BadField << "longer than 1024";
    QTest::newRow("a space in a credential")
        << QByteArray("revoke\tcred a") << Fault::BadCharacter << "character";
    QTest::newRow("a CR in a credential")
        << QByteArray("revoke\tcred\r") << Fault::BadCharacter << "character";
    QTest::newRow("a newline in a credential")
        << QByteArray("revoke\tcred\nping") << Fault::BadCharacter << "character";
}

void TestGatewayProtocol::malformedValues()
{
    const QByteArray grant = "grant\tcred\t10.0.0.2\trefuse\t";
    QTest::newRow("UTF-8 in a pattern") << grant + "b\xc3\xbc"
                                                   "cher.de"
                                        << Fault::BadCharacter << "pattern";
    QTest::newRow("a space in a pattern")
        << grant + "a.test,b .test" << Fault::BadCharacter << "pattern";
    QTest::newRow("too many patterns") << grant + bytes(many(P::kMaxListItems + 1, "a.test", ','))
                                       << Fault::BadField << "more than 2048";
    QTest::newRow("no address") << QByteArray("grant\tcred\tsandbox\trefuse\ta.test")
                                << Fault::BadField << "the sandbox's address";
    QTest::newRow("neither refuse nor ask")
        << QByteArray("grant\tcred\t10.0.0.2\tmaybe\ta.test") << Fault::BadField << "refuse or ask";
    QTest::newRow("a verdict's id not a number")
        << QByteArray("verdict\tx\tallow") << Fault::BadNumber << "by its number";
    QTest::newRow("a negative id")
        << QByteArray("verdict\t-1\tallow") << Fault::BadNumber << "by its number";
    QTest::newRow("an id past 2^64") << QByteArray("verdict\t18446744073709551616\tallow")
                                     << Fault::BadNumber << "by its number";
    QTest::newRow("an empty id") << QByteArray("verdict\t\tallow") << Fault::BadNumber
                                 << "by its number";
    QTest::newRow("neither allow nor deny")
        << QByteArray("verdict\t1\tmaybe") << Fault::BadField << "allow or deny";
    QTest::newRow("upstream without a port")
        << QByteArray("upstream\tproxy\t-\t-") << Fault::BadNumber << "host:port";
    QTest::newRow("upstream port 0")
        << QByteArray("upstream\tproxy:0\t-\t-") << Fault::BadNumber << "host:port";
    QTest::newRow("upstream port 65536")
        << QByteArray("upstream\tproxy:65536\t-\t-") << Fault::BadNumber << "host:port";
    QTest::newRow("upstream without a host")
        << QByteArray("upstream\t:80\t-\t-") << Fault::BadNumber << "host:port";
    QTest::newRow("upstream host with a bracket")
        << QByteArray("upstream\t[a]b]:80\t-\t-") << Fault::BadCharacter << "host:port";
    QTest::newRow("upstream credential empty")
        << QByteArray("upstream\tproxy:80\t\t-") << Fault::BadField << "base64 or -";
    QTest::newRow("upstream credential not base64")
        << QByteArray("upstream\tproxy:80\tnot*base64\t-") << Fault::BadField << "base64 or -";
    QTest::newRow("a no-proxy entry -")
        << QByteArray("upstream\tproxy:80\t-\ta,-") << Fault::BadField << "no-proxy entry is -";
}

// The lines that carry a key or a secret's value.
void TestGatewayProtocol::malformedKeys()
{
    const QByteArray ph = bytes(kPlaceholder);
    QTest::newRow("authority short")
        << QByteArray("authority\tQUJD") << Fault::FieldCount << "a certificate and a key";
    QTest::newRow("authority not base64")
        << QByteArray("authority\t*\tQUJD") << Fault::BadField << "a certificate and a key";
    QTest::newRow("authority empty")
        << QByteArray("authority\t\tQUJD") << Fault::BadField << "a certificate and a key";
    QTest::newRow("trust not base64")
        << QByteArray("trust\tnot*base64") << Fault::BadField << "PEM bundle in base64";
    QTest::newRow("secret without hosts")
        << "secret\tcred\tAPI_KEY\t" + ph + "\tdmFsdWU=" << Fault::FieldCount << "and hosts";
    QTest::newRow("secret with an empty host list")
        << "secret\tcred\tAPI_KEY\t" + ph + "\tdmFsdWU=\t," << Fault::BadField << "needs a host";
    QTest::newRow("secret placeholder short")
        << QByteArray("secret\tcred\tAPI_KEY\tshort\tdmFsdWU=\ta.test") << Fault::BadField
        << "16 characters";
    QTest::newRow("secret value not base64")
        << "secret\tcred\tAPI_KEY\t" + ph + "\thunter2*\ta.test" << Fault::BadField
        << "a value in base64";
    QTest::newRow("secret value empty")
        << "secret\tcred\tAPI_KEY\t" + ph + "\t\ta.test" << Fault::BadField << "a value in base64";
    QTest::newRow("secret name with a space")
        << "secret\tcred\tAPI KEY\t" + ph + "\tdmFsdWU=\ta.test" << Fault::BadCharacter
        << "a value in base64";
}

void TestGatewayProtocol::malformedCommandsAreRefused()
{
    QFETCH(QByteArray, line);
    QFETCH(Fault, fault);
    QFETCH(QString, why);
    const P::DecodedCommand decoded = P::decodeCommand(line.toStdString());
    QVERIFY(!decoded.command);
    QCOMPARE(decoded.fault, fault);
    QVERIFY2(QString::fromStdString(decoded.why).contains(why), decoded.why.c_str());
}

void TestGatewayProtocol::encodeRefusesWhatWouldNotReadBack_data()
{
    QTest::addColumn<P::Command>("command");
    const P::Grant grant{"cred", "10.0.0.2", false, {"a.test"}};
    const auto withPatterns = [&](std::vector<std::string> patterns) {
        P::Grant g = grant;
        g.patterns = std::move(patterns);
        return P::Command(g);
    };
    QTest::newRow("a tab in a credential") << P::Command(P::Revoke{"cred\tping"});
    QTest::newRow("a newline in a credential") << P::Command(P::Revoke{"cred\nping"});
    QTest::newRow("no credential") << P::Command(P::Revoke{""});
    QTest::newRow("a comma in a pattern") << withPatterns({"a.test,b.test"});
    QTest::newRow("an empty pattern") << withPatterns({"a.test", ""});
    QTest::newRow("a newline in a pattern") << withPatterns({"a.test\nrevoke\tcred"});
    QTest::newRow("too many patterns")
        << withPatterns(std::vector<std::string>(P::kMaxListItems + 1, "a.test"));
    QTest::newRow("a source that is no address")
        << P::Command(P::Grant{"cred", "10.0.0.2\tx", false, {}});
    QTest::newRow("an upstream port out of range") << P::Command(P::Upstream{"proxy", 0, {}, {}});
    QTest::newRow("a port without an upstream") << P::Command(P::Upstream{"", 80, {}, {}});
    QTest::newRow("a bracket in an upstream host")
        << P::Command(P::Upstream{"[fd00::1]", 80, {}, {}});
    QTest::newRow("an upstream credential not base64")
        << P::Command(P::Upstream{"proxy", 80, "u:p", {}});
    QTest::newRow("a no-proxy entry -") << P::Command(P::Upstream{"proxy", 80, {}, {"-"}});
    QTest::newRow("no certificate") << P::Command(P::Authority{"", "KEY"});
    QTest::newRow("no trust store") << P::Command(P::Trust{""});
    QTest::newRow("a short placeholder")
        << P::Command(P::Secret{"cred", "API_KEY", "short", "value", {"a.test"}});
    QTest::newRow("a secret without a value")
        << P::Command(P::Secret{"cred", "API_KEY", kPlaceholder, "", {"a.test"}});
    QTest::newRow("a secret without hosts")
        << P::Command(P::Secret{"cred", "API_KEY", kPlaceholder, "value", {}});
    QTest::newRow("a trust store past a line")
        << P::Command(P::Trust{std::string(P::kMaxCommandLine, 'x')});
}

void TestGatewayProtocol::encodeRefusesWhatWouldNotReadBack()
{
    QFETCH(P::Command, command);
    std::string why;
    QCOMPARE(bytes(P::encode(command, &why)), QByteArray());
    QVERIFY(!why.empty());
}

void TestGatewayProtocol::aLineWithAKeyIsNeverQuoted()
{
    // A secret's line, the authority's and the trust store's: their errors name the command
    // alone, and no reason depends on the value.
    const std::string value = "hunter2-not-base64!";
    const std::string secret = "secret\tcred\tAPI_KEY\t" + kPlaceholder + "\t" + value + "\ta.test";
    const P::DecodedCommand decoded = P::decodeCommand(secret);
    QVERIFY(!decoded.command);
    QVERIFY(decoded.why.find(value) == std::string::npos);
    QVERIFY(decoded.why.find(kPlaceholder) == std::string::npos);
    const std::string other =
        "secret\tcred\tAPI_KEY\t" + kPlaceholder + "\tother-not-base64*\ta.test";
    QCOMPARE(bytes(P::decodeCommand(other).why), bytes(decoded.why));
    for (const std::string &line : {secret, "authority\tQUJD\t" + value, "trust\t" + value}) {
        const std::string error = P::encode(P::refusal(line, "why"));
        QVERIFY2(error.find(value) == std::string::npos, error.c_str());
        const auto read = P::decodeEvent(error);
        QVERIFY(read.event);
        const std::string name = line.substr(0, line.find('\t'));
        QCOMPARE(bytes(std::get<P::Error>(*read.event).line), bytes(name + " …"));
    }
    // Any other line is quoted, its first kMaxQuotedLine bytes.
    const P::Error grant = P::refusal("grant\t" + std::string(300, 'x'), "why");
    QCOMPARE(grant.line.size(), P::kMaxQuotedLine);
    QCOMPARE(bytes(grant.line.substr(0, 6)), QByteArray("grant\t"));
}

void TestGatewayProtocol::eventsReadBackAsWritten_data()
{
    QTest::addColumn<P::NetworkEvent>("event");
    QTest::addColumn<QByteArray>("line"); // as the gateway wrote it before
    using Of = P::Ok::Of;
    using Outcome = P::Connection::Outcome;
    QTest::newRow("ready") << P::NetworkEvent(P::Ready{3128})
                           << QByteArray(R"({"ev":"ready","port":3128})");
    QTest::newRow("pong") << P::NetworkEvent(P::Pong{}) << QByteArray(R"({"ev":"pong"})");
    QTest::newRow("ok, a grant") << P::NetworkEvent(P::Ok{Of::Credential, "cred-a", {}, {}})
                                 << QByteArray(R"({"ev":"ok","cred":"cred-a"})");
    QTest::newRow("ok, a secret") << P::NetworkEvent(P::Ok{Of::Secret, "cred-a", "API_KEY", {}})
                                  << QByteArray(
                                         R"({"ev":"ok","cred":"cred-a","secret":"API_KEY"})");
    QTest::newRow("ok, the upstream") << P::NetworkEvent(P::Ok{Of::Upstream, {}, {}, "proxy:3128"})
                                      << QByteArray(R"({"ev":"ok","upstream":"proxy:3128"})");
    QTest::newRow("ok, the authority") << P::NetworkEvent(P::Ok{Of::Authority, {}, {}, {}})
                                       << QByteArray(R"({"ev":"ok","authority":true})");
    QTest::newRow("ok, the trust store") << P::NetworkEvent(P::Ok{Of::Trust, {}, {}, {}})
                                         << QByteArray(R"({"ev":"ok","trust":true})");
    QTest::newRow("error") << P::NetworkEvent(P::Error{"grant\tx \"q\" \\", "a \"why\""})
                           << QByteArray(R"({"ev":"error","line":"grant\u0009x \"q\" \\",)"
                                         R"("why":"a \"why\""})");
    QTest::newRow("ask")
        << P::NetworkEvent(P::Ask{7, "cred-a", "web.test", 443})
        << QByteArray(R"({"ev":"ask","id":7,"cred":"cred-a","host":"web.test","port":443})");
    QTest::newRow("conn") << P::NetworkEvent(P::Connection{7, "cred-a", "web.test", 443,
                                                           Outcome::Allow, "*.test"})
                          << QByteArray(R"({"ev":"conn","id":7,"cred":"cred-a","host":"web.test",)"
                                        R"("port":443,"verdict":"allow","rule":"*.test"})");
    QTest::newRow("conn, denied, UTF-8 and controls in the rule")
        << P::NetworkEvent(P::Connection{8, "c", "h", 80, Outcome::Deny, "n\xc3\xa4me\x01\x7f"})
        << QByteArray("{\"ev\":\"conn\",\"id\":8,\"cred\":\"c\",\"host\":\"h\",\"port\":80,"
                      "\"verdict\":\"deny\",\"rule\":\"n\xc3\xa4me\\u0001\\u007f\"}");
    QTest::newRow("conn, failed") << P::NetworkEvent(
                                         P::Connection{9, "c", "h", 80, Outcome::Error, "no way"})
                                  << QByteArray(R"({"ev":"conn","id":9,"cred":"c","host":"h",)"
                                                R"("port":80,"verdict":"error","rule":"no way"})");
    QTest::newRow("end") << P::NetworkEvent(P::End{18446744073709551615u, 10, 20, 30})
                         << QByteArray(R"({"ev":"end","id":18446744073709551615,"up":10,)"
                                       R"("down":20,"ms":30})");
    QTest::newRow("secret") << P::NetworkEvent(P::SecretsUsed{7, {"API_KEY", "TOKEN"}})
                            << QByteArray(R"({"ev":"secret","id":7,"names":["API_KEY","TOKEN"]})");
    QTest::newRow("secret, none") << P::NetworkEvent(P::SecretsUsed{7, {}})
                                  << QByteArray(R"({"ev":"secret","id":7,"names":[]})");
}

void TestGatewayProtocol::eventsReadBackAsWritten()
{
    QFETCH(P::NetworkEvent, event);
    QFETCH(QByteArray, line);
    const std::string written = P::encode(event);
    QCOMPARE(bytes(written), line);
    const P::DecodedEvent decoded = P::decodeEvent(written);
    QVERIFY2(decoded.event, decoded.why.c_str());
    QCOMPARE(decoded.fault, Fault::None);
    QCOMPARE(describe(*decoded.event), describe(event));
    // What another JSON writer may do differently: spaces, escapes for what needs none.
    QByteArray spaced = line;
    spaced.replace(",\"", " , \"").replace("\":", "\" : ").replace("{", "{ ").replace("}", " }");
    spaced.replace("\"ev\"", "\"\\u0065v\"");
    const P::DecodedEvent again = P::decodeEvent(spaced.toStdString());
    QVERIFY2(again.event, again.why.c_str());
    QCOMPARE(describe(*again.event), describe(event));
}

void TestGatewayProtocol::malformedEventsAreRefused_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<Fault>("fault");
    QTest::addColumn<QString>("why"); // in the reason
    malformedObjects();
    malformedEventFields();
}

void TestGatewayProtocol::malformedObjects()
{
    QTest::newRow("empty") << QByteArray() << Fault::Empty << "empty";
    QTest::newRow("too long") << R"({"ev":"error","line":"","why":")" +
                                     QByteArray(int(P::kMaxEventLine), 'x') + "\"}"
                              << Fault::TooLong << "longer than 65536";
    QTest::newRow("not JSON") << QByteArray("ready 3128") << Fault::Malformed << "not a JSON";
    QTest::newRow("an array") << QByteArray(R"([{"ev":"pong"}])") << Fault::Malformed
                              << "not a JSON";
    QTest::newRow("cut") << QByteArray(R"({"ev":"pong")") << Fault::Malformed << "without its }";
    QTest::newRow("cut in a string")
        << QByteArray(R"({"ev":"po)") << Fault::Malformed << "without its end";
    QTest::newRow("more after") << QByteArray(R"({"ev":"pong"} {"ev":"pong"})") << Fault::Malformed
                                << "more after";
    QTest::newRow("a field twice")
        << QByteArray(R"({"ev":"pong","ev":"pong"})") << Fault::Malformed << "twice";
    QByteArray fields = R"({"ev":"pong")";
    for (int i = 0; i < 16; ++i)
        fields += ",\"x" + QByteArray::number(i) + "\":1";
    QTest::newRow("too many fields") << fields + "}" << Fault::Malformed << "more than 16 fields";
    QTest::newRow("null") << QByteArray(R"({"ev":"ready","port":null})") << Fault::Malformed
                          << "null";
    QTest::newRow("an object inside")
        << QByteArray(R"({"ev":"ready","port":{}})") << Fault::Malformed << "an object";
    QTest::newRow("an unknown escape")
        << QByteArray(R"({"ev":"p\qng"})") << Fault::Malformed << "escape";
    QTest::newRow("no ev") << QByteArray(R"({"id":1})") << Fault::BadField << "ev is missing";
    QTest::newRow("ev not a string")
        << QByteArray(R"({"ev":1})") << Fault::BadField << "ev is of another type";
    QTest::newRow("unknown") << QByteArray(R"({"ev":"hello"})") << Fault::Unknown << "hello";
}

void TestGatewayProtocol::malformedEventFields()
{
    const QByteArray end = R"({"ev":"end","id":1,"up":2,"down":3,"ms":)";
    const QByteArray conn = R"({"ev":"conn","id":1,"cred":"c","host":"h","port":443,)";
    QTest::newRow("a field missing") << QByteArray(R"({"ev":"end","id":1,"up":2,"down":3})")
                                     << Fault::BadField << "ms is missing";
    QTest::newRow("a number as a string")
        << end + R"("4"})" << Fault::BadField << "ms is of another type";
    QTest::newRow("a negative number") << end + "-4}" << Fault::BadNumber << "negative";
    QTest::newRow("a fraction") << end + "4.5}" << Fault::BadNumber << "not whole";
    QTest::newRow("an exponent") << end + "4e3}" << Fault::BadNumber << "not whole";
    QTest::newRow("past 2^64") << end + "18446744073709551616}" << Fault::BadNumber << "2^64";
    QTest::newRow("a port past 65535")
        << QByteArray(R"({"ev":"ask","id":1,"cred":"c","host":"h","port":65536})")
        << Fault::BadNumber << "port is past 65535";
    QTest::newRow("a field of no use") << QByteArray(R"({"ev":"pong","secret":"x"})")
                                       << Fault::BadField << "does not have: secret";
    QTest::newRow("an unknown verdict")
        << conn + R"("verdict":"maybe","rule":"r"})" << Fault::BadField << "allow, deny or error";
    QTest::newRow("a host too long") << R"({"ev":"ask","id":1,"cred":"c","port":1,"host":")" +
                                            QByteArray(int(P::kMaxWord) + 1, 'h') + "\"}"
                                     << Fault::BadField << "host is longer than 1024";
    QTest::newRow("a rule too long")
        << conn + R"("verdict":"deny","rule":")" + QByteArray(int(P::kMaxText) + 1, 'r') + "\"}"
        << Fault::BadField << "longer than 4096";
    QTest::newRow("a name too long")
        << R"({"ev":"secret","id":1,"names":[")" + QByteArray(int(P::kMaxWord) + 1, 'n') + "\"]}"
        << Fault::BadField << "names has one longer";
    QTest::newRow("too many names") << R"({"ev":"secret","id":1,"names":[)" +
                                           bytes(many(P::kMaxListItems + 1, "\"n\"", ',')) + "]}"
                                    << Fault::BadField << "more than 2048 items";
    QTest::newRow("a number in the names") << QByteArray(R"({"ev":"secret","id":1,"names":[1]})")
                                           << Fault::Malformed << "where a string goes";
    QTest::newRow("a tab in a string") << conn + "\"verdict\":\"deny\",\"rule\":\"a\tb\"}"
                                       << Fault::BadCharacter << "control character";
    QTest::newRow("a newline in a string") << conn + "\"verdict\":\"deny\",\"rule\":\"a\nb\"}"
                                           << Fault::BadCharacter << "control character";
    QTest::newRow("not UTF-8") << conn + "\"verdict\":\"deny\",\"rule\":\"\xff\"}"
                               << Fault::BadCharacter << "UTF-8";
    QTest::newRow("an overlong form")
        << conn + "\"verdict\":\"deny\",\"rule\":\"\xc0\xaf\"}" << Fault::BadCharacter << "UTF-8";
    QTest::newRow("half a surrogate pair")
        << conn + R"("verdict":"deny","rule":"\ud800"})" << Fault::BadCharacter << "surrogate";
    QTest::newRow("a low surrogate alone")
        << conn + R"("verdict":"deny","rule":"\udc00x"})" << Fault::BadCharacter << "surrogate";
    QTest::newRow("authority false") << QByteArray(R"({"ev":"ok","authority":false})")
                                     << Fault::BadField << "authority is false";
    QTest::newRow("ok of two things") << QByteArray(R"({"ev":"ok","authority":true,"cred":"c"})")
                                      << Fault::BadField << "does not have: cred";
}

void TestGatewayProtocol::malformedEventsAreRefused()
{
    QFETCH(QByteArray, line);
    QFETCH(Fault, fault);
    QFETCH(QString, why);
    const P::DecodedEvent decoded = P::decodeEvent(line.toStdString());
    QVERIFY(!decoded.event);
    QCOMPARE(decoded.fault, fault);
    QVERIFY2(QString::fromStdString(decoded.why).contains(why), decoded.why.c_str());
}

void TestGatewayProtocol::eventTextsAreCutToWhatIsRead()
{
    // Whatever the gateway had, its event reads back: texts past their limit cut on a
    // character, bytes that are not UTF-8 as U+FFFD, a pair escaped as JSON writers do read.
    const std::string umlaut = "\xc3\xbc";
    const std::string rule = std::string(P::kMaxText - 1, 'r') + umlaut + "tail";
    const std::string host = "h\xff" + std::string(2000, 'h');
    const P::NetworkEvent conn =
        P::Connection{1, "cred", host, 70000, P::Connection::Outcome::Deny, rule};
    const P::DecodedEvent decoded = P::decodeEvent(P::encode(conn));
    QVERIFY2(decoded.event, decoded.why.c_str());
    const auto &read = std::get<P::Connection>(*decoded.event);
    QCOMPARE(bytes(read.rule), bytes(std::string(P::kMaxText - 1, 'r')));
    QCOMPARE(read.host.size(), P::kMaxWord);
    QCOMPARE(bytes(read.host.substr(0, 4)), QByteArray("h\xef\xbf\xbd"));
    QCOMPARE(read.port, 65535);
    // A quoted line that ends inside a character (199 bytes and a ü) loses the character.
    const P::Error error = P::refusal(std::string(199, 'x') + umlaut, "why");
    const P::DecodedEvent quoted = P::decodeEvent(P::encode(error));
    QVERIFY2(quoted.event, quoted.why.c_str());
    QCOMPARE(bytes(std::get<P::Error>(*quoted.event).line), QByteArray(199, 'x'));
    const P::DecodedEvent pair =
        P::decodeEvent(R"({"ev":"error","line":"\ud83d\ude00\u00fc","why":""})");
    QVERIFY2(pair.event, pair.why.c_str());
    QCOMPARE(bytes(std::get<P::Error>(*pair.event).line), QByteArray("\xf0\x9f\x98\x80\xc3\xbc"));
}

void TestGatewayProtocol::theGatewayAnswersTypedCommands()
{
    Gateway gateway;
    const auto answer = [&](const std::string &line) {
        const P::DecodedEvent decoded = P::decodeEvent(gateway.control(line));
        return decoded.event ? describe(*decoded.event)
                             : QByteArray("unread: ") + decoded.why.c_str();
    };
    QCOMPARE(answer("ping"), QByteArray("pong"));
    QCOMPARE(answer("grant\tcred-a\t10.0.0.2\trefuse\tweb.test:8080"), QByteArray("ok 0 cred-a  "));
    QVERIFY(gateway.knows("cred-a", "10.0.0.2"));
    QVERIFY(!gateway.knows("cred-a", "10.0.0.3"));
    QVERIFY(gateway.decide(1, "cred-a", "web.test", 8080).allowed);
    QCOMPARE(answer("secret\tcred-a\tAPI_KEY\t" + kPlaceholder + "\tdmFsdWU=\tweb.test"),
             QByteArray("ok 1 cred-a API_KEY "));
    QVERIFY(gateway.secretsFor("cred-a").bindsTo("web.test", 443));
    QCOMPARE(answer("upstream\t[fd00::1]:3128\tdTpw\tnear.test"),
             QByteArray("ok 2   [fd00::1]:3128"));
    QCOMPARE(gateway.upstreamFor("far.test")->authorization, std::string("Basic dTpw"));
    QVERIFY(!gateway.upstreamFor("near.test"));
    QCOMPARE(answer("revoke\tcred-a"), QByteArray("ok 0 cred-a  "));
    QVERIFY(!gateway.knows("cred-a", "10.0.0.2"));
    QVERIFY(gateway.secretsFor("cred-a").empty());
    // Refused by the protocol, or by the gateway (a pattern it cannot take, a verdict for a
    // connection that does not wait): an error quoting the line, or only the name of one that
    // carries a key.
    QCOMPARE(answer("grant\tcred-a\t10.0.0.2\tmaybe\tweb.test"),
             QByteArray("error grant\tcred-a\t10.0.0.2\tmaybe\tweb.test the choice for other "
                        "hosts is refuse or ask"));
    QVERIFY(answer("grant\tcred-a\t10.0.0.2\trefuse\t*.com").contains("two labels"));
    QCOMPARE(answer("verdict\t5\tallow"),
             QByteArray("error verdict\t5\tallow no connection waits with that number (it may "
                        "have timed out)"));
    QCOMPARE(answer("secret\tcred-b\tAPI_KEY\t" + kPlaceholder + "\tdmFsdWU=\tweb.test"),
             QByteArray("error secret … a secret needs the credential's grant first"));
}

void TestGatewayProtocol::theServerWritesCommandsAndReadsEvents()
{
    ScriptedGateway gateway;
    gateway.setUpstream(UpstreamProxy::fromEnv(
        {QStringLiteral("HTTPS_PROXY=http://u:p@proxy.corp:3128"),
         QStringLiteral("NO_PROXY=localhost,.corp,b\u00fccher.example,a b")}));
    gateway.setInterception("CERT\n", "KEY\n", "TRUST\n");
    bool ready = false;
    gateway.whenReady(
        {}, this, [&](const EgressEndpoint &, const QString &error) { ready = error.isEmpty(); });
    QList<P::NetworkEvent> events;
    connect(&gateway, &EgressGateway::event, this,
            [&](const P::NetworkEvent &event) { events.append(event); });
    gateway.say(P::encode(P::Ready{3128}));
    QVERIFY(ready);
    const QString credential = gateway.grant({QStringLiteral("api.example.com")}, true,
                                             {{QStringLiteral("API_KEY"),
                                               QString::fromStdString(kPlaceholder),
                                               QByteArray("v\t\nx"),
                                               {QStringLiteral("api.example.com")}}});
    gateway.bind(credential, QStringLiteral("10.0.0.5"));
    gateway.answer(5, true);
    // A pattern that would not read back is not sent (EgressList gives none such).
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("was not sent: a pattern holds")));
    gateway.widen(credential, QStringLiteral("a.test,b.test"));
    gateway.revoke(credential);
    const std::string c = credential.toStdString();
    QByteArrayList read;
    for (const QByteArray &line : std::as_const(gateway.written)) {
        QVERIFY(line.endsWith('\n'));
        const P::DecodedCommand decoded = P::decodeCommand(line.chopped(1).toStdString());
        QVERIFY2(decoded.command, decoded.why.c_str());
        read.append(describe(*decoded.command));
    }
    const QByteArrayList expected = {
        "upstream proxy.corp 3128 " + QByteArray("u:p").toBase64() + " [localhost|.corp|]",
        "authority CERT\n KEY\n",
        "trust TRUST\n",
        bytes("grant " + c + " 10.0.0.5 ask [api.example.com|]"),
        bytes("secret " + c + " API_KEY " + kPlaceholder + " v\t\nx [api.example.com|]"),
        "verdict 5 allow",
        bytes("revoke " + c)};
    QCOMPARE(read, expected);
    // Events: those about connections go on, typed; the rest (and what is not one) do not.
    gateway.say(P::encode(P::Connection{5, c, "h.test", 443, P::Connection::Outcome::Allow, "r"}));
    gateway.say(P::encode(P::Ok{P::Ok::Of::Credential, c, {}, {}}));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("no event of ours")));
    gateway.say(R"({"ev":"end","id":5})");
    gateway.say(P::encode(P::End{5, 1, 2, 3}));
    gateway.say(P::encode(P::SecretsUsed{5, {"API_KEY"}}));
    gateway.say(P::encode(P::Ask{6, c, "other.test", 443}));
    QByteArrayList got;
    for (const P::NetworkEvent &event : std::as_const(events))
        got.append(describe(event));
    QCOMPARE(got, QByteArrayList({bytes("conn 5 " + c + " h.test 443 0 r"), "end 5 1 2 3",
                                  "secret 5 [API_KEY|]", bytes("ask 6 " + c + " other.test 443")}));
}

QTEST_GUILESS_MAIN(TestGatewayProtocol)
#include "tst_gatewayprotocol.moc"
