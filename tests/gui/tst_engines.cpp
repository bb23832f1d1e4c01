// The window with several engines, against the real one: the status bar names each engine with
// its state and load, one that does not answer shows as down with the reason in its tooltip, and
// a run's details name the engine that ran it. With one engine the window looks as it always did.
//
// The two engines that answer are the local engine reached at two addresses (its socket, and a
// link to it in a temporary folder): two connections, two warm pools, two health checks, as with
// two daemons. The one that does not answer is a socket path where nothing listens.

#include "../integration/leftoversweeper.h"
#include "appcontroller.h"
#include "dockerbackend.h"
#include "engineclient.h"
#include "journal.h"
#include "languageregistry.h"
#include "mainwindow.h"
#include "rundetailspane.h"
#include "runlistmodel.h"
#include "sandboxconfig.h"
#include "sandboxservice.h"
#include "sandboxsite.h"

#include <QFile>
#include <QFormLayout>
#include <QLabel>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocument>
#include <QUuid>
#include <memory>
#include <vector>

namespace {
constexpr int kRunMs = 90000; // a cold image start on a loaded CI machine
const QString kDockerSocket = QStringLiteral("/var/run/docker.sock");

// A window over a sandbox with an engine at each of `sockets`.
struct Desk
{
    Desk(const QStringList &sockets, const QString &instance)
    {
        QList<SandboxBackend *> backends;
        for (const QString &socket : sockets) {
            engines.push_back(std::make_unique<EngineClient>(socket));
            engines.back()->setRequestTimeout(30000);
            backendList.push_back(std::make_unique<DockerBackend>(engines.back().get()));
            backends.append(backendList.back().get());
        }
        SandboxConfig config;
        config.instanceId = instance;
        config.poolSize = 0;
        sandbox = std::make_unique<SandboxService>(backends, LanguageRegistry::builtIn(), config);
        journal = std::make_unique<Journal>(sandbox.get());
        controller =
            std::make_unique<AppController>(sandbox.get(), journal.get(), nullptr, nullptr);
        AppSettings settings;
        settings.keepRunningInBackground = true;
        window = std::make_unique<MainWindow>(controller.get(), settings);
        window->show();
    }
    ~Desk()
    {
        window.reset();
        controller.reset();
        journal.reset();
        QSignalSpy done(sandbox.get(), &SandboxService::shutdownFinished);
        sandbox->shutdown();
        done.wait(20000);
    }

    QLabel *engineLabel() const
    {
        return window->statusBar()->findChild<QLabel *>(QStringLiteral("engineStatus"));
    }
    // The status bar's text as a person reads it (without the markup).
    QString engineText() const
    {
        QTextDocument doc;
        doc.setHtml(engineLabel()->text());
        return doc.toPlainText();
    }
    QString engineToolTip() const
    {
        QTextDocument doc;
        doc.setHtml(engineLabel()->toolTip());
        return doc.toPlainText();
    }
    // Runs a program by hand and waits for its end; its id.
    QString run(const QString &code) const
    {
        const QString id = controller->runManual(QStringLiteral("python"), code, 60);
        if (!QTest::qWaitFor(
                [&] {
                    const RunRecord *r = controller->model()->run(id);
                    return r && r->isFinished();
                },
                kRunMs))
            qWarning("the run did not finish");
        return id;
    }
    // The value of a row of the details tab, "" when it has no such row.
    QString detail(const QString &label) const
    {
        auto *form = window->details()->findChild<QFormLayout *>();
        for (int row = 0; form && row < form->rowCount(); ++row) {
            auto *name =
                qobject_cast<QLabel *>(form->itemAt(row, QFormLayout::LabelRole)
                                           ? form->itemAt(row, QFormLayout::LabelRole)->widget()
                                           : nullptr);
            auto *value =
                qobject_cast<QLabel *>(form->itemAt(row, QFormLayout::FieldRole)
                                           ? form->itemAt(row, QFormLayout::FieldRole)->widget()
                                           : nullptr);
            if (name && value && name->text() == label)
                return value->text();
        }
        return {};
    }

    std::vector<std::unique_ptr<EngineClient>> engines;
    std::vector<std::unique_ptr<DockerBackend>> backendList;
    std::unique_ptr<SandboxService> sandbox;
    std::unique_ptr<Journal> journal;
    std::unique_ptr<AppController> controller;
    std::unique_ptr<MainWindow> window;
};
} // namespace

class EnginesTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void statusBarShowsEachEngine();
    void runDetailsNameTheEngine();
    void oneEngineLooksAsBefore();
    void cleanup();

private:
    QString newInstance()
    {
        m_instances.append(QStringLiteral("gui-engines-") +
                           QUuid::createUuid().toString(QUuid::WithoutBraces));
        return m_instances.last();
    }

    QTemporaryDir m_dir;
    QString m_link; // the local engine at a second address
    QString m_gone; // nothing listens there
    QStringList m_instances;
};

void EnginesTest::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_link = m_dir.filePath(QStringLiteral("docker.sock"));
    QVERIFY(QFile::link(kDockerSocket, m_link));
    m_gone = m_dir.filePath(QStringLiteral("gone.sock"));
}

void EnginesTest::statusBarShowsEachEngine()
{
    Desk desk({kDockerSocket, m_link, m_gone}, newInstance());
    QVERIFY(desk.engineLabel());
    // The sandbox asks each engine within seconds; the window follows.
    QTRY_VERIFY_WITH_TIMEOUT(desk.engineText().contains(u"down") &&
                                 desk.engineText().count(QStringLiteral(" 0/")) == 2,
                             20000);
    const QString text = desk.engineText();
    // Each engine with its address and state: the two that answer with their load (none of
    // this window's runs yet, of how many they run well), the third down.
    QVERIFY2(text.startsWith(QStringLiteral("Engines: ")), qPrintable(text));
    const QString capacity = QString::number(desk.sandbox->sites().at(0)->capacity());
    QVERIFY2(text.contains(QStringLiteral("● %1 0/%2").arg(kDockerSocket, capacity)),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("● %1 0/%2").arg(m_link, capacity)), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("● %1 down").arg(m_gone)), qPrintable(text));
    // One line, not one per engine.
    QVERIFY(!text.contains(u'\n'));

    // The tooltip has the rest: what each engine is, and why the third does not answer.
    const QString tip = desk.engineToolTip();
    QVERIFY2(tip.contains(QStringLiteral("%1 — up").arg(kDockerSocket)), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("%1 — up").arg(m_link)), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("%1 — down").arg(m_gone)), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Docker Engine ")) || tip.contains(u"Podman"),
             qPrintable(tip));
    // The engine's own words for why it cannot be reached (the socket is not there).
    QVERIFY2(tip.contains(desk.sandbox->sites().at(2)->error()), qPrintable(tip));
    QVERIFY2(!desk.sandbox->sites().at(2)->error().isEmpty(), qPrintable(tip));
}

void EnginesTest::runDetailsNameTheEngine()
{
    Desk desk({kDockerSocket, m_link}, newInstance());
    QTRY_VERIFY_WITH_TIMEOUT(desk.engineText().count(QStringLiteral(" 0/")) == 2, 20000);
    // The default runtime comes with the engine's /info, which answers after the capacity is
    // shown: a run placed before it names none, so this waits for both engines to have said.
    QTRY_VERIFY_WITH_TIMEOUT(
        !desk.sandbox->sites().at(0)->backend()->defaultRuntime().isEmpty() &&
            !desk.sandbox->sites().at(1)->backend()->defaultRuntime().isEmpty(),
        20000);
    const QString id = desk.run(QStringLiteral("print(6 * 7)"));
    const RunRecord *run = desk.controller->model()->run(id);
    QVERIFY(run);
    QCOMPARE(run->status, RunRecord::Status::Ok);
    QVERIFY2(run->engine == kDockerSocket || run->engine == m_link, qPrintable(run->engine));

    desk.window->selectRun(id);
    QCOMPARE(desk.window->details()->runId(), id);
    QCOMPARE(desk.detail(QStringLiteral("Engine")), run->engine);
    // And the container runtime it had: the engine's default (runc as Docker ships it), which
    // the window learnt from the engine's /info.
    QVERIFY2(!run->runtime.isEmpty(), "the run names no runtime");
    QCOMPARE(desk.detail(QStringLiteral("Runtime")), run->runtime);
    bool subtitle = false;
    for (const QLabel *label : desk.window->details()->findChildren<QLabel *>())
        subtitle |= label->text().contains(QStringLiteral("on %1").arg(run->engine));
    QVERIFY(subtitle);
    // The engine that ran it counts it.
    QTRY_VERIFY(desk.engineToolTip().contains(QStringLiteral("1 run placed here")));
}

void EnginesTest::oneEngineLooksAsBefore()
{
    Desk desk({kDockerSocket}, newInstance());
    QTRY_VERIFY_WITH_TIMEOUT(!desk.engineText().contains(u"asking"), 20000);
    const QString text = desk.engineText();
    // "● Docker Engine 20.10.24 (API 1.41) · /var/run/docker.sock", as before several engines.
    QVERIFY2(text.startsWith(QStringLiteral("● Docker Engine ")) ||
                 text.startsWith(QStringLiteral("● Podman ")),
             qPrintable(text));
    QVERIFY2(text.endsWith(QStringLiteral(" · ") + kDockerSocket), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral(" (API ")), qPrintable(text));
    QVERIFY2(!text.contains(u"Engines"), qPrintable(text));

    const QString id = desk.run(QStringLiteral("print(1)"));
    QCOMPARE(desk.controller->model()->run(id)->engine, QString());
    desk.window->selectRun(id);
    QCOMPARE(desk.detail(QStringLiteral("Engine")), QString());
    QVERIFY(!desk.detail(QStringLiteral("Container")).isEmpty());
}

void EnginesTest::cleanup()
{
    LeftoverSweeper::sweepAfterFailure(kDockerSocket, m_instances);
}

QTEST_MAIN(EnginesTest)
#include "tst_engines.moc"
