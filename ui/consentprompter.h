#pragma once

#include "oauthserver.h"

#include <QObject>
#include <QPointer>

class ConsentDialog;
class QWidget;

// Asks in the window about each assistant signing in to this window's HTTP endpoint (one dialog
// a sign-in), and gives the answer to the authorization server; a sign-in answered elsewhere
// (--approve-client) or ended closes its dialog.
class ConsentPrompter : public QObject
{
    Q_OBJECT
public:
    ConsentPrompter(OAuthServer *oauth, QWidget *window);

    QList<ConsentDialog *> dialogs() const;

Q_SIGNALS:
    // Allowed as an assistant that has no policy, with "give it a policy of its own".
    void policyWanted(const QString &assistant);

private:
    void open(const ConsentRequest &request);

    QPointer<OAuthServer> m_oauth;
    QWidget *m_window;
    QList<QPointer<ConsentDialog>> m_dialogs;
};
