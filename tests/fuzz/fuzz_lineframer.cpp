// LineFramer (stdio transport) on arbitrary bytes fed in pieces: the messages and the count of
// oversized lines must not depend on where the stream was split, and no message holds a line
// feed or exceeds the limit.

#include "fuzzinput.h"
#include "lineframer.h"

namespace {
struct Result
{
    QList<QByteArray> lines;
    int oversized = 0;
};

QByteArray show(const Result &r)
{
    QByteArray out;
    for (const QByteArray &line : r.lines)
        out += "  line " + fuzz::show(line) + '\n';
    return out + "  oversized " + QByteArray::number(r.oversized) + '\n';
}

Result frame(const std::vector<fuzz::Chunk> &chunks, qsizetype maxLine)
{
    LineFramer framer(maxLine);
    Result r;
    for (const fuzz::Chunk &c : chunks) {
        const LineFramer::Output out = framer.feed(c.toByteArray());
        r.lines += out.lines;
        r.oversized += out.oversized;
    }
    const QByteArray last = framer.flush();
    if (!last.isEmpty())
        r.lines.append(last);
    // A flushed framer starts over.
    FUZZ_CHECK(framer.flush().isEmpty());
    return r;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::Rng rng(fuzz::hash(data, size));
    // Mostly a limit the input can reach, sometimes the default.
    const qsizetype maxLine = rng.below(4) == 0 ? 64 * 1024 * 1024 : qsizetype(rng.below(64));

    const std::vector<fuzz::Chunk> chunks = fuzz::split(data, size, rng);
    const Result once = frame(fuzz::whole(data, size), maxLine);
    const Result pieces = frame(chunks, maxLine);

    FUZZ_CHECK_REPORT(once.lines == pieces.lines && once.oversized == pieces.oversized,
                      "limit " + QByteArray::number(maxLine) + "\nwhole:\n" + show(once) +
                          fuzz::show(chunks) + ":\n" + show(pieces));
    for (const QByteArray &line : once.lines) {
        FUZZ_CHECK(!line.contains('\n'));
        FUZZ_CHECK(line.size() <= maxLine);
        FUZZ_CHECK(!line.trimmed().isEmpty());
    }
    FUZZ_CHECK(qsizetype(once.lines.size()) + once.oversized <= qsizetype(size));
    return 0;
}
