#include "lineframer.h"

LineFramer::Output LineFramer::feed(const QByteArray &bytes)
{
    Output out;
    qsizetype start = 0;
    while (start < bytes.size()) {
        const qsizetype nl = bytes.indexOf('\n', start);
        const qsizetype end = nl < 0 ? bytes.size() : nl;
        if (m_discarding) {
            if (nl >= 0)
                m_discarding = false;
        } else {
            m_buffer.append(bytes.constData() + start, end - start);
            if (m_buffer.size() > m_maxLine) {
                m_buffer.clear();
                ++out.oversized;
                m_discarding = nl < 0;
            } else if (nl >= 0) {
                if (m_buffer.endsWith('\r'))
                    m_buffer.chop(1);
                if (!m_buffer.trimmed().isEmpty())
                    out.lines.append(m_buffer);
                m_buffer.clear();
            }
        }
        if (nl < 0)
            break;
        start = nl + 1;
    }
    return out;
}

QByteArray LineFramer::flush()
{
    QByteArray rest;
    rest.swap(m_buffer);
    if (rest.endsWith('\r'))
        rest.chop(1);
    m_discarding = false;
    return rest.trimmed().isEmpty() ? QByteArray() : rest;
}
