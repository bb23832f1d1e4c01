// ProxyRequest on arbitrary bytes, read as the gateway reads them: as the head of what a sandbox
// sends it (parse) and as the first request inside a tunnel (parseInTunnel), again each time more
// bytes arrive. Cut before its head is whole, a request asks for more, and once it has an answer
// more bytes do not change it. What the gateway writes on for the origin server or a proxy
// upstream is one head of well-formed lines that reads back as the same request, for the same
// host and port: the allow-list and the secrets were checked for those.

#include "fuzzinput.h"
#include "gatewayprotocol.h"
#include "hostpattern.h"
#include "proxyrequest.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace {

using Status = ProxyRequest::Status;
using Kind = ProxyRequest::Kind;

// "u:p" in Basic: a credential parse() takes.
const std::string kAuthorization = "Basic dTpw";

struct Reading
{
    bool inTunnel = false;
    int defaultPort = 80; // the port parse() gives a target without one
};

// The bytes in an allocation of their own size, so that a read past them is an ASan finding.
ProxyRequest read(const char *data, std::size_t size, const Reading &how)
{
    const std::unique_ptr<char[]> copy(new char[size]);
    std::copy(data, data + size, copy.get());
    return how.inTunnel ? ProxyRequest::parseInTunnel(copy.get(), size, how.defaultPort)
                        : ProxyRequest::parse(copy.get(), size);
}

ProxyRequest read(const std::string &bytes, const Reading &how)
{
    return read(bytes.data(), bytes.size(), how);
}

QByteArray bytes(const std::string &s)
{
    return QByteArray(s.data(), qsizetype(s.size()));
}

QByteArray show(const ProxyRequest &r)
{
    QByteArray out = "  state " + QByteArray::number(int(r.state())) + ", head " +
                     QByteArray::number(qulonglong(r.headBytes())) + " bytes";
    if (r.state() == Status::Bad)
        return out + ", " + QByteArray::number(r.status()) + ' ' + fuzz::show(bytes(r.error())) +
               '\n';
    if (r.state() == Status::Ok)
        out += QByteArray(r.kind() == Kind::Connect ? ", CONNECT " : ", forward ") +
               fuzz::show(bytes(r.method())) + ' ' + fuzz::show(bytes(r.host())) + " port " +
               QByteArray::number(r.port()) + ", credential " + fuzz::show(bytes(r.credential()));
    return out + '\n';
}

QByteArray show(const Reading &how)
{
    return how.inTunnel ? "in a tunnel, default port " + QByteArray::number(how.defaultPort)
                        : QByteArray("as a proxy request");
}

bool same(const ProxyRequest &a, const ProxyRequest &b)
{
    if (a.state() != b.state() || a.status() != b.status() || a.error() != b.error() ||
        a.headBytes() != b.headBytes())
        return false;
    if (a.state() != Status::Ok)
        return true;
    return a.kind() == b.kind() && a.method() == b.method() && a.host() == b.host() &&
           a.port() == b.port() && a.credential() == b.credential() &&
           a.authority(true) == b.authority(true) &&
           (a.kind() == Kind::Connect || a.originHead() == b.originHead());
}

// RFC 9110's tchar: what a header name is made of. Not a space: a line that starts with one
// continues the line before it (obs-fold), and a name with one is read apart by different servers.
bool isTokenChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// A request line, header lines, and the blank line at the end and nowhere else: no CR or LF but
// in the line ends and names that are tokens, so that no header (or second request) can be
// slipped into it, nor anything added to a header the gateway wrote itself.
bool wellFormed(const std::string &head)
{
    for (std::size_t i = 0; i < head.size(); ++i) {
        if (head[i] == '\r' && (i + 1 == head.size() || head[i + 1] != '\n'))
            return false;
        if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r'))
            return false;
    }
    if (head.size() < 4 || head.find("\r\n\r\n") != head.size() - 4)
        return false;
    // METHOD target HTTP/x.y
    const std::size_t lineEnd = head.find("\r\n");
    const std::string line = head.substr(0, lineEnd);
    if (std::count(line.begin(), line.end(), ' ') != 2 || line.find(" HTTP/") == std::string::npos)
        return false;
    // name: value
    for (std::size_t start = lineEnd + 2; start < head.size() - 2;) {
        const std::size_t end = head.find("\r\n", start);
        const std::size_t colon = head.find(':', start);
        if (colon == std::string::npos || colon == start || colon + 1 >= end ||
            head[colon + 1] != ' ' ||
            !std::all_of(head.begin() + std::ptrdiff_t(start), head.begin() + std::ptrdiff_t(colon),
                         isTokenChar))
            return false;
        start = end + 2;
    }
    return true;
}

std::size_t headerLines(const std::string &head)
{
    std::size_t n = 0;
    for (std::size_t at = 0; (at = head.find("\r\n", at)) != std::string::npos; at += 2)
        ++n;
    return n >= 2 ? n - 2 : 0; // less the request line and the blank line
}

// A head the gateway made that reads back refused may only be one over the limits: 16 KiB, or
// 100 header fields (it adds Host and Connection to what the client sent).
bool overLimits(const ProxyRequest &r, const std::string &head)
{
    return r.state() == Status::Bad && r.status() == 431 &&
           (head.size() >= ProxyRequest::kMaxHeadBytes || headerLines(head) > 100);
}

// Reports are made only when a check fails: they cost more than the parse.
using Report = std::function<QByteArray()>;

void checkAnswer(const ProxyRequest &r, std::size_t size, const Reading &how, const Report &report)
{
    switch (r.state()) {
    case Status::NeedMore:
        FUZZ_CHECK_REPORT(size < ProxyRequest::kMaxHeadBytes && r.headBytes() == 0, report());
        break;
    case Status::Bad: {
        const int s = r.status();
        FUZZ_CHECK_REPORT((s == 400 || s == 407 || s == 421 || s == 431) && !r.error().empty(),
                          report());
        if (how.inTunnel) {
            // Refused inside a tunnel, the request's error is the rule of the deny event the
            // server journals: a line that is JSON (UTF-8 only) and that the server reads back.
            using P = GatewayProtocol;
            const std::string event = P::encode(P::NetworkEvent(P::Connection{
                1, "cred", "host.test", 443, P::Connection::Outcome::Deny, r.error()}));
            QJsonParseError error;
            const QJsonDocument doc = QJsonDocument::fromJson(bytes(event), &error);
            FUZZ_CHECK_REPORT(error.error == QJsonParseError::NoError && doc.isObject(),
                              report() + "  event " + fuzz::show(bytes(event)) + ": " +
                                  error.errorString().toUtf8());
            const P::DecodedEvent decoded = P::decodeEvent(event);
            FUZZ_CHECK_REPORT(decoded.event.has_value(), report() + "  event " +
                                                             fuzz::show(bytes(event)) + ": " +
                                                             bytes(decoded.why));
        }
        break;
    }
    case Status::Ok:
        FUZZ_CHECK_REPORT(r.headBytes() > 0 &&
                              r.headBytes() <= std::min(size, ProxyRequest::kMaxHeadBytes),
                          report());
        FUZZ_CHECK_REPORT(!r.host().empty() && HostPattern::normalise(r.host()) == r.host(),
                          report());
        // (Inside a tunnel `Host: name:0` reads as port 0, which no CONNECT it must match has.)
        FUZZ_CHECK_REPORT(r.port() >= (how.inTunnel ? 0 : 1) && r.port() <= 65535, report());
        FUZZ_CHECK_REPORT(how.inTunnel ? r.kind() == Kind::Forward && r.credential().empty()
                                       : !r.credential().empty(),
                          report());
        break;
    }
}

// What the gateway writes on for a request it took.
void checkHeads(const ProxyRequest &r, const Reading &how, const Report &report)
{
    if (r.kind() == Kind::Connect) {
        // Through a proxy upstream: CONNECT to the same authority.
        const std::string head = "CONNECT " + r.authority(true) +
                                 " HTTP/1.1\r\nProxy-Authorization: " + kAuthorization + "\r\n\r\n";
        const ProxyRequest again = read(head, Reading{});
        FUZZ_CHECK_REPORT(again.state() == Status::Ok && again.kind() == Kind::Connect &&
                              again.host() == r.host() && again.port() == r.port(),
                          report() + "  CONNECT " + fuzz::show(bytes(head)) + '\n' + show(again));
        return;
    }
    // To the origin: read back as the origin (or a tunnel's next request) would.
    const std::string origin = r.originHead();
    const auto originReport = [&] {
        return report() + "  origin head " + fuzz::show(bytes(origin)) + '\n';
    };
    FUZZ_CHECK_REPORT(wellFormed(origin), originReport());
    const ProxyRequest again = read(origin, Reading{true, how.defaultPort});
    if (!overLimits(again, origin)) {
        FUZZ_CHECK_REPORT(again.state() == Status::Ok && again.method() == r.method() &&
                              again.host() == r.host() && again.port() == r.port() &&
                              again.headBytes() == origin.size() && again.originHead() == origin,
                          originReport() + show(again));
    }
    FUZZ_CHECK_REPORT(wellFormed(r.upstreamHead("Basic x")), originReport());
    if (how.inTunnel)
        return; // the gateway sends a proxy upstream only what parse() read
    // To a proxy upstream: absolute form, its own credential.
    const std::string upstream = r.upstreamHead(kAuthorization);
    const auto upstreamReport = [&] {
        return report() + "  upstream head " + fuzz::show(bytes(upstream)) + '\n';
    };
    FUZZ_CHECK_REPORT(wellFormed(upstream), upstreamReport());
    const ProxyRequest there = read(upstream, Reading{});
    if (!overLimits(there, upstream)) {
        FUZZ_CHECK_REPORT(there.state() == Status::Ok && there.kind() == Kind::Forward &&
                              there.method() == r.method() && there.host() == r.host() &&
                              there.port() == r.port() && there.credential() == "p" &&
                              there.originHead() == origin,
                          upstreamReport() + show(there));
    }
}

void check(const std::uint8_t *data, std::size_t size, const Reading &how, fuzz::Rng &rng)
{
    const char *text = reinterpret_cast<const char *>(data);
    const ProxyRequest whole = read(text, size, how);
    const Report report = [&] {
        return "input: " + QByteArray::number(qulonglong(size)) + " bytes read " + show(how) +
               "\nwhole:\n" + show(whole);
    };
    checkAnswer(whole, size, how, report);
    if (whole.state() == Status::Ok)
        checkHeads(whole, how, report);

    // Prefixes, as the gateway reads again each time more arrives: asking for more until the
    // answer, then that answer whatever follows. Right before and at the end of the head too.
    std::set<std::size_t> cuts;
    for (int i = 0; i < 4; ++i)
        cuts.insert(std::size_t(rng.below(size + 1)));
    if (whole.headBytes() > 0) {
        cuts.insert(whole.headBytes() - 1);
        cuts.insert(whole.headBytes());
    }
    std::optional<ProxyRequest> answered;
    std::size_t answeredAt = 0;
    const auto showAnswered = [&] {
        return "answered at " + QByteArray::number(qulonglong(answeredAt)) + ":\n" +
               show(*answered);
    };
    for (std::size_t n : cuts) {
        const ProxyRequest r = read(text, n, how);
        const Report prefixReport = [&] {
            return report() + "prefix of " + QByteArray::number(qulonglong(n)) + ":\n" + show(r);
        };
        checkAnswer(r, n, how, prefixReport);
        if (whole.headBytes() > 0 && n == whole.headBytes() - 1)
            FUZZ_CHECK_REPORT(r.state() == Status::NeedMore, prefixReport());
        if (answered) {
            FUZZ_CHECK_REPORT(same(r, *answered), prefixReport() + showAnswered());
        } else if (r.state() != Status::NeedMore) {
            answered = r;
            answeredAt = n;
        }
    }
    if (answered)
        FUZZ_CHECK_REPORT(same(whole, *answered), report() + showAnswered());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::Rng rng(fuzz::hash(data, size));
    check(data, size, Reading{}, rng);
    // Inside TLS the gateway terminated a Host without a port means 443; in a plain tunnel, 80.
    const std::uint64_t pick = rng.below(4);
    const int defaultPort = pick == 0 ? 443 : pick == 1 ? int(1 + rng.below(65535)) : 80;
    check(data, size, Reading{true, defaultPort}, rng);
    return 0;
}
