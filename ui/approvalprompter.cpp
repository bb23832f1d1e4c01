#include "approvalprompter.h"

#include "appcontroller.h"
#include "approvaldialog.h"
#include "plaintext.h"
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
                ApprovalDialog *dialog = find(id);
                if (!dialog)
                    return;
                m_dialogs.removeAll(dialog);
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
    for (const QPointer<ApprovalDialog> &d : m_dialogs) {
        if (d)
            list.append(d);
    }
    return list;
}

ApprovalDialog *ApprovalPrompter::find(const QString &id) const
{
    for (ApprovalDialog *d : dialogs()) {
        if (d->request().id == id)
            return d;
    }
    return nullptr;
}

void ApprovalPrompter::open(const ApprovalRequest &request)
{
    if (find(request.id))
        return;
    auto *dialog = new ApprovalDialog(request, m_window);
    m_dialogs.append(dialog);
    connect(dialog, &ApprovalDialog::answered, m_controller,
            [this, dialog](const QString &id, RunApprover::Answer answer, const QString &reason) {
                m_dialogs.removeAll(dialog);
                m_controller->answerApproval(id, answer, reason);
            });
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
    const bool unseen = !m_window->isVisible() || m_window->isMinimized();
    if (unseen && m_tray && m_tray->isVisible()) {
        const QString who = ApprovalDialog::hasName(request)
                                ? PlainText::notification(PlainText::shortName(request.client, 80))
                                : QStringLiteral("An assistant");
        if (request.isConnection())
            m_tray->showMessage(
                QStringLiteral("A connection waits for your approval"),
                QStringLiteral("A run of %1 wants to reach %2.")
                    .arg(who, PlainText::notification(PlainText::shortName(request.hostPort()))),
                QSystemTrayIcon::Warning, 15000);
        else
            m_tray->showMessage(
                QStringLiteral("A run waits for your approval"),
                QStringLiteral("%1 wants to run %2 code.")
                    .arg(who, PlainText::notification(PlainText::shortName(
                                  ApprovalDialog::languageTitle(request.language)))),
                QSystemTrayIcon::Warning, 15000);
    }
}
