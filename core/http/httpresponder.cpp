#include "httpresponder.h"

#include "httplog.h"
#include "httpresponsesink.h"

#include <QDateTime>
#include <QLocale>
#include <QPointer>
#include <http_parser.h>

namespace {
// Framing is the server's business: a handler's own value could desynchronise the client.
bool isFramingHeader(const QByteArray &name)
{
    return name.compare("content-length", Qt::CaseInsensitive) == 0 ||
           name.compare("transfer-encoding", Qt::CaseInsensitive) == 0 ||
           name.compare("connection", Qt::CaseInsensitive) == 0;
}

// A CR or LF would let a value taken from a request forge further headers or a whole response.
bool isValidField(const QByteArray &name, const QByteArray &value)
{
    if (name.isEmpty())
        return false;
    for (const char c : name)
        if (c <= ' ' || c == ':' || c == 0x7f)
            return false;
    return !value.contains('\r') && !value.contains('\n') && !value.contains('\0');
}

// 1xx, 204 and 304 responses end with their header (RFC 9112 6.3).
bool statusHasBody(int status)
{
    return status >= 200 && status != 204 && status != 304;
}

QByteArray httpDate()
{
    return QLocale::c()
        .toString(QDateTime::currentDateTimeUtc(), u"ddd, dd MMM yyyy hh:mm:ss 'GMT'")
        .toLatin1();
}
} // namespace

HttpResponder::HttpResponder(HttpResponseSink *connection, bool headRequest, bool http11,
                             bool keepAlive, QObject *parent)
    : QObject(parent), m_connection(connection), m_headRequest(headRequest), m_http11(http11),
      m_keepAlive(keepAlive)
{}

HttpResponder::~HttpResponder()
{
    if (!m_connection)
        return;
    // Dropped unanswered, the client still gets an answer and the connection moves on; dropped
    // mid-stream, the body can only be cut off.
    if (m_phase == Phase::Waiting) {
        qCWarning(lcHttp) << "HTTP request dropped without an answer";
        send(500, {}, {});
    } else if (m_phase == Phase::Streaming) {
        qCWarning(lcHttp) << "HTTP response stream dropped before its end";
        HttpResponseSink *connection = m_connection;
        m_connection = nullptr;
        m_phase = Phase::Done;
        connection->abandon(this);
    }
}

void HttpResponder::respond(int status, const Headers &headers, const QByteArray &body)
{
    if (m_phase != Phase::Waiting) {
        if (m_phase != Phase::Lost)
            qCWarning(lcHttp) << "HTTP response already under way; respond() ignored";
        return;
    }
    send(status, headers, body);
    deleteLater();
}

void HttpResponder::beginStream(int status, const Headers &headers)
{
    if (m_phase != Phase::Waiting) {
        if (m_phase != Phase::Lost)
            qCWarning(lcHttp) << "HTTP response already under way; beginStream() ignored";
        return;
    }
    if (!statusHasBody(status)) {
        respond(status, headers, {});
        return;
    }
    // HTTP/1.0 has no chunked coding: there the end of the connection ends the body.
    m_chunked = m_http11;
    m_streamKeepAlive = m_chunked && keepAliveAfter(headers);
    m_phase = Phase::Streaming;
    m_connection->write(head(
        status, headers, m_chunked ? QByteArray("Transfer-Encoding: chunked\r\n") : QByteArray(),
        m_streamKeepAlive));
}

void HttpResponder::writeChunk(const QByteArray &data)
{
    if (m_phase != Phase::Streaming) {
        if (m_phase == Phase::Waiting)
            qCWarning(lcHttp) << "HTTP writeChunk() before beginStream() ignored";
        return;
    }
    if (data.isEmpty() || m_headRequest)
        return;
    if (m_chunked)
        m_connection->write(QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n");
    else
        m_connection->write(data);
}

void HttpResponder::endStream()
{
    if (m_phase != Phase::Streaming) {
        if (m_phase == Phase::Waiting)
            qCWarning(lcHttp) << "HTTP endStream() before beginStream() ignored";
        return;
    }
    if (m_chunked && !m_headRequest)
        m_connection->write("0\r\n\r\n");
    finish(m_streamKeepAlive);
    deleteLater();
}

QByteArray HttpResponder::reasonPhrase(int status)
{
    if (status < 100 || status > 999)
        return {};
    const char *phrase = http_status_str(http_status(status));
    return qstrcmp(phrase, "<unknown>") == 0 ? QByteArray() : QByteArray(phrase);
}

void HttpResponder::send(int status, const Headers &headers, const QByteArray &body)
{
    if (status < 200 || status > 999) {
        // An interim or invalid status would leave the client waiting for the real answer.
        qCWarning(lcHttp) << "HTTP status" << status << "cannot end a request; sending 500";
        status = 500;
    }
    const bool keepAlive = keepAliveAfter(headers);
    QByteArray out;
    if (statusHasBody(status)) {
        out = head(status, headers, "Content-Length: " + QByteArray::number(body.size()) + "\r\n",
                   keepAlive);
        if (!m_headRequest)
            out += body;
    } else {
        if (!body.isEmpty())
            qCWarning(lcHttp) << "HTTP status" << status << "has no body; body dropped";
        out = head(status, headers, {}, keepAlive);
    }
    m_connection->write(out);
    finish(keepAlive);
}

void HttpResponder::finish(bool keepAlive)
{
    m_phase = Phase::Done;
    HttpResponseSink *connection = m_connection;
    m_connection = nullptr;
    connection->responseFinished(this, keepAlive);
}

QByteArray HttpResponder::head(int status, const Headers &headers, const QByteArray &framing,
                               bool keepAlive) const
{
    QByteArray out = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    bool hasDate = false;
    for (const auto &[name, value] : headers) {
        if (isFramingHeader(name))
            continue;
        if (!isValidField(name, value)) {
            qCWarning(lcHttp) << "invalid HTTP response header dropped:" << name;
            continue;
        }
        hasDate = hasDate || name.compare("date", Qt::CaseInsensitive) == 0;
        out += name + ": " + value + "\r\n";
    }
    if (!hasDate) // RFC 9110 6.6.1: an origin server with a clock sends one
        out += "Date: " + httpDate() + "\r\n";
    out += framing;
    out += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
    out += "\r\n";
    return out;
}

bool HttpResponder::keepAliveAfter(const Headers &headers) const
{
    if (!m_keepAlive)
        return false;
    for (const auto &[name, value] : headers) {
        if (name.compare("connection", Qt::CaseInsensitive) != 0)
            continue;
        for (const QByteArray &token : value.split(','))
            if (token.trimmed().compare("close", Qt::CaseInsensitive) == 0)
                return false;
    }
    return true;
}

void HttpResponder::connectionLost()
{
    m_connection = nullptr;
    if (!isOpen())
        return;
    m_phase = Phase::Lost;
    // The handler may delete this from its slot.
    QPointer<HttpResponder> self(this);
    Q_EMIT closed();
    if (self)
        deleteLater();
}
