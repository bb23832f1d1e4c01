// The journal over a sandbox service with bound secrets, on an engine that runs nothing: the run's
// record names each secret and its hosts, the connections the gateway added one to say which, and
// all of it reaches the window's events, the monitor socket's lines and the history, while the
// secret's value reaches none of them.

#include "execution.h"
#include "historystore.h"
#include "journal.h"
#include "languageregistry.h"
#include "monitorprotocol.h"
#include "runnetwork.h"
#include "sandboxbackend.h"
#include "sandboxconfig.h"
#include "sandboxcontainer.h"
#include "sandboxservice.h"

#include <QDirIterator>
#include <QFile>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <memory>

namespace {
// The value must not appear anywhere but in the spec handed to the engine.
const QByteArray kSecretValue = "sk-test-never-stored";

using NetworkEvent = GatewayProtocol::NetworkEvent;

NetworkEvent connection(int id, const QString &host, const QString &verdict)
{
    using Outcome = GatewayProtocol::Connection::Outcome;
    return GatewayProtocol::Connection{quint64(id),
                                       {},
                                       host.toStdString(),
                                       443,
                                       verdict == u"allow" ? Outcome::Allow : Outcome::Deny,
                                       host.toStdString()};
}

// The gateway's word that it put secrets in connection `id`'s request.
NetworkEvent secretAdded(int id, const QStringList &names)
{
    GatewayProtocol::SecretsUsed used{quint64(id), {}};
    for (const QString &name : names)
        used.names.push_back(name.toStdString());
    return used;
}

// A sandbox that runs nothing: on the program's hand-over it reports the gateway's events, prints
// a line and both end lines, as a real one would in the allow-list mode.
class ScriptedContainer : public SandboxContainer
{
public:
    ScriptedContainer(const QList<NetworkEvent> &events, QObject *parent)
        : SandboxContainer(QStringLiteral("scripted"), QStringLiteral("image"), parent),
          m_events(events)
    {
        m_state = State::Ready;
        m_id = QStringLiteral("scripted-id");
    }

    void prepare() override {}
    void write(const QByteArray &bytes) override
    {
        const QByteArray nonce = bytes.left(bytes.indexOf(' '));
        for (const NetworkEvent &event : std::as_const(m_events))
            Q_EMIT networkEvent(event);
        Q_EMIT output(1, "called the api\n" + nonce + " 0 mem=1000 cpu=5\n");
        Q_EMIT output(2, nonce + " 0\n");
    }
    void settleNetwork(QObject *, const std::function<void()> &done) override { done(); }
    void putFiles(const QString &, const QByteArray &, QObject *, const Done &done) override
    {
        done({});
    }
    void fetchFiles(const QString &, qint64, QObject *, const Fetched &done) override { done({}); }
    void exitStatus(QObject *, const Exited &done) override { done(0, {}); }
    void interrupt() override {}

protected:
    void closeStream() override {}
    void sendRemove() override { confirmRemoved(); }

private:
    QList<NetworkEvent> m_events;
};

// An engine whose sandboxes are scripted; it keeps the specs it was given.
class ScriptedEngine : public SandboxBackend
{
public:
    QList<NetworkEvent> events;
    QList<SandboxSpec> specs;

    QString endpoint() const override { return QStringLiteral("unix:///scripted.sock"); }
    int capacity() const override { return 4; }
    SandboxContainer *createSandbox(const SandboxSpec &spec, const QString &,
                                    QObject *parent) override
    {
        specs.append(spec);
        return new ScriptedContainer(events, parent);
    }
    void createVolume(const QString &, const QJsonObject &, QObject *context,
                      const SandboxContainer::Done &done) override
    {
        QTimer::singleShot(0, context, [done] { done(QStringLiteral("not on this engine")); });
    }
    void removeVolume(const QString &) override {}
    void list(const QStringList &, QObject *context,
              const std::function<void(const QList<Listed> &, const QString &)> &done) override
    {
        QTimer::singleShot(0, context, [done] { done({}, QString()); });
    }
    void removeById(const QString &, QObject *, const SandboxContainer::Done &done) override
    {
        done({});
    }
    void health(bool, QObject *context, const std::function<void(const Health &)> &done) override
    {
        Health h;
        h.reachable = true;
        QTimer::singleShot(0, context, [done, h] { done(h); });
    }
};

// Every file in `dir`, concatenated: the history's database with its -wal and -shm files.
QByteArray allBytes(const QString &dir)
{
    QByteArray bytes;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile f(it.next());
        if (f.open(QIODevice::ReadOnly))
            bytes += f.readAll();
    }
    return bytes;
}

bool holdsTheValue(const QByteArray &bytes)
{
    return bytes.contains(kSecretValue) || bytes.contains(kSecretValue.toBase64());
}

// A record's connections carry no gateway ids (NetworkAttempt::toJson): compared without them.
QList<NetworkAttempt> withoutIds(QList<NetworkAttempt> attempts)
{
    for (NetworkAttempt &a : attempts)
        a.id = 0;
    return attempts;
}
} // namespace

class tst_Journal : public QObject
{
    Q_OBJECT

private:
    // The service, its journal and a history in m_dir, with the secret API_KEY bound to two
    // hosts.
    void setUp(const QList<NetworkEvent> &events)
    {
        SandboxConfig config;
        config.poolSize = 0;
        config.instanceId = QStringLiteral("journal-test");
        config.secretsAuthorityFolder = m_dir.filePath(QStringLiteral("authority"));
        config.secrets = {{QStringLiteral("API_KEY"),
                           {QStringLiteral("api.example.com"), QStringLiteral("*.example.org")},
                           kSecretValue}};
        config.passThroughEnv = {{QStringLiteral("REGION"), QStringLiteral("eu-west")}};
        m_engine = std::make_unique<ScriptedEngine>();
        m_engine->events = events;
        m_sandbox =
            std::make_unique<SandboxService>(m_engine.get(), LanguageRegistry::builtIn(), config);
        m_history = std::make_unique<HistoryStore>();
        QString error;
        QVERIFY2(m_history->open(historyFolder() + QStringLiteral("/history.sqlite"), &error),
                 qPrintable(error));
        m_journal = std::make_unique<Journal>(m_sandbox.get());
        m_journal->setHistory(m_history.get());
        connect(m_journal.get(), &Journal::recorded, this,
                [this](const JournalEvent &e) { m_events.append(e); });
    }

    // Runs a program with `egress` as its own list (none: the server's) and waits for its end
    // and its save; the Finished event.
    JournalEvent run(const std::optional<QStringList> &egress = std::nullopt)
    {
        ExecutionRequest request(QStringLiteral("python"), QStringLiteral("call_the_api()"));
        request.source = QStringLiteral("test");
        request.network = RunNetwork::decide(m_sandbox->config(), egress);
        QSignalSpy saved(m_history.get(), &HistoryStore::saved);
        m_sandbox->execute(request);
        if (!QTest::qWaitFor([&] { return finishedEvent().has_value(); }, 10000))
            qWarning("the run did not finish");
        if (!saved.wait(10000) && saved.isEmpty())
            qWarning("the run was not saved");
        return finishedEvent().value_or(JournalEvent());
    }

    std::optional<JournalEvent> finishedEvent() const
    {
        for (const JournalEvent &e : m_events)
            if (e.type == JournalEvent::Type::Finished)
                return e;
        return std::nullopt;
    }

    QString historyFolder() const { return m_dir.filePath(QStringLiteral("history")); }

    static QList<BoundSecret> expectedSecrets()
    {
        return {{QStringLiteral("API_KEY"),
                 {QStringLiteral("api.example.com"), QStringLiteral("*.example.org")}}};
    }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_events.clear();
    }

    void cleanup()
    {
        m_journal.reset();
        m_history.reset();
        if (m_sandbox) {
            QSignalSpy done(m_sandbox.get(), &SandboxService::shutdownFinished);
            m_sandbox->shutdown(2000);
            done.wait(5000);
        }
        m_sandbox.reset();
        m_engine.reset();
    }

    // The secret is bound: the record shows its name and hosts from the start, the connection it
    // was added to says so live and at the end, and the history keeps both.
    void boundSecretsReachEveryCopyButNotTheirValue()
    {
        setUp({connection(1, QStringLiteral("api.example.com"), QStringLiteral("allow")),
               secretAdded(1, {QStringLiteral("API_KEY")}),
               connection(2, QStringLiteral("evil.example"), QStringLiteral("deny"))});
        const JournalEvent finished = run();
        QCOMPARE(finished.type, JournalEvent::Type::Finished);
        // The engine got the value (the gateway needs it): the check below can see it if leaked.
        QCOMPARE(m_engine->specs.size(), 1);
        QCOMPARE(m_engine->specs.first().secrets.first().value, kSecretValue);

        QVERIFY(!m_events.isEmpty());
        const JournalEvent created = m_events.first();
        QCOMPARE(created.type, JournalEvent::Type::Created);
        QCOMPARE(created.run.secrets, expectedSecrets());
        QCOMPARE(created.run.envNames, QStringList{QStringLiteral("REGION")});
        // The hosts of a secret are reachable: the run has network.
        QVERIFY(created.run.network);

        // Live: the attempt again once the gateway added the secret.
        bool liveMark = false;
        for (const JournalEvent &e : std::as_const(m_events))
            if (e.type == JournalEvent::Type::Connection && e.connection.id == 1 &&
                e.connection.secrets == QStringList{QStringLiteral("API_KEY")})
                liveMark = true;
        QVERIFY(liveMark);

        QCOMPARE(finished.run.secrets, expectedSecrets());
        QCOMPARE(finished.run.connections.size(), 2);
        QCOMPARE(finished.run.connections.at(0).secrets, QStringList{QStringLiteral("API_KEY")});
        QVERIFY(finished.run.connections.at(1).secrets.isEmpty());

        // The monitor socket: every event as its line, and back.
        QByteArray lines;
        for (const JournalEvent &e : std::as_const(m_events)) {
            const QByteArray line = MonitorProtocol::encode(e);
            lines += line;
            const MonitorProtocol::Decoded decoded =
                MonitorProtocol::decode(line.chopped(1), MonitorProtocol::Direction::ToWindow);
            QVERIFY2(decoded.message, qPrintable(decoded.error));
            const auto *back = std::get_if<JournalEvent>(&*decoded.message);
            QVERIFY(back);
            QCOMPARE(back->run.secrets, e.run.secrets);
            QCOMPARE(back->run.connections, withoutIds(e.run.connections));
            QCOMPARE(back->connection.secrets, e.connection.secrets);
        }
        QVERIFY(lines.contains("API_KEY"));
        QVERIFY(lines.contains("api.example.com"));
        QVERIFY(lines.contains("secrets_added"));
        QVERIFY(!holdsTheValue(lines));

        // The history, whole and in the list.
        const std::optional<RunRecord> stored = m_history->load(finished.run.id);
        QVERIFY(stored.has_value());
        QCOMPARE(stored->secrets, expectedSecrets());
        QCOMPARE(stored->connections, withoutIds(finished.run.connections));
        QVERIFY(stored->envValues.isEmpty());
        QList<RunRecord> listed;
        m_history->recent(10, QString(), this,
                          [&](const QList<RunRecord> &runs) { listed = runs; });
        QTRY_COMPARE(listed.size(), 1);
        QCOMPARE(listed.first().secrets, expectedSecrets());
        QCOMPARE(listed.first().connections.at(0).secrets, QStringList{QStringLiteral("API_KEY")});

        // The file holds the names (the check can see stored text), never the value: while open
        // (in the WAL file) and once checkpointed.
        QVERIFY(m_history->waitForIdle());
        const QByteArray live = allBytes(historyFolder());
        QVERIFY(live.contains("api.example.com"));
        QVERIFY(live.contains("secrets_added"));
        QVERIFY(!holdsTheValue(live));
        m_history->close();
        QVERIFY(!holdsTheValue(allBytes(historyFolder())));
    }

    // A run without any network has no secret bound, and no network.
    void aRunWithoutNetworkHasNoSecrets()
    {
        setUp({});
        const JournalEvent finished = run(QStringList());
        QCOMPARE(finished.type, JournalEvent::Type::Finished);
        QVERIFY(finished.run.secrets.isEmpty());
        QVERIFY(!finished.run.network);
        QVERIFY(m_engine->specs.first().secrets.isEmpty());
    }

private:
    QTemporaryDir m_dir;
    std::unique_ptr<ScriptedEngine> m_engine;
    std::unique_ptr<SandboxService> m_sandbox;
    std::unique_ptr<HistoryStore> m_history;
    std::unique_ptr<Journal> m_journal;
    QList<JournalEvent> m_events;
};

QTEST_GUILESS_MAIN(tst_Journal)
#include "tst_journal.moc"
