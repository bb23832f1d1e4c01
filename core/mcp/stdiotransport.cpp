#include "stdiotransport.h"

#include "mcplog.h"

#include <QJsonDocument>
#include <QTimer>
#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {
void makeNonBlocking(int fd)
{
    // Only pipes and sockets: a terminal's flags are shared with the shell that started us.
    struct stat st;
    if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        const int flags = fcntl(fd, F_GETFL);
        if (flags >= 0)
            fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    }
}
} // namespace

StdioTransport::StdioTransport(int inFd, int outFd, QObject *parent)
    : McpTransport(parent), m_in(inFd), m_out(outFd)
{
    makeNonBlocking(m_in);
    makeNonBlocking(m_out);
    struct stat st;
    if (fstat(m_in, &st) == 0 && S_ISREG(st.st_mode)) {
        // A regular file never blocks and select() reports it always readable: read it all
        // from the event loop once it runs.
        QTimer::singleShot(0, this, &StdioTransport::onReadable);
    } else {
        m_readNotifier = new QSocketNotifier(m_in, QSocketNotifier::Read, this);
        connect(m_readNotifier, &QSocketNotifier::activated, this, &StdioTransport::onReadable);
    }
    m_writeNotifier = new QSocketNotifier(m_out, QSocketNotifier::Write, this);
    m_writeNotifier->setEnabled(false);
    connect(m_writeNotifier, &QSocketNotifier::activated, this, &StdioTransport::onWritable);
}

StdioTransport::~StdioTransport()
{
    flushBlocking();
}

void StdioTransport::onReadable()
{
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(m_in, buf, sizeof buf);
        if (n > 0) {
            const LineFramer::Output out = m_framer.feed(QByteArray(buf, qsizetype(n)));
            if (out.oversized)
                qCWarning(lcMcp) << "dropped" << out.oversized << "oversized input line(s)";
            for (const QByteArray &line : out.lines)
                Q_EMIT messageReceived(McpMessage::parse(line));
            if (m_closed)
                return;
            continue;
        }
        if (n == 0) {
            endOfInput();
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            qCWarning(lcMcp) << "stdin read failed:" << strerror(errno);
            endOfInput();
        }
        return;
    }
}

void StdioTransport::endOfInput()
{
    if (m_closed)
        return;
    m_closed = true;
    if (m_readNotifier)
        m_readNotifier->setEnabled(false);
    const QByteArray last = m_framer.flush();
    if (!last.isEmpty())
        Q_EMIT messageReceived(McpMessage::parse(last));
    Q_EMIT closed();
}

void StdioTransport::respond(const QJsonValue &, const QJsonObject &response)
{
    write(response);
}

void StdioTransport::notify(const QJsonObject &message, const QJsonValue &)
{
    write(message);
}

void StdioTransport::write(const QJsonObject &message)
{
    m_outQueue += QJsonDocument(message).toJson(QJsonDocument::Compact);
    m_outQueue += '\n';
    writeQueued();
}

void StdioTransport::writeQueued()
{
    while (!m_outQueue.isEmpty()) {
        const ssize_t n = ::write(m_out, m_outQueue.constData(), size_t(m_outQueue.size()));
        if (n > 0) {
            m_outQueue.remove(0, qsizetype(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            m_writeNotifier->setEnabled(true);
            return;
        }
        // The client went away (EPIPE): nothing more can be delivered.
        qCWarning(lcMcp) << "stdout write failed:" << strerror(errno);
        m_outQueue.clear();
        break;
    }
    m_writeNotifier->setEnabled(false);
}

void StdioTransport::onWritable()
{
    writeQueued();
}

void StdioTransport::flushBlocking()
{
    while (!m_outQueue.isEmpty()) {
        pollfd p{m_out, POLLOUT, 0};
        if (::poll(&p, 1, 2000) <= 0 || (p.revents & (POLLERR | POLLHUP)))
            return;
        const ssize_t n = ::write(m_out, m_outQueue.constData(), size_t(m_outQueue.size()));
        if (n > 0)
            m_outQueue.remove(0, qsizetype(n));
        else if (n < 0 && errno != EAGAIN && errno != EINTR)
            return;
    }
}
