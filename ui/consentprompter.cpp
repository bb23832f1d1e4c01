#include "consentprompter.h"

#include "appsettings.h"
#include "consentdialog.h"
#include "uilog.h"

#include <QMessageBox>
#include <QWidget>

ConsentPrompter::ConsentPrompter(OAuthServer *oauth, QWidget *window)
    : QObject(window), m_oauth(oauth), m_window(window)
{
    oauth->setWindowAsks(true);
    connect(oauth, &OAuthServer::consentNeeded, this, &ConsentPrompter::open);
    connect(oauth, &OAuthServer::consentSettled, this, [this](const QString &id) {
        for (ConsentDialog *d : dialogs())
            if (d->request().id == id) {
                m_dialogs.removeAll(d);
                d->withdraw();
            }
    });
    for (const ConsentRequest &r : oauth->waiting())
        open(r);
}

QList<ConsentDialog *> ConsentPrompter::dialogs() const
{
    QList<ConsentDialog *> list;
    for (const QPointer<ConsentDialog> &d : m_dialogs)
        if (d)
            list.append(d);
    return list;
}

void ConsentPrompter::open(const ConsentRequest &request)
{
    QStringList names;
    for (const AssistantPolicy &p : AppSettings::loadPolicies().assistants)
        names.append(p.client);
    auto *dialog = new ConsentDialog(request, names, m_window);
    m_dialogs.append(dialog);
    connect(
        dialog, &ConsentDialog::answered, this,
        [this, dialog](const QString &id, bool allow, const QString &assistant, bool makePolicy) {
            m_dialogs.removeAll(dialog);
            if (!m_oauth)
                return;
            QString error;
            if (!m_oauth->decide(id, allow, assistant, &error)) {
                qCWarning(lcUi).noquote() << "sign-in" << id << "not answered:" << error;
                QMessageBox::warning(m_window, tr("Sign-in"), error);
                return;
            }
            if (makePolicy)
                Q_EMIT policyWanted(assistant);
        });
    qCInfo(lcUi).noquote() << "sign-in" << request.id << "of" << request.clientName
                           << "asks for approval";
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
}
