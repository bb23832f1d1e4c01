#pragma once

// Helpers shared by the fuzz targets: chunk boundaries and parameters derived from the input
// itself, so that libFuzzer explores how an incremental parser copes with any split of the same
// bytes, and a check that reports a broken property as a crash.

#include <QByteArray>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace fuzz {

// FNV-1a: any change to the input moves the split points.
inline std::uint64_t hash(const std::uint8_t *data, std::size_t size)
{
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::size_t i = 0; i < size; ++i)
        h = (h ^ data[i]) * 0x100000001b3ull;
    return h;
}

// splitmix64
class Rng
{
public:
    explicit Rng(std::uint64_t seed) : m_state(seed) {}
    std::uint64_t next()
    {
        std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // In [0, n); 0 for n == 0.
    std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }

private:
    std::uint64_t m_state;
};

// One piece of the input in an allocation of exactly its size, so that AddressSanitizer sees a
// parser that reads before or past the piece it was given.
struct Chunk
{
    std::unique_ptr<char[]> bytes;
    std::size_t size = 0;

    const char *data() const { return bytes.get(); }
    QByteArray toByteArray() const { return QByteArray(bytes.get(), qsizetype(size)); }
};

// The input cut into non-empty chunks (none for an empty input) at offsets chosen by `rng`:
// one byte at a time, a few random cuts, many small pieces, or pieces of any size.
inline std::vector<Chunk> split(const std::uint8_t *data, std::size_t size, Rng &rng)
{
    std::vector<std::size_t> lengths;
    switch (rng.below(4)) {
    case 0:
        lengths.assign(size, 1);
        break;
    case 1: {
        std::vector<bool> cut(size + 1, false);
        for (std::uint64_t n = 1 + rng.below(4); n > 0; --n)
            cut[rng.below(size + 1)] = true;
        std::size_t start = 0;
        for (std::size_t i = 1; i <= size; ++i) {
            if (cut[i] || i == size) {
                lengths.push_back(i - start);
                start = i;
            }
        }
        break;
    }
    default: {
        const std::uint64_t most = rng.below(2) == 0 ? 16 : size;
        for (std::size_t left = size; left > 0;) {
            const std::size_t n = std::size_t(1 + rng.below(most));
            lengths.push_back(n < left ? n : left);
            left -= lengths.back();
        }
        break;
    }
    }
    std::vector<Chunk> chunks;
    std::size_t offset = 0;
    for (std::size_t n : lengths) {
        if (n == 0)
            continue;
        Chunk c{std::make_unique<char[]>(n), n};
        std::copy(data + offset, data + offset + n, c.bytes.get());
        chunks.push_back(std::move(c));
        offset += n;
    }
    return chunks;
}

// The whole input as one chunk.
inline std::vector<Chunk> whole(const std::uint8_t *data, std::size_t size)
{
    std::vector<Chunk> chunks;
    if (size > 0) {
        Chunk c{std::make_unique<char[]>(size), size};
        std::copy(data, data + size, c.bytes.get());
        chunks.push_back(std::move(c));
    }
    return chunks;
}

[[noreturn]] inline void fail(const char *file, int line, const char *what)
{
    std::fprintf(stderr, "%s:%d: fuzz property broken: %s\n", file, line, what);
    std::abort();
}

// The bytes readable, for the report of a broken property.
inline QByteArray show(const QByteArray &bytes)
{
    QByteArray out;
    for (char c : bytes) {
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out += c;
        else
            out += "\\x" + QByteArray::number(uchar(c), 16).rightJustified(2, '0');
    }
    return out;
}

// The chunk sizes, runs of one size as SIZExCOUNT.
inline QByteArray show(const std::vector<Chunk> &chunks)
{
    QByteArray out = "chunks:";
    for (std::size_t i = 0; i < chunks.size();) {
        std::size_t n = 1;
        while (i + n < chunks.size() && chunks[i + n].size == chunks[i].size)
            ++n;
        out += ' ' + QByteArray::number(qulonglong(chunks[i].size));
        if (n > 1)
            out += 'x' + QByteArray::number(qulonglong(n));
        i += n;
    }
    return out;
}

} // namespace fuzz

// A property every input must keep; a broken one is a crash that libFuzzer saves.
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fuzz::fail(__FILE__, __LINE__, #cond);                                                 \
    } while (0)

// The same, printing `report` (a QByteArray expression) first.
#define FUZZ_CHECK_REPORT(cond, report)                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s\n", QByteArray(report).constData());                          \
            fuzz::fail(__FILE__, __LINE__, #cond);                                                 \
        }                                                                                          \
    } while (0)
