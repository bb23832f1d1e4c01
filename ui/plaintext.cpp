#include "plaintext.h"

#include <QLabel>
#include <QTextDocument>

namespace {
bool isInvisible(char32_t c, PlainText::Lines lines)
{
    if (c == u' ')
        return false;
    if (lines == PlainText::Lines::Keep && (c == u'\n' || c == u'\t'))
        return false;
    // Hangul fillers are letters that draw nothing: an identifier made of them looks like space.
    if (c == 0x115F || c == 0x1160 || c == 0x3164 || c == 0xFFA0)
        return true;
    switch (QChar::category(c)) {
    case QChar::Other_Control:
    case QChar::Other_Format:
    case QChar::Other_Surrogate:
    case QChar::Other_NotAssigned:
    case QChar::Separator_Line:
    case QChar::Separator_Paragraph:
    case QChar::Separator_Space:
        return true;
    default:
        return false;
    }
}
} // namespace

QString PlainText::visible(const QString &text, Lines lines, int *marked)
{
    int count = 0;
    QString out;
    out.reserve(text.size());
    for (qsizetype i = 0; i < text.size(); ++i) {
        char32_t code = text.at(i).unicode();
        qsizetype units = 1;
        if (text.at(i).isHighSurrogate() && i + 1 < text.size() &&
            text.at(i + 1).isLowSurrogate()) {
            code = QChar::surrogateToUcs4(text.at(i), text.at(i + 1));
            units = 2;
        }
        // A lone surrogate stays itself (U+D800…U+DFFF), which is Other_Surrogate: marked.
        if (isInvisible(code, lines)) {
            ++count;
            out += QStringLiteral("⟨U+%1⟩").arg(uint(code), 4, 16, QLatin1Char('0')).toUpper();
        } else {
            out += text.mid(i, units);
        }
        i += units - 1;
    }
    if (marked)
        *marked = count;
    return out;
}

QString PlainText::shortName(const QString &text, int max)
{
    const QString shown = visible(text);
    if (shown.size() <= max)
        return shown;
    return QStringLiteral("%1… (%2 more characters)").arg(shown.left(max)).arg(shown.size() - max);
}

QLabel *PlainText::label(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(parent);
    label->setTextFormat(Qt::PlainText);
    label->setText(text);
    return label;
}

QString PlainText::toolTip(const QString &text)
{
    if (text.isEmpty())
        return text;
    // Always rich text, escaped: then nothing in `text` can be read as markup.
    return Qt::convertFromPlainText(text, Qt::WhiteSpaceNormal);
}

QString PlainText::notification(const QString &text)
{
    QString out = visible(text);
    out.replace(u'<', u'‹').replace(u'>', u'›').replace(u'&', u'+');
    return out;
}
