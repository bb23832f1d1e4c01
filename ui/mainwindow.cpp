#include "mainwindow.h"

#include "appcontroller.h"
#include "approvalprompter.h"
#include "connectassistantdialog.h"
#include "consentprompter.h"
#include "credentialstore.h"
#include "monitorserver.h"
#include "overviewstrip.h"
#include "rowheightdelegate.h"
#include "rundetailspane.h"
#include "runeditor.h"
#include "runfiltermodel.h"
#include "runlistmodel.h"
#include "sessiontreemodel.h"
#include "settingsdialog.h"
#include "snapshotactions.h"
#include "statusicons.h"
#include "uilog.h"
#include "workspaceprompter.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSplitter>
#include <QStatusBar>
#include <QSystemTrayIcon>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <memory>

namespace {
// What "Allow for this assistant" did, for the person who clicked it.
QString allowHostOutcome(AssistantPolicies::HostAdded added, const QString &client,
                         const QString &pattern)
{
    using H = AssistantPolicies::HostAdded;
    switch (added) {
    case H::Added:
        return QStringLiteral("%1 is on %2's Hosts now: its next runs may reach it (within the "
                              "server's --egress list).")
            .arg(pattern, client);
    case H::AlreadyListed:
        return QStringLiteral("%1 is on %2's Hosts already: the call's own network, or the "
                              "server's --egress list, left it out of this run.")
            .arg(pattern, client);
    case H::ServerDecides:
        return QStringLiteral("%2's policy has no Hosts of its own (or no network): the "
                              "server's --egress list or the call refused %1. Add it to the "
                              "server's --egress, or give %2 Hosts in Settings → Assistants.")
            .arg(pattern, client);
    case H::NoName:
        return QStringLiteral("This assistant gave no name: only the default policy matches "
                              "it, which is every assistant's.");
    case H::NotAPattern:
        return QStringLiteral("%1 is not a host pattern.").arg(pattern);
    }
    return QString();
}
} // namespace

MainWindow::MainWindow(AppController *controller, const AppSettings &settings, QWidget *parent)
    : QMainWindow(parent), m_controller(controller), m_settings(settings),
      m_sessions(new SessionTreeModel(controller->model(), this)),
      m_filter(new RunFilterModel(this))
{
    setWindowTitle(QStringLiteral("Code Sandbox"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/code-sandbox.png")));
    m_filter->setSourceModel(m_sessions);
    // Before the menus, which have its Import.
    m_snapshotActions = new SnapshotActions(controller->snapshots(), m_sessions, this);
    connect(m_snapshotActions, &SnapshotActions::forkListed, this, &MainWindow::selectSession);
    buildUi();
    buildTray();
    // Runs waiting for approval, from this window's endpoint and from headless instances.
    m_approvals = new ApprovalPrompter(controller, this, m_tray);
    // Assistants signing in to this window's endpoint (setSignIn) or a headless instance's.
    watchSignIns();
    // Runs whose copy-on-write workspace asks what to do with its changes when it ends.
    m_workspacePrompter = new WorkspacePrompter(controller->workspaces(), this, m_tray);

    RunListModel *model = controller->model();
    m_details->setModel(model);
    m_details->setWorkspaceDecisions(controller->workspaces());
    // "Always allow" saved new policies: the next Settings dialog starts from them.
    connect(controller, &AppController::policiesChanged, this,
            [this](const AssistantPolicies &policies) { m_settings.policies = policies; });
    connect(model, &RunListModel::runChanged, this, &MainWindow::onRunChanged);
    connect(model, &RunListModel::runChanged, this, &MainWindow::updateStopAction);
    connect(model, &RunListModel::outputAppended, m_details, &RunDetailsPane::appendOutput);
    connect(m_details, &RunDetailsPane::allowHostRequested, this,
            [this](const QString &client, const QString &pattern) {
                m_details->setAllowHostOutcome(
                    allowHostOutcome(m_controller->allowHost(client, pattern), client, pattern));
            });
    connect(m_filter, &QAbstractItemModel::rowsInserted, this, &MainWindow::onRowsInserted);
    connect(m_filter, &QAbstractItemModel::modelReset, this, [this] {
        if (!m_details->runId().isEmpty())
            selectRun(m_details->runId());
    });
    connect(controller, &AppController::manualRunningChanged, m_editor, &RunEditor::setRunning);
    connect(controller, &AppController::enginesChanged, this, &MainWindow::onEngines);
    connect(controller, &AppController::serverStatusChanged, this, &MainWindow::onServerStatus);
    connect(controller, &AppController::imagesChanged, m_editor,
            [this] { m_editor->setImageNotes(m_controller->imageNotes()); });
    connect(m_editor, &RunEditor::runRequested, this,
            [this](const QString &language, const QString &code, int timeoutSec) {
                const QString id = m_controller->runManual(language, code, timeoutSec);
                if (!id.isEmpty())
                    selectRun(id);
            });
    connect(m_editor, &RunEditor::stopRequested, controller, &AppController::stopManual);

    m_editor->setLanguages(controller->languages());
    m_editor->setTimeoutSec(controller->defaultTimeoutSec());
    onEngines(controller->engines());
    onServerStatus(controller->serverStatus());
    controller->refreshEngine();
    resize(1280, 820);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildUi()
{
    buildMenus();
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("mainSplitter"));
    split->addWidget(buildRunsList());
    split->addWidget(buildRunPane());
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({580, 700});
    setCentralWidget(split);
    buildStatusBar();
}

// Menus and toolbar.
void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(QStringLiteral("&File"));
    QAction *newRun =
        file->addAction(QStringLiteral("&New run"), this, [this] { m_editor->focusEditor(); });
    newRun->setShortcut(QKeySequence::New);
    QAction *settings =
        file->addAction(QStringLiteral("&Settings…"), this, &MainWindow::openSettings);
    settings->setShortcut(QKeySequence::Preferences);
    file->addSeparator();
    file->addAction(m_snapshotActions->importAction());
    file->addSeparator();
    QAction *close = file->addAction(QStringLiteral("&Close window"), this, &QWidget::close);
    close->setShortcut(QKeySequence::Close);
    QAction *quit = file->addAction(QStringLiteral("&Quit"), this, &MainWindow::quitRequested);
    quit->setShortcut(QKeySequence::Quit);
    // The selected run: its Stop action is made here and shown in the toolbar and the list too.
    QMenu *runMenu = menuBar()->addMenu(QStringLiteral("&Run"));
    m_stopAction =
        new QAction(style()->standardIcon(QStyle::SP_MediaStop), QStringLiteral("&Stop run"), this);
    m_stopAction->setObjectName(QStringLiteral("stopRunAction"));
    m_stopAction->setToolTip(QStringLiteral("Stop the selected run, whoever started it (Delete); "
                                            "its assistant is told it was stopped here"));
    m_stopAction->setEnabled(false);
    connect(m_stopAction, &QAction::triggered, this, &MainWindow::stopSelected);
    runMenu->addAction(m_stopAction);
    QMenu *help = menuBar()->addMenu(QStringLiteral("&Help"));
    QAction *connectAction = help->addAction(QStringLiteral("&Connect an assistant…"), this,
                                             &MainWindow::openConnectDialog);
    help->addAction(QStringLiteral("&About Code Sandbox"), this, [this] {
        QMessageBox::about(
            this, QStringLiteral("About Code Sandbox"),
            QStringLiteral("<h3>Code Sandbox %1</h3><p>Runs code from AI assistants in hardened, "
                           "single-use containers and shows you every run.</p>"
                           "<p>Licensed under the Apache License 2.0.</p>")
                .arg(QApplication::applicationVersion()));
    });

    QToolBar *toolbar = addToolBar(QStringLiteral("Main"));
    toolbar->setObjectName(QStringLiteral("mainToolbar"));
    toolbar->setMovable(false);
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    newRun->setIcon(style()->standardIcon(QStyle::SP_FileIcon));
    connectAction->setIcon(style()->standardIcon(QStyle::SP_ComputerIcon));
    settings->setIcon(style()->standardIcon(QStyle::SP_FileDialogDetailedView));
    toolbar->addAction(newRun);
    toolbar->addAction(m_stopAction);
    toolbar->addAction(connectAction);
    toolbar->addAction(settings);
}

// The runs list with its filters.
QWidget *MainWindow::buildRunsList()
{
    auto *left = new QWidget(this);
    // Created in the order the focus moves through them: the filters, then the list.
    buildRunFilters(left);
    buildRunTree(left);

    auto *filters = new QHBoxLayout;
    filters->addWidget(m_statusFilter);
    filters->addWidget(m_languageFilter);
    auto *leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(8, 8, 4, 8);
    auto *runsTitle = new QLabel(QStringLiteral("<b>Runs</b>"), left);
    leftLayout->addWidget(runsTitle);
    leftLayout->addWidget(new OverviewStrip(m_controller->model(), left));
    leftLayout->addWidget(m_search);
    leftLayout->addLayout(filters);
    leftLayout->addWidget(m_tree, 1);

    m_searchDelay = new QTimer(this);
    m_searchDelay->setSingleShot(true);
    m_searchDelay->setInterval(250);
    connect(m_searchDelay, &QTimer::timeout, this, [this] {
        // Older runs that match come from the history.
        m_controller->searchHistory(m_search->text());
        applyFilters();
    });
    connect(m_search, &QLineEdit::textChanged, m_searchDelay, qOverload<>(&QTimer::start));
    connect(m_statusFilter, &QComboBox::currentIndexChanged, this, &MainWindow::applyFilters);
    connect(m_languageFilter, &QComboBox::currentIndexChanged, this, &MainWindow::applyFilters);
    return left;
}

// The search field and the status and language filters above the runs list.
void MainWindow::buildRunFilters(QWidget *left)
{
    m_search = new QLineEdit(left);
    m_search->setObjectName(QStringLiteral("searchEdit"));
    m_search->setPlaceholderText(QStringLiteral("Search code and output…"));
    m_search->setClearButtonEnabled(true);
    m_statusFilter = new QComboBox(left);
    m_statusFilter->setObjectName(QStringLiteral("statusFilter"));
    m_statusFilter->addItem(QStringLiteral("All statuses"), -1);
    for (auto s :
         {RunRecord::Status::Queued, RunRecord::Status::Running, RunRecord::Status::Ok,
          RunRecord::Status::Error, RunRecord::Status::TimedOut, RunRecord::Status::Cancelled})
        m_statusFilter->addItem(StatusIcons::icon(s), StatusIcons::label(s), int(s));
    m_languageFilter = new QComboBox(left);
    m_languageFilter->setObjectName(QStringLiteral("languageFilter"));
    m_languageFilter->addItem(QStringLiteral("All languages"), QString());
    for (const QString &language : m_controller->languages())
        m_languageFilter->addItem(language, language);
}

// The runs list itself: a tree of runs and sessions, with Stop on Delete and in its menu.
void MainWindow::buildRunTree(QWidget *left)
{
    m_tree = new QTreeView(left);
    m_tree->setObjectName(QStringLiteral("runTree"));
    m_tree->setModel(m_filter);
    m_tree->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    m_tree->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_tree->setAlternatingRowColors(true);
    m_tree->setAllColumnsShowFocus(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setWordWrap(false);
    // The expand arrow sits by the session's id, where it means something; single runs have
    // none, and the time column keeps its width.
    m_tree->setTreePosition(RunListModel::SessionColumn);
    m_tree->setIndentation(m_tree->fontMetrics().height());
    m_tree->setItemDelegate(new RowHeightDelegate(m_tree->fontMetrics().height() + 10, m_tree));
    QHeaderView *header = m_tree->header();
    header->setStretchLastSection(false);
    header->setHighlightSections(false);
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setSectionResizeMode(RunListModel::SourceColumn, QHeaderView::Stretch);
    // Sessions are the exception: their column takes what its contents need.
    header->setSectionResizeMode(RunListModel::SessionColumn, QHeaderView::ResizeToContents);
    header->resizeSection(RunListModel::TimeColumn, 72);
    header->resizeSection(RunListModel::LanguageColumn, 80);
    header->resizeSection(RunListModel::StatusColumn, 96);
    header->resizeSection(RunListModel::DurationColumn, 70);
    header->resizeSection(RunListModel::ExitCodeColumn, 40);
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &MainWindow::onCurrentChanged);
    // Delete stops the selected run while the list has the focus (not while editing code).
    m_stopAction->setShortcut(QKeySequence::Delete);
    m_stopAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_tree->addAction(m_stopAction);
    m_tree->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_tree, &QWidget::customContextMenuRequested, this, [this](const QPoint &at) {
        const QModelIndex index = m_tree->indexAt(at);
        if (!index.isValid())
            return;
        m_tree->setCurrentIndex(index);
        const std::unique_ptr<QMenu> menu(contextMenuFor(index));
        menu->exec(m_tree->viewport()->mapToGlobal(at));
    });
}

QMenu *MainWindow::contextMenuFor(const QModelIndex &index)
{
    auto *menu = new QMenu(this);
    menu->addAction(m_stopAction);
    // A session's run: the snapshot kept after it (a session's own row stands for its newest
    // run, whose step is a row of its own).
    const QString sessionId = index.data(SessionTreeModel::SessionIdRole).toString();
    if (!sessionId.isEmpty() && !index.data(SessionTreeModel::IsSessionRole).toBool()) {
        menu->addSeparator();
        m_snapshotActions->addTo(menu, index.data(RunListModel::RunIdRole).toString());
    }
    return menu;
}

// The editor above the selected run's details.
QWidget *MainWindow::buildRunPane()
{
    auto *right = new QSplitter(Qt::Vertical, this);
    right->setObjectName(QStringLiteral("rightSplitter"));
    auto *editorBox = new QWidget(right);
    auto *editorLayout = new QVBoxLayout(editorBox);
    editorLayout->setContentsMargins(4, 8, 8, 4);
    m_editor = new RunEditor(editorBox);
    editorLayout->addWidget(m_editor);
    auto *detailsBox = new QWidget(right);
    auto *detailsLayout = new QVBoxLayout(detailsBox);
    detailsLayout->setContentsMargins(4, 4, 8, 8);
    m_details = new RunDetailsPane(detailsBox);
    detailsLayout->addWidget(m_details);
    right->addWidget(editorBox);
    right->addWidget(detailsBox);
    right->setStretchFactor(0, 2);
    right->setStretchFactor(1, 3);
    // The run's details are what one mostly looks at; the editor gets what a short program needs.
    right->setSizes({250, 570});
    return right;
}

// The status bar: the engine, the servers.
void MainWindow::buildStatusBar()
{
    m_engineLabel = new QLabel(this);
    m_engineLabel->setObjectName(QStringLiteral("engineStatus"));
    m_engineLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_serverLabel = new QLabel(this);
    m_serverLabel->setObjectName(QStringLiteral("serverStatus"));
    m_serverLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_copyToken = new QToolButton(this);
    m_copyToken->setObjectName(QStringLiteral("copyTokenButton"));
    m_copyToken->setText(QStringLiteral("Copy token"));
    m_copyToken->setAutoRaise(true);
    connect(m_copyToken, &QToolButton::clicked, this, [this] {
        QApplication::clipboard()->setText(m_controller->serverStatus().token);
        statusBar()->showMessage(QStringLiteral("Token copied"), 3000);
    });
    statusBar()->addPermanentWidget(m_engineLabel, 1);
    statusBar()->addPermanentWidget(m_serverLabel);
    statusBar()->addPermanentWidget(m_copyToken);
}

void MainWindow::buildTray()
{
    if (!QSystemTrayIcon::isSystemTrayAvailable()) {
        qCInfo(lcUi) << "no system tray here; closing the window"
                     << (m_settings.keepRunningInBackground ? "keeps serving (start the app again "
                                                              "to show it)"
                                                            : "quits");
        return;
    }
    m_tray = new QSystemTrayIcon(windowIcon(), this);
    m_tray->setToolTip(QStringLiteral("Code Sandbox"));
    auto *menu = new QMenu(this);
    QAction *toggle = menu->addAction(QStringLiteral("Show window"));
    connect(menu, &QMenu::aboutToShow, this, [this, toggle] {
        toggle->setText(isVisible() ? QStringLiteral("Hide window")
                                    : QStringLiteral("Show window"));
    });
    connect(toggle, &QAction::triggered, this, [this] {
        if (isVisible())
            hide();
        else
            showAndRaise();
    });
    menu->addSeparator();
    menu->addAction(QStringLiteral("Quit Code Sandbox"), this, &MainWindow::quitRequested);
    m_tray->setContextMenu(menu);
    connect(m_tray, &QSystemTrayIcon::activated, this,
            [this](QSystemTrayIcon::ActivationReason reason) {
                if (reason == QSystemTrayIcon::Trigger)
                    isVisible() ? hide() : showAndRaise();
            });
    m_tray->show();
}

void MainWindow::showAndRaise()
{
    show();
    setWindowState((windowState() & ~Qt::WindowMinimized) | Qt::WindowActive);
    raise();
    activateWindow();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!m_settings.keepRunningInBackground) {
        event->accept();
        Q_EMIT quitRequested();
        return;
    }
    // The servers keep going: assistants connected over HTTP or watched through the monitor
    // socket must not lose their sandbox because a window was closed.
    event->ignore();
    hide();
    if (m_tray && !m_trayHintShown) {
        m_trayHintShown = true;
        m_tray->showMessage(QStringLiteral("Code Sandbox keeps running"),
                            QStringLiteral("The MCP server still serves assistants. Use the tray "
                                           "icon to show the window or quit."),
                            QSystemTrayIcon::Information, 5000);
    }
}

void MainWindow::selectRun(const QString &id)
{
    const QModelIndex source = m_sessions->indexOfRun(id);
    if (!source.isValid())
        return;
    const QModelIndex index = m_filter->mapFromSource(source);
    if (!index.isValid()) {
        // Hidden by the filters: show it anyway, the person asked for it.
        m_details->showRun(m_controller->model()->complete(id));
        return;
    }
    if (index.parent().isValid())
        m_tree->expand(index.parent());
    m_tree->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
    m_tree->scrollTo(index);
}

void MainWindow::selectSession(const QString &id)
{
    const QModelIndex index = m_filter->mapFromSource(m_sessions->indexOfSession(id));
    if (!index.isValid())
        return;
    m_tree->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
    m_tree->scrollTo(index);
}

QString MainWindow::currentRunId() const
{
    const QModelIndex current = m_tree->selectionModel()->currentIndex();
    return current.isValid() ? current.data(RunListModel::RunIdRole).toString() : QString();
}

void MainWindow::updateStopAction()
{
    const QString id = currentRunId();
    m_stopAction->setEnabled(!id.isEmpty() && m_controller->canStop(id));
}

void MainWindow::stopSelected()
{
    const QString id = currentRunId();
    if (id.isEmpty())
        return;
    if (m_controller->stopRun(id))
        statusBar()->showMessage(QStringLiteral("Stopping the run…"), 4000);
    else
        statusBar()->showMessage(QStringLiteral("That run can no longer be stopped"), 4000);
    updateStopAction();
}

void MainWindow::onCurrentChanged()
{
    updateStopAction();
    const QModelIndex current = m_tree->selectionModel()->currentIndex();
    if (!current.isValid()) {
        m_details->showRun(nullptr);
        return;
    }
    // A session's row stands for its newest run.
    const QString id = current.data(RunListModel::RunIdRole).toString();
    if (id == m_details->runId())
        return;
    m_details->showRun(m_controller->model()->complete(id));
}

void MainWindow::onRunChanged(const QString &id)
{
    if (id == m_details->runId()) {
        if (const RunRecord *run = m_controller->model()->run(id))
            m_details->updateRun(*run);
    }
    // A language seen for the first time (a custom image, an instance with more languages).
    const QString language =
        m_controller->model()->run(id) ? m_controller->model()->run(id)->language : QString();
    if (!language.isEmpty() && m_languageFilter->findData(language) < 0)
        m_languageFilter->addItem(language, language);
}

void MainWindow::onRowsInserted(const QModelIndex &parent, int first, int last)
{
    // A session that starts while one watches is opened, so that its runs show as they come.
    if (!parent.isValid()) {
        for (int row = first; row <= last; ++row) {
            const QModelIndex index = m_filter->index(row, 0);
            if (index.data(SessionTreeModel::IsSessionRole).toBool())
                m_tree->expand(index);
        }
    }
    // Follow the newest run while the person is looking at the newest (or at nothing): the top
    // row, or the newest run of the session they look into.
    const QModelIndex current = m_tree->selectionModel()->currentIndex();
    const QModelIndex currentTop = current.parent().isValid() ? current.parent() : current;
    if (current.isValid() && (currentTop.row() > 1 || current.row() > 1))
        return;
    QModelIndex target = m_filter->index(0, 0);
    if (current.parent().isValid() && current.parent() == target)
        target = m_filter->index(0, 0, target);
    if (target.isValid())
        m_tree->selectionModel()->setCurrentIndex(target, QItemSelectionModel::ClearAndSelect |
                                                              QItemSelectionModel::Rows);
    // A session's row that stays current stands for a newer run now.
    onCurrentChanged();
}

void MainWindow::applyFilters()
{
    const int status = m_statusFilter->currentData().toInt();
    m_filter->setStatus(status < 0 ? std::nullopt
                                   : std::optional<RunRecord::Status>(RunRecord::Status(status)));
    m_filter->setLanguage(m_languageFilter->currentData().toString());
    m_filter->setText(m_search->text());
}

void MainWindow::onEngines(const QList<EngineStatus> &engines)
{
    const auto color = [](const EngineStatus &e) {
        if (!e.known)
            return QStringLiteral("#8a8a8a");
        return StatusIcons::color(e.reachable ? RunRecord::Status::Ok : RunRecord::Status::Error)
            .name();
    };
    const auto dot = [&color](const EngineStatus &e) {
        return QStringLiteral("<span style='color:%1'>●</span>").arg(color(e));
    };
    QStringList details;
    for (const EngineStatus &e : engines)
        details << engineDetails(e);
    m_engineLabel->setToolTip(details.join(QStringLiteral("<hr>")));

    if (engines.size() == 1) {
        // One engine, as it always showed: what it is and where, or why it does not answer.
        const EngineStatus &e = engines.constFirst();
        if (!e.known)
            m_engineLabel->setText(
                QStringLiteral("Engine: asking %1…").arg(e.address.toHtmlEscaped()));
        else if (e.reachable)
            m_engineLabel->setText(
                dot(e) +
                QStringLiteral(" %1 %2 (API %3) · %4")
                    .arg(e.product.toHtmlEscaped(), e.version.toHtmlEscaped(),
                         e.apiVersion.toHtmlEscaped(), e.address.toHtmlEscaped()) +
                (e.runtime.isEmpty()
                     ? QString()
                     : QStringLiteral(" · runtime %1").arg(e.runtime.toHtmlEscaped())));
        else
            m_engineLabel->setText(dot(e) +
                                   QStringLiteral(" Engine not reachable at %1 — %2")
                                       .arg(e.address.toHtmlEscaped(), e.fix.toHtmlEscaped()));
        return;
    }
    // Several: each in a few words (the tooltip has the rest), or a count when they are many.
    int up = 0;
    int running = 0;
    int capacity = 0;
    for (const EngineStatus &e : engines) {
        up += e.known && e.reachable ? 1 : 0;
        running += e.running;
        capacity += e.reachable ? e.capacity : 0;
    }
    if (engines.size() > kMaxEnginesListed) {
        const int down = int(engines.size()) - up;
        EngineStatus worst;
        worst.known = true;
        worst.reachable = down == 0;
        m_engineLabel->setText(
            dot(worst) + QStringLiteral(" %1 engines: %2 up%3 · %4/%5 running")
                             .arg(engines.size())
                             .arg(up)
                             .arg(down > 0 ? QStringLiteral(", %1 down").arg(down) : QString())
                             .arg(running)
                             .arg(capacity));
        return;
    }
    QStringList parts;
    for (const EngineStatus &e : engines) {
        QString state;
        if (!e.known)
            state = QStringLiteral("asking…");
        else if (e.reachable)
            state = QStringLiteral("%1/%2").arg(e.running).arg(e.capacity);
        else
            state = QStringLiteral("<span style='color:%1'>down</span>").arg(color(e));
        parts << QStringLiteral("%1 %2 %3").arg(dot(e), e.address.toHtmlEscaped(), state);
    }
    m_engineLabel->setText(QStringLiteral("Engines: ") +
                           parts.join(QStringLiteral(" &nbsp;·&nbsp; ")));
}

// One engine's tooltip: everything the status bar leaves out.
QString MainWindow::engineDetails(const EngineStatus &e)
{
    QStringList lines;
    QString state = !e.known      ? QStringLiteral("not asked yet")
                    : e.reachable ? QStringLiteral("up")
                                  : QStringLiteral("<b>down</b>");
    lines << QStringLiteral("<b>%1</b> — %2").arg(e.address.toHtmlEscaped(), state);
    if (!e.product.isEmpty())
        lines << QStringLiteral("%1 %2 (API %3)")
                     .arg(e.product.toHtmlEscaped(), e.version.toHtmlEscaped(),
                          e.apiVersion.toHtmlEscaped());
    // Which runtime its sandboxes get, and which it has (for assistants that require gVisor).
    if (!e.runtime.isEmpty() || !e.runtimes.isEmpty())
        lines << QStringLiteral("Sandboxes' runtime: %1%2")
                     .arg(e.runtime.isEmpty() ? QStringLiteral("the engine's default")
                                              : e.runtime.toHtmlEscaped(),
                          e.runtimes.isEmpty()
                              ? QString()
                              : QStringLiteral(" (it has %1)")
                                    .arg(e.runtimes.join(QStringLiteral(", ")).toHtmlEscaped()));
    if (e.known && !e.reachable) {
        lines << e.error.toHtmlEscaped();
        if (!e.fix.isEmpty())
            lines << e.fix.toHtmlEscaped();
    }
    QStringList load;
    // Nothing runs on one that is down, unless it went down under them.
    if (e.reachable || !e.known || e.running > 0)
        load << QStringLiteral("%1 of %2 sandboxes running").arg(e.running).arg(e.capacity);
    if (e.placed > 0)
        load << QStringLiteral("%1 run%2 placed here")
                    .arg(e.placed)
                    .arg(e.placed == 1 ? QString() : QStringLiteral("s"));
    if (!load.isEmpty())
        lines << load.join(QStringLiteral(" · "));
    if (e.cpus > 0)
        lines << QStringLiteral("%1 CPU%2 · %3 GiB memory")
                     .arg(e.cpus)
                     .arg(e.cpus == 1 ? QString() : QStringLiteral("s"))
                     .arg(double(e.memoryBytes) / (1024.0 * 1024 * 1024), 0, 'f', 1);
    return lines.join(QStringLiteral("<br>"));
}

void MainWindow::onServerStatus(const ServerStatus &status)
{
    QStringList parts;
    if (!status.httpEnabled)
        parts << QStringLiteral("HTTP server off");
    else if (!status.listening)
        parts << QStringLiteral("<span style='color:#d63b3b'>HTTP server: %1</span>")
                     .arg(status.error.toHtmlEscaped());
    else
        parts << QStringLiteral("MCP %1 · %2 client%3")
                     .arg(status.url.toHtmlEscaped())
                     .arg(status.httpSessions)
                     .arg(status.httpSessions == 1 ? QString() : QStringLiteral("s"));
    parts << QStringLiteral("%1 headless instance%2 watched")
                 .arg(status.instances)
                 .arg(status.instances == 1 ? QString() : QStringLiteral("s"));
    m_serverLabel->setText(parts.join(QStringLiteral(" · ")));
    m_copyToken->setVisible(status.listening && !status.token.isEmpty());
}

void MainWindow::openSettings()
{
    SettingsDialog dialog(m_settings, m_controller->languages(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    m_settings = dialog.settings();
    m_settings.save();
    // Policies apply at once (the other settings say when they do).
    m_controller->setPolicies(m_settings.policies);
    m_controller->pruneHistory(m_settings.historyRetentionDays);
    Q_EMIT settingsChanged(m_settings);
}

void MainWindow::setSignIn(OAuthServer *oauth)
{
    m_consents->watch(oauth);
}

void MainWindow::watchSignIns()
{
    m_consents = new ConsentPrompter(this);
    if (MonitorServer *monitor = m_controller->monitor())
        m_consents->watch(monitor);
    connect(m_consents, &ConsentPrompter::policyWanted, this, [this](const QString &assistant) {
        // The policies alone are saved, as "Always allow" does: the rest of the settings file
        // (the HTTP token's store among them) is not this dialog's to write.
        AssistantPolicies policies = AppSettings::loadPolicies();
        for (const AssistantPolicy &p : std::as_const(policies.assistants))
            if (p.client.compare(assistant, Qt::CaseInsensitive) == 0)
                return;
        AssistantPolicy own = policies.fallback;
        own.client = assistant;
        policies.assistants.append(own);
        AppSettings::savePolicies(policies);
        m_settings.policies = policies;
        m_controller->setPolicies(policies);
    });
}

void MainWindow::openConnectDialog()
{
    const ServerStatus s = m_controller->serverStatus();
    ConnectAssistantDialog dialog(s.binary, s.listening ? s.url : QString(), s.token, this,
                                  CredentialStore::defaultPath());
    dialog.exec();
}
