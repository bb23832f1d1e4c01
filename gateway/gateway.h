#pragma once

#include "certificatemint.h"
#include "connectionlimits.h"
#include "gatewayprotocol.h"
#include "hostpattern.h"
#include "secretrewriter.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

// The egress gateway's state, shared by its connections: which sandbox credentials may reach
// which hosts (granted and revoked by the server over the control channel), connections held
// while the window decides, and the events the server journals. Commands in on stdin, events out
// on stdout, one line each, in the forms of GatewayProtocol (gatewayprotocol.h).
//
// A secret's value reaches the gateway only on this channel, and never comes back out of it: an
// error about a line that carries one does not quote the line. Where a request goes to one of a
// secret's hosts, the gateway terminates its TLS with a certificate from the authority, puts the
// value in place of the placeholder and masks the value in the answer (SecretExchange); other
// hosts stay plain tunnels.
class Gateway
{
public:
    struct Grant
    {
        std::string source; // the sandbox's address: the only one the credential works from
        bool ask = false;   // for hosts beyond the list: ask the server, else refuse
        std::vector<HostPattern> patterns;
    };
    // A proxy of the host's network that every connection goes through (behind a corporate
    // proxy there is no other way out), except to the hosts of its no-proxy list.
    struct Upstream
    {
        std::string host;
        int port = 0;
        std::string authorization; // "Basic …" for Proxy-Authorization, or ""
    };
    struct Decision
    {
        bool allowed = false;
        std::string rule;   // the pattern that allowed it, or why not
        bool exact = false; // a pattern names this very host (private addresses allowed)
    };
    // How long a held connection waits for a verdict before it is denied.
    static constexpr int kAskTimeoutMs = 60000;

    // Test set-up: names resolved from this map before DNS, and ranges treated as out there.
    void setHosts(std::map<std::string, std::string> hosts) { m_hosts = std::move(hosts); }
    const std::map<std::string, std::string> &hosts() const { return m_hosts; }
    void setPublicRanges(std::vector<std::pair<uint32_t, int>> ranges)
    {
        m_public = std::move(ranges);
    }
    bool isPublicOverride(const std::string &address) const;

    void setAskTimeoutMs(int ms) { m_askTimeoutMs = ms; }

    // A control line; returns the answer to print, an event line ("" for none).
    std::string control(const std::string &line);
    // Whether `credential` coming from `source` may reach host:port; may hold the caller until
    // the server's verdict (or its deadline) when the grant says ask.
    bool knows(const std::string &credential, const std::string &source) const;
    Decision decide(uint64_t connection, const std::string &credential, const std::string &host,
                    int port);

    // The proxy a connection to `host` goes through, or none (no upstream, or a no-proxy host).
    std::optional<Upstream> upstreamFor(const std::string &host) const;

    // The secrets of `credential`'s sandbox (none: an empty rewriter).
    SecretRewriter secretsFor(const std::string &credential) const;
    CertificateMint &mint() { return m_mint; }
    ConnectionLimits &limits() { return m_limits; }

    uint64_t nextConnectionId() { return ++m_lastId; }
    // One event on stdout.
    void emit(const GatewayProtocol::NetworkEvent &event);
    // One line on stdout (whole, never interleaved with another).
    void writeLine(const std::string &line);

private:
    using Reply = std::optional<GatewayProtocol::NetworkEvent>;
    // Each command, taken: its answer (an Error's line is control()'s to fill in), or none.
    Reply apply(const GatewayProtocol::Grant &command);
    Reply apply(const GatewayProtocol::Revoke &command);
    Reply apply(const GatewayProtocol::Verdict &command);
    Reply apply(const GatewayProtocol::Upstream &command);
    Reply apply(const GatewayProtocol::Ping &command);
    Reply apply(const GatewayProtocol::Authority &command);
    Reply apply(const GatewayProtocol::Trust &command);
    Reply apply(const GatewayProtocol::Secret &command);

    mutable std::mutex m_mutex;
    std::condition_variable m_verdicts;
    std::map<std::string, Grant> m_grants;
    std::map<std::string, std::vector<BoundSecret>> m_secrets; // credential → its secrets
    CertificateMint m_mint;
    ConnectionLimits m_limits;
    std::map<uint64_t, int> m_pending; // connection id → 0 waiting, 1 allow, -1 deny
    std::map<std::string, std::string> m_hosts;
    std::optional<Upstream> m_upstream;
    std::vector<std::string> m_noUpstream; // NO_PROXY entries: "*", a name, or ".suffix"
    std::vector<std::pair<uint32_t, int>> m_public;
    std::atomic<uint64_t> m_lastId{0};
    int m_askTimeoutMs = kAskTimeoutMs;
    std::mutex m_out;
};
