#include "multiplexdecoder.h"

bool MultiplexDecoder::feed(const QByteArray &bytes, QList<Frame> &out)
{
    if (m_broken)
        return false;
    m_pending += bytes;
    qsizetype pos = 0;
    while (m_pending.size() - pos >= 8) {
        const auto *h = reinterpret_cast<const unsigned char *>(m_pending.constData() + pos);
        if (h[0] > 2 || h[1] != 0 || h[2] != 0 || h[3] != 0) {
            m_broken = true;
            m_pending.clear();
            return false;
        }
        const quint32 len =
            (quint32(h[4]) << 24) | (quint32(h[5]) << 16) | (quint32(h[6]) << 8) | quint32(h[7]);
        if (quint64(m_pending.size() - pos - 8) < len)
            break;
        out.append({int(h[0]), m_pending.mid(pos + 8, qsizetype(len))});
        pos += 8 + qsizetype(len);
    }
    m_pending.remove(0, pos);
    return true;
}
