#include "consentprompter.h"

#include "appsettings.h"
#include "consentdialog.h"
#include "credentialstore.h"
#include "monitorserver.h"
#include "uilog.h"

#include <QMessageBox>
#include <QWidget>

ConsentPrompter::ConsentPrompter(QWidget *window) : QObject(window), m_window(window) {}

void ConsentPrompter::watch(OAuthServer *oauth)
{
    oauth->setWindowAsks(true);
    QPointer<OAuthServer> guard(oauth);
    const auto answerTo = [guard](const QString &id) -> Answer {
        return [guard, id](bool allow, const QString &assistant, QString *error) {
            if (!guard) {
                *error = QStringLiteral("the endpoint is gone");
                return false;
            }
            return guard->decide(id, allow, assistant, error);
        };
    };
    connect(oauth, &OAuthServer::consentNeeded, this,
            [this, answerTo](const ConsentRequest &r) { open(QString(), r, answerTo(r.id)); });
    connect(oauth, &OAuthServer::consentSettled, this,
            [this](const QString &id) { close(QString(), id); });
    for (const ConsentRequest &r : oauth->waiting())
        open(QString(), r, answerTo(r.id));
}

void ConsentPrompter::watch(MonitorServer *monitor)
{
    connect(monitor, &MonitorServer::signInRequested, this,
            [this, monitor](const QString &instance, const MonitorProtocol::SignIn &s) {
                const ConsentRequest request{s.id,          s.clientId,
                                             s.clientName,  s.source,
                                             s.redirectUri, QDateTime::currentDateTimeUtc(),
                                             s.openedFrom};
                QPointer<MonitorServer> guard(monitor);
                open(instance, request,
                     [guard, instance, id = s.id](bool allow, const QString &assistant,
                                                  QString *error) {
                         if (guard && guard->answerSignIn(instance, id, allow, assistant))
                             return true;
                         *error = QStringLiteral("the server that asked has gone");
                         return false;
                     });
            });
    connect(monitor, &MonitorServer::approvalWithdrawn, this,
            [this](const QString &instance, const QString &id) { close(instance, id); });
    connect(monitor, &MonitorServer::instanceDisconnected, this,
            [this](const QString &instance) { close(instance, QString()); });
}

QList<ConsentDialog *> ConsentPrompter::dialogs() const
{
    QList<ConsentDialog *> list;
    for (const Open &o : m_open)
        if (o.dialog)
            list.append(o.dialog);
    return list;
}

void ConsentPrompter::close(const QString &instance, const QString &id)
{
    for (const Open &o : std::as_const(m_open))
        if (o.dialog && o.instance == instance && (id.isEmpty() || o.dialog->request().id == id))
            o.dialog->withdraw();
    m_open.removeIf([](const Open &o) { return !o.dialog || !o.dialog->isVisible(); });
}

void ConsentPrompter::open(const QString &instance, const ConsentRequest &request,
                           const Answer &answer)
{
    for (const Open &o : std::as_const(m_open))
        if (o.dialog && o.instance == instance && o.dialog->request().id == request.id)
            return;
    QStringList names;
    for (const AssistantPolicy &p : AppSettings::loadPolicies().assistants)
        names.append(p.client);
    QStringList held;
    for (const Credential &c : CredentialStore(CredentialStore::defaultPath()).list())
        held.append(c.name);
    auto *dialog = new ConsentDialog(request, names, held, m_window);
    m_open.append({instance, dialog});
    connect(dialog, &ConsentDialog::answered, this,
            [this, dialog, answer](const QString &id, bool allow, const QString &assistant,
                                   bool makePolicy) {
                m_open.removeIf([dialog](const Open &o) { return o.dialog == dialog; });
                QString error;
                if (!answer(allow, assistant, &error)) {
                    qCWarning(lcUi).noquote() << "sign-in" << id << "not answered:" << error;
                    QMessageBox::warning(m_window, tr("Sign-in"), error);
                    return;
                }
                if (makePolicy)
                    Q_EMIT policyWanted(assistant);
            });
    qCInfo(lcUi).noquote() << "sign-in" << request.id << "of" << request.clientName
                           << "asks for approval"
                           << (instance.isEmpty()
                                   ? QString()
                                   : QStringLiteral("(instance %1)").arg(instance.left(8)));
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
}
