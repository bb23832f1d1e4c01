// Sessions' snapshots against the real engine (issue 49), through the SessionManager as the tools
// use it: a snapshot after every call, a rewind into a fresh sandbox, a fork, a kept session
// brought back by a second manager (a restarted server) reading the same folder, and a state over
// the cap refused with the session going on. podman.sh runs the same executable against Podman,
// whose archive endpoint and volumes the handover goes through as well.
#include "dockerbackend.h"
#include "engineclient.h"
#include "enginetestcase.h"
#include "sandboxsession.h"
#include "sessionmanager.h"

#include <QFile>
#include <QJsonArray>
#include <QPointer>
#include <QTemporaryDir>

class TestSnapshots : public EngineTestCase
{
    Q_OBJECT

private:
    SandboxConfig config()
    {
        SandboxConfig c = newConfig();
        c.poolSize = 0;
        return c;
    }

    static SessionManager::Limits limits(const QString &folder, qint64 perSession = 64 << 20)
    {
        SessionManager::Limits l;
        l.snapshotFolder = folder;
        l.snapshots = {perSession, 4 * perSession};
        return l;
    }

    // A session of `language`, ready (null and *error when it did not start).
    static QPointer<SandboxSession> startSession(SessionManager &sessions, QString *error,
                                                 const QString &language = QStringLiteral("python"),
                                                 bool keep = false)
    {
        SessionBlueprint b;
        b.owner = QStringLiteral("owner");
        b.assistant = QStringLiteral("assistant");
        b.language = language;
        b.network = RunNetwork::decide(sessions.sandbox()->config());
        b.kept = keep;
        QPointer<SandboxSession> session;
        bool done = false;
        sessions.create(
            b, [](const QString &) {},
            [&](SandboxSession *s, const QString &why) {
                session = s;
                *error = why;
                done = true;
            });
        if (!QTest::qWaitFor([&] { return done; }, 180000))
            *error = QStringLiteral("the session did not start within 180 s");
        return session;
    }

    static ExecutionResult call(SessionManager &sessions, SandboxSession *session,
                                const QString &code)
    {
        ExecutionRequest request(session->language().name, code, 60);
        request.sessionId = session->id();
        request.session = session;
        return resultOf(sessions.execute(request), 180000);
    }

    // The session's snapshots once the one being taken is kept.
    static QList<SessionSnapshot> snapshotsOf(SessionManager &sessions, SandboxSession *session)
    {
        bool settled = false;
        session->afterSnapshot([&] { settled = true; });
        if (!QTest::qWaitFor([&] { return settled; }, 120000))
            return {};
        return sessions.snapshots()->of(session->id());
    }

    struct Restored
    {
        bool done = false;
        SandboxSession *session = nullptr;
        QJsonObject record;
        QString error;
    };
    static SessionManager::Restored into(Restored *r)
    {
        return [r](SandboxSession *s, const QJsonObject &record, const QString &error) {
            *r = Restored{true, s, record, error};
        };
    }

private Q_SLOTS:
    void rewindBringsBackAnEarlierStateInAFreshSandbox()
    {
        QTemporaryDir folder;
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        {
            SessionManager sessions(&service, limits(folder.path()));
            QString error;
            QPointer<SandboxSession> s = startSession(sessions, &error);
            QVERIFY2(s, qPrintable(error));
            QCOMPARE(call(sessions, s, "x = 41\nopen('f.txt', 'w').write('one')").exitCode, 0);
            QCOMPARE(call(sessions, s,
                          "x = 0\nimport socket\nconn = socket.socket()\n"
                          "open('f.txt', 'w').write('two')")
                         .exitCode,
                     0);
            const QList<SessionSnapshot> kept = snapshotsOf(sessions, s);
            QCOMPARE(kept.size(), 2);
            QCOMPARE(kept[0].afterCall, 1);
            QCOMPARE(kept[0].kind, QStringLiteral("python"));
            QCOMPARE(kept[1].parent, kept[0].id);
            QCOMPARE(kept[1].notKept.size(), 1);
            QCOMPARE(kept[1].notKept.at(0).toObject().value(u"name").toString(),
                     QStringLiteral("conn"));
            const QString before = s->container()->id();

            Restored r;
            sessions.rewind(s, kept[0].id, {}, into(&r));
            QVERIFY(QTest::qWaitFor([&] { return r.done; }, 180000));
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QVERIFY(r.record.value(u"restored").toArray().contains(QStringLiteral("x")));
            QVERIFY(s->container()->id() != before); // a fresh sandbox
            const ExecutionResult back = call(sessions, s,
                                              "print(x, open('f.txt').read(), "
                                              "'conn' in globals())");
            QCOMPARE(QString::fromUtf8(back.stdoutData), QStringLiteral("41 one False\n"));
            // The next snapshot branches from the one rewound to.
            const QList<SessionSnapshot> after = snapshotsOf(sessions, s);
            QCOMPARE(after.size(), 3);
            QCOMPARE(after.last().parent, kept[0].id);

            // A fork: a second session from the first snapshot; the first goes on unchanged.
            sessions.fork(QStringLiteral("owner"), kept[0].id, false, {}, into(&r));
            r.done = false;
            QVERIFY(QTest::qWaitFor([&] { return r.done; }, 180000));
            QVERIFY2(r.session, qPrintable(r.error));
            QVERIFY(r.session->id() != s->id());
            QCOMPARE(QString::fromUtf8(call(sessions, r.session, "x += 1\nprint(x)").stdoutData),
                     QStringLiteral("42\n"));
            QCOMPARE(QString::fromUtf8(call(sessions, s, "print(x)").stdoutData),
                     QStringLiteral("41\n"));
            // Another owner cannot use them.
            QVERIFY(!sessions.snapshotOf(kept[0].id, QStringLiteral("someone else")));
            sessions.closeAll(QStringLiteral("the test ended"));
        }
        shutDown(service, engine);
    }

    void aKeptSessionComesBackInTheNextServerForItsAssistantOnly()
    {
        QTemporaryDir folder;
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        QString id;
        {
            SessionManager first(&service, limits(folder.path()));
            QString error;
            QPointer<SandboxSession> s =
                startSession(first, &error, QStringLiteral("python"), true);
            QVERIFY2(s, qPrintable(error));
            id = s->id();
            QCOMPARE(call(first, s, "data = {'k': [1, 2, 3]}").exitCode, 0);
            QCOMPARE(snapshotsOf(first, s).size(), 1);
        } // the first server stops: its sessions end, the kept one stays kept
        SessionManager second(&service, limits(folder.path()));
        QVERIFY(second.dormant(id));
        QCOMPARE(second.dormantOf(QStringLiteral("assistant")), QStringList{id});
        QString refused;
        bool answered = false;
        second.revive(id, QStringLiteral("new owner"), QStringLiteral("another assistant"), {},
                      [&](const QString &error) {
                          refused = error;
                          answered = true;
                      });
        QVERIFY(answered);
        QVERIFY2(refused.contains(QLatin1String("another assistant")), qPrintable(refused));
        QString error = QStringLiteral("<no answer>");
        second.revive(id, QStringLiteral("new owner"), QStringLiteral("assistant"), {},
                      [&](const QString &why) { error = why; });
        QVERIFY(QTest::qWaitFor([&] { return error != u"<no answer>"; }, 180000));
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const SessionAdmission live = second.lookup(id, QStringLiteral("new owner"));
        QVERIFY(live.admitted());
        QCOMPARE(QString::fromUtf8(call(second, live.session, "print(sum(data['k']))").stdoutData),
                 QStringLiteral("6\n"));
        QVERIFY(live.session->kept());
        second.close(id, QStringLiteral("new owner"));
        QVERIFY(!second.dormant(id));
        second.closeAll(QStringLiteral("the test ended"));
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 15000);
        shutDown(service, engine);
    }

    void aStateOverTheCapIsRefusedAndTheSessionGoesOn()
    {
        QTemporaryDir folder;
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        {
            SessionManager sessions(&service, limits(folder.path(), 1 << 20));
            QString error;
            QPointer<SandboxSession> s = startSession(sessions, &error);
            QVERIFY2(s, qPrintable(error));
            QCOMPARE(call(sessions, s, "big = bytes(3_000_000)").exitCode, 0);
            QCOMPARE(snapshotsOf(sessions, s).size(), 0);
            const ExecutionResult next = call(sessions, s, "print(len(big))");
            QCOMPARE(QString::fromUtf8(next.stdoutData), QStringLiteral("3000000\n"));
            QVERIFY2(next.notes.join(u' ').contains(QLatin1String("no snapshot was kept after "
                                                                  "call 1")),
                     qPrintable(next.notes.join(u'|')));
            sessions.closeAll(QStringLiteral("the test ended"));
        }
        shutDown(service, engine);
    }

    // A person's import (the window's File → Import snapshot): a .csnap that was changed, names a
    // language this server lacks or a kind its language does not read, or is over the cap, is
    // refused and nothing is kept; a pickle that would run code is only ever bytes here (the
    // server never unpickles), and a session restores it in its own sandbox.
    void importRefusesHostileFilesAndRunsNothingOnTheHost()
    {
        QTemporaryDir folder;
        QTemporaryDir files;
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        SessionManager sessions(&service, limits(folder.path(), 1 << 20));
        const QString marker = files.path() + QStringLiteral("/ran-on-the-host");
        // pickle protocol 0: os.system("touch <marker>") when unpickled.
        const QByteArray evil = "cos\nsystem\n(S'touch " + marker.toUtf8() + "'\ntR.";
        const auto write = [&](const QString &name, SessionSnapshot s, const QByteArray &state,
                               const QByteArray &tar, const QString &hashOf = QString()) {
            s.sha256 = SnapshotStore::contentHash(hashOf.isEmpty() ? state : hashOf.toUtf8(), tar);
            QString error;
            const QByteArray csnap = SnapshotStore::pack(s, state, tar, &error);
            QFile f(files.path() + u'/' + name);
            if (!f.open(QIODevice::WriteOnly) || f.write(csnap) != csnap.size())
                qFatal("cannot write %s", qPrintable(f.fileName()));
            return f.fileName();
        };
        SessionSnapshot s;
        s.id = QStringLiteral("s-x-1.1");
        s.sessionId = QStringLiteral("s-x-1");
        s.kind = QStringLiteral("python");
        s.language = QStringLiteral("python");
        SessionSnapshot cobol = s;
        cobol.language = QStringLiteral("cobol");
        SessionSnapshot mixed = s;
        mixed.language = QStringLiteral("bash"); // a python state for a files-only language
        const QList<QPair<QString, QString>> refused = {
            {write("changed.csnap", s, evil, "tar", "other"), "does not match its hash"},
            {write("cobol.csnap", cobol, evil, "tar"), "a language this server does not have"},
            {write("mixed.csnap", mixed, evil, "tar"), "which a bash session does not read"},
            {write("big.csnap", s, QByteArray(2 << 20, 'x'), "tar"), "more than"},
        };
        for (const auto &[path, expected] : refused) {
            QString id;
            const QString error = sessions.importSnapshot(path, &id);
            QVERIFY2(error.contains(expected), qPrintable(path + QStringLiteral(": ") + error));
            QVERIFY(id.isEmpty());
        }
        QCOMPARE(sessions.snapshots()->count(), 0);
        // A well-formed one is kept as bytes: nothing of it ran here.
        QString id;
        QCOMPARE(sessions.importSnapshot(write("evil.csnap", s, evil, "tar"), &id), QString());
        QVERIFY(id.startsWith(QLatin1String("import-")));
        QCOMPARE(sessions.snapshots()->count(), 1);
        QVERIFY(!QFile::exists(marker));
    }

    void filesOnlyForALanguageWithoutInterpreter()
    {
        QTemporaryDir folder;
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        {
            SessionManager sessions(&service, limits(folder.path()));
            QString error;
            QPointer<SandboxSession> s = startSession(sessions, &error, QStringLiteral("bash"));
            QVERIFY2(s, qPrintable(error));
            QCOMPARE(call(sessions, s, "echo one > f.txt").exitCode, 0);
            QCOMPARE(call(sessions, s, "echo two > f.txt; mkdir -p d; touch d/g").exitCode, 0);
            const QList<SessionSnapshot> kept = snapshotsOf(sessions, s);
            QCOMPARE(kept.size(), 2);
            QCOMPARE(kept[0].kind, QStringLiteral("files"));
            Restored r;
            sessions.rewind(s, kept[0].id, {}, into(&r));
            QVERIFY(QTest::qWaitFor([&] { return r.done; }, 180000));
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(
                QString::fromUtf8(
                    call(sessions, s, "cat f.txt; test -e d && echo d || echo no-d").stdoutData),
                QStringLiteral("one\nno-d\n"));
            sessions.closeAll(QStringLiteral("the test ended"));
        }
        shutDown(service, engine);
    }
};

QTEST_GUILESS_MAIN(TestSnapshots)
#include "tst_snapshots.moc"
