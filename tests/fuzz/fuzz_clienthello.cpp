// ClientHello::parse on arbitrary bytes, as the gateway reads the first bytes through a CONNECT
// tunnel (again each time more arrive, up to kMaxBytes): nothing is read past the bytes given, a
// prefix of bytes that have an answer asks for more or has that same answer, and how a client
// cuts its handshake message into records does not change the answer. The input is read twice:
// as the bytes of the tunnel, and as a handshake message (after the record header it may start
// with) framed in one record and in several.

#include "clienthello.h"
#include "fuzzinput.h"

#include <functional>
#include <optional>
#include <set>

namespace {

using Status = ClientHello::Status;

// The bytes in an allocation of their own size, so that a read past them is an ASan finding.
ClientHello::Result read(const std::uint8_t *data, std::size_t size)
{
    const std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[size]);
    std::copy(data, data + size, copy.get());
    return ClientHello::parse(copy.get(), size);
}

ClientHello::Result read(const std::vector<std::uint8_t> &bytes)
{
    return read(bytes.data(), bytes.size());
}

bool same(const ClientHello::Result &a, const ClientHello::Result &b)
{
    return a.status == b.status && a.serverName == b.serverName;
}

QByteArray show(const ClientHello::Result &r)
{
    static const char *const names[] = {"NeedMore", "ServerName", "NoName",
                                        "NotTls",   "Malformed",  "EncryptedName"};
    return QByteArray("  ") + names[int(r.status)] + ' ' +
           fuzz::show(QByteArray(r.serverName.data(), qsizetype(r.serverName.size()))) + '\n';
}

// Reports are made only when a check fails: they cost more than the parse.
using Report = std::function<QByteArray()>;

void checkAnswer(const ClientHello::Result &r, const Report &report)
{
    if (r.status != Status::ServerName) {
        FUZZ_CHECK_REPORT(r.serverName.empty(), report());
        return;
    }
    // The name is compared with the CONNECT's host: printable ASCII, in lower case.
    FUZZ_CHECK_REPORT(!r.serverName.empty(), report());
    for (char c : r.serverName)
        FUZZ_CHECK_REPORT(c > 0x20 && c < 0x7f && !(c >= 'A' && c <= 'Z'), report());
}

// The bytes of the tunnel, and the prefixes the gateway would have read them in.
void checkStream(const std::uint8_t *data, std::size_t size, fuzz::Rng &rng)
{
    const ClientHello::Result whole = read(data, size);
    const Report report = [&] {
        return "input: " + QByteArray::number(qulonglong(size)) + " bytes of a tunnel\nwhole:\n" +
               show(whole);
    };
    checkAnswer(whole, report);
    // The gateway reads no more than kMaxBytes: past them a hello that was whole in fewer bytes
    // may have been refused (a record that would end beyond) before it was.
    const std::size_t end = std::min(size, ClientHello::kMaxBytes);
    std::set<std::size_t> cuts{end};
    // Around each record's header and its end (where what is known changes), a few anywhere,
    // and now and then every one.
    const auto recordEnd = [&](std::size_t at) {
        return at + 5 + (std::size_t(data[at + 3]) << 8 | data[at + 4]);
    };
    for (std::size_t at = 0; at + 5 <= end; at = recordEnd(at)) {
        for (std::size_t n : {at + 4, at + 5, at + 9, recordEnd(at)}) {
            if (n <= end) {
                cuts.insert(n - 1);
                cuts.insert(n);
            }
        }
    }
    for (int i = 0; i < 6; ++i)
        cuts.insert(std::size_t(rng.below(end + 1)));
    const bool every = end <= 1024 && rng.below(32) == 0;
    for (std::size_t n = 0; every && n < end; ++n)
        cuts.insert(n);
    std::optional<ClientHello::Result> answered;
    std::size_t answeredAt = 0;
    const auto showAnswered = [&] {
        return "answered at " + QByteArray::number(qulonglong(answeredAt)) + ":\n" +
               show(*answered);
    };
    for (std::size_t n : cuts) {
        const ClientHello::Result r = read(data, n);
        const Report prefixReport = [&] {
            return report() + "prefix of " + QByteArray::number(qulonglong(n)) + ":\n" + show(r);
        };
        checkAnswer(r, prefixReport);
        if (answered) {
            FUZZ_CHECK_REPORT(same(r, *answered), prefixReport() + showAnswered());
        } else if (r.status != Status::NeedMore) {
            answered = r;
            answeredAt = n;
        }
    }
    if (size <= ClientHello::kMaxBytes && answered)
        FUZZ_CHECK_REPORT(same(whole, *answered), report() + showAnswered());
}

// `message` in TLS handshake records of the given payload lengths.
std::vector<std::uint8_t> framed(const std::uint8_t *message,
                                 const std::vector<std::size_t> &lengths)
{
    std::vector<std::uint8_t> out;
    std::size_t at = 0;
    for (std::size_t n : lengths) {
        const std::uint8_t header[] = {0x16, 0x03, 0x01, std::uint8_t(n >> 8), std::uint8_t(n)};
        out.insert(out.end(), header, header + sizeof header);
        out.insert(out.end(), message + at, message + at + n);
        at += n;
    }
    return out;
}

QByteArray show(const std::vector<std::size_t> &lengths)
{
    QByteArray out = "records:";
    for (std::size_t n : lengths)
        out += ' ' + QByteArray::number(qulonglong(n));
    return out;
}

// A handshake message in one record and in several: the same answer, as long as the records
// fit in what the gateway reads.
void checkRecords(const std::uint8_t *message, std::size_t size, fuzz::Rng &rng)
{
    if (size == 0 || size > 0xffff)
        return;
    const std::vector<std::size_t> one{size};
    std::vector<std::size_t> several;
    for (const fuzz::Chunk &c : fuzz::split(message, size, rng))
        several.push_back(c.size);
    if (size + 5 * several.size() >= ClientHello::kMaxBytes)
        return;
    const ClientHello::Result once = read(framed(message, one));
    const ClientHello::Result pieces = read(framed(message, several));
    const Report report = [&] {
        return "input: a handshake message of " + QByteArray::number(qulonglong(size)) +
               " bytes\nwhole:\n" + show(once) + show(several) + ":\n" + show(pieces);
    };
    checkAnswer(once, report);
    checkAnswer(pieces, report);
    FUZZ_CHECK_REPORT(same(once, pieces), report());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::Rng rng(fuzz::hash(data, size));
    checkStream(data, size, rng);
    // A captured hello starts with its record header: the message follows it.
    const std::size_t skip = size >= 5 && data[0] == 0x16 && data[1] == 0x03 ? 5 : 0;
    checkRecords(data + skip, size - skip, rng);
    return 0;
}
