#pragma once

#include "approvalqueue.h"
#include "enginewatch.h"
#include "historyfeed.h"
#include "manualrunner.h"
#include "serverstatus.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>

class HistoryStore;
class Journal;
class MonitorServer;
class RunControl;
class RunGate;
class RunListModel;
class SandboxService;
class SessionManager;
class SessionSnapshots;
class StreamableHttpServer;
class WorkspaceDecisions;

// The window's link to the rest. Widgets talk to this and to the model, never to the sandbox
// itself. It owns the runs model and composes one part per job: HistoryFeed (the model fed from
// this process's journal, the monitor socket and the history), EngineWatch (the engines and
// their images), ApprovalQueue (runs waiting for a person), ManualRunner (the run editor's
// run) and WorkspaceDecisions (runs' change sets, applied or discarded); itself it keeps the
// servers' status and stopping runs, which need the model and the monitor socket together.
class AppController : public QObject
{
    Q_OBJECT
public:
    // The headless instances' socket (null: none).
    MonitorServer *monitor() const { return m_monitor; }
    // Only `sandbox` and `journal` are required.
    AppController(SandboxService *sandbox, Journal *journal, HistoryStore *history,
                  MonitorServer *monitor, QObject *parent = nullptr);
    ~AppController() override;

    RunListModel *model() const { return m_model; }
    // Runs' change sets: Apply and Discard from the Workspace tab and the dialog that asks when
    // a run ends (WorkspacePrompter); the part itself, as RunListModel is, since both widgets
    // follow its state.
    WorkspaceDecisions *workspaces() const { return m_workspaces; }
    // Sessions' snapshots: their steps, and Rewind, Fork, Export, Delete, Import (the part
    // itself, as WorkspaceDecisions is: the session tree and its menu follow it).
    SessionSnapshots *snapshots() const { return m_snapshots; }
    // This process's sessions (Services), whose snapshots the window shows; null: none.
    void setSessions(SessionManager *sessions);
    QStringList languages() const;
    int defaultTimeoutSec() const;

    // The HTTP endpoint this window serves (null: none) and what to show about it.
    void setHttpServer(StreamableHttpServer *server, const ServerStatus &status);
    ServerStatus serverStatus() const;
    // Every engine the sandbox runs on, in the order given (one, usually).
    QList<EngineStatus> engines() const { return m_engineWatch->engines(); }
    bool hasHistory() const { return m_feed->hasHistory(); }

    // The control room. With a gate, this window approves its own HTTP runs; with a run
    // control, it can stop them. Both come from the composition root (Services).
    void setRunGate(RunGate *gate);
    void setRunControl(RunControl *control);
    // Whether the window can stop this run now: it is queued or running, and it is this
    // process's or a connected headless instance's.
    bool canStop(const QString &runId) const;
    // Stops it (the caller gets "stopped from the Code Sandbox window"); false when it cannot.
    bool stopRun(const QString &runId);
    // Approvals waiting for a person, oldest first (this process's and headless instances').
    QList<ApprovalRequest> pendingApprovals() const { return m_approvals->pending(); }
    // Answers one; "always" also changes the assistant's policy (saved in the settings file).
    // False when it is no longer waiting (answered, withdrawn, its instance gone).
    bool answerApproval(const QString &id, RunApprover::Answer answer,
                        const QString &reason = QString());
    // Approvals waiting at once, at most (more are denied at once).
    static constexpr int kMaxApprovals = ApprovalQueue::kMaxApprovals;
    // The policies this window applies and saves (Settings → Assistants, "always allow").
    void setPolicies(const AssistantPolicies &policies);
    // "Allow for this assistant" on a host a run was refused (see ApprovalQueue::allowHost).
    AssistantPolicies::HostAdded allowHost(const QString &client, const QString &pattern);

    // Starts a run by hand; returns its id (the run is in the model already).
    QString runManual(const QString &language, const QString &code, int timeoutSec);
    void stopManual();
    bool manualRunning() const { return m_manual->running(); }

    // Loads the newest runs of the history into the model, read on the history's thread
    // (historyLoaded once they are in).
    void loadHistory(int limit = 500);
    // Adds the history's runs that match `text` (the model filters what it has). Read on the
    // history's thread: historySearched once they are in; a newer search drops older answers.
    void searchHistory(const QString &text, int limit = 500);
    // The window's retention setting (0: no age limit; the size cap stays), applied at once and
    // from then on by the history's worker.
    void pruneHistory(int retentionDays);
    // Asks a lone engine now (also done every few seconds); several are watched by the sandbox
    // itself, and this reads what it knows.
    void refreshEngine();

    // Per language, its image on the first engine: ready, being built (containers/
    // build-images.sh says so), missing... Asked now and then every 5 s while one is not ready
    // (every minute once all are); imagesChanged when the answers are in.
    QHash<QString, SandboxBackend::ImageStatus> images() const { return m_engineWatch->images(); }
    void refreshImages();
    // What the window shows per language whose image is not ready (none for those that are,
    // nor while the engine does not answer: the status bar says that).
    QHash<QString, QString> imageNotes() const;

Q_SIGNALS:
    void manualRunningChanged(bool running);
    // Something the window shows about them changed (state, version, running sandboxes).
    void enginesChanged(const QList<EngineStatus> &engines);
    void serverStatusChanged(const ServerStatus &status);
    void historyLoaded(int runs);
    void historySearched(const QString &text, int runs);
    void imagesChanged();
    // A run waits for a person's approval, and one no longer does (answered, withdrawn: `why`).
    void approvalRequested(const ApprovalRequest &request);
    void approvalClosed(const QString &id, const QString &why);
    // "Always allow" changed the policies (already saved).
    void policiesChanged(const AssistantPolicies &policies);

private:
    bool isOwn(const QString &instanceId) const;

    SandboxService *m_sandbox;
    MonitorServer *m_monitor;
    QPointer<StreamableHttpServer> m_http;
    RunListModel *m_model;
    HistoryFeed *m_feed;
    EngineWatch *m_engineWatch;
    ApprovalQueue *m_approvals;
    ManualRunner *m_manual;
    WorkspaceDecisions *m_workspaces;
    SessionSnapshots *m_snapshots;
    ServerStatus m_server;
    QTimer m_poll;
    QPointer<RunControl> m_runControl;
};
