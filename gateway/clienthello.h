#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// The server name (SNI) a TLS client asks for, read from the first bytes it sends through a
// CONNECT tunnel: the gateway lets the tunnel through only when it is the host the CONNECT named,
// so that an allowed name cannot front for another one.
class ClientHello
{
public:
    enum class Status
    {
        NeedMore,   // a prefix of a ClientHello: read on (up to kMaxBytes)
        ServerName, // serverName holds the name the client asked for
        NoName,     // a whole ClientHello without a host_name
        NotTls,     // the bytes are no TLS handshake (plain HTTP through CONNECT, or other)
        Malformed,  // a TLS handshake whose lengths do not add up, or too long
        // An Encrypted Client Hello: the server name outside is a cover (a shared front's), and
        // the one the server serves is hidden from the gateway
        EncryptedName
    };
    struct Result
    {
        Status status = Status::NeedMore;
        std::string serverName; // lower case, as sent
    };
    // A ClientHello longer than this (post-quantum key shares make them 1.5–2 KB) is refused.
    static constexpr size_t kMaxBytes = 16 * 1024;

    // Reads what arrived so far; call again with more once it says NeedMore.
    static Result parse(const uint8_t *data, size_t size);
};
