#include "gateway.h"

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace {

std::vector<std::string> split(const std::string &text, char by)
{
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, by))
        parts.push_back(part);
    if (!text.empty() && text.back() == by)
        parts.emplace_back();
    return parts;
}

// The length of the well-formed UTF-8 sequence at `at` (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
size_t utf8Length(const std::string &text, size_t at)
{
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char c = byte(at);
    size_t n = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        low = c == 0xe0 ? 0xa0 : 0x80;
        high = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        low = c == 0xf0 ? 0x90 : 0x80;
        high = c == 0xf4 ? 0x8f : 0xbf;
    } else {
        return 0;
    }
    if (at + n > text.size() || byte(at + 1) < low || byte(at + 1) > high)
        return 0;
    for (size_t i = 2; i < n; ++i)
        if (byte(at + i) < 0x80 || byte(at + i) > 0xbf)
            return 0;
    return n;
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

std::string Gateway::quote(const std::string &text)
{
    // JSON is UTF-8: a byte that does not begin a whole, well-formed sequence (a name from a
    // request in another encoding, a line cut in the middle of a character) is written as
    // U+FFFD, so that every event the server reads is valid JSON.
    std::string out = "\"";
    for (size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
            ++i;
        } else if (c < 0x20 || c == 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
            out += escaped;
            ++i;
        } else if (c < 0x80) {
            out += char(c);
            ++i;
        } else {
            const size_t n = utf8Length(text, i);
            if (n == 0) {
                out += "\\ufffd";
                ++i;
            } else {
                out.append(text, i, n);
                i += n;
            }
        }
    }
    return out + "\"";
}

void Gateway::emit(const std::string &json)
{
    std::lock_guard<std::mutex> lock(m_out);
    std::fwrite(json.data(), 1, json.size(), stdout);
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
    const std::vector<std::string> f = split(line, '\t');
    auto error = [&](const std::string &why) {
        return "{\"ev\":\"error\",\"line\":" + quote(line.substr(0, 200)) +
               ",\"why\":" + quote(why) + "}";
    };
    if (f.empty() || f[0].empty())
        return error("an empty line");
    // Lines that carry a key or a secret's value: their errors say only what is wrong.
    const auto quiet = [&](const std::string &why) {
        return "{\"ev\":\"error\",\"line\":" + quote(f[0] + " …") + ",\"why\":" + quote(why) + "}";
    };
    if (f[0] == "authority") {
        std::string certificate;
        std::string key;
        std::string why;
        if (f.size() != 3 || !SecretRewriter::decodeBase64(f[1], &certificate) ||
            !SecretRewriter::decodeBase64(f[2], &key))
            return quiet("authority takes a certificate and a key, each PEM in base64");
        if (!m_mint.setAuthority(certificate, key, &why))
            return quiet(why);
        return "{\"ev\":\"ok\",\"authority\":true}";
    }
    if (f[0] == "trust") {
        std::string bundle;
        std::string why;
        if (f.size() != 2 || !SecretRewriter::decodeBase64(f[1], &bundle))
            return quiet("trust takes a PEM bundle in base64");
        if (!m_mint.setTrust(bundle, &why))
            return quiet(why);
        return "{\"ev\":\"ok\",\"trust\":true}";
    }
    if (f[0] == "secret") {
        BoundSecret secret;
        if (f.size() != 6 || f[1].empty() || f[2].empty() || f[3].size() < 16 ||
            !SecretRewriter::decodeBase64(f[4], &secret.value) || secret.value.empty())
            return quiet("secret takes a credential, a name, a placeholder (16 characters or "
                         "more), a value in base64 and hosts");
        secret.name = f[2];
        secret.placeholder = f[3];
        for (const std::string &text : split(f[5], ',')) {
            if (text.empty())
                continue;
            std::string why;
            const auto pattern = HostPattern::parse(text, &why);
            if (!pattern)
                return quiet(why);
            secret.hosts.push_back(*pattern);
        }
        if (secret.hosts.empty())
            return quiet("a secret needs a host");
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_grants.find(f[1]) == m_grants.end())
            return quiet("a secret needs the credential's grant first");
        auto &list = m_secrets[f[1]];
        list.erase(std::remove_if(list.begin(), list.end(),
                                  [&](const BoundSecret &s) { return s.name == secret.name; }),
                   list.end());
        list.push_back(std::move(secret));
        return "{\"ev\":\"ok\",\"cred\":" + quote(f[1]) + ",\"secret\":" + quote(f[2]) + "}";
    }
    if (f[0] == "ping" && f.size() == 1)
        return "{\"ev\":\"pong\"}";
    if (f[0] == "grant" && f.size() == 5) {
        Grant grant;
        // The sandbox's own address: its credential works from there and nowhere else (a
        // credential that leaves its sandbox is worth nothing in another).
        if (!HostPattern::isAddressLiteral(f[2]))
            return error("a grant names the sandbox's address");
        grant.source = f[2];
        if (f[3] != "refuse" && f[3] != "ask")
            return error("the choice for other hosts is refuse or ask");
        grant.ask = f[3] == "ask";
        for (const std::string &text : split(f[4], ',')) {
            if (text.empty())
                continue;
            std::string why;
            const auto pattern = HostPattern::parse(text, &why);
            if (!pattern)
                return error(why);
            grant.patterns.push_back(*pattern);
        }
        if (f[1].empty())
            return error("a grant needs a credential");
        std::lock_guard<std::mutex> lock(m_mutex);
        m_grants[f[1]] = std::move(grant);
        return "{\"ev\":\"ok\",\"cred\":" + quote(f[1]) + "}";
    }
    if (f[0] == "revoke" && f.size() == 2) {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_grants.erase(f[1]);
        m_secrets.erase(f[1]);
        return "{\"ev\":\"ok\",\"cred\":" + quote(f[1]) + "}";
    }
    if (f[0] == "verdict" && f.size() == 3 && (f[2] == "allow" || f[2] == "deny")) {
        char *end = nullptr;
        const unsigned long long id = std::strtoull(f[1].c_str(), &end, 10);
        if (f[1].empty() || *end != '\0')
            return error("a verdict names a connection by its number");
        std::lock_guard<std::mutex> lock(m_mutex);
        const auto it = m_pending.find(id);
        if (it == m_pending.end())
            return error("no connection waits with that number (it may have timed out)");
        it->second = f[2] == "allow" ? 1 : -1;
        m_verdicts.notify_all();
        return {};
    }
    if (f[0] == "upstream" && f.size() == 4) {
        std::optional<Upstream> upstream;
        if (f[1] != "-") {
            const size_t colon = f[1].rfind(':');
            char *end = nullptr;
            const long port =
                colon == std::string::npos ? 0 : std::strtol(f[1].c_str() + colon + 1, &end, 10);
            if (colon == 0 || port <= 0 || port > 65535 || *end != '\0')
                return error("an upstream proxy is host:port");
            std::string host = f[1].substr(0, colon);
            if (host.size() > 2 && host.front() == '[' && host.back() == ']')
                host = host.substr(1, host.size() - 2);
            upstream = Upstream{host, int(port), f[2] == "-" ? std::string() : "Basic " + f[2]};
        }
        std::vector<std::string> noUpstream =
            f[3] == "-" ? std::vector<std::string>() : noProxyEntries(split(f[3], ','));
        std::lock_guard<std::mutex> lock(m_mutex);
        m_upstream = std::move(upstream);
        m_noUpstream = std::move(noUpstream);
        return "{\"ev\":\"ok\",\"upstream\":" + quote(f[1]) + "}";
    }
    return error(
        "not a control line (grant, revoke, verdict, upstream, ping, authority, trust, secret)");
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
    emit("{\"ev\":\"ask\",\"id\":" + std::to_string(connection) + ",\"cred\":" + quote(credential) +
         ",\"host\":" + quote(host) + ",\"port\":" + std::to_string(port) + "}");
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
