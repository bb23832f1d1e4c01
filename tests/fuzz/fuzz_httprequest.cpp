// HttpRequestParser on arbitrary bytes fed in pieces, the way HttpConnection drives it:
// pipelined requests one after the other, stopping at the first error. The requests read and
// the verdict must not depend on where the stream was split, and the limits must hold.

#include "fuzzinput.h"
#include "httprequestparser.h"

namespace {
struct Outcome
{
    QList<HttpRequest> requests;
    HttpRequestParser::State last = HttpRequestParser::State::Incomplete;
    bool stalled = false; // bytes left that the parser would not take
    QByteArray error;
};

bool sameRequest(const HttpRequest &a, const HttpRequest &b)
{
    return a.method == b.method && a.path == b.path && a.query == b.query &&
           a.headers == b.headers && a.body == b.body;
}

QByteArray show(const Outcome &o)
{
    QByteArray out;
    for (const HttpRequest &r : o.requests) {
        out += "  request " + fuzz::show(r.method) + ' ' + fuzz::show(r.path) + " ? " +
               fuzz::show(r.query) + '\n';
        for (const auto &h : r.headers)
            out += "    " + fuzz::show(h.first) + ": " + fuzz::show(h.second) + '\n';
        out += "    body " + fuzz::show(r.body) + '\n';
    }
    out += "  state " + QByteArray::number(int(o.last)) + " " + o.error +
           (o.stalled ? " (stalled)" : "") + '\n';
    return out;
}

Outcome parse(const std::vector<fuzz::Chunk> &chunks, qint64 maxHeader, qint64 maxBody)
{
    HttpRequestParser parser;
    parser.setMaxHeaderBytes(maxHeader);
    parser.setMaxBodyBytes(maxBody);
    Outcome o;
    for (const fuzz::Chunk &c : chunks) {
        const char *at = c.data();
        qsizetype left = qsizetype(c.size);
        while (left > 0) {
            const qsizetype used = parser.feed(at, left);
            FUZZ_CHECK(used >= 0 && used <= left);
            at += used;
            left -= used;
            switch (parser.state()) {
            case HttpRequestParser::State::Complete: {
                FUZZ_CHECK(parser.headersComplete());
                const HttpRequest r = parser.takeRequest();
                FUZZ_CHECK(r.body.size() <= maxBody);
                FUZZ_CHECK(!r.method.isEmpty());
                o.requests.append(r);
                parser.reset();
                FUZZ_CHECK(parser.state() == HttpRequestParser::State::Incomplete);
                break;
            }
            case HttpRequestParser::State::Incomplete:
                if (left > 0) {
                    o.stalled = true;
                    return o;
                }
                break;
            default:
                o.last = parser.state();
                o.error = parser.errorString();
                FUZZ_CHECK(!o.error.isEmpty());
                // Past an error nothing more is taken.
                FUZZ_CHECK(parser.feed(at, left) == 0);
                return o;
            }
        }
    }
    o.last = parser.state();
    if (parser.headersComplete())
        FUZZ_CHECK(parser.request().body.size() <= maxBody);
    return o;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::Rng rng(fuzz::hash(data, size));
    // Limits the input can reach as well as the defaults.
    const qint64 maxHeader =
        rng.below(2) == 0 ? HttpRequestParser::kDefaultMaxHeaderBytes : qint64(rng.below(512));
    const qint64 maxBody =
        rng.below(2) == 0 ? HttpRequestParser::kDefaultMaxBodyBytes : qint64(rng.below(256));

    const std::vector<fuzz::Chunk> chunks = fuzz::split(data, size, rng);
    const Outcome once = parse(fuzz::whole(data, size), maxHeader, maxBody);
    const Outcome pieces = parse(chunks, maxHeader, maxBody);

    // Which error a request that is both malformed and over a limit gets (400, 431 or 413)
    // depends on how much of it libhttp-parser had seen when it found either; only that it fails
    // must not.
    const auto failed = [](HttpRequestParser::State s) {
        return s != HttpRequestParser::State::Incomplete && s != HttpRequestParser::State::Complete;
    };
    bool same = once.requests.size() == pieces.requests.size() &&
                (once.last == pieces.last || (failed(once.last) && failed(pieces.last))) &&
                once.stalled == pieces.stalled;
    for (qsizetype i = 0; same && i < once.requests.size(); ++i)
        same = sameRequest(once.requests[i], pieces.requests[i]);
    FUZZ_CHECK_REPORT(same, "limits: header " + QByteArray::number(maxHeader) + ", body " +
                                QByteArray::number(maxBody) + "\nwhole:\n" + show(once) +
                                fuzz::show(chunks) + ":\n" + show(pieces));
    return 0;
}
