#pragma once

#include <QByteArray>
#include <QList>

// Decodes the engine's multiplexed attach/logs stream: each frame is an 8-byte header (byte 0 the
// stream: 0 stdin, 1 stdout, 2 stderr; bytes 4-7 the big-endian payload length) and its payload.
// Input may be split anywhere; frames come out whole, in order.
class MultiplexDecoder
{
public:
    struct Frame
    {
        int stream = 0;
        QByteArray data;
    };

    // Appends decoded frames to `out`. Returns false once the input is not a multiplexed stream
    // (an unknown stream byte): the caller should stop and report a protocol error.
    bool feed(const QByteArray &bytes, QList<Frame> &out);
    bool hasPartialFrame() const { return !m_pending.isEmpty(); }

private:
    QByteArray m_pending;
    bool m_broken = false;
};
