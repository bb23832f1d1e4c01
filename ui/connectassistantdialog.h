#pragma once

#include "credentialstore.h"

#include <QDialog>
#include <QList>
#include <memory>

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QVBoxLayout;

// Ready-to-paste configuration for the MCP clients we know, pointing at this binary (stdio) and,
// when it is on, at this window's HTTP server. The token is masked on screen unless asked for;
// copying always copies the real one, since a masked config would be useless.
//
// With a credential store, an HTTP snippet holds no shared token: its first Copy makes a
// credential for that assistant ("Claude Code", "Gemini CLI") and copies the configuration with
// it, so each assistant connected this way is known by its own key (Settings → Assistants
// lists and revokes them).
class ConnectAssistantDialog : public QDialog
{
    Q_OBJECT
public:
    // `httpUrl`: empty when the HTTP server is off. `token`: the bearer token it expects.
    // `credentialStore`: the credentials file (CredentialStore::defaultPath()); empty: the HTTP
    // snippets carry the shared token.
    ConnectAssistantDialog(const QString &binaryPath, const QString &httpUrl, const QString &token,
                           QWidget *parent = nullptr, const QString &credentialStore = QString());

private:
    struct Snippet
    {
        QPlainTextEdit *view = nullptr;
        QString text;       // with kTokenMark where the token goes
        QString tokenValue; // the token as it must appear in this text (escaped for JSON)
        QLabel *label = nullptr;
        // The assistant a credential is made for on the first Copy; "" once made, or for a
        // snippet that needs none.
        QString credentialFor;
    };

    // One tab per client, each adding its snippets (stdio, then HTTP when the server is on).
    QWidget *claudeCodePage(const QString &binaryPath, const QString &httpUrl,
                            const QString &token);
    QWidget *geminiPage(const QString &binaryPath, const QString &httpUrl, const QString &token);
    QWidget *claudeDesktopPage(const QString &binaryPath);
    // Where a client could use the window's HTTP server but it is off.
    void addHttpOffNote(QVBoxLayout *layout);
    void addSnippet(QVBoxLayout *layout, const QString &name, const QString &explanation,
                    const QString &text, const QString &tokenValue);
    void updateShownText();
    QString withToken(const Snippet &snippet, bool real) const;
    // Makes the snippet's credential; false (and a message) when the store refuses.
    bool makeCredential(Snippet &snippet);

    QString m_token;
    std::unique_ptr<CredentialStore> m_credentials;
    QList<Snippet> m_snippets;
    QCheckBox *m_showTokenCheck = nullptr;
};
