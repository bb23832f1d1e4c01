#pragma once

#include "oauthserver.h"

#include <QObject>
#include <QPointer>
#include <functional>

class ConsentDialog;
class MonitorServer;
class QWidget;

// Asks in the window about each assistant signing in, one dialog a sign-in: to this window's
// own HTTP endpoint (its OAuthServer), and to the endpoints of headless instances (their
// questions come over the monitor socket). The answer goes back where the question came from; a
// sign-in answered elsewhere (--approve-client), ended, or whose instance went, closes its
// dialog.
class ConsentPrompter : public QObject
{
    Q_OBJECT
public:
    explicit ConsentPrompter(QWidget *window);

    // This window's endpoint.
    void watch(OAuthServer *oauth);
    // Headless instances' endpoints.
    void watch(MonitorServer *monitor);
    QList<ConsentDialog *> dialogs() const;

Q_SIGNALS:
    // Allowed as an assistant that has no policy, with "give it a policy of its own".
    void policyWanted(const QString &assistant);

private:
    // Gives a person's answer to where the question came from; false (`error` says why) when it
    // could not be given.
    using Answer = std::function<bool(bool allow, const QString &assistant, QString *error)>;
    // `instance`: the headless instance that asks ("": this window's endpoint).
    void open(const QString &instance, const ConsentRequest &request, const Answer &answer);
    // Closes the dialogs of that instance's sign-in `id` (every one of it when `id` is empty).
    void close(const QString &instance, const QString &id);

    struct Open
    {
        QString instance;
        QPointer<ConsentDialog> dialog;
    };
    QWidget *m_window;
    QList<Open> m_open;
};
