#include "httprequestparser.h"

#include <http_parser.h>

namespace {
// ": " and CRLF of a header field, which the callbacks do not see.
constexpr qint64 kFieldOverhead = 4;

bool isSpace(char c)
{
    return c == ' ' || c == '\t';
}

// Splits a request target into path and query. Origin form ("/mcp?x") is what clients send to
// a server; absolute form ("http://host/mcp?x") must be accepted too (RFC 9112 3.2.2).
void splitTarget(QByteArray target, QByteArray &path, QByteArray &query)
{
    if (!target.startsWith('/') && target != "*") {
        http_parser_url url;
        http_parser_url_init(&url);
        if (http_parser_parse_url(target.constData(), size_t(target.size()), 0, &url) == 0) {
            const auto field = [&](int f) {
                return target.mid(url.field_data[f].off, url.field_data[f].len);
            };
            path = (url.field_set & (1 << UF_PATH)) ? field(UF_PATH) : QByteArray("/");
            query = (url.field_set & (1 << UF_QUERY)) ? field(UF_QUERY) : QByteArray();
            return;
        }
        path = target; // authority form of CONNECT: nothing to split
        return;
    }
    const qsizetype hash = target.indexOf('#');
    if (hash >= 0)
        target.truncate(hash);
    const qsizetype question = target.indexOf('?');
    path = question < 0 ? target : target.left(question);
    query = question < 0 ? QByteArray() : target.mid(question + 1);
}
} // namespace

const http_parser_settings &HttpRequestParser::settings()
{
    static const http_parser_settings s = [] {
        http_parser_settings s;
        http_parser_settings_init(&s);
        s.on_url = &HttpRequestParser::onUrl;
        s.on_header_field = &HttpRequestParser::onHeaderField;
        s.on_header_value = &HttpRequestParser::onHeaderValue;
        s.on_headers_complete = &HttpRequestParser::onHeadersComplete;
        s.on_chunk_header = &HttpRequestParser::onChunkHeader;
        s.on_body = &HttpRequestParser::onBody;
        s.on_message_complete = &HttpRequestParser::onMessageComplete;
        return s;
    }();
    return s;
}

HttpRequestParser::HttpRequestParser() : m_parser(std::make_unique<http_parser>())
{
    reset();
}

HttpRequestParser::~HttpRequestParser() = default;

void HttpRequestParser::reset()
{
    http_parser_init(m_parser.get(), HTTP_REQUEST);
    m_parser->data = this;
    m_state = State::Incomplete;
    m_request = HttpRequest();
    m_target.clear();
    m_error.clear();
    m_headerBytes = 0;
    m_feedBegin = nullptr;
    m_lastByte = 0;
    m_lastWasValue = false;
    m_skipFoldSpace = false;
    m_headersDone = false;
    m_expectContinue = false;
    m_http11 = false;
    m_keepAlive = false;
    m_pausedAtHeaders = false;
}

void HttpRequestParser::resume()
{
    if (!m_pausedAtHeaders)
        return;
    m_pausedAtHeaders = false;
    http_parser_pause(m_parser.get(), 0);
}

qsizetype HttpRequestParser::feed(const char *data, qsizetype size)
{
    if (m_state != State::Incomplete || size <= 0 || m_pausedAtHeaders)
        return 0;
    m_feedBegin = data;
    const size_t used = http_parser_execute(m_parser.get(), &settings(), data, size_t(size));
    m_feedBegin = nullptr;
    if (used > 0)
        m_lastByte = data[used - 1];
    const auto err = http_errno(m_parser->http_errno);
    if (m_state == State::Incomplete && m_pausedAtHeaders && err == HPE_PAUSED)
        return qsizetype(used); // the byte that ended the header is fed again after resume()
    if (m_state == State::Incomplete && err == HPE_HEADER_OVERFLOW)
        fail(State::HeadersTooLarge, "request header fields too large");
    else if (m_state == State::Incomplete && err != HPE_OK)
        fail(State::Malformed,
             QByteArray(http_errno_name(err)) + ": " + http_errno_description(err));
    return qsizetype(used);
}

HttpRequest HttpRequestParser::takeRequest()
{
    HttpRequest r;
    std::swap(r, m_request);
    return r;
}

bool HttpRequestParser::countHeaderBytes(qint64 bytes)
{
    m_headerBytes += bytes;
    if (m_headerBytes <= m_maxHeaderBytes)
        return true;
    fail(State::HeadersTooLarge,
         "request header fields larger than " + QByteArray::number(m_maxHeaderBytes) + " bytes");
    return false;
}

void HttpRequestParser::fail(State state, const QByteArray &why)
{
    if (m_state != State::Incomplete)
        return;
    m_state = state;
    m_error = why;
}

int HttpRequestParser::onUrl(http_parser *p, const char *at, size_t len)
{
    auto *self = static_cast<HttpRequestParser *>(p->data);
    if (!self->countHeaderBytes(qint64(len)))
        return -1;
    self->m_target.append(at, qsizetype(len));
    return 0;
}

int HttpRequestParser::onHeaderField(http_parser *p, const char *at, size_t len)
{
    auto *self = static_cast<HttpRequestParser *>(p->data);
    const bool newField =
        self->m_lastWasValue || (!self->m_headersDone && self->m_request.headers.isEmpty());
    if (!self->countHeaderBytes(qint64(len) + (newField ? kFieldOverhead : 0)))
        return -1;
    self->m_lastWasValue = false;
    if (self->m_headersDone) // a trailer: counted, but nothing here needs it
        return 0;
    if (newField)
        self->m_request.headers.append({QByteArray(), QByteArray()});
    self->m_request.headers.last().first.append(at, qsizetype(len));
    return 0;
}

int HttpRequestParser::onHeaderValue(http_parser *p, const char *at, size_t len)
{
    auto *self = static_cast<HttpRequestParser *>(p->data);
    if (!self->countHeaderBytes(qint64(len)))
        return -1;
    if (!self->m_lastWasValue)
        self->m_skipFoldSpace = false;
    self->m_lastWasValue = true;
    if (self->m_headersDone || len == 0)
        return 0;
    if (self->m_request.headers.isEmpty())
        return -1;

    QByteArray &value = self->m_request.headers.last().second;
    // libhttp-parser drops the CRLF of an obsolete line fold but hands over the continuation
    // line with its indentation, so a piece that starts right after a line feed is a fold.
    // RFC 9112 5.2: replace it with a space.
    const char before = at > self->m_feedBegin ? at[-1] : self->m_lastByte;
    if (before == '\n') {
        if (!value.isEmpty())
            value.append(' ');
        self->m_skipFoldSpace = true;
    }
    size_t skip = 0;
    if (self->m_skipFoldSpace) {
        while (skip < len && isSpace(at[skip]))
            ++skip;
        if (skip < len)
            self->m_skipFoldSpace = false;
    }
    value.append(at + skip, qsizetype(len - skip));
    return 0;
}

int HttpRequestParser::onHeadersComplete(http_parser *p)
{
    auto *self = static_cast<HttpRequestParser *>(p->data);
    self->m_headersDone = true;
    self->m_lastWasValue = false;
    HttpRequest &r = self->m_request;
    r.method = http_method_str(http_method(p->method));
    splitTarget(self->m_target, r.path, r.query);
    for (auto &h : r.headers) {
        // libhttp-parser lets whitespace into names; RFC 9112 5.1 requires a 400, since
        // "Content-Length : 5" is read differently by different parsers.
        if (h.first.contains(' ') || h.first.contains('\t')) {
            self->fail(State::Malformed, "whitespace in header field name");
            return -1;
        }
        h.second = h.second.trimmed();
    }

    if (p->http_major != 1) {
        self->fail(State::Malformed, "unsupported HTTP version " +
                                         QByteArray::number(p->http_major) + '.' +
                                         QByteArray::number(p->http_minor));
        return -1;
    }
    self->m_http11 = p->http_minor >= 1;
    self->m_keepAlive = http_should_keep_alive(p) != 0;
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > quint64(self->m_maxBodyBytes)) {
        self->fail(State::BodyTooLarge,
                   "request body of " + QByteArray::number(quint64(p->content_length)) +
                       " bytes exceeds the limit of " + QByteArray::number(self->m_maxBodyBytes));
        return -1;
    }
    self->m_expectContinue =
        self->m_http11 && r.header("expect").compare("100-continue", Qt::CaseInsensitive) == 0;
    if (self->m_pauseAfterHeaders) {
        self->m_pausedAtHeaders = true;
        http_parser_pause(p, 1);
    }
    return 0;
}

int HttpRequestParser::onChunkHeader(http_parser *p)
{
    // The declared chunk size is refused before its bytes are waited for.
    auto *self = static_cast<HttpRequestParser *>(p->data);
    const quint64 room = quint64(self->m_maxBodyBytes - self->m_request.body.size());
    if (p->content_length > room) {
        self->fail(State::BodyTooLarge, "chunked request body exceeds the limit of " +
                                            QByteArray::number(self->m_maxBodyBytes));
        return -1;
    }
    return 0;
}

int HttpRequestParser::onBody(http_parser *p, const char *at, size_t len)
{
    auto *self = static_cast<HttpRequestParser *>(p->data);
    if (self->m_request.body.size() + qint64(len) > self->m_maxBodyBytes) {
        self->fail(State::BodyTooLarge,
                   "request body exceeds the limit of " + QByteArray::number(self->m_maxBodyBytes));
        return -1;
    }
    self->m_request.body.append(at, qsizetype(len));
    return 0;
}

int HttpRequestParser::onMessageComplete(http_parser *p)
{
    auto *self = static_cast<HttpRequestParser *>(p->data);
    self->m_keepAlive = http_should_keep_alive(p) != 0;
    self->m_state = State::Complete;
    // Pause so that bytes of a pipelined request stay unconsumed for the next reset().
    http_parser_pause(p, 1);
    return 0;
}
