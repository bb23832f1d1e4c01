#pragma once

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>

class QSystemTrayIcon;
class QWidget;
class WorkspaceAskDialog;
class WorkspaceDecisions;

// Opens a WorkspaceAskDialog for each run whose end asks a person about its change sets
// (WorkspaceDecisions::askRequested): one per run, never again for the same run, and a tray
// notification when the window is hidden.
class WorkspacePrompter : public QObject
{
    Q_OBJECT
public:
    WorkspacePrompter(WorkspaceDecisions *decisions, QWidget *window, QSystemTrayIcon *tray);

    // The dialogs open now.
    QList<WorkspaceAskDialog *> dialogs() const;
    WorkspaceAskDialog *dialog(const QString &runId) const;

private:
    void open(const QString &runId);

    WorkspaceDecisions *m_decisions;
    QWidget *m_window;
    QPointer<QSystemTrayIcon> m_tray;
    QHash<QString, QPointer<WorkspaceAskDialog>> m_dialogs;
};
