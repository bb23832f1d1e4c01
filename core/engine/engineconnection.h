#pragma once

#include "engineaddress.h"
#include "engineerror.h"
#include "enginerequest.h"
#include "httpresponseparser.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

class EngineReply;
class EngineTransport;

// One connection to an engine carrying one request at a time, over whichever byte stream the
// address calls for (EngineTransport: a local socket, TCP, TLS, ssh). After a kept-alive response
// it reports itself idle for reuse; after a 101 it turns into a raw byte pipe for attach (the
// engine has hijacked it).
class EngineConnection : public QObject
{
    Q_OBJECT
public:
    EngineConnection(const EngineAddress &address, QObject *parent = nullptr);
    ~EngineConnection() override;

    void send(const EngineRequest &request, EngineReply *reply);
    // Fails the request when no byte of its answer arrives for `ms` (0: wait for ever). Counts
    // from the request and from every piece of the answer; a hijacked stream is not watched.
    void setAnswerTimeout(int ms) { m_answerTimeoutMs = ms; }
    bool isRaw() const { return m_raw; }
    // An idle connection may have been closed by the engine (restart, idle timeout) without the
    // close having been seen yet: true only while nothing at all is waiting to be read.
    bool isReusable() const;
    void writeRaw(const QByteArray &bytes);
    void closeRaw();

Q_SIGNALS:
    void idle(EngineConnection *self);
    void gone(EngineConnection *self); // closed or failed; the client forgets it
    void rawData(const QByteArray &bytes);
    void rawClosed();

private:
    void onOpened();
    void onReadyRead();
    void onClosed(const QString &reason = {});
    void onFailed(const QString &reason);
    void onAnswerTimeout();
    void failCurrent(const EngineError &error);
    void processBuffer();
    EngineError unreachable(const QString &reason) const;

    EngineAddress m_address;
    EngineTransport *m_transport;
    HttpResponseParser m_parser;
    QPointer<EngineReply> m_reply;
    QByteArray m_pendingWrite;
    QByteArray m_what; // "GET /v1.41/..." of the request in flight, for messages
    QTimer m_answerTimer;
    int m_answerTimeoutMs = 0;
    bool m_raw = false;
    bool m_busy = false;
    bool m_gotBytes = false;
};
