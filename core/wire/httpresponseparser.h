#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <memory>

struct http_parser;
struct http_parser_settings;

// Incremental HTTP/1.1 response framing on top of libhttp-parser: accepts input in pieces of any
// size, handles Content-Length, chunked and close-delimited bodies, and stops at a 101 upgrade so
// the rest of the bytes can be handed to the hijacked stream.
class HttpResponseParser
{
public:
    enum class State
    {
        Incomplete,
        Complete,
        Upgraded,
        Error
    };

    HttpResponseParser();
    ~HttpResponseParser();
    HttpResponseParser(const HttpResponseParser &) = delete;
    HttpResponseParser &operator=(const HttpResponseParser &) = delete;

    // Starts over for the next response on a kept-alive connection (the body cap is kept).
    void reset();
    // A body longer than this ends parsing with Error and bodyTooLarge(): the bytes are never
    // held. Negative: no cap.
    void setMaxBodySize(qint64 bytes) { m_maxBody = bytes; }
    bool bodyTooLarge() const { return m_bodyTooLarge; }
    // Feeds bytes; returns how many were consumed. Past Complete or Upgraded, the unconsumed rest
    // belongs to the next response or to the raw stream.
    qsizetype feed(const char *data, qsizetype size);
    qsizetype feed(const QByteArray &data) { return feed(data.constData(), data.size()); }
    // The peer closed the connection: completes a close-delimited body, or fails a partial one.
    void finishOnEof();

    State state() const { return m_state; }
    int status() const { return m_status; }
    QByteArray header(const QByteArray &name) const;
    const QByteArray &body() const { return m_body; }
    QByteArray takeBody();
    bool keepAlive() const { return m_keepAlive; }
    const QByteArray &errorString() const { return m_error; }

private:
    static const http_parser_settings &settings();
    static int onHeaderField(http_parser *, const char *, size_t);
    static int onHeaderValue(http_parser *, const char *, size_t);
    static int onHeadersComplete(http_parser *);
    static int onBody(http_parser *, const char *, size_t);
    static int onMessageComplete(http_parser *);

    std::unique_ptr<http_parser> m_parser;
    State m_state = State::Incomplete;
    int m_status = 0;
    bool m_keepAlive = false;
    bool m_lastWasValue = false;
    bool m_headersDone = false;
    bool m_bodyTooLarge = false;
    qint64 m_maxBody = -1;
    QList<QPair<QByteArray, QByteArray>> m_headers;
    QByteArray m_body;
    QByteArray m_error;
};
