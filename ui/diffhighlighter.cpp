#include "diffhighlighter.h"

#include <QColor>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QTextCharFormat>
#include <QTextCursor>

namespace {
const QColor kAddedText(0x1f, 0x8a, 0x3c);
const QColor kAddedTint(0x2e, 0xa0, 0x43, 0x26);
const QColor kRemovedText(0xd6, 0x3b, 0x3b);
const QColor kRemovedTint(0xd6, 0x3b, 0x3b, 0x22);

QTextCharFormat lineFormat(const QColor &text, const QColor &background)
{
    QTextCharFormat f;
    f.setForeground(text);
    if (background.isValid())
        f.setBackground(background);
    return f;
}
} // namespace

DiffHighlighter::DiffHighlighter(QTextDocument *document) : QSyntaxHighlighter(document) {}

void DiffHighlighter::highlightBlock(const QString &text)
{
    static const QTextCharFormat added = lineFormat(kAddedText, QColor());
    static const QTextCharFormat removed = lineFormat(kRemovedText, QColor());
    static const QTextCharFormat hunk = lineFormat(QColor(0x3b, 0x7d, 0xd8), QColor());
    static const QTextCharFormat header = lineFormat(QColor(0x8a, 0x8a, 0x8a), QColor());
    // The file headers come before the first hunk; after it, "---" is a removed "--" line.
    const bool inHunks = previousBlockState() == 1 || text.startsWith(u"@@");
    setCurrentBlockState(inHunks ? 1 : 0);
    if ((!inHunks && (text.startsWith(u"+++") || text.startsWith(u"---"))) ||
        text.startsWith(u"... diff cut") || text.startsWith(u"\\"))
        setFormat(0, int(text.size()), header);
    else if (text.startsWith(u"@@"))
        setFormat(0, int(text.size()), hunk);
    else if (text.startsWith(u'+'))
        setFormat(0, int(text.size()), added);
    else if (text.startsWith(u'-'))
        setFormat(0, int(text.size()), removed);
}

QList<QTextEdit::ExtraSelection> DiffHighlighter::lineTints(QPlainTextEdit *view)
{
    QList<QTextEdit::ExtraSelection> tints;
    bool inHunks = false;
    for (QTextBlock block = view->document()->begin(); block.isValid(); block = block.next()) {
        const QString text = block.text();
        inHunks = inHunks || text.startsWith(u"@@");
        if (!inHunks || text.startsWith(u"@@") || text.isEmpty())
            continue;
        if (text.front() != u'+' && text.front() != u'-')
            continue;
        QTextEdit::ExtraSelection tint;
        tint.cursor = QTextCursor(block);
        tint.format.setBackground(text.front() == u'+' ? kAddedTint : kRemovedTint);
        tint.format.setProperty(QTextFormat::FullWidthSelection, true);
        tints.append(tint);
    }
    return tints;
}
