#pragma once

#include "appsettings.h"
#include "enginestatus.h"
#include "serverstatus.h"

#include <QMainWindow>

class AppController;
class ApprovalPrompter;
class ConsentPrompter;
class OAuthServer;
class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QSystemTrayIcon;
class QModelIndex;
class QTimer;
class QToolButton;
class QTreeView;
class RunDetailsPane;
class RunEditor;
class RunFilterModel;
class SessionTreeModel;
class SnapshotActions;
class WorkspacePrompter;

// "Code Sandbox": the runs list (filtered, newest first), the selected run's details, the
// editor for manual runs, and the state of the engine and the servers. Closing it keeps the
// servers running in the background (tray) unless the settings say otherwise.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    // Up to this many engines are named in the status bar; more are counted.
    static constexpr int kMaxEnginesListed = 3;

    MainWindow(AppController *controller, const AppSettings &settings, QWidget *parent = nullptr);
    ~MainWindow() override;

    // Assistants signing in to this window's HTTP endpoint are asked about here (one dialog
    // each); "a policy of its own" is added to the settings.
    void setSignIn(OAuthServer *oauth);
    ConsentPrompter *consents() const { return m_consents; }

    RunEditor *editor() const { return m_editor; }
    RunDetailsPane *details() const { return m_details; }
    // The runs list: sessions with their runs, single runs, newest first.
    QTreeView *runTree() const { return m_tree; }
    SessionTreeModel *sessionTree() const { return m_sessions; }
    RunFilterModel *filter() const { return m_filter; }
    QSystemTrayIcon *trayIcon() const { return m_tray; }
    // Stop (toolbar, the list's context menu, Delete in the list): the selected run, whoever
    // started it.
    QAction *stopAction() const { return m_stopAction; }
    ApprovalPrompter *approvals() const { return m_approvals; }
    // The dialogs that ask about a run's change sets when it ends.
    WorkspacePrompter *workspacePrompter() const { return m_workspacePrompter; }
    // Sessions' snapshots: the list's items for a session's run, File → Import snapshot….
    SnapshotActions *snapshotActions() const { return m_snapshotActions; }
    // The runs list's context menu for a row (the caller owns it): Stop, and for a session's
    // run the items of its snapshot.
    QMenu *contextMenuFor(const QModelIndex &index);
    // The run the selection stands for (a session's row: its newest run); "" for none.
    QString currentRunId() const;
    // Selects the run (if the filters show it), opening its session.
    void selectRun(const QString &id);
    // Selects a session's row (if the filters show it).
    void selectSession(const QString &id);
    void showAndRaise();

Q_SIGNALS:
    // Quit was chosen (menu or tray): the application stops its servers and ends.
    void quitRequested();
    void settingsChanged(const AppSettings &settings);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void watchSignIns();
    void buildUi();
    void buildMenus();
    QWidget *buildRunsList();
    void buildRunFilters(QWidget *left);
    void buildRunTree(QWidget *left);
    QWidget *buildRunPane();
    void buildStatusBar();
    void buildTray();
    void onCurrentChanged();
    void onRunChanged(const QString &id);
    void onRowsInserted(const QModelIndex &parent, int first, int last);
    void onEngines(const QList<EngineStatus> &engines);
    static QString engineDetails(const EngineStatus &engine);
    void onServerStatus(const ServerStatus &status);
    void applyFilters();
    void openSettings();
    void openConnectDialog();
    void updateStopAction();
    void stopSelected();

    AppController *m_controller;
    AppSettings m_settings;
    SessionTreeModel *m_sessions;
    RunFilterModel *m_filter;
    QTreeView *m_tree = nullptr;
    RunEditor *m_editor = nullptr;
    RunDetailsPane *m_details = nullptr;
    QLineEdit *m_search = nullptr;
    QComboBox *m_statusFilter = nullptr;
    QComboBox *m_languageFilter = nullptr;
    QLabel *m_engineLabel = nullptr;
    QLabel *m_serverLabel = nullptr;
    QToolButton *m_copyToken = nullptr;
    QSystemTrayIcon *m_tray = nullptr;
    QTimer *m_searchDelay = nullptr;
    QAction *m_stopAction = nullptr;
    ApprovalPrompter *m_approvals = nullptr;
    ConsentPrompter *m_consents = nullptr;
    WorkspacePrompter *m_workspacePrompter = nullptr;
    SnapshotActions *m_snapshotActions = nullptr;
    QString m_pendingSelect;
    bool m_trayHintShown = false;
};
