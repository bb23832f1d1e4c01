#pragma once

#include "runworkspace.h"

#include <QPointer>
#include <QWidget>

class QLabel;
class QTreeWidget;
class WorkspaceChangesView;
class WorkspaceDecisions;

// The run details' Workspace tab: what each of the run's workspaces brought into the sandbox
// (name, mode, files, size, what the rules kept out, what was skipped) and, for the selected
// copy-on-write one, its change set with Apply and Discard (WorkspaceChangesView).
class WorkspacePane : public QWidget
{
    Q_OBJECT
public:
    enum Column
    {
        NameColumn,
        ModeColumn,
        FilesColumn,
        SizeColumn,
        ExcludedColumn,
        SkippedColumn,
        ChangesColumn,
        ColumnCount
    };

    explicit WorkspacePane(QWidget *parent = nullptr);

    void setDecisions(WorkspaceDecisions *decisions);
    // The run's workspaces (from its record); the selected one stays selected when it is the
    // same run.
    void setWorkspaces(const QString &runId, const QList<RunWorkspace> &workspaces);
    // What the tab's title says: "Workspace" or "Workspaces (1 to decide)".
    QString title() const;

    QTreeWidget *table() const { return m_table; }
    WorkspaceChangesView *changesView() const { return m_changes; }
    QLabel *skippedLabel() const { return m_skipped; }

private:
    void showSelected();
    int preferredRow(const QString &selected) const;

    QPointer<WorkspaceDecisions> m_decisions;
    QString m_runId;
    QList<RunWorkspace> m_workspaces;
    QTreeWidget *m_table;
    QLabel *m_skipped;
    QLabel *m_readOnly;
    WorkspaceChangesView *m_changes;
};
