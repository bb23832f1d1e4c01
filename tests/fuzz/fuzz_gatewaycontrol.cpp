// Gateway::control on the lines of the input, as the gateway reads them from the server (a CR
// before the LF dropped). Every line gets one answer: a JSON object on one line, which the
// server's reader (QJsonDocument, EgressGateway::onOutput) takes whenever the line was UTF-8, as
// the server's lines are. What a line answered ok is what the gateway then does (grants, secrets,
// the upstream proxy and its no-proxy list). And no answer depends on a secret's value: the same
// lines with other values (valid where it was valid, refused where it was not) get the same
// answers, so that none can quote one; nor does one quote the authority's key.

#include "fuzzinput.h"
#include "gateway.h"

#include <QByteArrayView>
#include <QJsonDocument>
#include <QJsonObject>
#include <optional>
#include <string>
#include <vector>

namespace {

QByteArray bytes(const std::string &s)
{
    return QByteArray(s.data(), qsizetype(s.size()));
}

// The fields of a line, tab-separated, as control() reads them.
std::vector<std::string> splitOn(const std::string &text, char by)
{
    std::vector<std::string> parts;
    if (text.empty())
        return parts;
    std::size_t start = 0;
    for (std::size_t at; (at = text.find(by, start)) != std::string::npos; start = at + 1)
        parts.push_back(text.substr(start, at - start));
    parts.push_back(text.substr(start));
    return parts;
}

std::string join(const std::vector<std::string> &parts, char by)
{
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i)
        out += (i > 0 ? std::string(1, by) : std::string()) + parts[i];
    return out;
}

// The line with another value in place of a secret's (a `secret` line's fifth field): one that
// is as valid, of the same length, and differs from it.
std::string blinded(const std::string &line)
{
    std::vector<std::string> f = splitOn(line, '\t');
    if (f.size() < 5 || f[0] != "secret")
        return line;
    std::string value;
    if (SecretRewriter::decodeBase64(f[4], &value) && !value.empty()) {
        const char other = value.find_first_not_of('x') == std::string::npos ? 'y' : 'x';
        f[4] = SecretRewriter::encodeBase64(std::string(value.size(), other));
    } else if (!f[4].empty()) {
        f[4] = "*"; // not base64 either
    }
    return join(f, '\t');
}

// Whether text has only base64's letters, as a key's PEM in base64 does.
bool isBase64Text(const std::string &text)
{
    return text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                                  "=") == std::string::npos;
}

// The answer without the authority line's usage, which is the same text for every input and so
// quotes none.
std::string withoutUsage(std::string answer)
{
    const std::string usage = "authority takes a certificate and a key, each PEM in base64";
    for (std::size_t at; (at = answer.find(usage)) != std::string::npos;)
        answer.erase(at, usage.size());
    return answer;
}

// The lines so far with their answers, for a report (made only then: it costs more than the
// lines).
struct Transcript
{
    std::vector<std::pair<std::string, std::string>> lines;

    QByteArray show() const
    {
        QByteArray out = "input: control lines\n";
        for (const auto &[line, answer] : lines)
            out += "  " + fuzz::show(bytes(line)) + "\n  -> " + fuzz::show(bytes(answer)) + '\n';
        return out;
    }
};

struct Answer
{
    QJsonObject object;
    QByteArray ev;
};

// The answer as the server reads it.
Answer readAnswer(const std::string &line, const std::string &answer, const Transcript &t)
{
    // Nothing waits for a verdict here: every line gets an answer.
    FUZZ_CHECK_REPORT(!answer.empty(), t.show());
    // One line, and no control character in a string (JSON has none unescaped).
    for (char c : answer)
        FUZZ_CHECK_REPORT(std::uint8_t(c) >= 0x20 && c != 0x7f, t.show());
    QByteArray json = bytes(answer);
    const bool utf8 = QByteArrayView(line.data(), qsizetype(line.size())).isValidUtf8();
    if (!utf8) {
        // The server sends UTF-8; of other bytes only the structure of the answer is checked
        // (it is ASCII).
        for (char &c : json)
            if (std::uint8_t(c) >= 0x80)
                c = '?';
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    FUZZ_CHECK_REPORT(error.error == QJsonParseError::NoError && doc.isObject(),
                      t.show() + "  not read: " + error.errorString().toUtf8() + " at " +
                          QByteArray::number(error.offset) + '\n');
    Answer a{doc.object(), doc.object().value(u"ev").toString().toUtf8()};
    FUZZ_CHECK_REPORT(a.ev == "ok" || a.ev == "pong" || a.ev == "error", t.show());
    return a;
}

// A host and port the pattern lets through (none for a wildcard whose suffix is as long as a
// name may be).
std::optional<std::pair<std::string, int>> coveredBy(const HostPattern &p)
{
    const std::string host = p.isWildcard() ? "x." + p.host() : p.host();
    if (HostPattern::normalise(host).empty())
        return std::nullopt;
    return std::make_pair(host, p.ports().front());
}

// The first pattern of a list control() took.
std::optional<HostPattern> firstPattern(const std::string &list)
{
    for (const std::string &text : splitOn(list, ','))
        if (!text.empty())
            return HostPattern::parse(text);
    return std::nullopt;
}

// What a line answered ok did to the gateway.
void checkState(Gateway &gateway, const std::vector<std::string> &f, const Answer &a,
                const Transcript &t)
{
    if (f.empty())
        return;
    if (f[0] == "ping" && f.size() == 1)
        FUZZ_CHECK_REPORT(a.ev == "pong", t.show());
    if (a.ev != "ok")
        return;
    if (f[0] == "grant") {
        FUZZ_CHECK_REPORT(f.size() == 5 && gateway.knows(f[1], f[2]), t.show());
        const std::optional<HostPattern> p = firstPattern(f[4]);
        const auto covered = p ? coveredBy(*p) : std::nullopt;
        if (covered && f[3] == "refuse") {
            // (An `ask` grant would hold decide() for a verdict.)
            const auto [host, port] = *covered;
            const Gateway::Decision d = gateway.decide(0, f[1], host, port);
            FUZZ_CHECK_REPORT(d.allowed, t.show() + "  refused " + bytes(host) + ':' +
                                             QByteArray::number(port) + ": " + bytes(d.rule) +
                                             '\n');
        }
    } else if (f[0] == "revoke") {
        FUZZ_CHECK_REPORT(f.size() == 2 && gateway.secretsFor(f[1]).empty(), t.show());
    } else if (f[0] == "secret") {
        FUZZ_CHECK_REPORT(f.size() == 6, t.show());
        const std::optional<HostPattern> p = firstPattern(f[5]);
        FUZZ_CHECK_REPORT(p.has_value(), t.show());
        const auto covered = coveredBy(*p);
        if (!covered)
            return;
        const auto [host, port] = *covered;
        FUZZ_CHECK_REPORT(gateway.secretsFor(f[1]).bindsTo(host, port),
                          t.show() + "  not bound to " + bytes(host) + ':' +
                              QByteArray::number(port) + '\n');
    } else if (f[0] == "upstream") {
        FUZZ_CHECK_REPORT(f.size() == 4, t.show());
        const std::optional<Gateway::Upstream> any = gateway.upstreamFor("any.example");
        if (f[1] == "-") {
            FUZZ_CHECK_REPORT(!any.has_value(), t.show());
            return;
        }
        // Without a no-proxy list every host goes through the proxy, with its credential.
        if (f[3] == "-")
            FUZZ_CHECK_REPORT(any.has_value() && any->port >= 1 && any->port <= 65535 &&
                                  any->authorization == (f[2] == "-" ? "" : "Basic " + f[2]),
                              t.show() + "  not through the proxy\n");
        // The hosts its list names go straight out (curl's reading of NO_PROXY, as upstreamFor
        // has it: `*`, a name and the names below it, `.suffix`).
        for (const std::string &entry : splitOn(f[3] == "-" ? std::string() : f[3], ',')) {
            std::vector<std::string> direct;
            if (entry == "*") {
                direct.push_back("any.example");
            } else if (entry.size() > 1 && entry[0] == '.') {
                const std::string suffix = HostPattern::normalise(entry.substr(1));
                if (!suffix.empty())
                    direct.push_back("x." + suffix);
            } else {
                const std::string name = HostPattern::normalise(entry);
                if (!name.empty() && !HostPattern::isAddressLiteral(name)) {
                    direct.push_back(name);
                    direct.push_back("x." + name);
                }
            }
            for (const std::string &host : direct)
                FUZZ_CHECK_REPORT(!gateway.upstreamFor(host).has_value(),
                                  t.show() + "  " + bytes(host) + " goes through the proxy\n");
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    std::vector<std::string> lines =
        splitOn(std::string(reinterpret_cast<const char *>(data), size), '\n');
    std::vector<std::string> otherLines;
    for (std::string &line : lines) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        otherLines.push_back(blinded(line));
    }
    Gateway gateway;
    // The same lines with other secret values, where there are any: for the same lines a second
    // gateway (a key of its own, the authority's PEM read again) would only double the time.
    std::optional<Gateway> other;
    if (otherLines != lines)
        other.emplace();
    Transcript t;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string &line = lines[i];
        const std::string answer = gateway.control(line);
        t.lines.emplace_back(line, answer);
        const Answer a = readAnswer(line, answer, t);
        const std::vector<std::string> f = splitOn(line, '\t');
        checkState(gateway, f, a, t);

        if (other) {
            const std::string otherAnswer = other->control(otherLines[i]);
            FUZZ_CHECK_REPORT(otherAnswer == answer, t.show() + "  with another value " +
                                                         fuzz::show(bytes(otherLines[i])) +
                                                         "\n  -> " +
                                                         fuzz::show(bytes(otherAnswer)) + '\n');
        }

        // The authority's key (PEM in base64) is quoted in no answer, read or not. A key in
        // base64 has only its alphabet: text that has more is no key, and the fuzzer learns the
        // answers' own words from this very search ("and a key, each PEM in base64" is the
        // usage), which would then be "quoted" without being a key.
        if (f.size() == 3 && f[0] == "authority") {
            const std::string said = withoutUsage(answer);
            std::string key;
            if (f[2].size() >= 16 && isBase64Text(f[2]))
                FUZZ_CHECK_REPORT(said.find(f[2]) == std::string::npos, t.show());
            if (SecretRewriter::decodeBase64(f[2], &key) && key.size() >= 16)
                FUZZ_CHECK_REPORT(said.find(key) == std::string::npos, t.show());
        }
    }
    return 0;
}
