#include "exitmarkerscanner.h"

#include <QList>

QByteArray ExitMarkerScanner::feed(const QByteArray &bytes)
{
    if (m_state == State::Done)
        return {};
    m_held += bytes;
    QByteArray out;
    if (m_state == State::Output) {
        const qsizetype at = m_held.indexOf(m_nonce);
        if (at < 0) {
            // Hold back the longest tail that could still grow into the nonce.
            qsizetype keep = qMin(m_held.size(), m_nonce.size() - 1);
            while (keep > 0 && !m_nonce.startsWith(m_held.right(keep)))
                --keep;
            out = m_held.left(m_held.size() - keep);
            m_held.remove(0, m_held.size() - keep);
            return out;
        }
        out = m_held.left(at);
        m_held.remove(0, at + m_nonce.size());
        m_state = State::Status;
    }
    const qsizetype nl = m_held.indexOf('\n');
    if (nl >= 0) {
        // "<status>[ flag...]"
        QList<QByteArray> words = m_held.left(nl).simplified().split(' ');
        bool ok = false;
        const int status = words.value(0).toInt(&ok);
        m_status = ok ? status : -1;
        words.removeFirst();
        m_flags = words;
        m_state = State::Done;
        m_held.clear();
    } else if (m_held.size() > kMaxStatusLine) {
        // Not a status line after all; nothing sensible follows.
        m_state = State::Done;
        m_held.clear();
    }
    return out;
}

QByteArray ExitMarkerScanner::flush()
{
    if (m_state != State::Output)
        return {};
    QByteArray rest;
    rest.swap(m_held);
    return rest;
}

qint64 ExitMarkerScanner::value(const QByteArray &name) const
{
    const QByteArray prefix = name + '=';
    for (const QByteArray &word : m_flags) {
        if (!word.startsWith(prefix))
            continue;
        bool ok = false;
        const qint64 v = word.mid(prefix.size()).toLongLong(&ok);
        return ok && v >= 0 ? v : -1;
    }
    return -1;
}

QList<QByteArray> ExitMarkerScanner::list(const QByteArray &name) const
{
    const QByteArray prefix = name + '=';
    for (const QByteArray &word : m_flags)
        if (word.startsWith(prefix))
            return word.mid(prefix.size()).split(',');
    return {};
}
