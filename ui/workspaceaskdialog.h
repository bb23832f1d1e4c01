#pragma once

#include "runworkspace.h"

#include <QDialog>
#include <QList>

class WorkspaceChangesView;
class WorkspaceDecisions;
struct RunRecord;

// Asks a person about a run's change sets when it ends, for its copy-on-write workspaces whose
// apply is "ask": who ran it, which workspace and folder, the changed files and their diffs,
// Apply and Discard for each. Not modal (the window stays usable, several may be open); closing
// it decides nothing: the run's Workspace tab has the same buttons.
class WorkspaceAskDialog : public QDialog
{
    Q_OBJECT
public:
    WorkspaceAskDialog(const RunRecord &run, const QList<RunWorkspace> &asking,
                       WorkspaceDecisions *decisions, QWidget *parent = nullptr);

    QString runId() const { return m_runId; }
    // One per workspace asked about, in the record's order.
    QList<WorkspaceChangesView *> views() const { return m_views; }
    // "claude-code's run changed 1 workspace": the heading, for the tray's notification too.
    static QString heading(const RunRecord &run, qsizetype workspaces);

private:
    QString m_runId;
    QList<WorkspaceChangesView *> m_views;
};
