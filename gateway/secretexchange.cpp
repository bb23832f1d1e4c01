#include "secretexchange.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <http_parser.h>
#include <utility>

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// The request's framing: where it ends, whether its body is chunked, its method; and its body as
// the origin gets it. A chunked body is written again from what the parser read (sizes in plain
// hex, no extensions, no trailers), so that an origin whose reading of odd framing (a bare LF,
// bytes where a chunk's CRLF belongs) differs from libhttp-parser's sees the same request the
// gateway checked, never a second one.
struct RequestFrame
{
    http_parser parser{};
    http_parser_settings settings{};
    bool complete = false;
    std::string body; // what to send on, taken by the caller

    RequestFrame()
    {
        http_parser_init(&parser, HTTP_REQUEST);
        parser.data = this;
        http_parser_settings_init(&settings);
        settings.on_body = [](http_parser *p, const char *at, size_t n) {
            auto *self = static_cast<RequestFrame *>(p->data);
            if (p->flags & F_CHUNKED) {
                char size[32];
                std::snprintf(size, sizeof size, "%zx\r\n", n);
                self->body += size;
                self->body.append(at, n);
                self->body += "\r\n";
            } else {
                self->body.append(at, n);
            }
            return 0;
        };
        settings.on_message_complete = [](http_parser *p) {
            auto *self = static_cast<RequestFrame *>(p->data);
            if (p->flags & F_CHUNKED)
                self->body += "0\r\n\r\n";
            self->complete = true;
            http_parser_pause(p, 1); // a pipelined request after it is not this exchange's
            return 0;
        };
    }
    // How many of the bytes belong to the request; -1 when they are not HTTP.
    long feed(const char *data, size_t size)
    {
        const size_t n = http_parser_execute(&parser, &settings, data, size);
        const http_errno e = HTTP_PARSER_ERRNO(&parser);
        return e == HPE_OK || e == HPE_PAUSED ? long(n) : -1;
    }
    std::string take() { return std::exchange(body, std::string()); }
};

// The answer, read through libhttp-parser and sent on masked as it comes.
struct AnswerRelay
{
    http_parser parser{};
    http_parser_settings settings{};
    const SecretRewriter &rewriter;
    SecretRewriter::Masker masker;
    ByteChannel &client;
    bool head = false; // the request was a HEAD: no body follows
    std::string status;
    std::vector<std::pair<std::string, std::string>> headers;
    bool inValue = false;
    bool complete = false;
    bool failed = false;
    uint64_t sent = 0;

    AnswerRelay(const SecretRewriter &r, ByteChannel &c, bool isHead)
        : rewriter(r), masker(r), client(c), head(isHead)
    {
        http_parser_init(&parser, HTTP_RESPONSE);
        parser.data = this;
        http_parser_settings_init(&settings);
        settings.on_status = [](http_parser *p, const char *at, size_t n) {
            static_cast<AnswerRelay *>(p->data)->status.append(at, n);
            return 0;
        };
        settings.on_header_field = [](http_parser *p, const char *at, size_t n) {
            auto *self = static_cast<AnswerRelay *>(p->data);
            if (self->inValue || self->headers.empty())
                self->headers.emplace_back();
            self->inValue = false;
            self->headers.back().first.append(at, n);
            return 0;
        };
        settings.on_header_value = [](http_parser *p, const char *at, size_t n) {
            auto *self = static_cast<AnswerRelay *>(p->data);
            self->inValue = true;
            self->headers.back().second.append(at, n);
            return 0;
        };
        settings.on_headers_complete = [](http_parser *p) {
            return static_cast<AnswerRelay *>(p->data)->headersComplete();
        };
        settings.on_body = [](http_parser *p, const char *at, size_t n) {
            auto *self = static_cast<AnswerRelay *>(p->data);
            self->send(self->masker.feed(at, n));
            return self->failed ? -1 : 0;
        };
        settings.on_message_complete = [](http_parser *p) {
            auto *self = static_cast<AnswerRelay *>(p->data);
            if (p->status_code / 100 == 1) {
                // An interim answer (the gateway answered Expect itself): the real one follows.
                self->status.clear();
                self->headers.clear();
                self->inValue = false;
                return 0;
            }
            self->send(self->masker.finish());
            self->complete = true;
            http_parser_pause(p, 1);
            return 0;
        };
    }

    void send(const std::string &bytes)
    {
        if (bytes.empty() || failed)
            return;
        if (!client.write(bytes))
            failed = true;
        sent += bytes.size();
    }

    int headersComplete()
    {
        if (parser.status_code / 100 == 1)
            return 0;
        const bool noBody = head || parser.status_code == 204 || parser.status_code == 304;
        std::string out =
            "HTTP/1.1 " + std::to_string(parser.status_code) + " " + rewriter.mask(status) + "\r\n";
        for (const auto &[name, value] : headers) {
            const std::string n = lower(name);
            // The body goes on up to the connection's end: masking may change its length (with
            // nothing to mask, its length stays, for the client's progress).
            if (n == "connection" || n == "keep-alive" || n == "transfer-encoding" ||
                n == "proxy-connection" || (n == "content-length" && !noBody && !rewriter.empty()))
                continue;
            // Names too: an origin can echo a value in a header's name as well as in its value.
            out += rewriter.mask(name) + ": " + rewriter.mask(value) + "\r\n";
        }
        out += "Connection: close\r\n\r\n";
        send(out);
        // 1: no body to read (a HEAD's answer names the length it would have).
        return head ? 1 : 0;
    }

    bool feed(const char *data, size_t size)
    {
        http_parser_execute(&parser, &settings, data, size);
        const http_errno e = HTTP_PARSER_ERRNO(&parser);
        return !failed && (e == HPE_OK || e == HPE_PAUSED);
    }
};

const char *statusText(int status)
{
    switch (status) {
    case 400:
        return "Bad Request";
    case 403:
        return "Forbidden";
    case 421:
        return "Misdirected Request";
    default:
        return "Bad Gateway";
    }
}

} // namespace

void SecretExchange::answer(ByteChannel &channel, int status, const std::string &reason)
{
    const std::string body = "Code Sandbox egress gateway: " + reason + "\n";
    channel.write("HTTP/1.1 " + std::to_string(status) + " " + statusText(status) +
                  "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                  std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    channel.finish();
}

SecretExchange::Result
SecretExchange::run(ByteChannel &client, ByteChannel &origin, const std::string &raw,
                    size_t headBytes, const std::string &head,
                    const std::function<void(const std::vector<std::string> &)> &injected)
{
    Result result;
    RequestFrame frame;
    const long framed = frame.feed(raw.data(), raw.size());
    if (framed < long(headBytes)) {
        result.error = "the request is not HTTP/1.1 the gateway can read";
        answer(client, 400, result.error);
        return result;
    }
    // HTTP/1.0 has no chunked coding (RFC 9112 6.1): an origin would read such a body as the
    // connection's next request.
    if ((frame.parser.flags & F_CHUNKED) && frame.parser.http_major == 1 &&
        frame.parser.http_minor == 0) {
        result.error = "an HTTP/1.0 request with a chunked body";
        answer(client, 400, result.error);
        return result;
    }
    bool expectContinue = false;
    std::vector<std::pair<std::string, std::string>> echoes;
    std::string out =
        m_rewriter.inject(head, m_host, m_port, &result.added, &expectContinue, &echoes);
    const SecretRewriter answerMasks = m_rewriter.withEchoes(echoes);
    // The head as the host gets it has no Transfer-Encoding (a hop-by-hop header); the body is
    // passed on as the client framed it.
    if (frame.parser.flags & F_CHUNKED)
        out.insert(out.size() - 2, "Transfer-Encoding: chunked\r\n");
    if (!result.added.empty() && injected)
        injected(result.added);
    if (expectContinue && !frame.complete)
        client.write("HTTP/1.1 100 Continue\r\n\r\n");
    out += frame.take();
    bool ok = origin.write(out);
    result.up += out.size();
    char buffer[65536];
    while (ok && !frame.complete) {
        const long n = client.read(buffer, sizeof buffer, ByteChannel::nowMs() + kRequestIdleMs);
        if (n <= 0) {
            frame.feed(nullptr, 0);
            break;
        }
        if (frame.feed(buffer, size_t(n)) < 0)
            break;
        const std::string body = frame.take();
        ok = origin.write(body);
        result.up += uint64_t(body.size());
    }
    // An origin may answer before the whole body came (a 413, say) and close: its answer is
    // still read and passed on; only without one does the client get a 502.
    AnswerRelay relay(answerMasks, client, frame.parser.method == HTTP_HEAD);
    while (!relay.complete) {
        const long n = origin.read(buffer, sizeof buffer, ByteChannel::nowMs() + kAnswerIdleMs);
        if (n <= 0) {
            // The end of the connection ends a body that had no length.
            relay.feed(nullptr, 0);
            if (!relay.complete && relay.sent == 0) {
                result.error = m_host + (ok ? " sent no answer" : " closed the connection");
                answer(client, 502, result.error);
                return result;
            }
            break;
        }
        if (!relay.feed(buffer, size_t(n)))
            break;
    }
    if (!relay.complete)
        relay.send(relay.masker.finish());
    result.down = relay.sent;
    client.finish();
    return result;
}
