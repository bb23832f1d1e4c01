#include "gatewayprotocol.h"

#include "base64.h"
#include "eventreader.h"
#include "eventwriter.h"
#include "hostpattern.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace {

using P = GatewayProtocol;
using Fault = P::Fault;
using Fields = std::vector<std::string>;

template <class... Ts> struct Overloaded : Ts...
{
    using Ts::operator()...;
};
template <class... Ts> Overloaded(Ts...) -> Overloaded<Ts...>;

// Why a value or a line is refused (none: it is not).
struct Refusal
{
    Fault fault = Fault::None;
    std::string why;

    explicit operator bool() const { return fault != Fault::None; }
};

const char *const kSecretUsage = "secret takes a credential, a name, a placeholder (16 characters "
                                 "or more), a value in base64 and hosts";
const char *const kAuthorityUsage = "authority takes a certificate and a key, each PEM in base64";
const char *const kTrustUsage = "trust takes a PEM bundle in base64";

// ---- Text

// Every field, empty ones too: "a\t\tb" has three.
Fields split(const std::string &text, char by)
{
    Fields parts;
    for (size_t start = 0;;) {
        const size_t at = text.find(by, start);
        parts.push_back(text.substr(start, at - start));
        if (at == std::string::npos)
            return parts;
        start = at + 1;
    }
}

// A list's items: "a,,b," is a and b.
Fields items(const std::string &text)
{
    Fields out = split(text, ',');
    out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
    return out;
}

std::string join(const Fields &parts, char by)
{
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i)
        out += (i > 0 ? std::string(1, by) : std::string()) + parts[i];
    return out;
}

bool readNumber(const std::string &text, uint64_t *value)
{
    if (text.empty() || text.size() > 20)
        return false;
    uint64_t n = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return false;
        const auto digit = uint64_t(c - '0');
        if (n > (std::numeric_limits<uint64_t>::max() - digit) / 10)
            return false;
        n = n * 10 + digit;
    }
    *value = n;
    return true;
}

// ---- Commands: what a field may hold, shared by encode (before it writes) and decode (after
// it read), so that what one writes the other reads back as it was.

// A word: 1 to kMaxWord characters from '!' to '~'; in a list, no comma.
Refusal checkWord(const std::string &text, const std::string &what, bool inList = false)
{
    if (text.empty())
        return {Fault::BadField, what + " is empty"};
    if (text.size() > P::kMaxWord)
        return {Fault::BadField,
                what + " is longer than " + std::to_string(P::kMaxWord) + " bytes"};
    for (char c : text)
        if (c <= ' ' || c >= 0x7f || (inList && c == ','))
            return {Fault::BadCharacter, what + " holds a character other than ASCII from ! to ~" +
                                             (inList ? " but the comma" : "")};
    return {};
}

Refusal checkList(const Fields &list, const std::string &what)
{
    if (list.size() > P::kMaxListItems)
        return {Fault::BadField, "a list of more than " + std::to_string(P::kMaxListItems) +
                                     " items (" + what + ")"};
    for (const std::string &item : list) {
        if (Refusal r = checkWord(item, what, true))
            return r;
        // "-" alone stands for no list.
        if (item == "-")
            return {Fault::BadField, what + " is -"};
    }
    return {};
}

Refusal check(const P::Grant &c)
{
    if (Refusal r = checkWord(c.credential, "a grant's credential"))
        return r;
    if (checkWord(c.source, "") || !HostPattern::isAddressLiteral(c.source))
        return {Fault::BadField, "a grant names the sandbox's address"};
    return checkList(c.patterns, "a pattern");
}

Refusal check(const P::Revoke &c)
{
    return checkWord(c.credential, "a revocation's credential");
}

Refusal check(const P::Verdict &)
{
    return {};
}

Refusal check(const P::Upstream &c)
{
    if (c.host.empty() ? c.port != 0 : (c.port < 1 || c.port > 65535))
        return {Fault::BadNumber, "an upstream proxy is host:port"};
    if (!c.host.empty()) {
        if (Refusal r = checkWord(c.host, "the upstream proxy's host"))
            return r;
        if (c.host.find_first_of("[]") != std::string::npos)
            return {Fault::BadCharacter, "an upstream proxy is host:port"};
    }
    std::string bytes;
    if (!c.basic.empty() && (checkWord(c.basic, "") || !Base64::decode(c.basic, &bytes)))
        return {Fault::BadField, "the upstream proxy's credential is base64 or -"};
    return checkList(c.noProxy, "a no-proxy entry");
}

Refusal check(const P::Ping &)
{
    return {};
}

Refusal check(const P::Authority &c)
{
    if (c.certificatePem.empty() || c.keyPem.empty())
        return {Fault::BadField, kAuthorityUsage};
    return {};
}

Refusal check(const P::Trust &c)
{
    if (c.bundlePem.empty())
        return {Fault::BadField, kTrustUsage};
    return {};
}

Refusal check(const P::Secret &c)
{
    // A secret's reasons do not say which field is wrong: none depends on its value.
    for (const std::string *word : {&c.credential, &c.name, &c.placeholder})
        if (Refusal r = checkWord(*word, ""))
            return {r.fault, kSecretUsage};
    if (c.placeholder.size() < P::kMinPlaceholder || c.value.empty())
        return {Fault::BadField, kSecretUsage};
    if (c.hosts.empty())
        return {Fault::BadField, "a secret needs a host"};
    return checkList(c.hosts, "a secret's host");
}

Refusal checkCommand(const P::Command &command)
{
    return std::visit([](const auto &c) { return check(c); }, command);
}

// ---- Commands: each line's fields after its name (fieldsOf) and back (the readers).

using Reader = std::optional<P::Command> (*)(const Fields &f, Refusal *refusal);

std::optional<P::Command> refuse(Refusal *refusal, Fault fault, std::string why)
{
    *refusal = {fault, std::move(why)};
    return std::nullopt;
}

std::optional<P::Command> readGrant(const Fields &f, Refusal *refusal)
{
    if (f[3] != "refuse" && f[3] != "ask")
        return refuse(refusal, Fault::BadField, "the choice for other hosts is refuse or ask");
    return P::Grant{f[1], f[2], f[3] == "ask", items(f[4])};
}

std::optional<P::Command> readRevoke(const Fields &f, Refusal *)
{
    return P::Revoke{f[1]};
}

std::optional<P::Command> readVerdict(const Fields &f, Refusal *refusal)
{
    P::Verdict verdict;
    if (!readNumber(f[1], &verdict.connection))
        return refuse(refusal, Fault::BadNumber, "a verdict names a connection by its number");
    if (f[2] != "allow" && f[2] != "deny")
        return refuse(refusal, Fault::BadField, "a verdict is allow or deny");
    verdict.allow = f[2] == "allow";
    return verdict;
}

std::optional<P::Command> readUpstream(const Fields &f, Refusal *refusal)
{
    P::Upstream upstream;
    if (f[1] != "-") {
        const size_t colon = f[1].rfind(':');
        uint64_t port = 0;
        if (colon == std::string::npos || colon == 0 ||
            !readNumber(f[1].substr(colon + 1), &port) || port < 1 || port > 65535)
            return refuse(refusal, Fault::BadNumber, "an upstream proxy is host:port");
        upstream.host = f[1].substr(0, colon);
        if (upstream.host.size() > 2 && upstream.host.front() == '[' && upstream.host.back() == ']')
            upstream.host = upstream.host.substr(1, upstream.host.size() - 2);
        upstream.port = int(port);
    }
    // None is "-": an empty field would be a credential of nothing.
    if (f[2].empty())
        return refuse(refusal, Fault::BadField, "the upstream proxy's credential is base64 or -");
    upstream.basic = f[2] == "-" ? std::string() : f[2];
    upstream.noProxy = f[3] == "-" ? Fields() : items(f[3]);
    return upstream;
}

std::optional<P::Command> readPing(const Fields &, Refusal *)
{
    return P::Ping{};
}

std::optional<P::Command> readAuthority(const Fields &f, Refusal *refusal)
{
    P::Authority authority;
    if (!Base64::decode(f[1], &authority.certificatePem) ||
        !Base64::decode(f[2], &authority.keyPem))
        return refuse(refusal, Fault::BadField, kAuthorityUsage);
    return authority;
}

std::optional<P::Command> readTrust(const Fields &f, Refusal *refusal)
{
    P::Trust trust;
    if (!Base64::decode(f[1], &trust.bundlePem))
        return refuse(refusal, Fault::BadField, kTrustUsage);
    return trust;
}

std::optional<P::Command> readSecret(const Fields &f, Refusal *refusal)
{
    P::Secret secret{f[1], f[2], f[3], {}, items(f[5])};
    if (!Base64::decode(f[4], &secret.value))
        return refuse(refusal, Fault::BadField, kSecretUsage);
    return secret;
}

struct Syntax
{
    const char *name;
    size_t fields; // after the name
    const char *usage;
    bool quiet; // its line may carry a key or a secret's value: never quoted
    Reader read;
};

// In the order of P::Command's alternatives.
const Syntax kCommands[] = {
    {"grant", 4, "grant takes a credential, the sandbox's address, refuse or ask, and patterns",
     false, readGrant},
    {"revoke", 1, "revoke takes a credential", false, readRevoke},
    {"verdict", 2, "verdict takes a connection's number and allow or deny", false, readVerdict},
    {"upstream", 3,
     "upstream takes host:port or -, a Basic credential in base64 or -, and a no-proxy list or -",
     false, readUpstream},
    {"ping", 0, "ping takes nothing", false, readPing},
    {"authority", 2, kAuthorityUsage, true, readAuthority},
    {"trust", 1, kTrustUsage, true, readTrust},
    {"secret", 5, kSecretUsage, true, readSecret},
};
static_assert(std::size(kCommands) == std::variant_size_v<P::Command>);

const Syntax *syntaxOf(const std::string &name)
{
    for (const Syntax &syntax : kCommands)
        if (name == syntax.name)
            return &syntax;
    return nullptr;
}

Fields fieldsOf(const P::Command &command)
{
    const auto base64 = Base64::encode;
    return std::visit(
        Overloaded{
            [](const P::Grant &c) -> Fields {
                return {c.credential, c.source, c.ask ? "ask" : "refuse", join(c.patterns, ',')};
            },
            [](const P::Revoke &c) -> Fields { return {c.credential}; },
            [](const P::Verdict &c) -> Fields {
                return {std::to_string(c.connection), c.allow ? "allow" : "deny"};
            },
            [](const P::Upstream &c) -> Fields {
                return {P::hostPort(c), c.basic.empty() ? "-" : c.basic,
                        c.noProxy.empty() ? "-" : join(c.noProxy, ',')};
            },
            [](const P::Ping &) -> Fields { return {}; },
            [&](const P::Authority &c) -> Fields {
                return {base64(c.certificatePem), base64(c.keyPem)};
            },
            [&](const P::Trust &c) -> Fields { return {base64(c.bundlePem)}; },
            [&](const P::Secret &c) -> Fields {
                return {c.credential, c.name, c.placeholder, base64(c.value), join(c.hosts, ',')};
            },
        },
        command);
}

// ---- Events: written with EventWriter, read with EventReader.

std::string okLine(const P::Ok &ok)
{
    EventWriter w("ok");
    switch (ok.of) {
    case P::Ok::Of::Credential:
        w.text("cred", ok.credential, P::kMaxWord);
        break;
    case P::Ok::Of::Secret:
        w.text("cred", ok.credential, P::kMaxWord).text("secret", ok.name, P::kMaxWord);
        break;
    case P::Ok::Of::Upstream:
        w.text("upstream", ok.upstream, P::kMaxText);
        break;
    case P::Ok::Of::Authority:
        w.yes("authority");
        break;
    case P::Ok::Of::Trust:
        w.yes("trust");
        break;
    }
    return w.line();
}

// What an ask and a connection's decision both say: which connection, whose, where to.
EventWriter aboutConnection(const char *kind, uint64_t id, const std::string &credential,
                            const std::string &host, int port)
{
    EventWriter w(kind);
    w.number("id", id).text("cred", credential, P::kMaxWord).text("host", host, P::kMaxWord);
    w.port("port", port);
    return w;
}

const char *outcomeWord(P::Connection::Outcome outcome)
{
    switch (outcome) {
    case P::Connection::Outcome::Allow:
        return "allow";
    case P::Connection::Outcome::Deny:
        return "deny";
    case P::Connection::Outcome::Error:
        break;
    }
    return "error";
}

std::optional<P::NetworkEvent> readOk(EventReader &f)
{
    if (f.has("authority")) {
        f.yes("authority");
        return P::Ok{P::Ok::Of::Authority, {}, {}, {}};
    }
    if (f.has("trust")) {
        f.yes("trust");
        return P::Ok{P::Ok::Of::Trust, {}, {}, {}};
    }
    if (f.has("upstream"))
        return P::Ok{P::Ok::Of::Upstream, {}, {}, f.text("upstream", P::kMaxText)};
    P::Ok ok{P::Ok::Of::Credential, f.text("cred", P::kMaxWord), {}, {}};
    if (f.has("secret")) {
        ok.of = P::Ok::Of::Secret;
        ok.name = f.text("secret", P::kMaxWord);
    }
    return ok;
}

std::optional<P::NetworkEvent> readConnection(EventReader &f)
{
    P::Connection c{f.number("id"), f.text("cred", P::kMaxWord),  f.text("host", P::kMaxWord),
                    f.port("port"), P::Connection::Outcome::Deny, {}};
    const std::string verdict = f.text("verdict", 8);
    if (verdict == "allow")
        c.outcome = P::Connection::Outcome::Allow;
    else if (verdict == "error")
        c.outcome = P::Connection::Outcome::Error;
    else if (verdict != "deny")
        f.fail(Fault::BadField, "a connection's verdict is allow, deny or error");
    c.rule = f.text("rule", P::kMaxText);
    return c;
}

// The event `kind` names, from its fields (nothing for a kind this protocol does not have).
std::optional<P::NetworkEvent> readEvent(const std::string &kind, EventReader &f)
{
    if (kind == "ready")
        return P::Ready{f.port("port")};
    if (kind == "pong")
        return P::Pong{};
    if (kind == "ok")
        return readOk(f);
    if (kind == "error")
        return P::Error{f.text("line", P::kMaxQuotedLine), f.text("why", P::kMaxText)};
    if (kind == "ask")
        return P::Ask{f.number("id"), f.text("cred", P::kMaxWord), f.text("host", P::kMaxWord),
                      f.port("port")};
    if (kind == "conn")
        return readConnection(f);
    if (kind == "end")
        return P::End{f.number("id"), f.number("up"), f.number("down"), f.number("ms")};
    if (kind == "secret")
        return P::SecretsUsed{f.number("id"), f.texts("names", P::kMaxWord)};
    return std::nullopt;
}

} // namespace

std::string GatewayProtocol::encode(const Command &command, std::string *why)
{
    Refusal refusal = checkCommand(command);
    std::string line;
    if (!refusal) {
        Fields fields = fieldsOf(command);
        fields.insert(fields.begin(), kCommands[command.index()].name);
        line = join(fields, '\t');
        if (line.size() > kMaxCommandLine)
            refusal = {Fault::TooLong, std::string(kCommands[command.index()].name) +
                                           " would be longer than a control line may be"};
    }
    if (!refusal)
        return line;
    if (why)
        *why = refusal.why;
    return {};
}

GatewayProtocol::DecodedCommand GatewayProtocol::decodeCommand(const std::string &line)
{
    const auto refused = [](Refusal r) {
        return DecodedCommand{std::nullopt, r.fault, std::move(r.why)};
    };
    if (line.size() > kMaxCommandLine)
        return refused({Fault::TooLong, "a control line longer than " +
                                            std::to_string(kMaxCommandLine) + " bytes"});
    if (line.empty())
        return refused({Fault::Empty, "an empty line"});
    const Fields f = split(line, '\t');
    const Syntax *syntax = syntaxOf(f[0]);
    if (!syntax)
        return refused({Fault::Unknown, "not a control line (grant, revoke, verdict, upstream, "
                                        "ping, authority, trust, secret)"});
    if (f.size() != syntax->fields + 1)
        return refused({Fault::FieldCount, syntax->usage});
    Refusal refusal;
    std::optional<Command> command = syntax->read(f, &refusal);
    if (command)
        refusal = checkCommand(*command);
    if (refusal)
        return refused(std::move(refusal));
    return {std::move(command), Fault::None, {}};
}

std::string GatewayProtocol::encode(const NetworkEvent &event)
{
    return std::visit(
        Overloaded{
            [](const Ready &e) { return EventWriter("ready").port("port", e.port).line(); },
            [](const Pong &) { return EventWriter("pong").line(); },
            [](const Ok &e) { return okLine(e); },
            [](const Error &e) {
                return EventWriter("error")
                    .text("line", e.line, kMaxQuotedLine)
                    .text("why", e.why, kMaxText)
                    .line();
            },
            [](const Ask &e) {
                return aboutConnection("ask", e.id, e.credential, e.host, e.port).line();
            },
            [](const Connection &e) {
                return aboutConnection("conn", e.id, e.credential, e.host, e.port)
                    .text("verdict", outcomeWord(e.outcome), 8)
                    .text("rule", e.rule, kMaxText)
                    .line();
            },
            [](const End &e) {
                return EventWriter("end")
                    .number("id", e.id)
                    .number("up", e.up)
                    .number("down", e.down)
                    .number("ms", e.ms)
                    .line();
            },
            [](const SecretsUsed &e) {
                return EventWriter("secret")
                    .number("id", e.id)
                    .texts("names", e.names, kMaxWord, kMaxListItems)
                    .line();
            },
        },
        event);
}

GatewayProtocol::DecodedEvent GatewayProtocol::decodeEvent(const std::string &line)
{
    const auto refused = [](Refusal r) {
        return DecodedEvent{std::nullopt, r.fault, std::move(r.why)};
    };
    if (line.size() > kMaxEventLine)
        return refused(
            {Fault::TooLong, "an event longer than " + std::to_string(kMaxEventLine) + " bytes"});
    if (line.empty())
        return refused({Fault::Empty, "an empty line"});
    EventReader f(line);
    const std::string kind = f.text("ev", 16);
    if (f.failed())
        return refused({f.fault(), f.why()});
    std::optional<NetworkEvent> event = readEvent(kind, f);
    if (!event)
        return refused({Fault::Unknown, "an event this server does not know: " + kind});
    if (f.fault() != Fault::None)
        return refused({f.fault(), f.why()});
    return {std::move(event), Fault::None, {}};
}

GatewayProtocol::Error GatewayProtocol::refusal(const std::string &line, const std::string &why)
{
    // Lines that carry a key or a secret's value: their errors say only what is wrong.
    const std::string name = line.substr(0, line.find('\t'));
    const Syntax *syntax = syntaxOf(name);
    if (syntax && syntax->quiet)
        return {name + " …", why};
    return {line.substr(0, kMaxQuotedLine), why};
}

std::string GatewayProtocol::hostPort(const Upstream &upstream)
{
    if (upstream.host.empty())
        return "-";
    const bool v6 = upstream.host.find(':') != std::string::npos;
    return (v6 ? "[" + upstream.host + "]" : upstream.host) + ":" + std::to_string(upstream.port);
}

bool GatewayProtocol::isListItem(const std::string &text)
{
    return !checkList({text}, "");
}
