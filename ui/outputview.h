#pragma once

#include "runrecord.h"

#include <QPlainTextEdit>
#include <QStringDecoder>
#include <QTimer>

// A run's output, stdout and stderr told apart by colour, streaming live. Chunks are gathered and
// drawn at most every few tens of milliseconds, and the view keeps a bounded number of lines, so
// a program printing megabytes per second does not freeze the window.
class OutputView : public QPlainTextEdit
{
    Q_OBJECT
public:
    explicit OutputView(QWidget *parent = nullptr);

    // Shows these chunks, replacing what was shown.
    void setChunks(const QList<OutputChunk> &chunks);
    // Adds output as it arrives.
    void appendChunk(int stream, const QByteArray &data);
    // A line in the view's own voice (how the run ended, truncation), after the output.
    void appendNote(const QString &text);
    void clearOutput();
    // Output waiting to be drawn (for tests: draw it now).
    void flushPending();

    static constexpr int kMaxLines = 20000;
    static constexpr int kFlushMs = 40;

private:
    void insert(int stream, const QString &text);

    QList<OutputChunk> m_pending;
    QStringDecoder m_decoders[2];
    QTimer m_flush;
    bool m_followTail = true;
};
