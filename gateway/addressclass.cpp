#include "addressclass.h"

#include <arpa/inet.h>
#include <cstdint>
#include <cstring>

namespace {

struct Range
{
    uint32_t network;
    int bits;
    const char *reason;
};

// IANA's special-purpose IPv4 registry, the part that reaches this machine or its networks.
constexpr Range kV4[] = {
    {0x00000000, 8, "this network (0.0.0.0/8)"},
    {0x0A000000, 8, "private (10.0.0.0/8)"},
    {0x64400000, 10, "shared address space (100.64.0.0/10)"},
    {0x7F000000, 8, "loopback"},
    {0xA9FE0000, 16, "link-local (169.254.0.0/16, where cloud metadata services live)"},
    {0xAC100000, 12, "private (172.16.0.0/12)"},
    {0xC0000000, 24, "IETF protocol assignments (192.0.0.0/24)"},
    {0xC0A80000, 16, "private (192.168.0.0/16)"},
    {0xC6120000, 15, "benchmarking (198.18.0.0/15)"},
    {0xE0000000, 4, "multicast"},
    {0xF0000000, 4, "reserved (240.0.0.0/4)"},
};

std::string v4Restriction(uint32_t a)
{
    for (const Range &r : kV4) {
        const uint32_t mask = r.bits == 0 ? 0 : ~uint32_t(0) << (32 - r.bits);
        if ((a & mask) == r.network)
            return r.reason;
    }
    return {};
}

uint32_t v4At(const unsigned char *bytes)
{
    return uint32_t(bytes[0]) << 24 | uint32_t(bytes[1]) << 16 | uint32_t(bytes[2]) << 8 |
           uint32_t(bytes[3]);
}

std::string v6Restriction(const unsigned char *b)
{
    static const unsigned char zero[16] = {};
    if (std::memcmp(b, zero, 15) == 0 && (b[15] == 0 || b[15] == 1))
        return b[15] == 1 ? "loopback" : "unspecified";
    // IPv4 written as IPv6 (::ffff:a.b.c.d mapped, ::a.b.c.d compatible, 64:ff9b::/96 NAT64):
    // what counts is the IPv4 address inside.
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (std::memcmp(b, mapped, 12) == 0 || std::memcmp(b, zero, 12) == 0 ||
        std::memcmp(b, nat64, 12) == 0) {
        const std::string inner = v4Restriction(v4At(b + 12));
        return inner.empty() ? std::string() : "IPv4 inside IPv6: " + inner;
    }
    if ((b[0] & 0xfe) == 0xfc)
        return "unique local (fc00::/7)";
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
        return "link-local (fe80::/10)";
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
        return "site-local (fec0::/10)";
    if (b[0] == 0xff)
        return "multicast";
    // 6to4 (2002::/16) carries an IPv4 address in bits 16–47.
    if (b[0] == 0x20 && b[1] == 0x02) {
        const std::string inner = v4Restriction(v4At(b + 2));
        return inner.empty() ? std::string() : "IPv4 inside 6to4: " + inner;
    }
    return {};
}

} // namespace

std::string AddressClass::restriction(std::string_view address)
{
    const std::string text(address);
    unsigned char bytes[16];
    if (inet_pton(AF_INET, text.c_str(), bytes) == 1)
        return v4Restriction(v4At(bytes));
    if (inet_pton(AF_INET6, text.c_str(), bytes) == 1)
        return v6Restriction(bytes);
    return "not an address";
}
