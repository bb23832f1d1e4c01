// What the MCP tools say about the container engines: get_supported_languages and
// sandbox://environments list each engine (address, product, version, state, running and
// capacity, why one is down), with one engine and with several. The engines are stand-ins that
// answer the health question as told: what is under test is how the answers are reported.

#include "jsonrpcmessage.h"
#include "languageregistry.h"
#include "mcpserver.h"
#include "mcpsession.h"
#include "recordingtransport.h"
#include "sandboxbackend.h"
#include "sandboxconfig.h"
#include "sandboxservice.h"
#include "sandboxsite.h"
#include "sandboxtools.h"
#include "schemavalidator.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>
#include <memory>

namespace {

// An engine that only answers health(): up (Docker Engine 20.10.24, 8 CPUs), down (with an
// error), or silent (never answers). Nothing is ever run on it here.
class StandInEngine : public SandboxBackend
{
public:
    enum class Mode
    {
        Up,
        Down,
        Silent
    };

    StandInEngine(const QString &endpoint, Mode mode) : m_endpoint(endpoint), m_mode(mode) {}

    void setMode(Mode mode) { m_mode = mode; }
    int asked() const { return m_asked; }

    QString endpoint() const override { return m_endpoint; }
    int capacity() const override { return 16; }
    SandboxContainer *createSandbox(const SandboxSpec &, const QString &, QObject *) override
    {
        qFatal("no sandbox is created in this test");
        return nullptr;
    }
    void createVolume(const QString &, const QJsonObject &, QObject *,
                      const SandboxContainer::Done &) override
    {}
    void removeVolume(const QString &) override {}
    void list(const QStringList &, QObject *context,
              const std::function<void(const QList<Listed> &, const QString &)> &done) override
    {
        QTimer::singleShot(0, context, [done] { done({}, QString()); });
    }
    void removeById(const QString &, QObject *, const SandboxContainer::Done &) override {}
    void health(bool cheap, QObject *context,
                const std::function<void(const Health &)> &done) override
    {
        ++m_asked;
        if (m_mode == Mode::Silent)
            return;
        Health h;
        h.reachable = m_mode == Mode::Up;
        if (!h.reachable) {
            h.error = QStringLiteral("cannot connect to %1: Connection refused").arg(m_endpoint);
        } else if (!cheap) {
            h.product = QStringLiteral("Docker Engine");
            h.version = QStringLiteral("20.10.24");
            h.apiVersion = QStringLiteral("1.41");
            h.cpus = 8;
            h.memoryBytes = 16LL * 1024 * 1024 * 1024;
        }
        // Later, as a real engine answers.
        QTimer::singleShot(0, context, [done, h] { done(h); });
    }

private:
    QString m_endpoint;
    Mode m_mode;
    int m_asked = 0;
};

// A server with the product's tools over `engines`, and one initialized session on it.
struct Server
{
    explicit Server(const QList<StandInEngine *> &engines)
    {
        QList<SandboxBackend *> backends;
        for (StandInEngine *engine : engines)
            backends.append(engine);
        SandboxConfig config;
        config.poolSize = 0; // nothing is warmed: the stand-ins run nothing
        sandbox = std::make_unique<SandboxService>(backends, LanguageRegistry::builtIn(), config);
        server = std::make_unique<McpServer>(ServerInfo{QStringLiteral("code-sandbox"),
                                                        QStringLiteral("Code Sandbox"),
                                                        QStringLiteral("9.9.9"), QString()});
        SandboxTools::registerAll(*server, *sandbox);
        transport = new RecordingTransport;
        server->openSession(transport);
        call(QStringLiteral("initialize"),
             {{"protocolVersion", "2025-11-25"},
              {"capabilities", QJsonObject()},
              {"clientInfo", QJsonObject{{"name", "unit"}, {"version", "1"}}}});
        send(JsonRpcMessage::makeNotification(QStringLiteral("notifications/initialized")));
    }

    void send(const QJsonObject &message)
    {
        transport->receive(QJsonDocument(message).toJson(QJsonDocument::Compact));
    }

    // The answer to one request (waits for it: tool calls answer from the event loop).
    QJsonObject call(const QString &method, const QJsonObject &params = {})
    {
        const int id = ++lastId;
        send(JsonRpcMessage::makeRequest(id, method, params));
        QJsonObject answer;
        const auto take = [&] {
            for (const QJsonObject &m : transport->takeSent())
                if (m.value(u"id").toInt() == id)
                    answer = m;
            return !answer.isEmpty();
        };
        if (!QTest::qWaitFor(take, 10000))
            qWarning() << method << "got no answer";
        return answer.value(u"result").toObject();
    }

    QJsonObject languagesTool()
    {
        return call(QStringLiteral("tools/call"),
                    {{"name", "get_supported_languages"}, {"arguments", QJsonObject()}});
    }

    QJsonObject environments()
    {
        const QJsonObject r =
            call(QStringLiteral("resources/read"), {{"uri", "sandbox://environments"}});
        const QString text =
            r.value(u"contents").toArray().at(0).toObject().value(u"text").toString();
        return QJsonDocument::fromJson(text.toUtf8()).object();
    }

    QJsonObject outputSchema(const QString &tool)
    {
        for (const QJsonValue &t : call(QStringLiteral("tools/list")).value(u"tools").toArray())
            if (t.toObject().value(u"name").toString() == tool)
                return t.toObject().value(u"outputSchema").toObject();
        return {};
    }

    std::unique_ptr<SandboxService> sandbox;
    std::unique_ptr<McpServer> server;
    RecordingTransport *transport = nullptr; // owned by its session
    int lastId = 0;
};

QJsonObject engineAt(const QJsonObject &structured, int i)
{
    return structured.value(u"engines").toArray().at(i).toObject();
}

} // namespace

class tst_EngineTools : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void loneEngineUp();
    void loneEngineDown();
    void loneEngineSilent();
    void loneEngineComesBack();
    void severalEngines();
};

void tst_EngineTools::loneEngineUp()
{
    StandInEngine engine(QStringLiteral("/var/run/docker.sock"), StandInEngine::Mode::Up);
    Server s({&engine});
    const QJsonObject r = s.languagesTool();
    QVERIFY(!r.value(u"isError").toBool());
    const QJsonObject structured = r.value(u"structuredContent").toObject();
    QVERIFY(structured.value(u"languages").toArray().contains(QStringLiteral("python")));
    QCOMPARE(structured.value(u"engines").toArray().size(), 1);
    const QJsonObject e = engineAt(structured, 0);
    QCOMPARE(e.value(u"address").toString(), QStringLiteral("/var/run/docker.sock"));
    QCOMPARE(e.value(u"state").toString(), QStringLiteral("up"));
    QCOMPARE(e.value(u"product").toString(), QStringLiteral("Docker Engine"));
    QCOMPARE(e.value(u"version").toString(), QStringLiteral("20.10.24"));
    QCOMPARE(e.value(u"api_version").toString(), QStringLiteral("1.41"));
    QCOMPARE(e.value(u"running").toInt(-1), 0);
    QCOMPARE(e.value(u"capacity").toInt(), 16);
    QCOMPARE(e.value(u"cpus").toInt(), 8);
    QCOMPARE(e.value(u"memory_bytes").toInteger(), 16LL * 1024 * 1024 * 1024);
    QVERIFY(!e.contains(u"error"));
    // The tool's declared output schema accepts it.
    const QString invalid = SchemaValidator::validate(
        s.outputSchema(QStringLiteral("get_supported_languages")), structured);
    QVERIFY2(invalid.isEmpty(), qPrintable(invalid));

    // The first text is still the bare list (llm-sandbox's answer); the engines follow in words,
    // then the images (this stand-in cannot tell: unknown, as SandboxBackend says by default).
    const QJsonArray content = r.value(u"content").toArray();
    QCOMPARE(content.size(), 3);
    QCOMPARE(structured.value(u"images").toArray().size(),
             structured.value(u"languages").toArray().size());
    QCOMPARE(structured.value(u"images").toArray().at(0).toObject().value(u"state").toString(),
             QStringLiteral("unknown"));
    QVERIFY(content.at(2).toObject().value(u"text").toString().startsWith(
        QStringLiteral("Images ready: none.\nNot ready:\n- python: the engine did not say\n")));
    QCOMPARE(QJsonDocument::fromJson(content.at(0).toObject().value(u"text").toString().toUtf8())
                 .array(),
             structured.value(u"languages").toArray());
    QCOMPARE(content.at(1).toObject().value(u"text").toString(),
             QStringLiteral("Container engine:\n- /var/run/docker.sock: up, Docker Engine "
                            "20.10.24, 0 of 16 running"));

    // The resource: the languages as before, and the engines under their own key.
    const QJsonObject env = s.environments();
    QCOMPARE(env.value(u"python").toObject().value(u"image").toString(),
             QStringLiteral("code-sandbox/python:latest"));
    QCOMPARE(env.value(u"engines").toArray().size(), 1);
    QCOMPARE(env.value(u"engines").toArray().at(0).toObject(), e);
}

void tst_EngineTools::loneEngineDown()
{
    StandInEngine engine(QStringLiteral("/run/user/1000/podman/podman.sock"),
                         StandInEngine::Mode::Down);
    Server s({&engine});
    const QJsonObject structured = s.languagesTool().value(u"structuredContent").toObject();
    const QJsonObject e = engineAt(structured, 0);
    QCOMPARE(e.value(u"state").toString(), QStringLiteral("down"));
    QCOMPARE(e.value(u"error").toString(),
             QStringLiteral("cannot connect to /run/user/1000/podman/podman.sock: Connection "
                            "refused"));
    QVERIFY(!e.contains(u"version"));
    QCOMPARE(s.languagesTool().value(u"content").toArray().at(1).toObject().value(u"text"),
             QStringLiteral("Container engine:\n- /run/user/1000/podman/podman.sock: down "
                            "(cannot connect to /run/user/1000/podman/podman.sock: Connection "
                            "refused)"));
    const QString invalid = SchemaValidator::validate(
        s.outputSchema(QStringLiteral("get_supported_languages")), structured);
    QVERIFY2(invalid.isEmpty(), qPrintable(invalid));
    QCOMPARE(s.environments().value(u"engines").toArray().at(0).toObject(), e);
}

void tst_EngineTools::loneEngineSilent()
{
    // An engine that never answers does not hold the call: after the health question's bound it
    // is reported down, saying so.
    StandInEngine engine(QStringLiteral("/var/run/docker.sock"), StandInEngine::Mode::Silent);
    Server s({&engine});
    const QJsonObject e = engineAt(s.languagesTool().value(u"structuredContent").toObject(), 0);
    QCOMPARE(e.value(u"state").toString(), QStringLiteral("down"));
    QCOMPARE(e.value(u"error").toString(), QStringLiteral("it did not answer within 3 s"));
}

void tst_EngineTools::loneEngineComesBack()
{
    StandInEngine engine(QStringLiteral("/var/run/docker.sock"), StandInEngine::Mode::Down);
    Server s({&engine});
    QCOMPARE(engineAt(s.languagesTool().value(u"structuredContent").toObject(), 0)
                 .value(u"state")
                 .toString(),
             QStringLiteral("down"));
    engine.setMode(StandInEngine::Mode::Up);
    const QJsonObject e = engineAt(s.languagesTool().value(u"structuredContent").toObject(), 0);
    QCOMPARE(e.value(u"state").toString(), QStringLiteral("up"));
    QCOMPARE(e.value(u"version").toString(), QStringLiteral("20.10.24"));
    QVERIFY(!e.contains(u"error"));
    // The resource is read without waiting, and asks for the next read: it follows as well.
    engine.setMode(StandInEngine::Mode::Down);
    const int asked = engine.asked();
    s.environments();
    QTRY_VERIFY(engine.asked() > asked);
    QTRY_COMPARE(
        s.environments().value(u"engines").toArray().at(0).toObject().value(u"state").toString(),
        QStringLiteral("down"));
}

void tst_EngineTools::severalEngines()
{
    StandInEngine first(QStringLiteral("/var/run/docker.sock"), StandInEngine::Mode::Up);
    StandInEngine second(QStringLiteral("tcp://10.1.2.3:2376 (TLS)"), StandInEngine::Mode::Down);
    StandInEngine third(QStringLiteral("ssh://ci@build-host"), StandInEngine::Mode::Up);
    Server s({&first, &second, &third});
    // The service watches several engines itself; wait until it has heard from each.
    QTRY_VERIFY(s.sandbox->sites().at(0)->state() == SandboxSite::State::Up &&
                !s.sandbox->sites().at(0)->health().version.isEmpty() &&
                s.sandbox->sites().at(1)->state() == SandboxSite::State::Down &&
                !s.sandbox->sites().at(2)->health().version.isEmpty());

    const QJsonObject r = s.languagesTool();
    const QJsonObject structured = r.value(u"structuredContent").toObject();
    QCOMPARE(structured.value(u"engines").toArray().size(), 3);
    QCOMPARE(engineAt(structured, 0).value(u"address").toString(),
             QStringLiteral("/var/run/docker.sock"));
    QCOMPARE(engineAt(structured, 0).value(u"state").toString(), QStringLiteral("up"));
    QCOMPARE(engineAt(structured, 0).value(u"version").toString(), QStringLiteral("20.10.24"));
    QCOMPARE(engineAt(structured, 1).value(u"address").toString(),
             QStringLiteral("tcp://10.1.2.3:2376 (TLS)"));
    QCOMPARE(engineAt(structured, 1).value(u"state").toString(), QStringLiteral("down"));
    QCOMPARE(engineAt(structured, 1).value(u"error").toString(),
             QStringLiteral("cannot connect to tcp://10.1.2.3:2376 (TLS): Connection refused"));
    QCOMPARE(engineAt(structured, 2).value(u"address").toString(),
             QStringLiteral("ssh://ci@build-host"));
    QCOMPARE(engineAt(structured, 2).value(u"state").toString(), QStringLiteral("up"));
    const QString invalid = SchemaValidator::validate(
        s.outputSchema(QStringLiteral("get_supported_languages")), structured);
    QVERIFY2(invalid.isEmpty(), qPrintable(invalid));
    QVERIFY(r.value(u"content")
                .toArray()
                .at(1)
                .toObject()
                .value(u"text")
                .toString()
                .startsWith(QStringLiteral("Container engines:\n- /var/run/docker.sock: up")));

    const QJsonObject env = s.environments();
    QCOMPARE(env.value(u"engines").toArray(), structured.value(u"engines").toArray());
}

QTEST_GUILESS_MAIN(tst_EngineTools)
#include "tst_enginetools.moc"
