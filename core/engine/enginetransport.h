#pragma once

#include "engineaddress.h"

#include <QByteArray>
#include <QObject>
#include <QTimer>

// The byte stream under one engine connection: a local socket, a TCP port (plain or TLS), or a
// channel of an ssh connection (SshTransport). EngineConnection speaks HTTP/1.1 (and hijacked
// attach streams) over it without knowing which. Asynchronous: open() returns at once; opened() or
// failed() follows, failed() at the latest after kConnectTimeoutMs (for ssh, after its own
// deadlines: see kConnectTimeoutMs below).
//
// After opened(), the stream ends with exactly one of closed() (the far side ended it) or
// failed(reason) (it broke, with the reason in words). abort() ends it at once from this side:
// it emits closed() if the stream was open, and nothing while it was still opening.
class EngineTransport : public QObject
{
    Q_OBJECT
public:
    // How long a connection may take to be established: the TCP connect and TLS handshake (ssh
    // has its own deadlines instead: SshMaster's 60 s for the one connection, which a
    // connection waits for 65 s at most, and SshTransport's 30 s for a dial-stdio fallback).
    static constexpr int kConnectTimeoutMs = 10000;

    enum class State
    {
        Closed,
        Opening,
        Open
    };

    // The transport for the address's scheme (not opened yet).
    static EngineTransport *create(const EngineAddress &address, QObject *parent = nullptr);

    const EngineAddress &address() const { return m_address; }
    State state() const { return m_state; }
    void open();
    void abort();
    virtual void write(const QByteArray &bytes) = 0;
    virtual QByteArray readAll() = 0;
    virtual qint64 bytesAvailable() const = 0;
    // An open stream the far side has not closed and that holds no unread byte (the engine may
    // have closed an idle connection without the close having been seen yet).
    virtual bool isReusable() const = 0;

Q_SIGNALS:
    void opened();
    void readyRead();
    void closed();
    void failed(const QString &reason);

protected:
    EngineTransport(const EngineAddress &address, QObject *parent);

    virtual void doOpen() = 0;
    // Tears the stream down without reporting anything (the state is already Closed).
    virtual void doAbort() = 0;
    // Why the connect timed out, beyond the time (ssh adds what it printed).
    virtual QString timeoutDetail() const { return {}; }

    // For the implementations: the stream may be written; `established` stops the connect
    // timer (ssh's stream is writable before the far side has been reached).
    void reportOpened(bool established = true);
    void reportEstablished() { m_connectTimer.stop(); }
    void reportClosed();
    void reportFailed(const QString &reason);
    // A descriptor's peek: nothing waiting and not closed (for socket transports).
    static bool descriptorIsQuiet(qintptr descriptor);

private:
    void onConnectTimeout();

    EngineAddress m_address;
    State m_state = State::Closed;
    QTimer m_connectTimer;
};
