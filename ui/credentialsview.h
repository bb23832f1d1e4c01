#pragma once

#include "credentialstore.h"

#include <QWidget>

class QLabel;
class QPushButton;
class QTableWidget;

// Settings → Assistants, below the policies: the assistants' HTTP credentials (each one
// assistant's key: its requests run as that assistant whatever name the client gives), with
// when each was made and last used. "New credential…" makes one and shows its secret once;
// "Revoke" takes one away at once (its next request is refused), without waiting for OK: a
// credential is not a setting that Cancel could take back. The shared token is listed first
// for what it is (its requests run as the name the client claims).
class CredentialsView : public QWidget
{
    Q_OBJECT
public:
    explicit CredentialsView(const QString &storePath, QWidget *parent = nullptr);

    QTableWidget *table() const { return m_table; }
    // Reads the store again (another process may have changed it).
    void reload();
    // Makes a credential for `name` and returns its secret ("" and a message box on failure);
    // the button's work, without the name dialog.
    QString create(const QString &name);
    // Revokes the credential on `row` (not the shared token's); false when there is none.
    bool revokeRow(int row);

Q_SIGNALS:
    // A credential was made or revoked: policies that name an assistant may now match
    // differently, and the policy table marks names a credential holds.
    void changed();

private:
    void showSecret(const Credential &credential, const QString &secret);

    CredentialStore m_store;
    QTableWidget *m_table;
    QPushButton *m_revoke;
    QList<Credential> m_shown;
};
