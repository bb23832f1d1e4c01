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
    // Only the lines the view keeps are drawn: inserting a megabyte of short lines just to have
    // the document drop most of them again would freeze the window.
    m_pending = chunks;
    qsizetype lines = 0;
    for (qsizetype i = m_pending.size() - 1; i >= 0; --i) {
        OutputChunk &chunk = m_pending[i];
        const qsizetype here = chunk.data.count('\n');
        if (lines + here < kMaxLines) {
            lines += here;
            continue;
        }
        // Keep this chunk from the line where the limit is reached; drop all before it.
        qsizetype at = chunk.data.size();
        for (qsizetype need = kMaxLines - lines; need > 0 && at > 0; --need)
            at = chunk.data.lastIndexOf('\n', at - 1);
        chunk.data = chunk.data.mid(qMax<qsizetype>(0, at + 1));
        m_pending.remove(0, i);
        break;
    }
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
    QTextCursor edit(document());
    edit.beginEditBlock(); // one layout pass for the whole batch
    for (const OutputChunk &chunk : chunks) {
        QStringDecoder &decoder = m_decoders[chunk.stream == 2 ? 1 : 0];
        insert(chunk.stream, decoder.decode(chunk.data));
    }
    edit.endEditBlock();
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
