#pragma once

#include "lineframer.h"
#include "mcptransport.h"

#include <QSocketNotifier>

// MCP over stdin/stdout: one JSON message per line. Reads and writes without blocking the event
// loop (pipes are switched to non-blocking, writes are queued), so a slow client never stalls
// running executions. stdout carries protocol messages only.
class StdioTransport : public McpTransport
{
    Q_OBJECT
public:
    explicit StdioTransport(int inFd = 0, int outFd = 1, QObject *parent = nullptr);
    ~StdioTransport() override;

    // One stream: every message is a line of it.
    void respond(const QJsonValue &id, const QJsonObject &response) override;
    void notify(const QJsonObject &message,
                const QJsonValue &relatedRequestId = QJsonValue::Undefined) override;
    // Writes what is queued, blocking if needed; for the last messages before exit.
    void flushBlocking();

private:
    void write(const QJsonObject &message);
    void onReadable();
    void onWritable();
    void writeQueued();
    void endOfInput();

    int m_in;
    int m_out;
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr;
    LineFramer m_framer;
    QByteArray m_outQueue;
    bool m_closed = false;
};
