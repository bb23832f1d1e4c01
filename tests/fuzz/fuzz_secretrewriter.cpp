// SecretRewriter with one to three secrets made from the input, on the rest of it: inject() as a
// request head to one host, mask() and the streaming Masker as the answer. A secret's value goes
// only to its hosts; no placeholder of a secret bound there stays where a value goes (request
// line, header values, Basic credentials); the Masker gives what mask() gives however the
// answer is cut; no value is left in a masked answer, and a head with values put in masks back to
// the one the sandbox sent.
//
// The input: lines `value<TAB>placeholder<TAB>host pattern`, a blank line, then the head and
// answer. Half the inputs keep the secrets as written; the other half make every value
// `marker byte + bytes 0x80-0xef` (marker 0xf0 + its index) and every placeholder ASCII, so that no
// value can arise from a placeholder or across the end of one, or begin inside another value:
// only then is "no value is left" a property of the rewriter rather than of the secrets chosen.
// The answer then gets the marked form of each value in place of the one written.

#include "fuzzinput.h"
#include "secretrewriter.h"

#include <algorithm>
#include <iterator>
#include <string>

namespace {

const std::uint8_t kMarker = 0xf0;

struct Setup
{
    std::vector<BoundSecret> secrets;
    bool disjoint = false;
    std::string head;
    std::string text; // the answer
    std::string host;
    int port = 443;
};

std::vector<std::string> splitOn(const std::string &text, char by)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t at; (at = text.find(by, start)) != std::string::npos; start = at + 1)
        parts.push_back(text.substr(start, at - start));
    parts.push_back(text.substr(start));
    return parts;
}

void replaceAll(std::string *text, const std::string &from, const std::string &to)
{
    if (from.empty() || from == to)
        return;
    for (std::size_t at = 0; (at = text->find(from, at)) != std::string::npos; at += to.size())
        text->replace(at, from.size(), to);
}

std::string lower(std::string s)
{
    for (char &c : s)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return s;
}

Setup setUp(const std::uint8_t *data, std::size_t size, fuzz::Rng &rng)
{
    const std::string input(reinterpret_cast<const char *>(data), size);
    Setup s;
    s.disjoint = rng.below(2) == 0;
    std::vector<std::string> specs;
    std::string rest = input;
    const std::size_t blank = input.find("\n\n");
    if (blank != std::string::npos) {
        specs = splitOn(input.substr(0, blank), '\n');
        rest = input.substr(blank + 2);
    }
    if (specs.empty())
        specs.push_back("sk-live-0123456789\tcsb-secret-KEY-0123456789abcdef\tapi.test");
    if (specs.size() > 3)
        specs.resize(3);
    static const char *const fallbacks[] = {"api.test", "*.git.test:8443", "10.0.0.1",
                                            "[fd00::1]:443"};
    std::vector<std::string> written; // the values as the input writes them
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const std::vector<std::string> f = splitOn(specs[i], '\t');
        BoundSecret b;
        b.name = "S" + std::to_string(i);
        b.value = f[0];
        b.placeholder = f.size() > 1 ? f[1] : "csb-secret-" + b.name + "-0011223344556677";
        std::optional<HostPattern> pattern;
        if (f.size() > 2)
            pattern = HostPattern::parse(f[2]);
        if (!pattern)
            pattern = HostPattern::parse(fallbacks[rng.below(4)]);
        b.hosts.push_back(*pattern);
        if (rng.below(4) == 0)
            b.hosts.push_back(*HostPattern::parse(fallbacks[rng.below(4)]));
        written.push_back(b.value);
        if (s.disjoint) {
            std::string body = b.value;
            if (!body.empty() && std::uint8_t(body[0]) == std::uint8_t(kMarker + i))
                body.erase(0, 1);
            b.value = std::string(1, char(kMarker + i));
            for (char c : body) {
                const std::uint8_t u = std::uint8_t(c);
                b.value += char(u >= 0x80 && u < kMarker ? u : 0x80 + u % 0x70);
            }
            for (char &c : b.placeholder)
                c = char(c & 0x7f);
            if (b.placeholder.empty())
                b.placeholder = "csb-secret-" + b.name;
        }
        s.secrets.push_back(std::move(b));
    }
    s.head = rest;
    s.text = rest;
    if (s.disjoint)
        for (std::size_t i = 0; i < s.secrets.size(); ++i)
            replaceAll(&s.text, written[i], s.secrets[i].value);

    // A host one of the secrets is bound to, or one of a few that some are not.
    if (rng.below(2) == 0) {
        const HostPattern &p = s.secrets[rng.below(s.secrets.size())].hosts.front(); // always one
        s.host = p.isWildcard() ? "x." + p.host() : p.host();
        s.port = p.ports()[rng.below(p.ports().size())];
    } else {
        static const std::pair<const char *, int> others[] = {
            {"api.test", 443}, {"api.test", 8443}, {"code.git.test", 8443}, {"git.test", 8443},
            {"10.0.0.1", 80},  {"fd00::1", 443},   {"other.test", 443}};
        const auto &[host, port] = others[rng.below(std::size(others))];
        s.host = host;
        s.port = port;
    }
    return s;
}

QByteArray bytes(const std::string &s)
{
    return QByteArray(s.data(), qsizetype(s.size()));
}

QByteArray show(const Setup &s)
{
    QByteArray out = s.disjoint ? "input: secrets of disjoint alphabets\n" : "input: secrets\n";
    for (const BoundSecret &b : s.secrets) {
        out += "  " + bytes(b.name) + ": " + fuzz::show(bytes(b.value)) + " as " +
               fuzz::show(bytes(b.placeholder)) + " for";
        for (const HostPattern &p : b.hosts)
            out += ' ' + bytes(p.text());
        out += '\n';
    }
    return out + "  to " + bytes(s.host) + ':' + QByteArray::number(s.port) + '\n';
}

struct Injected
{
    std::string head;
    std::vector<std::string> added;
    bool expectContinue = false;
    std::vector<std::pair<std::string, std::string>> echoes;

    bool operator==(const Injected &o) const
    {
        return head == o.head && added == o.added && expectContinue == o.expectContinue &&
               echoes == o.echoes;
    }
};

Injected inject(const SecretRewriter &r, const Setup &s)
{
    Injected out;
    out.head = r.inject(s.head, s.host, s.port, &out.added, &out.expectContinue, &out.echoes);
    return out;
}

QByteArray show(const Injected &i)
{
    QByteArray out = "  head " + fuzz::show(bytes(i.head)) + "\n  added";
    for (const std::string &name : i.added)
        out += ' ' + bytes(name);
    out += i.expectContinue ? "\n  expects 100-continue\n" : "\n";
    for (const auto &[sent, written] : i.echoes)
        out += "  echo " + fuzz::show(bytes(sent)) + " of " + fuzz::show(bytes(written)) + '\n';
    return out;
}

// The lines of a head inject() wrote, up to its blank line.
std::vector<std::string> lines(const std::string &head)
{
    std::vector<std::string> out;
    for (std::size_t start = 0; start < head.size();) {
        std::size_t end = head.find("\r\n", start);
        if (end == std::string::npos)
            end = head.size();
        if (end == start)
            break;
        out.push_back(head.substr(start, end - start));
        start = end + 2;
    }
    return out;
}

void checkInject(const Setup &s, const SecretRewriter &all)
{
    std::vector<BoundSecret> bound;
    std::vector<BoundSecret> unfilled; // the same hosts, no placeholder to fill
    for (const BoundSecret &b : s.secrets) {
        if (!b.boundTo(s.host, s.port))
            continue;
        bound.push_back(b);
        unfilled.push_back(b);
        unfilled.back().placeholder.clear();
    }
    const Injected out = inject(all, s);
    // Reports are made only when a check fails: they cost more than the checks.
    const auto report = [&] {
        return show(s) + "  head in " + fuzz::show(bytes(s.head)) + '\n' + show(out);
    };

    // The secrets not bound there change nothing: their values stay in the gateway.
    const Injected onlyBound = inject(SecretRewriter(bound), s);
    FUZZ_CHECK_REPORT(out == onlyBound, report() + "only the bound secrets:\n" + show(onlyBound));
    FUZZ_CHECK_REPORT(all.bindsTo(s.host, s.port) == !bound.empty(), report());

    // Named once each, only where bound; without a placeholder filled in, the head is what it
    // would be with none to fill.
    for (std::size_t i = 0; i < out.added.size(); ++i) {
        FUZZ_CHECK_REPORT(std::count(out.added.begin(), out.added.end(), out.added[i]) == 1,
                          report());
        FUZZ_CHECK_REPORT(std::any_of(bound.begin(), bound.end(),
                                      [&](const BoundSecret &b) { return b.name == out.added[i]; }),
                          report());
    }
    const Injected plain = inject(SecretRewriter(unfilled), s);
    FUZZ_CHECK_REPORT(plain.added.empty() && plain.echoes.empty() &&
                          plain.expectContinue == out.expectContinue,
                      report() + "nothing filled in:\n" + show(plain));
    if (out.added.empty())
        FUZZ_CHECK_REPORT(out.head == plain.head && out.echoes.empty(),
                          report() + "nothing filled in:\n" + show(plain));

    // Expect never goes on (the gateway answers 100 itself), Accept-Encoding not where a value
    // may be echoed.
    const std::vector<std::string> headLines = lines(out.head);
    for (std::size_t i = 1; i < headLines.size(); ++i) {
        const std::string name = lower(headLines[i].substr(0, headLines[i].find(':')));
        FUZZ_CHECK_REPORT(name != "expect", report());
        FUZZ_CHECK_REPORT(bound.empty() || name != "accept-encoding", report());
    }
    if (!s.disjoint)
        return;

    // No placeholder of a secret bound there is left where values go: the request line, header
    // values, and inside Basic credentials.
    const auto leaves = [&](const std::string &text) {
        return std::any_of(bound.begin(), bound.end(), [&](const BoundSecret &b) {
            return text.find(b.placeholder) != std::string::npos;
        });
    };
    for (std::size_t i = 0; i < headLines.size(); ++i) {
        const std::string &line = headLines[i];
        const std::size_t colon = line.find(':');
        if (i > 0 && colon == std::string::npos)
            continue; // not a header: passed on as it is
        std::string value = i == 0 ? line : line.substr(colon + 2);
        std::string decoded;
        if (i > 0 && lower(line.substr(0, colon)) == "authorization" &&
            lower(value.substr(0, 6)) == "basic " &&
            SecretRewriter::decodeBase64(value.substr(6), &decoded))
            value = decoded;
        FUZZ_CHECK_REPORT(!leaves(value), report() + "  placeholder left in line " +
                                              fuzz::show(bytes(line)) + '\n');
    }

    // Masked, the head is the one the sandbox sent again (where it held no value itself, and
    // no Basic credentials had to be encoded anew).
    const bool marked = std::any_of(s.head.begin(), s.head.end(), [](char c) {
        return std::uint8_t(c) >= kMarker && std::uint8_t(c) < kMarker + 3;
    });
    if (!marked && out.echoes.empty()) {
        const std::string masked = all.mask(out.head);
        FUZZ_CHECK_REPORT(masked == plain.head, report() + "  masked " + fuzz::show(bytes(masked)) +
                                                    "\nnothing filled in:\n" + show(plain));
    }
}

// What a Masker gives for `text` in these pieces.
std::string maskInPieces(const SecretRewriter &r, const std::vector<fuzz::Chunk> &chunks)
{
    SecretRewriter::Masker masker(r);
    std::string out;
    for (const fuzz::Chunk &c : chunks)
        out += masker.feed(c.data(), c.size);
    return out + masker.finish();
}

void checkMask(const Setup &s, const SecretRewriter &r, fuzz::Rng &rng, const QByteArray &what)
{
    const std::string masked = r.mask(s.text);
    const auto report = [&] {
        return show(s) + what + "  text " + fuzz::show(bytes(s.text)) + "\n  masked " +
               fuzz::show(bytes(masked)) + '\n';
    };
    const std::uint8_t *text = reinterpret_cast<const std::uint8_t *>(s.text.data());
    std::vector<std::vector<fuzz::Chunk>> splits;
    splits.push_back(fuzz::split(text, s.text.size(), rng));
    if (s.text.size() <= 64) {
        // Every cut into two pieces.
        for (std::size_t at = 1; at < s.text.size(); ++at) {
            std::vector<fuzz::Chunk> two = fuzz::whole(text, at);
            for (fuzz::Chunk &c : fuzz::whole(text + at, s.text.size() - at))
                two.push_back(std::move(c));
            splits.push_back(std::move(two));
        }
    }
    for (const std::vector<fuzz::Chunk> &chunks : splits) {
        const std::string streamed = maskInPieces(r, chunks);
        FUZZ_CHECK_REPORT(streamed == masked, report() + fuzz::show(chunks) + ":\n  masked " +
                                                  fuzz::show(bytes(streamed)) + '\n');
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::Rng rng(fuzz::hash(data, size));
    const Setup s = setUp(data, size, rng);
    const SecretRewriter all(s.secrets);
    checkInject(s, all);

    checkMask(s, all, rng, "");
    if (s.disjoint) {
        const std::string masked = all.mask(s.text);
        for (const BoundSecret &b : s.secrets)
            FUZZ_CHECK_REPORT(masked.find(b.value) == std::string::npos,
                              show(s) + "  text " + fuzz::show(bytes(s.text)) + "\n  masked " +
                                  fuzz::show(bytes(masked)) + "\n  still holds " +
                                  fuzz::show(bytes(b.value)) + '\n');
    }
    // The answer of a request whose Basic credentials were filled in: masked with its echoes.
    std::vector<std::string> added;
    std::vector<std::pair<std::string, std::string>> echoes;
    all.inject(s.head, s.host, s.port, &added, nullptr, &echoes);
    if (!echoes.empty())
        checkMask(s, all.withEchoes(echoes), rng, "  with the echoes of its Basic credentials\n");
    return 0;
}
