#pragma once

#include "httprequest.h"

#include <memory>

struct http_parser;
struct http_parser_settings;

// Incremental HTTP/1.x request framing on top of libhttp-parser, the request-side counterpart of
// HttpResponseParser: accepts input in pieces of any size, handles Content-Length and chunked
// bodies, enforces the header and body limits while the bytes arrive (so that an oversized
// request is refused before it is buffered), and stops after each request so that pipelined
// bytes stay unconsumed for the next one. Trailer fields of chunked bodies count against the
// header limit and are dropped.
class HttpRequestParser
{
public:
    enum class State
    {
        Incomplete,
        Complete,
        Malformed,       // answer 400
        HeadersTooLarge, // answer 431
        BodyTooLarge     // answer 413
    };

    static constexpr qint64 kDefaultMaxHeaderBytes = 64 * 1024;
    static constexpr qint64 kDefaultMaxBodyBytes = 4 * 1024 * 1024;

    HttpRequestParser();
    ~HttpRequestParser();
    HttpRequestParser(const HttpRequestParser &) = delete;
    HttpRequestParser &operator=(const HttpRequestParser &) = delete;

    // Counted are the request target and the header (and trailer) fields, plus four bytes of
    // punctuation per field. libhttp-parser refuses more than 80 KiB of header on its own,
    // which is reported as HeadersTooLarge as well.
    void setMaxHeaderBytes(qint64 bytes) { m_maxHeaderBytes = bytes; }
    qint64 maxHeaderBytes() const { return m_maxHeaderBytes; }
    // The decoded body: Content-Length is checked as soon as the header is in, chunk sizes as
    // soon as each chunk header is in.
    void setMaxBodyBytes(qint64 bytes) { m_maxBodyBytes = bytes; }
    qint64 maxBodyBytes() const { return m_maxBodyBytes; }

    // Stops after the header of each request (headersComplete() with State::Incomplete), so
    // that the request can be refused before a byte of its body is read; resume() goes on.
    void setPauseAfterHeaders(bool pause) { m_pauseAfterHeaders = pause; }
    bool isPausedAtHeaders() const { return m_pausedAtHeaders; }
    void resume();

    // Starts over for the next request on a kept-alive connection; the limits stay.
    void reset();
    // Feeds bytes; returns how many were consumed. Past Complete, the unconsumed rest belongs
    // to the next request; past an error the connection is beyond repair.
    qsizetype feed(const char *data, qsizetype size);
    qsizetype feed(const QByteArray &data) { return feed(data.constData(), data.size()); }

    State state() const { return m_state; }
    bool headersComplete() const { return m_headersDone; }
    // "Expect: 100-continue" on an HTTP/1.1 request: the client waits for "100 Continue"
    // before it sends the body. Meaningful once headersComplete().
    bool expectsContinue() const { return m_expectContinue; }
    // HTTP/1.1 or later: understands chunked responses.
    bool isHttp11() const { return m_http11; }
    // Whether the client wants the connection kept after this request. Meaningful once
    // headersComplete().
    bool keepAlive() const { return m_keepAlive; }
    const HttpRequest &request() const { return m_request; }
    HttpRequest takeRequest();
    const QByteArray &errorString() const { return m_error; }

private:
    static const http_parser_settings &settings();
    static int onUrl(http_parser *, const char *, size_t);
    static int onHeaderField(http_parser *, const char *, size_t);
    static int onHeaderValue(http_parser *, const char *, size_t);
    static int onHeadersComplete(http_parser *);
    static int onChunkHeader(http_parser *);
    static int onBody(http_parser *, const char *, size_t);
    static int onMessageComplete(http_parser *);

    bool countHeaderBytes(qint64 bytes);
    void fail(State state, const QByteArray &why);

    std::unique_ptr<http_parser> m_parser;
    qint64 m_maxHeaderBytes = kDefaultMaxHeaderBytes;
    qint64 m_maxBodyBytes = kDefaultMaxBodyBytes;
    State m_state = State::Incomplete;
    HttpRequest m_request;
    QByteArray m_target;
    QByteArray m_error;
    qint64 m_headerBytes = 0;
    // Where the bytes of the current feed() start and the last byte of the previous one: a
    // header value piece that starts right after a line feed is an obsolete line fold.
    const char *m_feedBegin = nullptr;
    char m_lastByte = 0;
    bool m_lastWasValue = false;
    bool m_skipFoldSpace = false;
    bool m_headersDone = false;
    bool m_expectContinue = false;
    bool m_http11 = false;
    bool m_keepAlive = false;
    bool m_pauseAfterHeaders = false;
    bool m_pausedAtHeaders = false;
};
