// HttpResponseParser on arbitrary bytes fed in pieces, the way EngineConnection drives it:
// responses one after the other on a kept-alive connection until an upgrade, an error or the
// end of the stream. What is read must not depend on where the stream was split.

#include "fuzzinput.h"
#include "httpresponseparser.h"

namespace {
struct Response
{
    HttpResponseParser::State state = HttpResponseParser::State::Incomplete;
    int status = 0;
    bool keepAlive = false;
    QByteArray body;
    QList<QByteArray> headers;

    bool operator==(const Response &o) const
    {
        return state == o.state && status == o.status && keepAlive == o.keepAlive &&
               body == o.body && headers == o.headers;
    }
};

QByteArray show(const Response &r)
{
    QByteArray out = "  state " + QByteArray::number(int(r.state)) + " status " +
                     QByteArray::number(r.status) + (r.keepAlive ? " keep-alive" : "") + '\n';
    for (const QByteArray &h : r.headers)
        out += "    header " + fuzz::show(h) + '\n';
    out += "    body " + fuzz::show(r.body) + '\n';
    return out;
}

struct Outcome
{
    QList<Response> responses;
    bool stalled = false;
    qsizetype rawStart = -1; // after an upgrade: where the raw stream starts
};

Response take(HttpResponseParser &parser)
{
    Response r;
    r.state = parser.state();
    if (r.state == HttpResponseParser::State::Error) {
        // Whatever was read of a response that failed is dropped, and may depend on the split.
        FUZZ_CHECK(!parser.errorString().isEmpty());
        return r;
    }
    r.status = parser.status();
    r.keepAlive = parser.keepAlive();
    for (const char *name : {"content-type", "content-length", "transfer-encoding", "connection",
                             "upgrade", "docker-experimental"})
        r.headers.append(parser.header(name));
    r.body = parser.takeBody();
    FUZZ_CHECK(parser.body().isEmpty());
    return r;
}

QByteArray show(const Outcome &o)
{
    QByteArray out;
    for (const Response &r : o.responses)
        out += show(r);
    return out + (o.stalled ? "  (stalled)\n" : "") + "  raw stream from " +
           QByteArray::number(o.rawStart) + '\n';
}

Outcome parse(const std::vector<fuzz::Chunk> &chunks)
{
    HttpResponseParser parser;
    Outcome o;
    qsizetype offset = 0;
    for (const fuzz::Chunk &c : chunks) {
        const char *at = c.data();
        qsizetype left = qsizetype(c.size);
        while (left > 0) {
            const qsizetype used = parser.feed(at, left);
            FUZZ_CHECK(used >= 0 && used <= left);
            at += used;
            left -= used;
            offset += used;
            switch (parser.state()) {
            case HttpResponseParser::State::Complete:
                o.responses.append(take(parser));
                parser.reset();
                break;
            case HttpResponseParser::State::Incomplete:
                if (left > 0) {
                    o.stalled = true;
                    return o;
                }
                break;
            case HttpResponseParser::State::Upgraded:
            case HttpResponseParser::State::Error:
                // The rest is the raw stream, or the connection is beyond repair.
                FUZZ_CHECK(parser.feed(at, left) == 0);
                if (parser.state() == HttpResponseParser::State::Upgraded)
                    o.rawStart = offset;
                o.responses.append(take(parser));
                return o;
            }
        }
    }
    parser.finishOnEof();
    FUZZ_CHECK(parser.state() != HttpResponseParser::State::Incomplete);
    o.responses.append(take(parser));
    return o;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::Rng rng(fuzz::hash(data, size));
    const std::vector<fuzz::Chunk> chunks = fuzz::split(data, size, rng);
    const Outcome once = parse(fuzz::whole(data, size));
    const Outcome pieces = parse(chunks);
    FUZZ_CHECK_REPORT(once.responses == pieces.responses && once.stalled == pieces.stalled &&
                          once.rawStart == pieces.rawStart,
                      "whole:\n" + show(once) + fuzz::show(chunks) + ":\n" + show(pieces));
    return 0;
}
