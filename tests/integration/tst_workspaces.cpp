// Workspaces against the real engine (issue 50): the user's folders at /workspace/NAME, read-only
// or copy-on-write; what stays out (credentials, links leaving the folder); a copy-on-write run's
// change set, the host folder untouched until applied, "always" applying, a conflict; and
// hostile programs (links, FIFOs, hard links, a huge sparse file, many files) refused or capped
// with the server still serving and nothing left behind. Sessions: a read-only workspace seen as
// the folder is at each call (a new version behind the link, which the engine must replace), a
// copy-on-write one's cumulative change set, "always" moving the session's baseline, and a call
// that names another workspace refused through the tools.

#include "dockerbackend.h"
#include "engineclient.h"
#include "enginetestcase.h"
#include "execution.h"
#include "jsonrpcmessage.h"
#include "leftoversweeper.h"
#include "mcpserver.h"
#include "mcptransport.h"
#include "rungate.h"
#include "sandboxservice.h"
#include "sandboxsession.h"
#include "sandboxtools.h"
#include "sessionmanager.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <sys/stat.h>
#include <unistd.h>

// A client's end of an MCP session over the product's tools: requests in, answers kept.
class ClientTransport : public McpTransport
{
public:
    void respond(const QJsonValue &, const QJsonObject &response) override
    {
        sent.append(response);
    }
    void notify(const QJsonObject &message, const QJsonValue &) override { sent.append(message); }
    // Sends a call of `tool`; its request id.
    int send(const QString &tool, const QJsonObject &arguments)
    {
        const int id = ++m_lastId;
        Q_EMIT messageReceived(McpMessage::parse(
            QJsonDocument(JsonRpcMessage::makeRequest(id, QStringLiteral("tools/call"),
                                                      {{"name", tool}, {"arguments", arguments}}))
                .toJson(QJsonDocument::Compact)));
        return id;
    }
    // The result of request `id` (empty when none comes within `waitMs`).
    QJsonObject resultOf(int id, int waitMs = 180000)
    {
        QJsonObject answer;
        (void)QTest::qWaitFor(
            [&] {
                for (const QJsonObject &m : std::as_const(sent))
                    if (m.value(u"id").toInt() == id && !m.contains(u"method"))
                        answer = m.value(u"result").toObject();
                return !answer.isEmpty();
            },
            waitMs);
        return answer;
    }
    QJsonObject call(const QString &tool, const QJsonObject &arguments)
    {
        return resultOf(send(tool, arguments));
    }
    void start()
    {
        Q_EMIT messageReceived(McpMessage::parse(
            QJsonDocument(JsonRpcMessage::makeRequest(
                              ++m_lastId, QStringLiteral("initialize"),
                              {{"protocolVersion", "2025-11-25"},
                               {"capabilities", QJsonObject()},
                               {"clientInfo", QJsonObject{{"name", "tests"}, {"version", "1"}}}}))
                .toJson(QJsonDocument::Compact)));
        Q_EMIT messageReceived(
            McpMessage::parse(QJsonDocument(JsonRpcMessage::makeNotification(
                                                QStringLiteral("notifications/initialized")))
                                  .toJson(QJsonDocument::Compact)));
    }
    static QString textOf(const QJsonObject &result)
    {
        return result.value(u"content").toArray().at(0).toObject().value(u"text").toString();
    }

    QList<QJsonObject> sent;

private:
    int m_lastId = 0;
};

// Stands for the window: keeps the questions; the test answers them.
class RecordingApprover : public RunApprover
{
public:
    QList<ApprovalRequest> asked;
    bool isAvailable() const override { return true; }
    void ask(const ApprovalRequest &request) override { asked.append(request); }
    void withdraw(const QString &, const QString &) override {}
    void answer(const QString &id, Answer answer) { Q_EMIT answered(id, answer, QString()); }
};

class TestWorkspaces : public EngineTestCase
{
    Q_OBJECT

private:
    static void write(const QString &path, const QByteArray &content)
    {
        QDir().mkpath(QFileInfo(path).absolutePath());
        QFile f(path);
        QVERIFY2(f.open(QIODevice::WriteOnly), qPrintable(path));
        f.write(content);
    }
    static QByteArray read(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
    }

    // A folder like a project's: data, code, credentials that must stay out, and a link that
    // leaves it.
    void makeProject(const QString &root)
    {
        write(root + "/data.csv", "a,b\n1,2\n3,4\n");
        write(root + "/src/main.py", "print('hello')\n");
        write(root + "/notes.txt", "one\ntwo\nthree\n");
        write(root + "/old.txt", "to be deleted\n");
        write(root + "/.env", "API_KEY=hunter2\n");
        write(root + "/certs/server.pem", "-----BEGIN-----\n");
        write(root + "/.ssh/id_ed25519", "PRIVATE\n");
        write(root + "/.git/config", "[core]\n");
        QVERIFY(QFile::link(QStringLiteral("/etc/passwd"), root + "/passwd-link"));
    }

    SandboxConfig config(const QList<Workspace> &workspaces)
    {
        SandboxConfig c = newConfig();
        c.poolSize = 0;
        c.workspaces = workspaces;
        return c;
    }

    static Workspace workspace(const QString &spec)
    {
        QString error;
        const std::optional<Workspace> w = Workspace::parse(spec, &error);
        if (!w)
            qFatal("%s: %s", qPrintable(spec), qPrintable(error));
        return *w;
    }

    ExecutionResult run(SandboxService &service, const QString &code, const QStringList &names)
    {
        ExecutionRequest request(QStringLiteral("python"), code, 60);
        request.workspaces = names;
        return resultOf(service.execute(request), 180000);
    }

    static const WorkspaceChange *change(const WorkspaceChangeSet &set, const QString &path)
    {
        for (const WorkspaceChange &c : set.changes)
            if (c.path == path)
                return &c;
        return nullptr;
    }

    // A change set as "kind path" lines, sorted: "added a.txt", "modified notes.txt".
    static QStringList kindsOf(const WorkspaceRun &run)
    {
        QStringList lines;
        if (!run.changes)
            return {QStringLiteral("<no change set: %1>").arg(run.error)};
        for (const WorkspaceChange &c : run.changes->changes) {
            static const char *const names[] = {"added", "modified", "deleted", "renamed"};
            lines.append(QLatin1String(names[int(c.kind)]) + u' ' + c.path);
        }
        lines.sort();
        return lines;
    }

    // A Python session with the server's workspaces `names`, ready (null and *error when it did
    // not start).
    static QPointer<SandboxSession> startSession(SessionManager &sessions, const QStringList &names,
                                                 QString *error)
    {
        QPointer<SandboxSession> session;
        bool done = false;
        sessions.create(
            QStringLiteral("owner"), QStringLiteral("python"), {}, 0,
            RunNetwork::decide(sessions.sandbox()->config()), [](const QString &) {},
            [&](SandboxSession *s, const QString &why) {
                session = s;
                *error = why;
                done = true;
            },
            names);
        if (!QTest::qWaitFor([&] { return done; }, 180000))
            *error = QStringLiteral("the session did not start within 180 s");
        return session;
    }

    static ExecutionResult call(SessionManager &sessions, SandboxSession *session,
                                const QString &code)
    {
        ExecutionRequest request(QStringLiteral("python"), code, 60);
        request.sessionId = session->id();
        request.session = session;
        return resultOf(sessions.execute(request), 180000);
    }

private Q_SLOTS:
    void readOnlyIsReadableNotWritableAndKeepsCredentialsOut()
    {
        QTemporaryDir dir;
        makeProject(dir.path());
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               config({workspace("proj=" + dir.path())}));
        const ExecutionResult r = run(service, QStringLiteral(R"py(
import os
root = "/workspace/proj"
found = sorted(os.path.relpath(os.path.join(d, f), root)
               for d, ds, fs in os.walk(root) for f in fs)
print(found)
print(open(root + "/data.csv").read().splitlines()[1])
print(os.getcwd())
import errno
for target in (root + "/data.csv", root + "/new.txt"):
    try:
        open(target, "a").write("x")
        print("wrote", target)
    except OSError as e:
        # Not the sandbox user's (EACCES), on a read-only mount (EROFS): the kernel says one.
        print("refused", e.errno in (errno.EACCES, errno.EROFS))
print(os.path.lexists(root + "/passwd-link"))
)py"),
                                      {QStringLiteral("proj")});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = QString::fromUtf8(r.stdoutData).split(u'\n');
        QCOMPARE(lines.value(0), QStringLiteral("['.git/config', 'data.csv', 'notes.txt', "
                                                "'old.txt', 'src/main.py']"));
        QCOMPARE(lines.value(1), QStringLiteral("1,2"));
        QCOMPARE(lines.value(2), QStringLiteral("/sandbox"));
        QCOMPARE(lines.value(3), QStringLiteral("refused True"));
        QCOMPARE(lines.value(4), QStringLiteral("refused True"));
        QCOMPARE(lines.value(5), QStringLiteral("False"));
        QCOMPARE(r.workspaces.size(), 1);
        const WorkspaceRun &w = r.workspaces.first();
        QVERIFY(w.scan);
        QCOMPARE(w.scan->files, 5);
        QVERIFY2(w.scan->excluded >= 3, qPrintable(QString::number(w.scan->excluded)));
        QVERIFY(!w.changes); // read-only: nothing comes back
        QCOMPARE(read(dir.path() + "/data.csv"), QByteArray("a,b\n1,2\n3,4\n"));
        shutDown(service, engine);
    }

    void copyOnWriteReturnsTheChangeSetAndLeavesTheFolder()
    {
        QTemporaryDir dir;
        makeProject(dir.path());
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               config({workspace("proj=" + dir.path() + ":rw")}));
        const ExecutionResult r = run(service, QStringLiteral(R"py(
import os
root = "/workspace/proj"
with open(root + "/notes.txt", "a") as f:
    f.write("four\n")
os.makedirs(root + "/out")
open(root + "/out/result.csv", "w").write("x,y\n")
os.remove(root + "/old.txt")
os.symlink("/etc/passwd", root + "/evil-link")
os.mkfifo(root + "/pipe")
open(root + "/a.txt", "w").write("a\n")
os.link(root + "/a.txt", root + "/b.txt")
print("done")
)py"),
                                      {QStringLiteral("proj")});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("done\n"));
        QCOMPARE(r.workspaces.size(), 1);
        const WorkspaceRun &w = r.workspaces.first();
        QVERIFY2(w.error.isEmpty(), qPrintable(w.error));
        QVERIFY(w.changes);
        const WorkspaceChangeSet &set = *w.changes;
        const WorkspaceChange *notes = change(set, QStringLiteral("notes.txt"));
        QVERIFY(notes);
        QCOMPARE(notes->kind, WorkspaceChange::Kind::Modified);
        QVERIFY2(notes->diff.contains(QStringLiteral("+four")), qPrintable(notes->diff));
        const WorkspaceChange *added = change(set, QStringLiteral("out/result.csv"));
        QVERIFY(added);
        QCOMPARE(added->kind, WorkspaceChange::Kind::Added);
        QCOMPARE(added->content, QByteArray("x,y\n"));
        const WorkspaceChange *deleted = change(set, QStringLiteral("old.txt"));
        QVERIFY(deleted);
        QCOMPARE(deleted->kind, WorkspaceChange::Kind::Deleted);
        QVERIFY(!change(set, QStringLiteral("evil-link")));
        QVERIFY(!change(set, QStringLiteral("pipe")));
        const QString refused = set.refused.join(u'\n');
        QVERIFY2(refused.contains(QStringLiteral("evil-link")), qPrintable(refused));
        QVERIFY2(refused.contains(QStringLiteral("pipe")), qPrintable(refused));
        // A hard link: the archive holds one of the two names as a link to the other.
        QVERIFY2(refused.contains(QStringLiteral("a.txt")) ||
                     refused.contains(QStringLiteral("b.txt")),
                 qPrintable(refused));
        // Nothing reached the folder: apply is "never" by default.
        QCOMPARE(read(dir.path() + "/notes.txt"), QByteArray("one\ntwo\nthree\n"));
        QCOMPARE(read(dir.path() + "/old.txt"), QByteArray("to be deleted\n"));
        QVERIFY(!QFileInfo::exists(dir.path() + "/out"));
        QVERIFY(!QFileInfo(dir.path() + "/evil-link").isSymLink());
        // The text a model reads names the changes and says they were not applied.
        const QJsonObject json = r.toJson();
        QCOMPARE(json.value(u"workspaces").toArray().size(), 1);
        QVERIFY(w.summary().contains(QStringLiteral("not applied")));
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    void applyAlwaysWritesTheFolderAndReportsAConflict()
    {
        QTemporaryDir dir;
        makeProject(dir.path());
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        Workspace w = workspace("proj=" + dir.path() + ":rw");
        w.apply = Workspace::Apply::Always;
        SandboxService service(&backend, LanguageRegistry::builtIn(), config({w}));
        ExecutionRequest request(QStringLiteral("python"), QStringLiteral(R"py(
import time
root = "/workspace/proj"
open(root + "/notes.txt", "a").write("from the sandbox\n")
open(root + "/data.csv", "a").write("5,6\n")
open(root + "/new.txt", "w").write("new\n")
time.sleep(3)
)py"),
                                 60);
        request.workspaces = {QStringLiteral("proj")};
        Execution *e = service.execute(request);
        // While the program sleeps, the user edits data.csv on the host.
        QSignalSpy started(e, &Execution::started);
        QVERIFY(started.wait(120000));
        QTest::qWait(1000);
        write(dir.path() + "/data.csv", "edited on the host\n");
        const ExecutionResult r = resultOf(e, 120000);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.workspaces.size(), 1);
        const WorkspaceRun &run = r.workspaces.first();
        QVERIFY(run.applied);
        QVERIFY2(run.applied->conflicts.join(u' ').contains(QStringLiteral("data.csv")),
                 qPrintable(run.applied->conflicts.join(u' ')));
        QCOMPARE(read(dir.path() + "/data.csv"), QByteArray("edited on the host\n"));
        QCOMPARE(read(dir.path() + "/notes.txt"),
                 QByteArray("one\ntwo\nthree\nfrom the sandbox\n"));
        QCOMPARE(read(dir.path() + "/new.txt"), QByteArray("new\n"));
        shutDown(service, engine);
    }

    // A read-only workspace stays on the engine in a volume per content: the second call over
    // the same folder sends nothing, a changed folder sends what changed, the older content goes
    // once no run mounts it, a volume the engine lost is filled again, and none outlives the
    // server.
    void aReadOnlyWorkspaceIsKeptOnTheEngine()
    {
        QTemporaryDir dir;
        write(dir.path() + "/big.bin", QByteArray(300 * 1024, 'b'));
        write(dir.path() + "/keep.txt", "kept\n");
        write(dir.path() + "/change.txt", "before\n");
        write(dir.path() + "/gone.txt", "deleted later\n");
        write(dir.path() + "/sub/deep.txt", "deep\n");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               config({workspace("proj=" + dir.path())}));
        const QString list = QStringLiteral(R"py(
import hashlib, os
root = "/workspace/proj"
for d, ds, fs in sorted(os.walk(root)):
    for f in sorted(fs):
        p = os.path.join(d, f)
        print(os.path.relpath(p, root), hashlib.sha256(open(p, "rb").read()).hexdigest()[:8])
)py");
        const auto listed = [&](const ExecutionResult &r) {
            return QString::fromUtf8(r.stdoutData).trimmed().split(u'\n');
        };
        const ExecutionResult first = run(service, list, {QStringLiteral("proj")});
        QVERIFY2(first.error.isEmpty(), qPrintable(first.error));
        QCOMPARE(first.workspaces.size(), 1);
        const QString firstVolume = first.workspaces.first().volume;
        QVERIFY(firstVolume.startsWith(QStringLiteral("code-sandbox-workspace-")));
        QVERIFY2(first.workspaces.first().sentBytes > 300 * 1024,
                 qPrintable(QString::number(first.workspaces.first().sentBytes)));
        const QStringList before = listed(first);
        QCOMPARE(before.size(), 5);

        const ExecutionResult second = run(service, list, {QStringLiteral("proj")});
        QVERIFY2(second.error.isEmpty(), qPrintable(second.error));
        QCOMPARE(second.workspaces.first().volume, firstVolume);
        QCOMPARE(second.workspaces.first().sentBytes, qint64(0));
        QCOMPARE(listed(second), before);

        write(dir.path() + "/change.txt", "after\n");
        write(dir.path() + "/added.txt", "new\n");
        QVERIFY(QFile::remove(dir.path() + "/gone.txt"));
        const ExecutionResult third = run(service, list, {QStringLiteral("proj")});
        QVERIFY2(third.error.isEmpty(), qPrintable(third.error));
        const QString thirdVolume = third.workspaces.first().volume;
        QVERIFY(!thirdVolume.isEmpty() && thirdVolume != firstVolume);
        // The two small files and their folder, not the big one again.
        const qint64 sent = third.workspaces.first().sentBytes;
        QVERIFY2(sent > 0 && sent < 100 * 1024, qPrintable(QString::number(sent)));
        const QStringList after = listed(third);
        QCOMPARE(after.size(), 5);
        QVERIFY(after.contains(before.at(0))); // big.bin, whole
        QVERIFY(!after.join(u'\n').contains(QStringLiteral("gone.txt")));
        QVERIFY(after.join(u'\n').contains(QStringLiteral("added.txt")));
        QVERIFY(!after.contains(before.at(1))); // change.txt's new digest
        QVERIFY(after.contains(before.at(3)));  // keep.txt
        QVERIFY(after.contains(before.at(4)));  // sub/deep.txt
        // The first content is no one's newest and no run mounts it: removed.
        QVERIFY2(QTest::qWaitFor(
                     [&] {
                         return !LeftoverSweeper::volumesOf(engine, service.config().instanceId)
                                     .contains(firstVolume);
                     },
                     60000),
                 qPrintable(firstVolume));

        // A volume the engine lost (docker volume prune) is filled again, whole.
        EngineReply *removed = engine.del("/volumes/" + thirdVolume.toUtf8());
        QSignalSpy gone(removed, &EngineReply::finished);
        QVERIFY(gone.wait(30000));
        QVERIFY2(removed->ok(), qPrintable(removed->error().message));
        const ExecutionResult fourth = run(service, list, {QStringLiteral("proj")});
        QVERIFY2(fourth.error.isEmpty(), qPrintable(fourth.error));
        QCOMPARE(fourth.workspaces.first().volume, thirdVolume);
        QVERIFY(fourth.workspaces.first().sentBytes > 300 * 1024);
        QCOMPARE(listed(fourth), after);

        const QString instance = service.config().instanceId;
        shutDown(service, engine);
        QVERIFY2(QTest::qWaitFor(
                     [&] {
                         return LeftoverSweeper::volumesOf(engine, instance)
                             .filter(QStringLiteral("code-sandbox-workspace-"))
                             .isEmpty();
                     },
                     30000),
                 qPrintable(LeftoverSweeper::volumesOf(engine, instance).join(u' ')));
    }

    // A copy-on-write workspace starts from the same volume: the sandbox copies it before the
    // program starts, so the second call sends nothing either, and its change set is as ever.
    void aCopyOnWriteWorkspaceStartsFromTheEnginesCopy()
    {
        QTemporaryDir dir;
        write(dir.path() + "/big.bin", QByteArray(300 * 1024, 'b'));
        write(dir.path() + "/notes.txt", "one\n");
        write(dir.path() + "/private.txt", "mine\n");
        QVERIFY(QFile::setPermissions(dir.path() + "/private.txt",
                                      QFile::ReadOwner | QFile::WriteOwner));
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               config({workspace("proj=" + dir.path() + ":rw")}));
        const QString code = QStringLiteral(R"py(
import os
root = "/workspace/proj"
print(len(open(root + "/big.bin", "rb").read()), sorted(os.listdir(root)))
open(root + "/notes.txt", "a").write("two\n")
open(root + "/private.txt", "w").write("changed\n")
open(root + "/out.txt", "w").write("made\n")
)py");
        QList<qint64> sent;
        QString volume;
        for (int call = 0; call < 2; ++call) {
            const ExecutionResult r = run(service, code, {QStringLiteral("proj")});
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(QString::fromUtf8(r.stdoutData),
                     QStringLiteral("307200 ['big.bin', 'notes.txt', 'private.txt']\n"));
            const WorkspaceRun &w = r.workspaces.first();
            QVERIFY(!w.volume.isEmpty());
            QVERIFY(volume.isEmpty() || volume == w.volume);
            volume = w.volume;
            sent.append(w.sentBytes);
            QCOMPARE(kindsOf(w),
                     QStringList({"added out.txt", "modified notes.txt", "modified private.txt"}));
            // The folder's own bits for a file whose content changed, not the copy's.
            QCOMPARE(change(*w.changes, QStringLiteral("private.txt"))->mode, 0600);
        }
        QVERIFY2(sent.at(0) > 300 * 1024, qPrintable(QString::number(sent.at(0))));
        QCOMPARE(sent.at(1), qint64(0));
        QCOMPARE(read(dir.path() + "/notes.txt"), QByteArray("one\n"));
        QVERIFY(!QFile::exists(dir.path() + "/out.txt"));
        shutDown(service, engine);
    }

    // Bigger than the workdir (64 MiB by default): the sandbox is made with room for it.
    void aWorkspaceBiggerThanTheWorkdir()
    {
        QTemporaryDir dir;
        for (int i = 0; i < 24; ++i)
            write(dir.path() + QStringLiteral("/part-%1.bin").arg(i),
                  QByteArray(4 << 20, char('a' + i)));
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(
            &backend, LanguageRegistry::builtIn(),
            config({workspace("big=" + dir.path()), workspace("copy=" + dir.path() + ":rw")}));
        const QString code = QStringLiteral(R"py(
import os
for root in ("/workspace/big", "/workspace/copy"):
    if os.path.isdir(root):
        print(len(os.listdir(root)), sum(os.path.getsize(os.path.join(root, f)) for f in os.listdir(root)))
        print(open(root + "/part-23.bin", "rb").read(3))
)py");
        const QString expected = QStringLiteral("24 %1\nb'xxx'\n").arg(24 * (4 << 20));
        // The read-only one from its volume, the copy-on-write one copied in.
        const ExecutionResult r =
            run(service, code, {QStringLiteral("big"), QStringLiteral("copy")});
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(QString::fromUtf8(r.stdoutData), expected + expected);
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    void hostileProgramsAreCappedAndTheServerKeepsServing()
    {
        QTemporaryDir dir;
        write(dir.path() + "/seed.txt", "seed\n");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxConfig c = config({workspace("proj=" + dir.path() + ":rw")});
        c.workspaceMaxBytes = 64LL * 1024 * 1024;
        SandboxService service(&backend, LanguageRegistry::builtIn(), c);
        // A sparse file far over the cap, and many small files.
        ExecutionResult r = run(service, QStringLiteral(R"py(
root = "/workspace/proj"
with open(root + "/huge.bin", "wb") as f:
    f.truncate(10 * 1024 ** 3)
import os
os.makedirs(root + "/many")
for i in range(20000):
    open(f"{root}/many/{i}.txt", "w").write("x")
print("made")
)py"),
                                {QStringLiteral("proj")});
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("made\n"));
        QCOMPARE(r.workspaces.size(), 1);
        const WorkspaceRun &w = r.workspaces.first();
        const QString said =
            w.error + w.summary() + (w.changes ? w.changes->refused.join(u' ') : QString());
        QVERIFY2(said.contains(QStringLiteral("huge.bin")) || !w.error.isEmpty(), qPrintable(said));
        QVERIFY(!w.changes || !change(*w.changes, QStringLiteral("huge.bin")) ||
                change(*w.changes, QStringLiteral("huge.bin"))->content.isEmpty());
        QVERIFY(!QFileInfo::exists(dir.path() + "/huge.bin"));
        QVERIFY(!QFileInfo::exists(dir.path() + "/many"));
        // A folder over the cap is refused before anything runs.
        write(dir.path() + "/big.bin", QByteArray(65 * 1024 * 1024, 'x'));
        r = run(service, QStringLiteral("print('ran')"), {QStringLiteral("proj")});
        QVERIFY2(r.error.contains(QStringLiteral("--workspace-max")), qPrintable(r.error));
        QVERIFY(r.stdoutData.isEmpty());
        // The server keeps serving.
        QFile::remove(dir.path() + "/big.bin");
        r = run(service, QStringLiteral("print(open('/workspace/proj/seed.txt').read())"),
                {QStringLiteral("proj")});
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("seed\n\n"));
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    void aSessionSeesAReadOnlyWorkspaceAsTheFolderIsAtEachCall()
    {
        QTemporaryDir dir;
        makeProject(dir.path());
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               config({workspace("proj=" + dir.path())}));
        SessionManager sessions(&service, {});
        QString error;
        const QPointer<SandboxSession> session =
            startSession(sessions, {QStringLiteral("proj")}, &error);
        QVERIFY2(session, qPrintable(error));
        // What a call sees: the files, one file's words, the version the link leads to, and
        // whether it can change the files or the link.
        const QString look = QStringLiteral(R"py(
import os
root = "/workspace/proj"
print(sorted(os.path.relpath(os.path.join(d, f), root)
             for d, ds, fs in os.walk(root) for f in fs))
print(open(root + "/notes.txt").read().split())
print(os.readlink("/sandbox/.cs-workspace/proj"))
for attempt in (lambda: open(root + "/notes.txt", "a"),
                lambda: os.remove("/sandbox/.cs-workspace/proj"),
                lambda: os.symlink("/tmp", "/sandbox/.cs-workspace/other")):
    try:
        attempt()
        print("changed")
    except OSError as e:
        print("refused", type(e).__name__)
)py");
        const QStringList refused(3, QStringLiteral("refused PermissionError"));
        ExecutionResult r = call(sessions, session, look);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QStringList lines = QString::fromUtf8(r.stdoutData).split(u'\n');
        QCOMPARE(lines.value(0), QStringLiteral("['.git/config', 'data.csv', 'notes.txt', "
                                                "'old.txt', 'src/main.py']"));
        QCOMPARE(lines.value(1), QStringLiteral("['one', 'two', 'three']"));
        const QString first = lines.value(2);
        QVERIFY2(first.startsWith(QStringLiteral(".v/proj-")) && first.size() == 20,
                 qPrintable(first));
        QCOMPARE(lines.mid(3, 3), refused);
        QCOMPARE(r.workspaces.size(), 1);
        QVERIFY(r.workspaces.first().scan);
        QCOMPARE(r.workspaces.first().scan->files, 5);
        // Between two calls the user adds a file, changes one and removes one.
        write(dir.path() + "/new.txt", "new\n");
        write(dir.path() + "/notes.txt", "four five\n");
        QVERIFY(QFile::remove(dir.path() + "/old.txt"));
        r = call(sessions, session, look);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        lines = QString::fromUtf8(r.stdoutData).split(u'\n');
        QCOMPARE(lines.value(0), QStringLiteral("['.git/config', 'data.csv', 'new.txt', "
                                                "'notes.txt', 'src/main.py']"));
        QCOMPARE(lines.value(1), QStringLiteral("['four', 'five']"));
        const QString second = lines.value(2);
        QVERIFY2(second != first && second.startsWith(QStringLiteral(".v/proj-")),
                 qPrintable(second));
        QCOMPARE(lines.mid(3, 3), refused);
        // Nothing changed: the same version, not sent again.
        r = call(sessions, session, look);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(QString::fromUtf8(r.stdoutData).split(u'\n').value(2), second);
        QCOMPARE(session->calls(), 3);
        QVERIFY(sessions.close(session->id(), QStringLiteral("owner")).admitted());
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    void aFolderThatCannotGoInFailsTheCallNotTheSession()
    {
        QTemporaryDir dir;
        write(dir.path() + "/seed.txt", "seed\n");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxConfig c = config({workspace("proj=" + dir.path())});
        c.workspaceMaxBytes = 1024 * 1024;
        SandboxService service(&backend, LanguageRegistry::builtIn(), c);
        SessionManager sessions(&service, {});
        QString error;
        const QPointer<SandboxSession> session =
            startSession(sessions, {QStringLiteral("proj")}, &error);
        QVERIFY2(session, qPrintable(error));
        ExecutionResult r = call(sessions, session, QStringLiteral("x = 42"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        // The folder grows past the cap: the call fails before its program, with the sizes.
        write(dir.path() + "/big.bin", QByteArray(2 * 1024 * 1024, 'x'));
        r = call(sessions, session, QStringLiteral("print('ran')"));
        QVERIFY2(r.error.contains(QStringLiteral("--workspace-max")), qPrintable(r.error));
        QVERIFY(r.stdoutData.isEmpty());
        // The session goes on, its state kept, and sees the folder once it fits again.
        QCOMPARE(session->state(), SandboxSession::State::Idle);
        QFile::remove(dir.path() + "/big.bin");
        write(dir.path() + "/more.txt", "more\n");
        r = call(sessions, session,
                 QStringLiteral("import os\nprint(x, sorted(os.listdir('/workspace/proj')))"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("42 ['more.txt', 'seed.txt']\n"));
        // A session whose folder is over the cap from the start does not start.
        write(dir.path() + "/big.bin", QByteArray(2 * 1024 * 1024, 'x'));
        QVERIFY(!startSession(sessions, {QStringLiteral("proj")}, &error));
        QVERIFY2(error.contains(QStringLiteral("--workspace-max")), qPrintable(error));
        QVERIFY(sessions.close(session->id(), QStringLiteral("owner")).admitted());
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    void aSessionsWorkspacesPassTheAssistantsPolicy()
    {
        QTemporaryDir data;
        write(data.path() + "/facts.txt", "the sky is blue\n");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(
            &backend, LanguageRegistry::builtIn(),
            config({workspace("data=" + data.path()), workspace("proj=" + data.path() + ":rw")}));
        SessionManager sessions(&service, {});
        RunGate gate(service.config());
        RecordingApprover approver;
        gate.setApprover(&approver);
        McpServer server(ServerInfo{QStringLiteral("code-sandbox"), QStringLiteral("Code Sandbox"),
                                    QStringLiteral("9.9.9"), QString()});
        SandboxTools::registerAll(server, service, &sessions, &gate);
        auto *client = new ClientTransport;
        server.openSession(client);
        client->start();
        // A policy that lets the assistant use proj only refuses a session with data.
        AssistantPolicies policies;
        policies.fallback.workspaces = QStringList{QStringLiteral("proj")};
        gate.setPolicies(policies);
        const QJsonObject refused = client->call(
            QStringLiteral("create_session"), {{"workspaces", QJsonArray{QStringLiteral("data")}}});
        QCOMPARE(refused.value(u"isError").toBool(), true);
        QVERIFY2(client->textOf(refused).contains(QStringLiteral("the workspace data is not")),
                 qPrintable(client->textOf(refused)));
        QCOMPARE(sessions.count(), 0);
        // A policy that asks: the person sees the session's workspaces before its sandbox
        // starts, and again with each call in it.
        policies.fallback.workspaces.reset();
        policies.fallback.action = AssistantPolicy::Action::Ask;
        gate.setPolicies(policies);
        const int create = client->send(QStringLiteral("create_session"),
                                        {{"workspaces", QJsonArray{QStringLiteral("data")}}});
        QTRY_COMPARE_WITH_TIMEOUT(approver.asked.size(), 1, 10000);
        QCOMPARE(approver.asked.at(0).workspaces, QStringList{"data (read-only)"});
        QCOMPARE(sessions.count(), 0);
        approver.answer(approver.asked.at(0).id, RunApprover::Answer::AllowOnce);
        const QJsonObject created = client->resultOf(create);
        QVERIFY2(!created.value(u"isError").toBool(), qPrintable(client->textOf(created)));
        const QString id =
            created.value(u"structuredContent").toObject().value(u"session_id").toString();
        const int run = client->send(
            QStringLiteral("run_python_code"),
            {{"code", "print(open('/workspace/data/facts.txt').read())"}, {"session_id", id}});
        QTRY_COMPARE_WITH_TIMEOUT(approver.asked.size(), 2, 10000);
        QCOMPARE(approver.asked.at(1).workspaces, QStringList{"data (read-only)"});
        QCOMPARE(approver.asked.at(1).sessionId, id);
        approver.answer(approver.asked.at(1).id, RunApprover::Answer::AllowOnce);
        const QJsonObject ran = client->resultOf(run);
        QVERIFY2(client->textOf(ran).startsWith(QStringLiteral("the sky is blue")),
                 qPrintable(client->textOf(ran)));
        sessions.closeAll(QStringLiteral("the test ends"));
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    void aCopyOnWriteSessionReportsTheCumulativeChangeSet()
    {
        QTemporaryDir dir;
        makeProject(dir.path());
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               config({workspace("proj=" + dir.path() + ":rw")}));
        SessionManager sessions(&service, {});
        QString error;
        const QPointer<SandboxSession> session =
            startSession(sessions, {QStringLiteral("proj")}, &error);
        QVERIFY2(session, qPrintable(error));
        ExecutionResult r = call(sessions, session, QStringLiteral(R"py(
root = "/workspace/proj"
open(root + "/notes.txt", "a").write("four\n")
open(root + "/a.txt", "w").write("a\n")
)py"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.workspaces.size(), 1);
        QCOMPARE(kindsOf(r.workspaces.first()), QStringList({"added a.txt", "modified notes.txt"}));
        // The user edits a file the session leaves alone: the session's copy is its own, and
        // the folder's edit is no change of the session's.
        write(dir.path() + "/data.csv", "edited on the host\n");
        r = call(sessions, session, QStringLiteral(R"py(
import os
os.remove("/workspace/proj/old.txt")
open("/workspace/proj/b.txt", "w").write("b\n")
)py"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(
            kindsOf(r.workspaces.first()),
            QStringList({"added a.txt", "added b.txt", "deleted old.txt", "modified notes.txt"}));
        const WorkspaceChange *notes = change(*r.workspaces.first().changes, "notes.txt");
        QVERIFY(notes && notes->diff.contains(QStringLiteral("+four")));
        QVERIFY(r.workspaces.first().summary().contains(QStringLiteral("not applied")));
        // A call that changes nothing more: still all of it.
        r = call(sessions, session, QStringLiteral("print('nothing')"));
        QCOMPARE(
            kindsOf(r.workspaces.first()),
            QStringList({"added a.txt", "added b.txt", "deleted old.txt", "modified notes.txt"}));
        // The folder is as the user left it.
        QCOMPARE(read(dir.path() + "/notes.txt"), QByteArray("one\ntwo\nthree\n"));
        QCOMPARE(read(dir.path() + "/old.txt"), QByteArray("to be deleted\n"));
        QCOMPARE(read(dir.path() + "/data.csv"), QByteArray("edited on the host\n"));
        QVERIFY(!QFileInfo::exists(dir.path() + "/a.txt"));
        QVERIFY(!QFileInfo::exists(dir.path() + "/b.txt"));
        QVERIFY(sessions.close(session->id(), QStringLiteral("owner")).admitted());
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    void applyAlwaysMovesTheSessionsBaseline()
    {
        QTemporaryDir dir;
        makeProject(dir.path());
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        Workspace w = workspace("proj=" + dir.path() + ":rw");
        w.apply = Workspace::Apply::Always;
        SandboxService service(&backend, LanguageRegistry::builtIn(), config({w}));
        SessionManager sessions(&service, {});
        QString error;
        const QPointer<SandboxSession> session =
            startSession(sessions, {QStringLiteral("proj")}, &error);
        QVERIFY2(session, qPrintable(error));
        ExecutionResult r = call(sessions, session, QStringLiteral(R"py(
root = "/workspace/proj"
open(root + "/notes.txt", "a").write("from the session\n")
open(root + "/a.txt", "w").write("a\n")
)py"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(kindsOf(r.workspaces.first()), QStringList({"added a.txt", "modified notes.txt"}));
        QVERIFY(r.workspaces.first().applied);
        QCOMPARE(r.workspaces.first().applied->applied.size(), 2);
        // Meanwhile the user edits a file the session leaves alone, and adds one.
        write(dir.path() + "/data.csv", "edited on the host\n");
        write(dir.path() + "/host.txt", "host\n");
        // The next call reports only its own change: what was applied is the baseline now, and
        // the user's files are neither changes nor deletions of the session's.
        r = call(sessions, session,
                 QStringLiteral("open('/workspace/proj/b.txt', 'w').write('b\\n')"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(kindsOf(r.workspaces.first()), QStringList({"added b.txt"}));
        QCOMPARE(r.workspaces.first().applied->applied, QStringList({"b.txt"}));
        QCOMPARE(read(dir.path() + "/notes.txt"),
                 QByteArray("one\ntwo\nthree\nfrom the session\n"));
        QCOMPARE(read(dir.path() + "/a.txt"), QByteArray("a\n"));
        QCOMPARE(read(dir.path() + "/b.txt"), QByteArray("b\n"));
        QCOMPARE(read(dir.path() + "/data.csv"), QByteArray("edited on the host\n"));
        QCOMPARE(read(dir.path() + "/host.txt"), QByteArray("host\n"));
        // A file applied before, changed again: no conflict.
        r = call(sessions, session,
                 QStringLiteral("open('/workspace/proj/a.txt', 'w').write('a2\\n')"));
        QCOMPARE(kindsOf(r.workspaces.first()), QStringList({"modified a.txt"}));
        QCOMPARE(r.workspaces.first().applied->conflicts, QStringList());
        QCOMPARE(read(dir.path() + "/a.txt"), QByteArray("a2\n"));
        // A file the user changed that the session changes too: a conflict, left alone.
        r = call(sessions, session,
                 QStringLiteral("open('/workspace/proj/data.csv', 'a').write('7,8\\n')"));
        QCOMPARE(kindsOf(r.workspaces.first()), QStringList({"modified data.csv"}));
        QVERIFY2(r.workspaces.first().applied->conflicts.join(u' ').contains("data.csv"),
                 qPrintable(r.workspaces.first().applied->conflicts.join(u' ')));
        QCOMPARE(read(dir.path() + "/data.csv"), QByteArray("edited on the host\n"));
        QVERIFY(sessions.close(session->id(), QStringLiteral("owner")).admitted());
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    void aCallInASessionCannotNameOtherWorkspaces()
    {
        QTemporaryDir data;
        QTemporaryDir proj;
        write(data.path() + "/facts.txt", "the sky is blue\n");
        write(proj.path() + "/README.md", "# project\n");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(
            &backend, LanguageRegistry::builtIn(),
            config({workspace("data=" + data.path()), workspace("proj=" + proj.path() + ":rw")}));
        SessionManager sessions(&service, {});
        McpServer server(ServerInfo{QStringLiteral("code-sandbox"), QStringLiteral("Code Sandbox"),
                                    QStringLiteral("9.9.9"), QString()});
        SandboxTools::registerAll(server, service, &sessions);
        auto *client = new ClientTransport;
        server.openSession(client);
        client->start();
        const QJsonObject created = client->call(
            QStringLiteral("create_session"),
            {{"language", "python"}, {"workspaces", QJsonArray{QStringLiteral("data")}}});
        QVERIFY2(!created.value(u"isError").toBool(), qPrintable(client->textOf(created)));
        const QString id =
            created.value(u"structuredContent").toObject().value(u"session_id").toString();
        QVERIFY2(client->textOf(created).contains(QStringLiteral("/workspace/data (read-only)")),
                 qPrintable(client->textOf(created)));
        const auto python = [&](const QJsonArray &workspaces) {
            QJsonObject arguments{{"code", "print(open('/workspace/data/facts.txt').read())"},
                                  {"session_id", id}};
            if (!workspaces.isEmpty())
                arguments.insert(QStringLiteral("workspaces"), workspaces);
            return client->call(QStringLiteral("run_python_code"), arguments);
        };
        const QJsonObject other = python({QStringLiteral("proj")});
        QCOMPARE(other.value(u"isError").toBool(), true);
        QVERIFY2(client->textOf(other).contains(
                     QStringLiteral("a session's workspaces are chosen when it is created")),
                 qPrintable(client->textOf(other)));
        // Its own, named or not, it sees.
        for (const QJsonArray &named : {QJsonArray{QStringLiteral("data")}, QJsonArray()}) {
            const QJsonObject own = python(named);
            QVERIFY2(!own.value(u"isError").toBool(), qPrintable(client->textOf(own)));
            QVERIFY2(client->textOf(own).startsWith(QStringLiteral("the sky is blue")),
                     qPrintable(client->textOf(own)));
        }
        // list_sessions names them, never their folders.
        const QJsonObject listed = client->call(QStringLiteral("list_sessions"), {});
        const QJsonArray all =
            listed.value(u"structuredContent").toObject().value(u"sessions").toArray();
        QCOMPARE(all.size(), 1);
        QCOMPARE(all.first().toObject().value(u"workspaces").toArray(),
                 QJsonArray({QJsonObject{
                     {"name", "data"}, {"mode", "read-only"}, {"path", "/workspace/data"}}}));
        const QByteArray everything = QJsonDocument(listed).toJson();
        QVERIFY(!everything.contains(data.path().toUtf8()));
        QVERIFY(client->textOf(listed).contains(QStringLiteral("workspaces: /workspace/data")));
        sessions.closeAll(QStringLiteral("the test ends"));
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }
};

QTEST_GUILESS_MAIN(TestWorkspaces)
#include "tst_workspaces.moc"
