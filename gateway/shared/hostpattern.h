#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// One entry of an egress allow-list: `host`, `*.suffix` (any name below suffix, not suffix
// itself), or an IP literal (`[v6]` with a port), optionally `:port`; without a port, 80 and 443.
// Names compare case-insensitively and without a trailing dot, as DNS does.
class HostPattern
{
public:
    // The pattern, or nothing with `error` set to why not.
    static std::optional<HostPattern> parse(std::string_view text, std::string *error = nullptr);
    // A host name as it came (CONNECT target, Host header, SNI): lower case, no trailing dot;
    // "" when it is not a syntactically valid name or IP literal.
    static std::string normalise(std::string_view host);
    // Whether `host` is an IPv4 or IPv6 address (without brackets), not a name.
    static bool isAddressLiteral(const std::string &host);

    bool matches(std::string_view host, int port) const;
    // An IP literal, or a name: the gateway resolves only names, and refuses a literal that no
    // pattern names as such.
    bool isAddress() const { return m_address; }
    bool isWildcard() const { return m_wildcard; }
    const std::string &host() const { return m_host; }
    const std::vector<int> &ports() const { return m_ports; }
    // As written back in messages: "*.example.com:443".
    std::string text() const;

private:
    std::string m_host; // for a wildcard, the suffix without "*."
    std::vector<int> m_ports;
    bool m_wildcard = false;
    bool m_address = false;
};
