#pragma once

#include "assistantpolicies.h"

#include <QWidget>

class QComboBox;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTableWidgetItem;

// Settings → Assistants: one row per assistant (by its credential's name, or the name its MCP
// client gives in clientInfo; a stdio instance by the program that launched it too) and a
// first row for every other assistant: run, ask or refuse; the languages it
// may use (empty: all); network; libraries; its largest timeout; the bound secrets and the
// workspaces it gets (*: all the server's). Below: how long an approval waits, and what a
// headless server does when no window is open to ask.
class PolicyEditor : public QWidget
{
    Q_OBJECT
public:
    enum Column
    {
        ClientColumn,
        ActionColumn,
        LanguagesColumn,
        NetworkColumn,
        HostsColumn,
        OtherHostsColumn,
        LibrariesColumn,
        TimeoutColumn,
        MemoryColumn,
        IsolationColumn,
        SecretsColumn,
        WorkspacesColumn,
        KeepSessionsColumn,
        LauncherColumn,
        ColumnCount
    };

    PolicyEditor(const AssistantPolicies &policies, const QStringList &languages,
                 QWidget *parent = nullptr);

    // Rows without a name are left out; a name given twice keeps its first row.
    AssistantPolicies policies() const;
    // Adds a row for `client` (from the default policy); false when it is listed or empty.
    bool addAssistant(const QString &client);
    QTableWidget *table() const { return m_table; }
    // The workspaces Settings lists, which the Workspaces cells offer (a headless server's
    // --workspace may name others: those are kept too).
    void setWorkspaceNames(const QStringList &names);

private:
    void addRow(const AssistantPolicy &policy);
    AssistantPolicy rowPolicy(int row) const;
    void markWorkspaces(QTableWidgetItem *item) const;
    // The launcher cell: a program's path, none for the default row (it has no name to guard).
    QTableWidgetItem *launcherItem(const AssistantPolicy &policy) const;

    QStringList m_languages;
    QStringList m_workspaceNames;
    QTableWidget *m_table;
    QPushButton *m_remove;
    QSpinBox *m_approvalTimeout;
    QComboBox *m_whenNoWindow;
};
