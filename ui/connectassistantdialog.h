#pragma once

#include <QDialog>
#include <QList>

class QCheckBox;
class QPlainTextEdit;
class QPushButton;
class QVBoxLayout;

// Ready-to-paste configuration for the MCP clients we know, pointing at this binary (stdio) and,
// when it is on, at this window's HTTP server. The token is masked on screen unless asked for;
// copying always copies the real one, since a masked config would be useless.
class ConnectAssistantDialog : public QDialog
{
    Q_OBJECT
public:
    // `httpUrl`: empty when the HTTP server is off. `token`: the bearer token it expects.
    ConnectAssistantDialog(const QString &binaryPath, const QString &httpUrl, const QString &token,
                           QWidget *parent = nullptr);

private:
    struct Snippet
    {
        QPlainTextEdit *view = nullptr;
        QString text;       // with kTokenMark where the token goes
        QString tokenValue; // the token as it must appear in this text (escaped for JSON)
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

    QString m_token;
    QList<Snippet> m_snippets;
    QCheckBox *m_showTokenCheck = nullptr;
};
