#include "secretrewriter.h"

#include <algorithm>
#include <cctype>

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

void addName(std::vector<std::string> *added, const std::string &name)
{
    if (added && std::find(added->begin(), added->end(), name) == added->end())
        added->push_back(name);
}

} // namespace

bool BoundSecret::boundTo(const std::string &host, int port) const
{
    const bool address = HostPattern::isAddressLiteral(host);
    return std::any_of(hosts.begin(), hosts.end(), [&](const HostPattern &p) {
        // As the allow-list reads them: an address only where one is named as such.
        return (!address || p.isAddress()) && p.matches(host, port);
    });
}

SecretRewriter::SecretRewriter(std::vector<BoundSecret> secrets) : m_secrets(std::move(secrets))
{
    for (const BoundSecret &s : m_secrets)
        m_longestValue = std::max(m_longestValue, s.value.size());
}

bool SecretRewriter::bindsTo(const std::string &host, int port) const
{
    return std::any_of(m_secrets.begin(), m_secrets.end(),
                       [&](const BoundSecret &s) { return s.boundTo(host, port); });
}

std::string SecretRewriter::replacePlaceholders(std::string text, const std::string &host, int port,
                                                std::vector<std::string> *added) const
{
    for (const BoundSecret &s : m_secrets) {
        // Not bound here: the placeholder goes as it is, and the value stays in the gateway.
        if (s.placeholder.empty() || !s.boundTo(host, port))
            continue;
        size_t at = 0;
        while ((at = text.find(s.placeholder, at)) != std::string::npos) {
            text.replace(at, s.placeholder.size(), s.value);
            at += s.value.size();
            addName(added, s.name);
        }
    }
    return text;
}

SecretRewriter SecretRewriter::plainHttp() const
{
    std::vector<BoundSecret> secrets = m_secrets;
    for (BoundSecret &s : secrets)
        s.hosts.erase(std::remove_if(s.hosts.begin(), s.hosts.end(),
                                     [](const HostPattern &p) { return p.ports().size() != 1; }),
                      s.hosts.end());
    return SecretRewriter(std::move(secrets));
}

SecretRewriter
SecretRewriter::withEchoes(const std::vector<std::pair<std::string, std::string>> &echoes) const
{
    std::vector<BoundSecret> secrets = m_secrets;
    for (const auto &[sent, asWritten] : echoes)
        if (!sent.empty())
            secrets.push_back({"", asWritten, sent, {}}); // bound to no host: masked only
    return SecretRewriter(std::move(secrets));
}

std::string SecretRewriter::inject(const std::string &head, const std::string &host, int port,
                                   std::vector<std::string> *added, bool *expectContinue,
                                   std::vector<std::pair<std::string, std::string>> *echoes) const
{
    if (expectContinue)
        *expectContinue = false;
    std::string out;
    size_t start = 0;
    bool first = true;
    // A compressed answer could not be searched for a value it echoes; a host that gets no
    // value cannot echo one, and keeps its compression.
    const bool bound = bindsTo(host, port);
    while (start < head.size()) {
        size_t end = head.find("\r\n", start);
        if (end == std::string::npos)
            end = head.size();
        std::string line = head.substr(start, end - start);
        start = end + 2;
        if (line.empty())
            break; // the blank line: the head ends
        if (first) {
            first = false;
            out += replacePlaceholders(line, host, port, added) + "\r\n";
            continue;
        }
        const size_t colon = line.find(':');
        const std::string name = lower(line.substr(0, colon));
        if (name == "accept-encoding" && bound)
            continue;
        if (name == "expect") {
            if (expectContinue)
                *expectContinue = true;
            continue;
        }
        if (colon == std::string::npos) {
            out += line + "\r\n";
            continue;
        }
        std::string value = line.substr(colon + 1);
        const size_t lead = value.find_first_not_of(" \t");
        value = lead == std::string::npos ? std::string() : value.substr(lead);
        // Basic credentials carry the placeholder in base64: user:password.
        const std::string scheme = lower(value.substr(0, 6));
        std::string decoded;
        if (name == "authorization" && scheme == "basic " &&
            Base64::decode(value.substr(6), &decoded)) {
            const std::string replaced = replacePlaceholders(decoded, host, port, added);
            if (replaced != decoded) {
                const std::string encoded = Base64::encode(replaced);
                // A host that echoes the header sends back this encoding of the value.
                if (echoes)
                    echoes->emplace_back(encoded, value.substr(6));
                value = value.substr(0, 6) + encoded;
            }
        } else {
            value = replacePlaceholders(value, host, port, added);
        }
        out += line.substr(0, colon) + ": " + value + "\r\n";
    }
    return out + "\r\n";
}

size_t SecretRewriter::findValue(const std::string &text, size_t from,
                                 const BoundSecret **which) const
{
    size_t best = std::string::npos;
    for (const BoundSecret &s : m_secrets) {
        if (s.value.empty())
            continue;
        const size_t at = text.find(s.value, from);
        // At the same place the longer value wins: one may begin with another.
        if (at != std::string::npos &&
            (at < best || (at == best && s.value.size() > (*which)->value.size()))) {
            best = at;
            *which = &s;
        }
    }
    return best;
}

std::string SecretRewriter::mask(const std::string &text) const
{
    std::string out;
    size_t from = 0;
    const BoundSecret *which = nullptr;
    size_t at;
    while ((at = findValue(text, from, &which)) != std::string::npos) {
        out.append(text, from, at - from);
        out += which->placeholder;
        from = at + which->value.size();
    }
    out.append(text, from, std::string::npos);
    return out;
}

std::string SecretRewriter::Masker::feed(const char *data, size_t size)
{
    m_held.append(data, size);
    std::string out;
    size_t from = 0;
    const BoundSecret *which = nullptr;
    size_t at;
    while ((at = m_rewriter.findValue(m_held, from, &which)) != std::string::npos) {
        // Too near the end to know that no longer value starts here: the next piece decides.
        if (at + m_rewriter.m_longestValue > m_held.size())
            break;
        out.append(m_held, from, at - from);
        out += which->placeholder;
        from = at + which->value.size();
    }
    // A value that begins in the last (longest - 1) bytes may end in the next piece.
    const size_t keep = std::min(m_rewriter.m_longestValue > 0 ? m_rewriter.m_longestValue - 1 : 0,
                                 m_held.size() - from);
    out.append(m_held, from, m_held.size() - from - keep);
    m_held.erase(0, m_held.size() - keep);
    return out;
}

std::string SecretRewriter::Masker::finish()
{
    std::string out = m_rewriter.mask(m_held);
    m_held.clear();
    return out;
}
