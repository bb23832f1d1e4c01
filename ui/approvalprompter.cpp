#include "approvalprompter.h"

#include "appcontroller.h"
#include "approvaldialog.h"
#include "uilog.h"

#include <QSystemTrayIcon>
#include <QWidget>

ApprovalPrompter::ApprovalPrompter(AppController *controller, QWidget *window,
                                   QSystemTrayIcon *tray)
    : QObject(window), m_controller(controller), m_window(window), m_tray(tray)
{
    connect(controller, &AppController::approvalRequested, this, &ApprovalPrompter::open);
    connect(controller, &AppController::approvalClosed, this,
            [this](const QString &id, const QString &why) {
                m_order.removeAll(id);
                const QPointer<ApprovalDialog> dialog = m_dialogs.take(id);
                if (!dialog)
                    return;
                qCInfo(lcUi).noquote() << "approval" << id.left(8) << "closed:" << why;
                dialog->withdraw();
            });
    if (m_tray) {
        // The notification's click brings the oldest waiting question to the front.
        connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] {
            const QList<ApprovalDialog *> open = dialogs();
            if (open.isEmpty())
                return;
            open.first()->show();
            open.first()->raise();
            open.first()->activateWindow();
        });
    }
    // Questions asked before the window existed (a headless instance that was waiting).
    for (const ApprovalRequest &r : controller->pendingApprovals())
        open(r);
}

QList<ApprovalDialog *> ApprovalPrompter::dialogs() const
{
    QList<ApprovalDialog *> list;
    for (const QString &id : m_order) {
        if (ApprovalDialog *d = m_dialogs.value(id))
            list.append(d);
    }
    return list;
}

void ApprovalPrompter::open(const ApprovalRequest &request)
{
    if (m_dialogs.contains(request.id))
        return;
    auto *dialog = new ApprovalDialog(request, m_window);
    m_dialogs.insert(request.id, dialog);
    m_order.append(request.id);
    connect(dialog, &ApprovalDialog::answered, m_controller,
            [this](const QString &id, RunApprover::Answer answer, const QString &reason) {
                m_order.removeAll(id);
                m_dialogs.remove(id);
                m_controller->answerApproval(id, answer, reason);
            });
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
    const bool unseen = !m_window->isVisible() || m_window->isMinimized();
    if (unseen && m_tray && m_tray->isVisible()) {
        m_tray->showMessage(
            QStringLiteral("A run waits for your approval"),
            QStringLiteral("%1 wants to run %2 code.")
                .arg(request.client.isEmpty() ? QStringLiteral("An assistant") : request.client,
                     ApprovalDialog::languageTitle(request.language)),
            QSystemTrayIcon::Warning, 15000);
    }
}
