#pragma once

#include "runworkspace.h"

#include <QPointer>
#include <QWidget>

class DiffHighlighter;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTreeWidget;
class WorkspaceDecisions;

// One copy-on-write workspace's change set: the changed files (kind, path, size, lines added and
// removed), the diff of the selected one, what was refused and, once applied, what was left
// alone or failed; Apply and Discard, with where it stands. Used by the run details' Workspace
// tab and by the dialog that asks when a run ends. Names and diffs come from the sandbox: shown
// as plain text, invisible characters marked.
class WorkspaceChangesView : public QWidget
{
    Q_OBJECT
public:
    enum Column
    {
        KindColumn,
        PathColumn,
        SizeColumn,
        LinesColumn,
        ColumnCount
    };

    explicit WorkspaceChangesView(QWidget *parent = nullptr);

    // Where Apply and Discard go, and whose changes refresh this view (not owned).
    void setDecisions(WorkspaceDecisions *decisions);
    void showWorkspace(const QString &runId, const RunWorkspace &workspace);
    QString runId() const { return m_runId; }
    const RunWorkspace &workspace() const { return m_workspace; }

    // What the diff view shows for a change: its diff, or for a binary "binary, N bytes,
    // sha256 …", for a deletion or a rename what it was.
    static QString diffText(const RunWorkspace::Change &change);

    QTreeWidget *changeList() const { return m_list; }
    QPlainTextEdit *diffView() const { return m_diff; }
    QPlainTextEdit *notesView() const { return m_notes; }
    QLabel *stateLabel() const { return m_state; }
    QPushButton *applyButton() const { return m_apply; }
    QPushButton *discardButton() const { return m_discard; }

private:
    void refresh();
    void fillList();
    void fillNotes();
    void fillState();
    void showSelected();

    QPointer<WorkspaceDecisions> m_decisions;
    QString m_runId;
    RunWorkspace m_workspace;
    QLabel *m_title;
    QTreeWidget *m_list;
    QPlainTextEdit *m_diff;
    DiffHighlighter *m_highlighter;
    QPlainTextEdit *m_notes;
    QLabel *m_state;
    QPushButton *m_apply;
    QPushButton *m_discard;
};
