#pragma once

#include "approvalrequest.h"
#include "assistantpolicies.h"
#include "enginestatus.h"
#include "journalevent.h"
#include "runapprover.h"
#include "sandboxbackend.h"
#include "serverstatus.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>

class Execution;
class HistoryStore;
class Journal;
class MonitorServer;
class RunControl;
class RunGate;
class RunListModel;
class WindowApprover;
class SandboxService;
class StreamableHttpServer;

// The window's link to the rest: feeds the runs model from this process's journal, from the
// monitor socket and from the history; starts and stops manual runs; watches the engine and the
// servers. Widgets talk to this and to the model, never to the sandbox itself.
class AppController : public QObject
{
    Q_OBJECT
public:
    // Only `sandbox` and `journal` are required.
    AppController(SandboxService *sandbox, Journal *journal, HistoryStore *history,
                  MonitorServer *monitor, QObject *parent = nullptr);
    ~AppController() override;

    RunListModel *model() const { return m_model; }
    QStringList languages() const;
    int defaultTimeoutSec() const;

    // The HTTP endpoint this window serves (null: none) and what to show about it.
    void setHttpServer(StreamableHttpServer *server, const ServerStatus &status);
    ServerStatus serverStatus() const;
    // Every engine the sandbox runs on, in the order given (one, usually).
    QList<EngineStatus> engines() const { return m_engines; }
    bool hasHistory() const { return m_history != nullptr; }

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
    QList<ApprovalRequest> pendingApprovals() const;
    // Answers one; "always" also changes the assistant's policy (saved in the settings file).
    // False when it is no longer waiting (answered, withdrawn, its instance gone).
    bool answerApproval(const QString &id, RunApprover::Answer answer,
                        const QString &reason = QString());
    // Approvals waiting at once, at most (more are denied at once).
    static constexpr int kMaxApprovals = 64;
    // The policies this window applies and saves (Settings → Assistants, "always allow").
    void setPolicies(const AssistantPolicies &policies);

    // Starts a run by hand; returns its id (the run is in the model already).
    QString runManual(const QString &language, const QString &code, int timeoutSec);
    void stopManual();
    bool manualRunning() const { return !m_manual.isNull(); }

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
    QHash<QString, SandboxBackend::ImageStatus> images() const { return m_images; }
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
    void onEvent(const JournalEvent &event);
    // Rebuilds engines() from the sandbox's engines (and the lone engine's last answer).
    void updateEngines();

    SandboxService *m_sandbox;
    Journal *m_journal;
    HistoryStore *m_history;
    MonitorServer *m_monitor;
    QPointer<StreamableHttpServer> m_http;
    RunListModel *m_model;
    QPointer<Execution> m_manual;
    EngineStatus m_lone; // the last answer of a lone engine (the sandbox watches only several)
    QList<EngineStatus> m_engines;
    QTimer m_engineUpdate; // coalesces updates after runs start and end
    ServerStatus m_server;
    QTimer m_poll;
    bool m_asking = false;
    quint64 m_search = 0; // the latest search: answers to older ones are dropped
    QHash<QString, SandboxBackend::ImageStatus> m_images;
    int m_imagesAsking = 0; // answers still to come
    int m_imagePolls = 0;
    QPointer<RunGate> m_gate;
    QPointer<RunControl> m_runControl;
    WindowApprover *m_approver = nullptr;
    // Waiting approvals, oldest first; this process's own carry its instance id.
    QList<ApprovalRequest> m_approvals;
    bool isOwn(const QString &instanceId) const;
    qsizetype approvalIndex(const QString &id) const; // -1: not waiting
    // The answer to whoever asked: this window's gate, or the instance over the monitor socket.
    bool deliver(const ApprovalRequest &request, RunApprover::Answer answer, const QString &reason);
    void addApproval(const ApprovalRequest &request);
    void closeApproval(const QString &id, const QString &why);
};
