#include "httpresponseparser.h"

#include <http_parser.h>

const http_parser_settings &HttpResponseParser::settings()
{
    static const http_parser_settings s = [] {
        http_parser_settings s;
        http_parser_settings_init(&s);
        s.on_header_field = &HttpResponseParser::onHeaderField;
        s.on_header_value = &HttpResponseParser::onHeaderValue;
        s.on_headers_complete = &HttpResponseParser::onHeadersComplete;
        s.on_body = &HttpResponseParser::onBody;
        s.on_message_complete = &HttpResponseParser::onMessageComplete;
        return s;
    }();
    return s;
}

HttpResponseParser::HttpResponseParser() : m_parser(std::make_unique<http_parser>())
{
    reset();
}

HttpResponseParser::~HttpResponseParser() = default;

void HttpResponseParser::reset()
{
    http_parser_init(m_parser.get(), HTTP_RESPONSE);
    m_parser->data = this;
    m_state = State::Incomplete;
    m_status = 0;
    m_keepAlive = false;
    m_lastWasValue = false;
    m_headersDone = false;
    m_bodyTooLarge = false;
    m_headers.clear();
    m_body.clear();
    m_error.clear();
}

qsizetype HttpResponseParser::feed(const char *data, qsizetype size)
{
    if (m_state != State::Incomplete || size <= 0)
        return 0;
    const size_t used = http_parser_execute(m_parser.get(), &settings(), data, size_t(size));
    if (m_state == State::Incomplete && m_parser->upgrade && m_headersDone) {
        m_state = State::Upgraded;
        return qsizetype(used);
    }
    const auto err = http_errno(m_parser->http_errno);
    if (m_state == State::Incomplete && m_bodyTooLarge) {
        m_state = State::Error;
        m_error = "the body is longer than " + QByteArray::number(m_maxBody) + " bytes";
    } else if (m_state == State::Incomplete && err != HPE_OK) {
        m_state = State::Error;
        m_error = QByteArray(http_errno_name(err)) + ": " + http_errno_description(err);
    }
    return qsizetype(used);
}

void HttpResponseParser::finishOnEof()
{
    if (m_state != State::Incomplete)
        return;
    if (m_headersDone) // a zero-length execute tells http_parser the stream ended
        http_parser_execute(m_parser.get(), &settings(), nullptr, 0);
    if (m_state == State::Incomplete) {
        m_state = State::Error;
        m_error = m_headersDone ? "connection closed in the middle of a response body"
                                : "connection closed before a complete response header";
    }
}

QByteArray HttpResponseParser::header(const QByteArray &name) const
{
    for (const auto &h : m_headers)
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    return {};
}

QByteArray HttpResponseParser::takeBody()
{
    QByteArray b;
    b.swap(m_body);
    return b;
}

int HttpResponseParser::onHeaderField(http_parser *p, const char *at, size_t len)
{
    auto *self = static_cast<HttpResponseParser *>(p->data);
    if (self->m_lastWasValue || self->m_headers.isEmpty())
        self->m_headers.append({QByteArray(), QByteArray()});
    self->m_headers.last().first.append(at, qsizetype(len));
    self->m_lastWasValue = false;
    return 0;
}

int HttpResponseParser::onHeaderValue(http_parser *p, const char *at, size_t len)
{
    auto *self = static_cast<HttpResponseParser *>(p->data);
    if (self->m_headers.isEmpty())
        return 1;
    self->m_headers.last().second.append(at, qsizetype(len));
    self->m_lastWasValue = true;
    return 0;
}

int HttpResponseParser::onHeadersComplete(http_parser *p)
{
    auto *self = static_cast<HttpResponseParser *>(p->data);
    self->m_status = int(p->status_code);
    self->m_headersDone = true;
    // An upgraded (101) answer has no body whatever its headers claim: everything after the
    // header is the raw stream, however the bytes happen to arrive (found by fuzz_httpresponse).
    return p->upgrade ? 1 : 0;
}

int HttpResponseParser::onBody(http_parser *p, const char *at, size_t len)
{
    auto *self = static_cast<HttpResponseParser *>(p->data);
    if (self->m_maxBody >= 0 && self->m_body.size() + qint64(len) > self->m_maxBody) {
        self->m_bodyTooLarge = true;
        return 1; // stops http_parser: nothing more of this answer is read
    }
    self->m_body.append(at, qsizetype(len));
    return 0;
}

int HttpResponseParser::onMessageComplete(http_parser *p)
{
    auto *self = static_cast<HttpResponseParser *>(p->data);
    if (p->upgrade) // the caller takes over the socket; Upgraded is set by feed()
        return 0;
    self->m_keepAlive = http_should_keep_alive(p) != 0;
    self->m_state = State::Complete;
    // Pause so that bytes of a following response stay unconsumed for the next reset().
    http_parser_pause(p, 1);
    return 0;
}
