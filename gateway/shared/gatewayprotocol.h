#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

// The egress gateway's control channel, in one place: the commands the server writes
// (EgressGateway) and the gateway reads (Gateway::control), and the events the gateway writes
// (Gateway, GatewayConnection, main) and the server reads. Plain C++17 without Qt, since the
// gateway is built without it; the server links this library and turns the values into Qt
// types where it uses them.
//
// A command is one line of tab-separated fields, its name first; a list is comma-separated
// (empty items are skipped), "-" stands for none where the line says so:
//
//   grant <credential> <the sandbox's address> <refuse|ask> <pattern>[,<pattern>…]
//   revoke <credential>
//   verdict <connection id> <allow|deny>
//   upstream <host:port|-> <Basic credential, base64, or -> <no-proxy list or ->
//   ping                             (a flush is a ping: its pong follows every earlier event)
//   authority <certificate PEM, base64> <key PEM, base64>
//   trust <the host's trust store, PEM, base64>
//   secret <credential> <name> <placeholder> <value, base64> <pattern>[,…]
//
// An event is one line of JSON, an object whose "ev" says which:
//
//   {"ev":"ready","port":N}                          the gateway listens
//   {"ev":"pong"}                                    to a ping
//   {"ev":"ok",…}                                    a command taken: "cred" (grant, revoke),
//                                                    "cred" and "secret", "upstream",
//                                                    "authority":true or "trust":true
//   {"ev":"error","line":…,"why":…}                  a command refused
//   {"ev":"ask","id":N,"cred":…,"host":…,"port":N}   a connection held for a verdict
//   {"ev":"conn","id":N,"cred":…,"host":…,"port":N,"verdict":"allow|deny|error","rule":…}
//   {"ev":"end","id":N,"up":N,"down":N,"ms":N}       the bytes each way, once it ended
//   {"ev":"secret","id":N,"names":[…]}               the secrets a request of it got
//
// Each side reads lines from another process: decode trusts nothing, checks every limit below,
// and refuses what it does not know with a Fault and a reason, never half taking it. encode
// refuses a command whose values would not read back as they are (a tab in a credential, a
// comma in a pattern), and cuts an event's texts to what decode takes, so that every event the
// gateway writes is read.
class GatewayProtocol
{
public:
    // A command line: a trust store in base64 is a few hundred KB (the gateway ends itself when
    // no newline comes within this many bytes: no server talks like that).
    static constexpr size_t kMaxCommandLine = 1 << 20;
    // A credential, an address, a secret's name or placeholder, a pattern, a host: ASCII from
    // '!' to '~' (names and patterns are ASCII; no space, tab or control character).
    static constexpr size_t kMaxWord = 1024;
    // The items of a list: patterns, a secret's hosts, no-proxy entries, a request's secrets.
    static constexpr size_t kMaxListItems = 2048;
    // A placeholder is a random name: a shorter one could be in a request by chance.
    static constexpr size_t kMinPlaceholder = 16;
    // An event line (the server's buffer for one), and the texts in it: a rule, a reason.
    static constexpr size_t kMaxEventLine = 64 * 1024;
    static constexpr size_t kMaxText = 4096;
    // What an error event quotes of the line it refused.
    static constexpr size_t kMaxQuotedLine = 200;

    // Commands, server to gateway.
    struct Grant
    {
        std::string credential;
        std::string source; // the sandbox's address: the only one the credential works from
        bool ask = false;   // for hosts beyond the list: hold them for a verdict, else refuse
        std::vector<std::string> patterns;
    };
    struct Revoke
    {
        std::string credential;
    };
    // The answer for a connection held by an "ask".
    struct Verdict
    {
        uint64_t connection = 0;
        bool allow = false;
    };
    // The host's proxy, which every connection goes through but to its no-proxy hosts; none
    // when `host` is empty (then `port` is 0).
    struct Upstream
    {
        std::string host; // an IPv6 address without brackets
        int port = 0;
        std::string basic; // base64 of user:password for Proxy-Authorization, or ""
        std::vector<std::string> noProxy;
    };
    struct Ping
    {
    };
    // The installation's authority, which signs the certificates of the secrets' hosts.
    struct Authority
    {
        std::string certificatePem;
        std::string keyPem;
    };
    // The host's trust store, which the secrets' hosts are checked against.
    struct Trust
    {
        std::string bundlePem;
    };
    // A sandbox's secret: its value goes in place of the placeholder in requests to `hosts`.
    struct Secret
    {
        std::string credential;
        std::string name;
        std::string placeholder;
        std::string value;
        std::vector<std::string> hosts;
    };
    using Command = std::variant<Grant, Revoke, Verdict, Upstream, Ping, Authority, Trust, Secret>;

    // Events, gateway to server.
    struct Ready
    {
        int port = 0;
    };
    struct Pong
    {
    };
    // A command taken, and which: a grant or revocation (of `credential`), a secret (`name`, of
    // `credential`), the upstream proxy (`upstream`: host:port, or "-" for none), the authority,
    // the trust store.
    struct Ok
    {
        enum class Of
        {
            Credential,
            Secret,
            Upstream,
            Authority,
            Trust
        };
        Of of = Of::Credential;
        std::string credential;
        std::string name;
        std::string upstream;
    };
    // A command refused: what of its line may be shown (refusal()) and why.
    struct Error
    {
        std::string line;
        std::string why;
    };
    // A connection beyond the list, held until a Verdict (or the gateway's deadline).
    struct Ask
    {
        uint64_t id = 0;
        std::string credential;
        std::string host;
        int port = 0;
    };
    // The gateway's decision on a connection: allowed, refused, or allowed but the way to the
    // host failed; `rule` is the pattern that allowed it, or why not.
    struct Connection
    {
        enum class Outcome
        {
            Allow,
            Deny,
            Error
        };
        uint64_t id = 0;
        std::string credential;
        std::string host;
        int port = 0;
        Outcome outcome = Outcome::Deny;
        std::string rule;
    };
    // A connection ended: the bytes each way (to the host, from it) and how long it lasted.
    struct End
    {
        uint64_t id = 0;
        uint64_t up = 0;
        uint64_t down = 0;
        uint64_t ms = 0;
    };
    // The secrets the gateway put into a request of the connection (names only).
    struct SecretsUsed
    {
        uint64_t id = 0;
        std::vector<std::string> names;
    };
    using NetworkEvent = std::variant<Ready, Pong, Ok, Error, Ask, Connection, End, SecretsUsed>;

    // What is wrong with a line that decodes to nothing.
    enum class Fault
    {
        None,
        TooLong,      // over kMaxCommandLine / kMaxEventLine
        Empty,        // an empty line
        Malformed,    // an event that is not one JSON object
        Unknown,      // a command or event this protocol does not have
        FieldCount,   // a command with more or fewer fields than its own
        BadField,     // a field missing, empty, too long or not one of its words
        BadCharacter, // a character a field may not hold (see kMaxWord; events: UTF-8 only)
        BadNumber     // not a whole number from 0, or out of its range
    };
    struct DecodedCommand
    {
        std::optional<Command> command;
        Fault fault = Fault::None;
        std::string why;
    };
    struct DecodedEvent
    {
        std::optional<NetworkEvent> event;
        Fault fault = Fault::None;
        std::string why;
    };

    // One line, without its newline; "" (and why) for a command whose values would not read
    // back as they are. The reasons quote no value: a secret's line is never logged.
    static std::string encode(const Command &command, std::string *why = nullptr);
    static std::string encode(const NetworkEvent &event);
    // One line without its newline (a CR before it already dropped).
    static DecodedCommand decodeCommand(const std::string &line);
    static DecodedEvent decodeEvent(const std::string &line);

    // The error event for a refused command line: the line's first kMaxQuotedLine bytes, or for
    // a line that carries a key or a secret's value only its name.
    static Error refusal(const std::string &line, const std::string &why);
    // An upstream proxy as the upstream line and its ok name it: host:port, [v6]:port, or "-".
    static std::string hostPort(const Upstream &upstream);
    // Whether `text` may be an item of a list (a word without a comma, and not "-").
    static bool isListItem(const std::string &text);
};
