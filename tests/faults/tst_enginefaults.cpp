// Faults a real engine does not produce on demand, from a fake engine on a local socket: a
// connection dropped in the middle of an answer, garbage instead of HTTP, a broken chunked body,
// an attach stream cut in the middle of a frame header, an answer that never comes. Each must end
// the request (or the run) with a clear error — no crash, no hang — and the next request must
// work.

#include "attachstream.h"
#include "dockerbackend.h"
#include "engineclient.h"
#include "enginefakes.h"
#include "enginereply.h"
#include "execution.h"
#include "executionrequest.h"
#include "sandboxservice.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using Fault = FakeEngine::Fault;
Q_DECLARE_METATYPE(Fault)
Q_DECLARE_METATYPE(EngineError::Kind)

namespace {
constexpr int kBoundMs = 5000; // nothing here may take longer to fail

QByteArray chunkedHeader()
{
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           "Transfer-Encoding: chunked\r\n\r\n";
}

Fault sendAndClose(const QByteArray &bytes)
{
    return [bytes](QLocalSocket *s, const FakeEngine::Request &) {
        FakeEngine::sendAndClose(s, bytes);
    };
}

// Sends `bytes` and keeps the connection open: the client must notice on its own.
Fault sendAndKeepOpen(const QByteArray &bytes)
{
    return [bytes](QLocalSocket *s, const FakeEngine::Request &) { s->write(bytes); };
}

QByteArray randomBytes(int n)
{
    QRandomGenerator gen(20240611); // fixed: the same garbage every run
    QByteArray b(n, '\0');
    for (char &c : b)
        c = char(gen.bounded(256));
    if (b[0] == 'H') // 'H' could be the start of "HTTP/"; garbage should not be
        b[0] = '\x01';
    return b;
}
} // namespace

class TestEngineFaults : public QObject
{
    Q_OBJECT

private:
    // Waits for the reply (at most kBoundMs); also checks that finished() came exactly once.
    bool finishes(EngineReply *r, qint64 *ms = nullptr)
    {
        QElapsedTimer clock;
        clock.start();
        QSignalSpy spy(r, &EngineReply::finished);
        const bool done = spy.wait(kBoundMs);
        if (ms)
            *ms = clock.elapsed();
        QTest::qWait(20); // a second finished() would come now
        return done && spy.count() == 1 && r->isFinished();
    }

    ExecutionResult run(SandboxService &service, const QString &code, qint64 *ms = nullptr)
    {
        QElapsedTimer clock;
        clock.start();
        Execution *e = service.execute({QStringLiteral("python"), code, 10});
        QSignalSpy spy(e, &Execution::finished);
        if (!spy.wait(kBoundMs)) {
            if (ms)
                *ms = -1;
            return {};
        }
        if (ms)
            *ms = clock.elapsed();
        return spy.first().first().value<ExecutionResult>();
    }

    SandboxConfig config()
    {
        SandboxConfig c;
        c.instanceId = QStringLiteral("faults-fake");
        c.poolSize = 0; // one container per call: each fault hits the call that caused it
        return c;
    }

    // A healthy request on the same client after a fault.
    void expectHealthy(EngineClient &engine)
    {
        EngineReply *r = engine.get("/containers/json");
        QVERIFY2(finishes(r), "the request after the fault did not finish");
        QVERIFY2(r->ok(), qPrintable(r->error().toString()));
        QCOMPARE(r->body(), QByteArray("[]"));
    }

    QTemporaryDir m_dir;
    QString m_path;

private Q_SLOTS:
    void initTestCase()
    {
        qRegisterMetaType<ExecutionResult>();
        qRegisterMetaType<EngineError>();
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath(QStringLiteral("fake.sock"));
    }

    // --- EngineClient: one request, one fault, then a healthy request ---

    void httpFaults_data()
    {
        QTest::addColumn<Fault>("fault");
        QTest::addColumn<EngineError::Kind>("kind");
        QTest::addColumn<QString>("says");
        const auto closed = EngineError::Kind::Closed;
        const auto protocol = EngineError::Kind::Protocol;
        const QString midAnswer = QStringLiteral("closed the connection mid-answer");
        const QString malformed = QStringLiteral("malformed answer from the container engine");

        // (a) The connection drops in the middle of an answer.
        QTest::newRow("dropped: nothing sent") << sendAndClose({}) << closed << midAnswer;
        QTest::newRow("dropped: half a status line")
            << sendAndClose("HTTP/1.1 2") << closed << midAnswer;
        QTest::newRow("dropped: inside the headers")
            << sendAndClose("HTTP/1.1 200 OK\r\nContent-Type: appl") << closed << midAnswer;
        QTest::newRow("dropped: half a Content-Length body")
            << sendAndClose(FakeEngine::response(200, QByteArray(100, 'x')).chopped(50)) << closed
            << midAnswer;
        QTest::newRow("dropped: half a chunk")
            << sendAndClose(chunkedHeader() + "64\r\n" + QByteArray(50, 'x')) << closed
            << midAnswer;
        QTest::newRow("dropped: before the last chunk")
            << sendAndClose(chunkedHeader() + "2\r\n[]\r\n") << closed << midAnswer;

        // (b) Garbage instead of HTTP; the connection stays open, so the client must judge the
        // bytes themselves.
        QTest::newRow("garbage: random bytes")
            << sendAndKeepOpen(randomBytes(512)) << protocol << malformed;
        QTest::newRow("garbage: random bytes, then close")
            << sendAndClose(randomBytes(4096)) << protocol << malformed;
        QTest::newRow("garbage: an SSH banner")
            << sendAndKeepOpen("SSH-2.0-OpenSSH_9.6\r\n") << protocol << malformed;
        QTest::newRow("garbage: an SMTP greeting")
            << sendAndKeepOpen("220 mail.example.org ESMTP ready\r\n") << protocol << malformed;
        QTest::newRow("garbage: HTML")
            << sendAndKeepOpen("<html><body>502 Bad Gateway</body></html>\r\n") << protocol
            << malformed;
        QTest::newRow("garbage: a status line without a status")
            << sendAndKeepOpen("HTTP/1.1 OK\r\n\r\n") << protocol << malformed;
        QTest::newRow("garbage: a bad Content-Length")
            << sendAndKeepOpen("HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n[]") << protocol
            << malformed;
        QTest::newRow("garbage: a header line without a colon")
            << sendAndKeepOpen("HTTP/1.1 200 OK\r\nthis is not a header\r\n\r\n") << protocol
            << malformed;

        // (c) Invalid chunked encoding.
        QTest::newRow("chunked: size not hex")
            << sendAndKeepOpen(chunkedHeader() + "zz\r\nhello\r\n0\r\n\r\n") << protocol
            << malformed;
        QTest::newRow("chunked: size overflows")
            << sendAndKeepOpen(chunkedHeader() + "fffffffffffffffffff\r\n") << protocol
            << malformed;
        QTest::newRow("chunked: negative size")
            << sendAndKeepOpen(chunkedHeader() + "-2\r\n[]\r\n0\r\n\r\n") << protocol << malformed;
    }

    void httpFaults()
    {
        QFETCH(Fault, fault);
        QFETCH(EngineError::Kind, kind);
        QFETCH(QString, says);
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        fake.injectOnce("/containers/json", fault);
        qint64 ms = 0;
        EngineReply *r = engine.get("/containers/json");
        QVERIFY2(finishes(r, &ms), "the faulty answer left the request hanging");
        QVERIFY(!r->ok());
        QCOMPARE(r->error().kind, kind);
        QVERIFY2(r->error().toString().contains(says), qPrintable(r->error().toString()));
        QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
        expectHealthy(engine);
        // And once more, to be sure no broken connection was put back for reuse.
        expectHealthy(engine);
    }

    // Bytes after a complete answer on a kept-alive connection: the answer counts, the
    // connection does not.
    void trailingGarbageAfterAnAnswer()
    {
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        fake.injectOnce("/containers/json", sendAndKeepOpen(FakeEngine::response(200, "[]") +
                                                            "HTTP/1.1 200 OK\r\nextra"));
        EngineReply *r = engine.get("/containers/json");
        QVERIFY(finishes(r));
        QVERIFY2(r->ok(), qPrintable(r->error().toString()));
        expectHealthy(engine);
        expectHealthy(engine);
    }

    // The engine answers on a kept-alive connection and closes it right away (an engine
    // restarting, or one that closes idle connections). The next request, issued at once, must
    // not fail for having been sent on the dead connection.
    void keptAliveConnectionClosedByTheEngine()
    {
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        expectHealthy(engine); // negotiated, one idle connection
        fake.injectOnce("/containers/json", sendAndClose(FakeEngine::response(200, "[]")));
        EngineReply *first = engine.get("/containers/json");
        EngineReply *second = nullptr;
        int secondFinished = 0;
        // Chained from the first answer, the way the sandbox chains create → attach → start.
        connect(first, &EngineReply::finished, this, [&] {
            second = engine.get("/containers/json");
            connect(second, &EngineReply::finished, this, [&] { ++secondFinished; });
        });
        QVERIFY(finishes(first));
        QVERIFY2(first->ok(), qPrintable(first->error().toString()));
        QVERIFY(second);
        QTRY_VERIFY2_WITH_TIMEOUT(secondFinished > 0, "the request after the close did not finish",
                                  kBoundMs);
        QTest::qWait(20);
        QCOMPARE(secondFinished, 1);
        QVERIFY2(second->ok(), qPrintable(second->error().toString()));
        expectHealthy(engine);
    }

    // The answer to the version negotiation breaks: everything waiting fails with that error,
    // and the next request negotiates again.
    void negotiationFails()
    {
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        fake.injectOnce("/version", sendAndClose("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{"));
        EngineReply *a = engine.get("/containers/json");
        EngineReply *b = engine.post("/containers/create");
        QVERIFY(finishes(a));
        QVERIFY(finishes(b) || b->isFinished());
        QCOMPARE(a->error().kind, EngineError::Kind::Closed);
        QCOMPARE(b->error().kind, EngineError::Kind::Closed);
        QVERIFY(engine.apiVersion().isEmpty());
        expectHealthy(engine);
        QCOMPARE(engine.apiVersion(), QStringLiteral("1.41"));
    }

    // (e) An answer that never comes. The client has no guard of its own unless asked for one
    // (Execution bounds a run's start at 60 s); with setRequestTimeout() the request fails.
    void stall_data()
    {
        QTest::addColumn<Fault>("fault");
        QTest::addColumn<QByteArray>("where");
        const Fault silent = [](QLocalSocket *, const FakeEngine::Request &) {};
        QTest::newRow("no answer") << silent << QByteArray("/containers/json");
        QTest::newRow("headers, then silence")
            << sendAndKeepOpen("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n[")
            << QByteArray("/containers/json");
        QTest::newRow("chunks, then silence")
            << sendAndKeepOpen(chunkedHeader() + "1\r\n[\r\n") << QByteArray("/containers/json");
        QTest::newRow("no answer to the negotiation") << silent << QByteArray("/version");
    }

    void stall()
    {
        QFETCH(Fault, fault);
        QFETCH(QByteArray, where);
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        engine.setRequestTimeout(400);
        fake.injectOnce(where, fault);
        qint64 ms = 0;
        EngineReply *r = engine.get("/containers/json");
        QVERIFY2(finishes(r, &ms), "a stalled answer left the request hanging");
        QCOMPARE(r->error().kind, EngineError::Kind::Timeout);
        QVERIFY2(r->error().toString().contains(u"did not answer"),
                 qPrintable(r->error().toString()));
        QVERIFY2(r->error().toString().contains(m_path), qPrintable(r->error().toString()));
        QVERIFY2(ms >= 350 && ms < 2000, qPrintable(QString::number(ms)));
        expectHealthy(engine);
    }

    // Without a timeout the client waits, as before; a slow but steady answer is never cut.
    void slowAnswerIsNotATimeout()
    {
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        engine.setRequestTimeout(300);
        fake.injectOnce("/containers/json", [](QLocalSocket *s, const FakeEngine::Request &) {
            s->write(chunkedHeader());
            // Ten chunks 150 ms apart: 1.5 s in all, never 300 ms of silence.
            for (int i = 0; i < 10; ++i)
                QTimer::singleShot(150 * (i + 1), s, [s, i] {
                    s->write(i < 9 ? QByteArray("1\r\n \r\n") : QByteArray("2\r\n[]\r\n0\r\n\r\n"));
                });
        });
        EngineReply *r = engine.get("/containers/json");
        QVERIFY(finishes(r));
        QVERIFY2(r->ok(), qPrintable(r->error().toString()));
        QCOMPARE(r->body().trimmed(), QByteArray("[]"));
    }

    // --- Attach streams ---

    void attachFaults_data()
    {
        QTest::addColumn<QByteArray>("tail"); // sent after a complete frame, then the close
        QTest::addColumn<bool>("truncated");
        QTest::newRow("half a frame header") << QByteArray("\x01\0\0\0", 4) << true;
        QTest::newRow("a header, half its payload")
            << FakeEngine::frame(2, QByteArray(100, 'e')).left(8 + 40) << true;
        QTest::newRow("clean end") << QByteArray() << false;
    }

    void attachFaults()
    {
        QFETCH(QByteArray, tail);
        QFETCH(bool, truncated);
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        fake.injectOnce("/attach", [tail](QLocalSocket *s, const FakeEngine::Request &) {
            s->write(FakeEngine::upgraded());
            // Output comes later than the upgrade, as from a container that was started.
            QTimer::singleShot(50, s, [s, tail] {
                FakeEngine::sendAndClose(s, FakeEngine::frame(1, "complete\n") + tail);
            });
        });
        AttachStream *stream = engine.attach(QStringLiteral("fake1"));
        QSignalSpy established(stream, &AttachStream::established);
        QSignalSpy output(stream, &AttachStream::output);
        QSignalSpy failed(stream, &AttachStream::failed);
        QSignalSpy ended(stream, &AttachStream::ended);
        QVERIFY(ended.wait(kBoundMs));
        QTest::qWait(20);
        QCOMPARE(established.count(), 1);
        QCOMPARE(ended.count(), 1);
        QCOMPARE(output.count(), 1);
        QCOMPARE(output.first().at(1).toByteArray(), QByteArray("complete\n"));
        if (truncated) {
            // A frame cut short is lost output: that must be said, not pass for a clean end.
            QCOMPARE(failed.count(), 1);
            const auto error = failed.first().first().value<EngineError>();
            QVERIFY2(error.toString().contains(u"in the middle of an output frame"),
                     qPrintable(error.toString()));
        } else {
            QCOMPARE(failed.count(), 0);
        }
        delete stream;
        expectHealthy(engine);
    }

    // The attach is refused with garbage instead of the upgrade.
    void attachNotUpgraded()
    {
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        fake.injectOnce("/attach", sendAndKeepOpen("SSH-2.0-OpenSSH_9.6\r\n"));
        AttachStream *stream = engine.attach(QStringLiteral("fake1"));
        QSignalSpy failed(stream, &AttachStream::failed);
        QVERIFY(failed.wait(kBoundMs));
        const auto error = failed.first().first().value<EngineError>();
        QCOMPARE(error.kind, EngineError::Kind::Protocol);
        QVERIFY(!stream->isEstablished());
        delete stream;
        expectHealthy(engine);
    }

    // --- Whole runs through the sandbox service ---

    void healthyRun()
    {
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        const ExecutionResult r = run(service, QStringLiteral("print(1)"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.stdoutData, QByteArray("fake output\n"));
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, kBoundMs);
        QVERIFY(fake.allRemoved());
        QCOMPARE(fake.removed(), fake.created());
    }

    // The allow-list mode on a Podman engine whose internal network has an address on the host
    // (the netavark backend; CNI gives none, which integration_podman runs through): refused
    // with why, the network removed again, no gateway or sandbox made.
    void allowListRefusedOnPodmanWithAHostAddress()
    {
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        const auto ok = [](int status, const QJsonObject &body) {
            return sendAndKeepOpen(FakeEngine::response(
                status, status == 204 ? QByteArray() : FakeEngine::json(body)));
        };
        fake.injectOnce("/version",
                        ok(200, {{QStringLiteral("ApiVersion"), QStringLiteral("1.41")},
                                 {QStringLiteral("Version"), QStringLiteral("4.3.1")},
                                 {QStringLiteral("Components"),
                                  QJsonArray{QJsonObject{{QStringLiteral("Name"),
                                                          QStringLiteral("Podman Engine")}}}}}));
        fake.injectOnce("/networks/create",
                        ok(201, {{QStringLiteral("Id"), QStringLiteral("n1")}}));
        const QJsonObject ipam{
            {QStringLiteral("Config"),
             QJsonArray{QJsonObject{{QStringLiteral("Subnet"), QStringLiteral("10.89.0.0/24")},
                                    {QStringLiteral("Gateway"), QStringLiteral("10.89.0.1")}}}}};
        fake.injectOnce("/networks/code-sandbox-egress-", ok(200, {{QStringLiteral("IPAM"), ipam}}),
                        "GET");
        fake.injectOnce("/networks/code-sandbox-egress-", ok(204, {}), "DELETE");
        EngineClient engine(m_path);
        DockerBackend backend(&engine);
        SandboxConfig c = config();
        c.egress = {QStringLiteral("pypi.org")};
        SandboxService service(&backend, LanguageRegistry::builtIn(), c);
        const ExecutionResult r = run(service, QStringLiteral("print(1)"));
        QVERIFY2(r.error.contains(u"10.89.0.1") && r.error.contains(u"netavark") &&
                     r.error.contains(u"network_backend = \"cni\""),
                 qPrintable(r.error));
        QCOMPARE(fake.created(), 0);
        // The removal goes out beside the run's answer.
        const auto networkRequests = [&fake] {
            QStringList out;
            for (const FakeEngine::Request &req : fake.requests())
                if (req.path.contains("/networks"))
                    out.append(
                        QString::fromLatin1(req.method + ' ' + req.path.split('?').value(0)));
            return out;
        };
        QTRY_COMPARE_WITH_TIMEOUT(networkRequests().size(), 3, kBoundMs);
        QVERIFY2(networkRequests().value(0).startsWith(u"POST ") &&
                     networkRequests().value(1).startsWith(u"GET ") &&
                     networkRequests().value(2).startsWith(u"DELETE "),
                 qPrintable(networkRequests().join(u", ")));
    }

    void runFaults_data()
    {
        QTest::addColumn<QByteArray>("where");
        QTest::addColumn<Fault>("fault");
        QTest::addColumn<QString>("says");
        const QByteArray half = FakeEngine::response(201, R"({"Id":"fake-half","Warnings":[]})");
        QTest::newRow("create: dropped mid-body")
            << QByteArray("/containers/create") << sendAndClose(half.chopped(15))
            << QStringLiteral("could not create the sandbox container: the container engine "
                              "closed the connection mid-answer");
        QTest::newRow("create: invalid chunked")
            << QByteArray("/containers/create")
            << sendAndKeepOpen(chunkedHeader() + "xyz\r\n{}\r\n0\r\n\r\n")
            << QStringLiteral("could not create the sandbox container: malformed answer");
        QTest::newRow("attach: dropped before the upgrade")
            << QByteArray("/attach") << sendAndClose("HTTP/1.1 101 UPGR")
            << QStringLiteral("could not attach the sandbox container: the container engine "
                              "closed the connection mid-answer");
        QTest::newRow("start: garbage")
            << QByteArray("/start") << sendAndKeepOpen(randomBytes(300))
            << QStringLiteral("could not start the sandbox container: malformed answer");
        QTest::newRow("start: dropped")
            << QByteArray("/start") << sendAndClose({})
            << QStringLiteral("could not start the sandbox container: the container engine "
                              "closed the connection mid-answer");
        // Not a transport fault, but the same path: the engine refuses to start the container.
        QTest::newRow("start: refused by the engine")
            << QByteArray("/start")
            << sendAndKeepOpen(FakeEngine::response(
                   500, R"({"message":"OCI runtime create failed: fake reason"})"))
            << QStringLiteral("could not start the sandbox container: container engine answered "
                              "500: OCI runtime create failed: fake reason");
    }

    void runFaults()
    {
        QFETCH(QByteArray, where);
        QFETCH(Fault, fault);
        QFETCH(QString, says);
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        fake.injectOnce(where, fault);
        qint64 ms = 0;
        const ExecutionResult r = run(service, QStringLiteral("print(1)"), &ms);
        QVERIFY2(ms >= 0, "the run did not finish");
        QVERIFY(!r.error.isEmpty());
        QVERIFY2(r.error.startsWith(says), qPrintable(r.error));
        QVERIFY(!r.succeeded());
        QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
        // The service carries on: the next run works on the same client.
        const ExecutionResult next = run(service, QStringLiteral("print(2)"));
        QVERIFY2(next.error.isEmpty(), qPrintable(next.error));
        QCOMPARE(next.stdoutData, QByteArray("fake output\n"));
        // Every container the fake created was removed again (a faulty create answer is not
        // counted as created), and once.
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, kBoundMs);
        QVERIFY(fake.allRemoved());
        QCOMPARE(fake.removed(), fake.created());
    }

    // (d) The program's output stream is cut in the middle of a frame header and the engine then
    // says the container exited with 0. The output is incomplete, so the run must not pass for a
    // success.
    void runWithTruncatedOutputFrame()
    {
        FakeEngine fake;
        QVERIFY(fake.listen(m_path));
        EngineClient engine(m_path);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        fake.setProgram([](QLocalSocket *s, const QByteArray &) {
            FakeEngine::sendAndClose(s, FakeEngine::frame(1, "partial output\n") +
                                            QByteArray("\x01\0\0\0\0", 5));
        });
        qint64 ms = 0;
        const ExecutionResult r = run(service, QStringLiteral("print(1)"), &ms);
        QVERIFY2(ms >= 0 && ms < 2000, qPrintable(QString::number(ms)));
        QCOMPARE(r.stdoutData, QByteArray("partial output\n"));
        QVERIFY2(!r.succeeded(), qPrintable(r.error));
        fake.setProgram({});
        const ExecutionResult next = run(service, QStringLiteral("print(2)"));
        QVERIFY2(next.error.isEmpty(), qPrintable(next.error));
        QCOMPARE(next.stdoutData, QByteArray("fake output\n"));
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, kBoundMs);
        QVERIFY(fake.allRemoved());
        QCOMPARE(fake.removed(), fake.created());
    }
};

QTEST_GUILESS_MAIN(TestEngineFaults)
#include "tst_enginefaults.moc"
