// WorkspaceTransfer's pure parts for sessions: the name of a read-only workspace's version, the
// check of the link an engine left after a new version went in, and the copy-on-write baseline
// moved by what was applied (real files in a temporary folder; no engine: the integration suite
// runs the rest against Docker and Podman).
#include "tararchive.h"
#include "workspaceapplier.h"
#include "workspacechangeset.h"
#include "workspacescanner.h"
#include "workspacetransfer.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

namespace {
void write(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    f.write(content);
}

QByteArray read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

TarArchive::Entry entry(const QString &path, TarArchive::Entry::Type type,
                        const QString &target = QString())
{
    TarArchive::Entry e;
    e.path = path;
    e.type = type;
    e.isDirectory = type == TarArchive::Entry::Type::Directory;
    e.linkTarget = target;
    return e;
}

// The archive of a sandbox's copy of workspace "data" holding `files` (path → content).
QByteArray copyOf(const QList<QPair<QString, QByteArray>> &files)
{
    QList<TarArchive::Entry> entries{
        entry(QStringLiteral("data"), TarArchive::Entry::Type::Directory)};
    for (const auto &[path, content] : files) {
        TarArchive::Entry e = entry(QStringLiteral("data/") + path, TarArchive::Entry::Type::File);
        e.data = content;
        entries.append(e);
    }
    return TarArchive::pack(entries);
}

QStringList kindsOf(const WorkspaceChangeSet &set)
{
    QStringList lines;
    for (const WorkspaceChange &c : set.changes) {
        static const char *const names[] = {"added", "modified", "deleted", "renamed"};
        lines.append(QLatin1String(names[int(c.kind)]) + u' ' + c.path);
    }
    return lines;
}
} // namespace

class tst_WorkspaceTransfer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void versionName();
    void linkProblem();
    void rebaseKeepsWhatWasNotApplied();
};

void tst_WorkspaceTransfer::versionName()
{
    const QByteArray hash = QByteArray("0123456789abcdef").repeated(4);
    QCOMPARE(WorkspaceTransfer::versionName(QStringLiteral("data"), hash),
             QStringLiteral("data-0123456789ab"));
}

void tst_WorkspaceTransfer::linkProblem()
{
    using Type = TarArchive::Entry::Type;
    const QString version = QStringLiteral("data-0123456789ab");
    const auto problem = [&](const QList<TarArchive::Entry> &entries) {
        return WorkspaceTransfer::linkProblem(TarArchive::pack(entries), QStringLiteral("data"),
                                              version);
    };
    // Docker: the link itself, to the new version.
    QCOMPARE(problem({entry(QStringLiteral("data"), Type::Symlink, ".v/" + version)}), QString());
    // An engine that kept the old link.
    QCOMPARE(problem({entry(QStringLiteral("data"), Type::Symlink, ".v/data-aaaaaaaaaaaa")}),
             QStringLiteral("data links to .v/data-aaaaaaaaaaaa, not .v/data-0123456789ab"));
    // Podman resolves the link and answers with the folder: nothing to tell from it.
    QCOMPARE(problem({entry(QStringLiteral("data"), Type::Directory),
                      entry(QStringLiteral("data/a.txt"), Type::File)}),
             QString());
    QCOMPARE(problem({entry(QStringLiteral("data"), Type::File)}),
             QStringLiteral("data is not a link"));
    QCOMPARE(WorkspaceTransfer::linkProblem(QByteArray(), QStringLiteral("data"), version),
             QStringLiteral("its archive is empty or damaged"));
    QCOMPARE(WorkspaceTransfer::linkProblem("not a tar", QStringLiteral("data"), version),
             QStringLiteral("its archive is empty or damaged"));
}

void tst_WorkspaceTransfer::rebaseKeepsWhatWasNotApplied()
{
    QTemporaryDir dir;
    write(dir.filePath("notes.txt"), "one\n");
    write(dir.filePath("old.txt"), "old\n");
    write(dir.filePath("data.csv"), "a,b\n");
    write(dir.filePath("both.txt"), "both\n");
    Workspace ws;
    ws.name = QStringLiteral("data");
    ws.path = QFileInfo(dir.path()).canonicalFilePath();
    ws.mode = Workspace::Mode::CopyOnWrite;
    WorkspaceScanner scanner;
    const WorkspaceScan before = scanner.scan(ws, -1);
    QCOMPARE(before.error, QString());
    // The session's copy: notes.txt changed, old.txt gone, new/file.txt made, both.txt changed;
    // data.csv as it was.
    const QByteArray session = copyOf({{"both.txt", "both, in the session\n"},
                                       {"data.csv", "a,b\n"},
                                       {"new/file.txt", "new\n"},
                                       {"notes.txt", "one\ntwo\n"}});
    // Meanwhile the user edits data.csv and both.txt in the folder, and adds host.txt.
    write(dir.filePath("data.csv"), "edited\n");
    write(dir.filePath("both.txt"), "both, on the host\n");
    write(dir.filePath("host.txt"), "host\n");
    QString error;
    const WorkspaceChangeSet changes =
        WorkspaceChangeSet::compute(before, session, 1 << 20, 1 << 20, 1000, &error);
    QCOMPARE(error, QString());
    QCOMPARE(kindsOf(changes), (QStringList{"modified both.txt", "added new/file.txt",
                                            "modified notes.txt", "deleted old.txt"}));
    const WorkspaceApplyResult applied = WorkspaceApplier::apply(ws, before, changes);
    QCOMPARE(applied.applied, (QStringList{"new/file.txt", "notes.txt", "old.txt"}));
    QCOMPARE(applied.conflicts.size(), 1); // both.txt
    const WorkspaceScan now = scanner.scan(ws, -1);
    const WorkspaceScan rebased = WorkspaceTransfer::rebase(before, changes, applied, now);
    // What was applied is as the folder has it now; the rest as the session started.
    QCOMPARE(rebased.find(QStringLiteral("notes.txt"))->mtimeMs,
             now.find(QStringLiteral("notes.txt"))->mtimeMs);
    QCOMPARE(rebased.find(QStringLiteral("notes.txt"))->sha256,
             now.find(QStringLiteral("notes.txt"))->sha256);
    QVERIFY(rebased.find(QStringLiteral("new")));
    QVERIFY(rebased.find(QStringLiteral("new/file.txt")));
    QVERIFY(!rebased.find(QStringLiteral("old.txt")));
    QCOMPARE(rebased.find(QStringLiteral("data.csv"))->sha256,
             before.find(QStringLiteral("data.csv"))->sha256);
    QCOMPARE(rebased.find(QStringLiteral("both.txt"))->sha256,
             before.find(QStringLiteral("both.txt"))->sha256);
    QVERIFY(!rebased.find(QStringLiteral("host.txt")));
    QCOMPARE(rebased.files, 4);
    QCOMPARE(rebased.contentHash, QByteArray());
    for (qsizetype i = 1; i < rebased.entries.size(); ++i)
        QVERIFY(rebased.entries.at(i - 1).path < rebased.entries.at(i).path);
    // The same copy against the new baseline: only the conflict is left, and applying it again
    // is still one; the user's edits are no change and stay.
    const WorkspaceChangeSet again =
        WorkspaceChangeSet::compute(rebased, session, 1 << 20, 1 << 20, 1000, &error);
    QCOMPARE(kindsOf(again), QStringList{"modified both.txt"});
    const WorkspaceApplyResult second = WorkspaceApplier::apply(ws, rebased, again);
    QCOMPARE(second.applied, QStringList());
    QCOMPARE(second.conflicts.size(), 1);
    QCOMPARE(read(dir.filePath("data.csv")), QByteArray("edited\n"));
    QCOMPARE(read(dir.filePath("both.txt")), QByteArray("both, on the host\n"));
    QCOMPARE(read(dir.filePath("host.txt")), QByteArray("host\n"));
    // The session changes an applied file again: no conflict.
    const QByteArray later = copyOf({{"both.txt", "both, in the session\n"},
                                     {"data.csv", "a,b\n"},
                                     {"new/file.txt", "newer\n"},
                                     {"notes.txt", "one\ntwo\n"}});
    const WorkspaceChangeSet third =
        WorkspaceChangeSet::compute(rebased, later, 1 << 20, 1 << 20, 1000, &error);
    QCOMPARE(kindsOf(third), (QStringList{"modified both.txt", "modified new/file.txt"}));
    const WorkspaceApplyResult written = WorkspaceApplier::apply(ws, rebased, third);
    QCOMPARE(written.applied, QStringList{"new/file.txt"});
    QCOMPARE(read(dir.filePath("new/file.txt")), QByteArray("newer\n"));
}

QTEST_GUILESS_MAIN(tst_WorkspaceTransfer)
#include "tst_workspacetransfer.moc"
