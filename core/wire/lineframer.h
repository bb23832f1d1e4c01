#pragma once

#include <QByteArray>
#include <QList>

// Splits a byte stream into newline-delimited messages (MCP's stdio transport, the monitor socket,
// a run's output as progress lines). Accepts input in pieces of any size; a line longer than the
// limit is dropped whole and reported, so one oversized message cannot exhaust memory or
// desynchronise the stream.
class LineFramer
{
public:
    explicit LineFramer(qsizetype maxLine = 64 * 1024 * 1024) : m_maxLine(maxLine) {}

    struct Output
    {
        QList<QByteArray> lines; // without the newline and a trailing \r; empty lines skipped
        int oversized = 0;       // lines dropped for their size
    };

    Output feed(const QByteArray &bytes);
    // At end of input: a last line without newline is still a message.
    QByteArray flush();

private:
    QByteArray m_buffer;
    qsizetype m_maxLine;
    bool m_discarding = false;
};
