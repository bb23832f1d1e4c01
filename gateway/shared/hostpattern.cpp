#include "hostpattern.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>

namespace {

// RFC 1123 labels (letters, digits, hyphens inside), and the underscore that real names carry
// (service records, some CDNs); 63 bytes a label, 253 in all.
bool isHostName(std::string_view name)
{
    if (name.empty() || name.size() > 253)
        return false;
    size_t start = 0;
    while (start <= name.size()) {
        const size_t dot = std::min(name.find('.', start), name.size());
        const std::string_view label = name.substr(start, dot - start);
        if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-')
            return false;
        for (char c : label)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
                return false;
        start = dot + 1;
    }
    return true;
}

bool parsePort(std::string_view text, int *port)
{
    if (text.empty() || text.size() > 5)
        return false;
    int value = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return false;
        value = value * 10 + (c - '0');
    }
    if (value < 1 || value > 65535)
        return false;
    *port = value;
    return true;
}

} // namespace

bool HostPattern::isAddressLiteral(const std::string &host)
{
    unsigned char buffer[16];
    return inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
           inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

std::string HostPattern::normalise(std::string_view host)
{
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (!host.empty() && host.back() == '.')
        host.remove_suffix(1);
    std::string lower(host);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    if (HostPattern::isAddressLiteral(lower) || isHostName(lower))
        return lower;
    return {};
}

std::optional<HostPattern> HostPattern::parse(std::string_view text, std::string *error)
{
    auto fail = [&](const std::string &why) -> std::optional<HostPattern> {
        if (error)
            *error = "\"" + std::string(text) + "\": " + why;
        return std::nullopt;
    };
    if (text.find("://") != std::string_view::npos)
        return fail("write the host alone, without a scheme such as https://");
    HostPattern pattern;
    std::string_view host = text;
    std::string_view port;
    if (!host.empty() && host.front() == '[') { // [v6] or [v6]:port
        const size_t close = host.find(']');
        if (close == std::string_view::npos)
            return fail("an IPv6 address needs its closing ]");
        if (close + 1 < host.size()) {
            if (host[close + 1] != ':')
                return fail("only :port may follow ]");
            port = host.substr(close + 2);
        }
        host = host.substr(0, close + 1);
    } else if (const size_t colon = host.rfind(':'); colon != std::string_view::npos) {
        if (host.find(':') != colon)
            return fail("write an IPv6 address in brackets: [address]:port");
        port = host.substr(colon + 1);
        host = host.substr(0, colon);
    }
    if (host.size() > 2 && host.substr(0, 2) == "*.") {
        pattern.m_wildcard = true;
        host.remove_prefix(2);
    } else if (host.find('*') != std::string_view::npos) {
        return fail("* may only begin a pattern, as in *.example.com");
    }
    pattern.m_host = normalise(host);
    if (pattern.m_host.empty())
        return fail("not a host name or IP address");
    pattern.m_address = HostPattern::isAddressLiteral(pattern.m_host);
    if (pattern.m_wildcard && pattern.m_address)
        return fail("*. needs a domain name, not an address");
    if (pattern.m_wildcard && pattern.m_host.find('.') == std::string::npos)
        return fail("*. needs a domain of at least two labels (not a whole top-level domain)");
    if (port.empty() && text.size() > 0 && text.back() == ':')
        return fail("the port is missing after :");
    int number = 0;
    if (!port.empty() && !parsePort(port, &number))
        return fail("the port must be a number from 1 to 65535");
    pattern.m_ports = port.empty() ? std::vector<int>{80, 443} : std::vector<int>{number};
    return pattern;
}

bool HostPattern::matches(std::string_view host, int port) const
{
    if (std::find(m_ports.begin(), m_ports.end(), port) == m_ports.end())
        return false;
    const std::string name = normalise(host);
    if (name.empty())
        return false;
    if (!m_wildcard)
        return name == m_host;
    // Below the suffix, on a label boundary: "a.example.com" for "*.example.com", never
    // "example.com" itself or "badexample.com".
    return name.size() > m_host.size() + 1 &&
           name.compare(name.size() - m_host.size(), m_host.size(), m_host) == 0 &&
           name[name.size() - m_host.size() - 1] == '.';
}

std::string HostPattern::text() const
{
    std::string out = m_wildcard ? "*." + m_host : m_host;
    if (m_address && m_host.find(':') != std::string::npos)
        out = "[" + out + "]";
    if (m_ports.size() == 1)
        out += ":" + std::to_string(m_ports.front());
    return out;
}
