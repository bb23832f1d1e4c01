#pragma once

#include <QList>
#include <QSyntaxHighlighter>
#include <QTextEdit>

class QPlainTextEdit;

// Colours a unified diff: added lines green, removed lines red, hunk headers blue, the file
// headers and the notes a change set adds ("... diff cut") dimmed. Colours with some
// transparency rather than the palette's, so that it reads on light and dark themes alike.
class DiffHighlighter : public QSyntaxHighlighter
{
    Q_OBJECT
public:
    explicit DiffHighlighter(QTextDocument *document);

    // The tints of added and removed lines across the whole width of `view` (a highlighter's
    // formats cover the text only), as extra selections to set on it once its text is in.
    static QList<QTextEdit::ExtraSelection> lineTints(QPlainTextEdit *view);

protected:
    void highlightBlock(const QString &text) override;
};
