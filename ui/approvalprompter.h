#pragma once

#include <QList>
#include <QObject>
#include <QPointer>

class AppController;
class ApprovalDialog;
class QSystemTrayIcon;
class QWidget;
struct ApprovalRequest;

// Puts each run that waits for approval in front of the person: a dialog of its own (several may
// wait at once, from different assistants), and a tray notification when the window is hidden.
class ApprovalPrompter : public QObject
{
    Q_OBJECT
public:
    ApprovalPrompter(AppController *controller, QWidget *window, QSystemTrayIcon *tray);

    // The dialogs open now, oldest first.
    QList<ApprovalDialog *> dialogs() const;

private:
    void open(const ApprovalRequest &request);
    ApprovalDialog *find(const QString &id) const;

    AppController *m_controller;
    QWidget *m_window;
    QPointer<QSystemTrayIcon> m_tray;
    QList<QPointer<ApprovalDialog>> m_dialogs; // oldest first; each knows its request
};
