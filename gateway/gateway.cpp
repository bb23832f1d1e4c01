#include "gateway.h"

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <cstdio>

namespace {

using P = GatewayProtocol;

// The patterns of a grant or a secret, or false and why not (the first that is none).
bool parsePatterns(const std::vector<std::string> &texts, std::vector<HostPattern> *patterns,
                   std::string *why)
{
    for (const std::string &text : texts) {
        const auto pattern = HostPattern::parse(text, why);
        if (!pattern)
            return false;
        patterns->push_back(*pattern);
    }
    return true;
}

P::NetworkEvent refused(const std::string &why)
{
    return P::Error{{}, why};
}

// NO_PROXY's entries as upstreamFor() reads them: "*" (every host), a name, or ".suffix" (from
// ".suffix" or "*.suffix", curl's readings). The wildcard and the dot come off before the name is
// normalised, which takes neither; an entry that is no name is dropped.
std::vector<std::string> noProxyEntries(const std::vector<std::string> &entries)
{
    std::vector<std::string> out;
    for (std::string entry : entries) {
        if (entry == "*") {
            out.push_back(entry);
            continue;
        }
        const bool below = entry.rfind("*.", 0) == 0 || entry.rfind('.', 0) == 0;
        entry = HostPattern::normalise(entry.substr(below ? entry.find('.') + 1 : 0));
        if (!entry.empty())
            out.push_back(below ? "." + entry : entry);
    }
    return out;
}

} // namespace

void Gateway::emit(const GatewayProtocol::NetworkEvent &event)
{
    writeLine(GatewayProtocol::encode(event));
}

void Gateway::writeLine(const std::string &line)
{
    std::lock_guard<std::mutex> lock(m_out);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

bool Gateway::isPublicOverride(const std::string &address) const
{
    in_addr a;
    if (inet_pton(AF_INET, address.c_str(), &a) != 1)
        return false;
    const uint32_t value = ntohl(a.s_addr);
    for (const auto &[network, bits] : m_public) {
        const uint32_t mask = bits == 0 ? 0 : ~uint32_t(0) << (32 - bits);
        if ((value & mask) == (network & mask))
            return true;
    }
    return false;
}

std::string Gateway::control(const std::string &line)
{
    const P::DecodedCommand decoded = P::decodeCommand(line);
    Reply reply = decoded.command
                      ? std::visit([this](const auto &c) { return apply(c); }, *decoded.command)
                      : Reply(refused(decoded.why));
    // Refused here or by the protocol, the error shows what of the line may be shown.
    if (P::Error *error = reply ? std::get_if<P::Error>(&*reply) : nullptr)
        *error = P::refusal(line, error->why);
    return reply ? P::encode(*reply) : std::string();
}

Gateway::Reply Gateway::apply(const P::Authority &command)
{
    std::string why;
    if (!m_mint.setAuthority(command.certificatePem, command.keyPem, &why))
        return refused(why);
    return P::Ok{P::Ok::Of::Authority, {}, {}, {}};
}

Gateway::Reply Gateway::apply(const P::Trust &command)
{
    std::string why;
    if (!m_mint.setTrust(command.bundlePem, &why))
        return refused(why);
    return P::Ok{P::Ok::Of::Trust, {}, {}, {}};
}

Gateway::Reply Gateway::apply(const P::Secret &command)
{
    BoundSecret secret{command.name, command.placeholder, command.value, {}};
    std::string why;
    if (!parsePatterns(command.hosts, &secret.hosts, &why))
        return refused(why);
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_grants.find(command.credential) == m_grants.end())
        return refused("a secret needs the credential's grant first");
    auto &list = m_secrets[command.credential];
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const BoundSecret &s) { return s.name == secret.name; }),
               list.end());
    list.push_back(std::move(secret));
    return P::Ok{P::Ok::Of::Secret, command.credential, command.name, {}};
}

Gateway::Reply Gateway::apply(const P::Ping &)
{
    return P::Pong{};
}

Gateway::Reply Gateway::apply(const P::Grant &command)
{
    // The sandbox's own address (the protocol checked it is one): its credential works from
    // there and nowhere else (a credential that leaves its sandbox is worth nothing in another).
    Grant grant{command.source, command.ask, {}};
    std::string why;
    if (!parsePatterns(command.patterns, &grant.patterns, &why))
        return refused(why);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_grants[command.credential] = std::move(grant);
    return P::Ok{P::Ok::Of::Credential, command.credential, {}, {}};
}

Gateway::Reply Gateway::apply(const P::Revoke &command)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_grants.erase(command.credential);
    m_secrets.erase(command.credential);
    return P::Ok{P::Ok::Of::Credential, command.credential, {}, {}};
}

Gateway::Reply Gateway::apply(const P::Verdict &command)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto it = m_pending.find(command.connection);
    if (it == m_pending.end())
        return refused("no connection waits with that number (it may have timed out)");
    it->second = command.allow ? 1 : -1;
    m_verdicts.notify_all();
    return std::nullopt;
}

Gateway::Reply Gateway::apply(const P::Upstream &command)
{
    std::optional<Upstream> upstream;
    if (!command.host.empty())
        upstream = Upstream{command.host, command.port,
                            command.basic.empty() ? std::string() : "Basic " + command.basic};
    std::vector<std::string> noUpstream = noProxyEntries(command.noProxy);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_upstream = std::move(upstream);
    m_noUpstream = std::move(noUpstream);
    return P::Ok{P::Ok::Of::Upstream, {}, {}, P::hostPort(command)};
}

std::optional<Gateway::Upstream> Gateway::upstreamFor(const std::string &host) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_upstream)
        return std::nullopt;
    for (const std::string &entry : m_noUpstream) {
        if (entry == "*" || entry == host)
            return std::nullopt;
        // ".example.com" and "example.com" both cover the names below example.com (curl's
        // reading of NO_PROXY).
        const std::string suffix = entry[0] == '.' ? entry : "." + entry;
        if (host.size() > suffix.size() &&
            host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0)
            return std::nullopt;
    }
    return m_upstream;
}

SecretRewriter Gateway::secretsFor(const std::string &credential) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto it = m_secrets.find(credential);
    return it == m_secrets.end() ? SecretRewriter() : SecretRewriter(it->second);
}

bool Gateway::knows(const std::string &credential, const std::string &source) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto it = m_grants.find(credential);
    return it != m_grants.end() && it->second.source == source;
}

Gateway::Decision Gateway::decide(uint64_t connection, const std::string &credential,
                                  const std::string &host, int port)
{
    std::unique_lock<std::mutex> lock(m_mutex);
    const auto it = m_grants.find(credential);
    if (it == m_grants.end())
        return {false, "the sandbox's credential is not valid (any more)", false};
    const bool address = HostPattern::isAddressLiteral(host);
    for (const HostPattern &p : it->second.patterns) {
        // An address is reached only when it is listed as one: never through a name pattern
        // that its digits happen to end like.
        if (address && !p.isAddress())
            continue;
        if (p.matches(host, port))
            return {true, p.text(), !p.isWildcard()};
    }
    const std::string notListed =
        address ? "an address not on the allow-list" : "not on the allow-list";
    if (!it->second.ask)
        return {false, notListed, false};
    m_pending[connection] = 0;
    lock.unlock();
    emit(P::Ask{connection, credential, host, port});
    lock.lock();
    const bool answered = m_verdicts.wait_for(lock, std::chrono::milliseconds(m_askTimeoutMs),
                                              [&] { return m_pending[connection] != 0; });
    const int verdict = m_pending[connection];
    m_pending.erase(connection);
    if (!answered)
        return {false, notListed + ", and no answer in time", false};
    // Allowed for this connection, but not as a listing: a private address stays refused.
    return verdict > 0 ? Decision{true, "allowed when asked", false}
                       : Decision{false, notListed + ", and denied when asked", false};
}
