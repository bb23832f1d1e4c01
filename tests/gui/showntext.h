#pragma once

// What a person reads, not what a widget was given: a label or tooltip whose text looks like HTML
// is drawn as HTML (Qt::mightBeRichText), so "<!--" in a name hides what follows it on screen
// while text() still holds it. These render the text as the widget would.

#include <QLabel>
#include <QPlainTextEdit>
#include <QStringList>
#include <QTextDocument>
#include <QWidget>

inline QString shownRichText(const QString &html)
{
    QTextDocument document;
    document.setHtml(html);
    return document.toPlainText();
}

inline QString shownText(const QLabel *label)
{
    const bool rich = label->textFormat() == Qt::RichText ||
                      (label->textFormat() == Qt::AutoText && Qt::mightBeRichText(label->text()));
    return rich ? shownRichText(label->text()) : label->text();
}

// A tooltip is read as HTML by the same guess.
inline QString shownToolTip(const QString &tip)
{
    return Qt::mightBeRichText(tip) ? shownRichText(tip) : tip;
}

// Every label and text view under `root`, as drawn.
inline QString shownTexts(const QWidget *root)
{
    QStringList texts;
    for (const QLabel *label : root->findChildren<QLabel *>())
        texts << shownText(label);
    for (const QPlainTextEdit *edit : root->findChildren<QPlainTextEdit *>())
        texts << edit->toPlainText();
    return texts.join(u'\n');
}
