// MultiplexDecoder on arbitrary bytes fed in pieces: the frames must not depend on where the
// stream was split, and written back they must give the bytes they were read from.

#include "fuzzinput.h"
#include "multiplexdecoder.h"

namespace {
struct Outcome
{
    QList<MultiplexDecoder::Frame> frames;
    bool ok = true;
    bool partial = false;
};

Outcome decode(const std::vector<fuzz::Chunk> &chunks)
{
    MultiplexDecoder decoder;
    Outcome o;
    for (const fuzz::Chunk &c : chunks) {
        if (!decoder.feed(c.toByteArray(), o.frames)) {
            o.ok = false;
            // Once broken, it stays broken and decodes nothing more.
            const qsizetype n = o.frames.size();
            FUZZ_CHECK(!decoder.feed(QByteArray(8, '\0'), o.frames));
            FUZZ_CHECK(o.frames.size() == n);
            break;
        }
    }
    o.partial = decoder.hasPartialFrame();
    return o;
}

QByteArray show(const Outcome &o)
{
    QByteArray out;
    for (const auto &f : o.frames)
        out += "  frame " + QByteArray::number(f.stream) + ' ' + fuzz::show(f.data) + '\n';
    return out + (o.ok ? "  ok" : "  broken") + (o.partial ? ", partial frame\n" : "\n");
}

QByteArray encode(const QList<MultiplexDecoder::Frame> &frames)
{
    QByteArray out;
    for (const auto &f : frames) {
        FUZZ_CHECK(f.stream >= 0 && f.stream <= 2);
        const auto n = quint32(f.data.size());
        out += char(f.stream);
        out += QByteArray(3, '\0');
        out += char(n >> 24);
        out += char(n >> 16);
        out += char(n >> 8);
        out += char(n);
        out += f.data;
    }
    return out;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::Rng rng(fuzz::hash(data, size));
    const std::vector<fuzz::Chunk> chunks = fuzz::split(data, size, rng);
    const Outcome once = decode(fuzz::whole(data, size));
    const Outcome pieces = decode(chunks);

    bool same = once.ok == pieces.ok && once.frames.size() == pieces.frames.size() &&
                (!once.ok || once.partial == pieces.partial);
    for (qsizetype i = 0; same && i < once.frames.size(); ++i)
        same = once.frames[i].stream == pieces.frames[i].stream &&
               once.frames[i].data == pieces.frames[i].data;
    FUZZ_CHECK_REPORT(same, "whole:\n" + show(once) + fuzz::show(chunks) + ":\n" + show(pieces));

    // The frames are a prefix of the input; what follows them is a partial frame or the header
    // that broke the stream.
    const QByteArray input(reinterpret_cast<const char *>(data), qsizetype(size));
    const QByteArray encoded = encode(once.frames);
    FUZZ_CHECK(input.startsWith(encoded));
    const qsizetype rest = input.size() - encoded.size();
    if (once.ok)
        FUZZ_CHECK(once.partial == (rest > 0));
    else
        FUZZ_CHECK(rest >= 8);
    return 0;
}
