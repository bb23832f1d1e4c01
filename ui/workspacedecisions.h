#pragma once

#include "runworkspace.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <optional>

class HistoryStore;
class RunListModel;
struct RunRecord;

// What a person decides about runs' change sets, and the one place the window applies them.
// Apply reads the run's record again strictly (WorkspaceRun::fromRecordJson) and writes the
// folder with WorkspaceApplier on a thread of the global pool, so a large change set never
// freezes the window; the decision (applied, with what was written, left alone and failed; or
// discarded) goes into the run's record in the model and in the history, so it holds after a
// restart and in every view. A run's end whose copy-on-write workspace says "ask" and changed
// something is told once (askRequested), whoever ran it: this process or a headless instance.
class WorkspaceDecisions : public QObject
{
    Q_OBJECT
public:
    // `model` is read and updated (not owned); `history` may be null (no history).
    WorkspaceDecisions(RunListModel *model, HistoryStore *history, QObject *parent = nullptr);

    // The run as the window knows it now, whole (null: not known).
    const RunRecord *run(const QString &runId);
    // The run's workspaces as the window knows them now (a record the model let go of is read
    // from the history again).
    QList<RunWorkspace> workspaces(const QString &runId);
    std::optional<RunWorkspace> workspace(const QString &runId, const QString &name);

    // Starts writing the change set into its folder; changed() when it is done (or failed: see
    // message()). False, with message() saying why, when it cannot start: decided already, busy,
    // the content was not kept, the run is unknown.
    bool apply(const QString &runId, const QString &name);
    // Marks it discarded (the folder is not touched). False when it is not pending.
    bool discard(const QString &runId, const QString &name);
    bool isBusy(const QString &runId, const QString &name) const;
    // What the last attempt left to say beyond the record: why Apply could not run, or that the
    // history did not keep the decision. Empty when nothing.
    QString message(const QString &runId, const QString &name) const;

    // Whether the end of `run` asks a person: a copy-on-write workspace with apply "ask" and
    // changes nobody decided on.
    static bool needsAsking(const RunRecord &run);

    // How often, a second apart, the history is asked again for a run it did not have yet (a
    // headless instance writes its run on its own thread, maybe after its end reached here).
    static constexpr int kHistoryTries = 3;

Q_SIGNALS:
    void askRequested(const QString &runId);
    // A workspace's state, busy flag or message changed.
    void changed(const QString &runId, const QString &name);

private:
    struct Outcome
    {
        WorkspaceApplyResult result;
        QString error;
    };
    void onRunFinished(const QString &runId);
    void finishApply(const QString &runId, const QString &name, const Outcome &outcome,
                     const QJsonArray &before);
    // Replaces the workspace `name` of the run with `decided`, in the model and the history.
    void record(const QString &runId, const QString &name, const QJsonObject &decided,
                const QJsonArray &fallback);
    void saveToHistory(const QString &runId, const QJsonArray &workspaces);
    void onHistoryUpdated(const QString &runId, bool ok);
    void setMessage(const QString &runId, const QString &name, const QString &message);
    static QString key(const QString &runId, const QString &name);

    RunListModel *m_model;
    QPointer<HistoryStore> m_history;
    QSet<QString> m_busy;                 // key(): an apply is under way
    QHash<QString, QString> m_messages;   // key() → message()
    QList<QString> m_asked;               // runs asked about, oldest first (bounded)
    QHash<QString, QJsonArray> m_unsaved; // run → its workspaces, until the history has them
    QHash<QString, int> m_historyTries;
};
