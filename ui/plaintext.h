#pragma once

#include <QString>

class QLabel;
class QWidget;

// Text that came from outside the window (an assistant's request, a program's output, a headless
// instance's record) shown as exactly that text. A QLabel, a tooltip or a message box guesses
// whether its text is HTML (Qt::mightBeRichText), so a file named "<!--" would hide the names after
// it; and characters that draw nothing (bidi overrides, zero-width ones, controls) would make what
// is read differ from what runs. Everything that shows such text goes through here.
class PlainText
{
public:
    enum class Lines
    {
        Keep, // a program: line feeds and tabs stay as they are
        Mark  // a name: every line break and tab is marked too
    };

    // `text` with each character that would not be seen as itself (controls, format characters
    // such as U+202E, line and paragraph separators, spaces other than U+0020, fillers that draw
    // nothing) written as "⟨U+202E⟩". `marked` counts them.
    static QString visible(const QString &text, Lines lines = Lines::Mark, int *marked = nullptr);
    // A name at most `max` characters long for a heading; a longer one says how much is left out.
    static QString shortName(const QString &text, int max = 200);
    // A label that never reads its text as HTML.
    static QLabel *label(const QString &text, QWidget *parent = nullptr);
    // A tooltip (which Qt would read as HTML when it looks like HTML) that shows `text` as it is.
    static QString toolTip(const QString &text);
    // For a desktop notification, whose server may read markup: visible(), and <, > and &
    // replaced by look-alikes that are not markup.
    static QString notification(const QString &text);
};
