#pragma once

#include "oauthserver.h"

#include <QDialog>

class QLabel;

class QCheckBox;
class QComboBox;

// "Claude Code (as named by its registration) wants to run code here": an assistant signing in
// (OAuth) waits for this answer. Allow lets it in as the assistant chosen here (its policy then
// applies; a name without a policy can be given one, copied from the default); Deny, closing the
// dialog or Escape refuses it. Enter answers nothing: no button is the default, as for a run's
// approval.
class ConsentDialog : public QDialog
{
    Q_OBJECT
public:
    // `policyNames`: the assistants that have a policy, offered as what it runs as;
    // `heldNames`: the names credentials are made for. The client's own name is suggested only
    // when neither has it.
    ConsentDialog(const ConsentRequest &request, const QStringList &policyNames,
                  const QStringList &heldNames = {}, QWidget *parent = nullptr);

    const ConsentRequest &request() const { return m_request; }
    QString assistant() const;
    // Whether a policy of its own is to be made for assistant() (it has none yet).
    bool wantsPolicy() const;
    // The sign-in was answered elsewhere or ended: the dialog closes without an answer.
    void withdraw();
    // Escape refuses, as closing does.
    void reject() override;

Q_SIGNALS:
    void answered(const QString &id, bool allow, const QString &assistant, bool makePolicy);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void answer(bool allow);
    void updatePolicyBox();
    // The "Opened by" row of a sign-in a web page opened.
    static QLabel *openedFromLabel(const QString &openedFrom);

    ConsentRequest m_request;
    QStringList m_policyNames;
    QComboBox *m_assistant;
    QCheckBox *m_makePolicy;
    bool m_done = false;
};
