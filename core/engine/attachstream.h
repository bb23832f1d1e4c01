#pragma once

#include "engineerror.h"
#include "multiplexdecoder.h"

#include <QObject>
#include <QPointer>

class EngineConnection;
class EngineReply;

// A container's attached stdin/stdout/stderr over a hijacked engine connection. Output arrives
// as whole multiplexed frames; when the container was created with a TTY the bytes are raw and
// reported as stdout.
class AttachStream : public QObject
{
    Q_OBJECT
public:
    AttachStream(EngineConnection *connection, bool tty, QObject *parent = nullptr);
    ~AttachStream() override;

    bool isEstablished() const { return m_established; }
    void write(const QByteArray &bytes);
    void close();

    // Used by EngineClient once the upgrade request has been sent on the connection.
    void watch(EngineReply *reply);

Q_SIGNALS:
    void established();
    void output(int stream, const QByteArray &bytes); // 1 stdout, 2 stderr
    void ended();
    void failed(const EngineError &error);

private:
    void onRawData(const QByteArray &bytes);

    QPointer<EngineConnection> m_connection;
    MultiplexDecoder m_decoder;
    bool m_tty = false;
    bool m_established = false;
    bool m_ended = false;
};
