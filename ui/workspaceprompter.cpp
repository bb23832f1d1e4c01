#include "workspaceprompter.h"

#include "plaintext.h"
#include "runrecord.h"
#include "uilog.h"
#include "workspaceaskdialog.h"
#include "workspacedecisions.h"

#include <QSystemTrayIcon>
#include <QWidget>

WorkspacePrompter::WorkspacePrompter(WorkspaceDecisions *decisions, QWidget *window,
                                     QSystemTrayIcon *tray)
    : QObject(window), m_decisions(decisions), m_window(window), m_tray(tray)
{
    connect(decisions, &WorkspaceDecisions::askRequested, this, &WorkspacePrompter::open);
}

QList<WorkspaceAskDialog *> WorkspacePrompter::dialogs() const
{
    QList<WorkspaceAskDialog *> list;
    for (const QPointer<WorkspaceAskDialog> &d : m_dialogs) {
        if (d)
            list.append(d);
    }
    return list;
}

WorkspaceAskDialog *WorkspacePrompter::dialog(const QString &runId) const
{
    return m_dialogs.value(runId);
}

void WorkspacePrompter::open(const QString &runId)
{
    if (dialog(runId))
        return;
    const RunRecord *run = m_decisions->run(runId);
    if (!run)
        return;
    QList<RunWorkspace> asking;
    for (const RunWorkspace &w : RunWorkspace::fromRecord(run->workspaces)) {
        if (w.apply == u"ask" && w.needsDecision())
            asking.append(w);
    }
    if (asking.isEmpty())
        return;
    // Closed ones are forgotten; a run is asked about once (WorkspaceDecisions) in any case.
    for (auto it = m_dialogs.begin(); it != m_dialogs.end();)
        it = it.value() ? std::next(it) : m_dialogs.erase(it);
    qCInfo(lcUi).noquote() << "asking about the changes of run" << runId.left(8) << "from"
                           << run->source;
    auto *dialog = new WorkspaceAskDialog(*run, asking, m_decisions, m_window);
    m_dialogs.insert(runId, dialog);
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
    const bool unseen = !m_window->isVisible() || m_window->isMinimized();
    if (unseen && m_tray && m_tray->isVisible())
        m_tray->showMessage(
            PlainText::notification(WorkspaceAskDialog::heading(*run, asking.size())),
            tr("Its changes wait for you: nothing reaches the folder until you apply them."),
            QSystemTrayIcon::Information, 15000);
}
