// For tests/gui/desktop.sh: the end of a run whose copy-on-write workspace asks what to do with
// its changes (apply "ask"), told to the window over the monitor socket as a headless instance
// tells it. The command line's --workspace has no apply setting, so no server started by the
// script can end a run this way; the run is made as the server makes it (the folder scanned, the
// sandbox's copy with the program's changes, the change set computed from it), and what the
// window does with it is all real: the socket, the record, the dialog, Apply.
//
//   gui_workspacepublisher FOLDER CLIENT
//
// Exits 0 once the window has the run, 1 when no window was reached within 30 s.
#include "../unit/workspacefixture.h"
#include "historystore.h"
#include "monitorpublisher.h"
#include "monitorsocket.h"

#include <QCoreApplication>
#include <QTimer>
#include <QUuid>
#include <cstdio>
#include <unistd.h>

namespace {
RunRecord askingRun(const QString &folder, const QString &client, const QString &instance)
{
    ExecutionResult result;
    result.exitCode = 0;
    result.durationMs = 1840;
    result.stdoutData = "cleaned 4 rows, 1 duplicate dropped\nwrote report.md\n";
    result.workspaces = {changedWorkspace(
        QStringLiteral("sales"), folder, Workspace::Apply::Ask,
        {{QStringLiteral("clean.py"),
          "import csv\n\nrows = list(csv.DictReader(open('q3.csv')))\nseen = set()\nout = []\n"
          "for r in rows:\n    key = (r['region'], r['month'])\n    if key in seen:\n"
          "        continue\n    seen.add(key)\n    out.append(r)\nprint(len(out))\n"},
         {QStringLiteral("q3.csv"),
          "region,month,revenue\nnorth,jul,1200\nsouth,jul,950\nnorth,aug,1310\nsouth,aug,990\n"},
         {QStringLiteral("report.md"), "# Q3\n\nRevenue grew 9% from July to August.\n"},
         {QStringLiteral("notes.txt"), QByteArray()}})};
    RunRecord r;
    r.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    r.instanceId = instance;
    r.instancePid = ::getpid();
    r.source = client;
    r.tool = QStringLiteral("run_python_code");
    r.language = QStringLiteral("python");
    r.code = QStringLiteral("import subprocess\nsubprocess.run(['python', 'clean.py'], "
                            "cwd='/workspace/sales')\n");
    r.createdAt = QDateTime::currentDateTimeUtc().addMSecs(-2000);
    r.timeoutSec = 30;
    r.memoryBytes = 512LL * 1024 * 1024;
    r.cpus = 1;
    r.image = QStringLiteral("code-sandbox/python:latest");
    r.applyResult(result);
    r.appendOutput(1, result.stdoutData);
    return r;
}
} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc != 3) {
        std::fprintf(stderr, "usage: gui_workspacepublisher FOLDER CLIENT\n");
        return 2;
    }
    const QString instance = QUuid::createUuid().toString(QUuid::WithoutBraces);
    const RunRecord run =
        askingRun(QString::fromLocal8Bit(argv[1]), QString::fromLocal8Bit(argv[2]), instance);
    // Kept in the history first, as an instance's journal keeps it, so that a decision in the
    // window has a row to go to.
    HistoryStore history;
    if (history.open(HistoryStore::defaultPath())) {
        history.save(run);
        history.waitForIdle();
    }
    MonitorPublisher publisher(MonitorSocket::path(), instance, QStringLiteral("stdio"));
    bool sent = false;
    const auto sendRun = [&] {
        if (sent || !publisher.isConnected())
            return;
        sent = true;
        RunRecord created = run;
        created.status = RunRecord::Status::Running;
        created.workspaces = QJsonArray();
        created.output.clear();
        publisher.send({JournalEvent::Type::Created, created, 1, {}, {}});
        publisher.send({JournalEvent::Type::Finished, run, 1, {}, {}});
        std::printf("sent run %s\n", qPrintable(run.id));
        std::fflush(stdout);
        // Time for the lines to leave before the connection goes.
        QTimer::singleShot(1500, &app, [] { QCoreApplication::exit(0); });
    };
    // A local socket may connect within the constructor already.
    QObject::connect(&publisher, &MonitorPublisher::connectedChanged, &app, sendRun);
    sendRun();
    QTimer::singleShot(30000, &app, [] {
        std::fprintf(stderr, "gui_workspacepublisher: no window reached\n");
        QCoreApplication::exit(1);
    });
    return app.exec();
}
