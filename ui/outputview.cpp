#include "outputview.h"

#include <QFontDatabase>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>

OutputView::OutputView(QWidget *parent) : QPlainTextEdit(parent)
{
    setObjectName(QStringLiteral("outputView"));
    setReadOnly(true);
    setUndoRedoEnabled(false);
    setMaximumBlockCount(kMaxLines);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setLineWrapMode(QPlainTextEdit::WidgetWidth);
    setPlaceholderText(QStringLiteral("No output yet."));
    m_decoders[0] = QStringDecoder(QStringDecoder::Utf8);
    m_decoders[1] = QStringDecoder(QStringDecoder::Utf8);
    m_flush.setSingleShot(true);
    m_flush.setInterval(kFlushMs);
    connect(&m_flush, &QTimer::timeout, this, &OutputView::flushPending);
    // Follow new output only while the reader is at the end.
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this,
            [this](int value) { m_followTail = value >= verticalScrollBar()->maximum() - 2; });
}

void OutputView::setChunks(const QList<OutputChunk> &chunks)
{
    clearOutput();
    m_pending = chunks;
    flushPending();
    verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

void OutputView::appendChunk(int stream, const QByteArray &data)
{
    if (data.isEmpty())
        return;
    if (!m_pending.isEmpty() && m_pending.last().stream == stream)
        m_pending.last().data += data;
    else
        m_pending.append({stream, data});
    if (!m_flush.isActive())
        m_flush.start();
}

void OutputView::appendNote(const QString &text)
{
    flushPending();
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    QTextCharFormat format;
    format.setForeground(palette().color(QPalette::PlaceholderText));
    format.setFontItalic(true);
    if (!document()->isEmpty() && !document()->lastBlock().text().isEmpty())
        cursor.insertBlock();
    cursor.insertText(text, format);
}

void OutputView::clearOutput()
{
    m_pending.clear();
    m_flush.stop();
    m_decoders[0] = QStringDecoder(QStringDecoder::Utf8);
    m_decoders[1] = QStringDecoder(QStringDecoder::Utf8);
    clear();
    m_followTail = true;
}

void OutputView::flushPending()
{
    m_flush.stop();
    if (m_pending.isEmpty())
        return;
    const QList<OutputChunk> chunks = std::exchange(m_pending, {});
    const bool follow = m_followTail;
    for (const OutputChunk &chunk : chunks) {
        QStringDecoder &decoder = m_decoders[chunk.stream == 2 ? 1 : 0];
        insert(chunk.stream, decoder.decode(chunk.data));
    }
    if (follow)
        verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

void OutputView::insert(int stream, const QString &text)
{
    if (text.isEmpty())
        return;
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    QTextCharFormat format;
    if (stream == 2)
        format.setForeground(QColor(0xd6, 0x3b, 0x3b));
    else
        format.setForeground(palette().color(QPalette::Text));
    // Lines become blocks (the view's line limit counts blocks).
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (int i = 0; i < lines.size(); ++i) {
        if (i > 0)
            cursor.insertBlock();
        if (!lines.at(i).isEmpty())
            cursor.insertText(lines.at(i), format);
    }
}
