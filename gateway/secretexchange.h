#pragma once

#include "bytechannel.h"
#include "secretrewriter.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

// One plain-HTTP request the gateway reads (every forward, every request in a tunnel that is not
// TLS, and every request to a host a secret is bound to, inside the TLS the gateway terminates),
// and its answer: the request's head with the secrets put in (SecretRewriter::inject; none for a
// host without one), its body as the client framed it (a chunked body stays chunked); the answer
// with every value masked, sent on with `Connection: close` and its body up to the connection's
// end (masking may change its length, and a chunked one is read through libhttp-parser). Exactly
// one request a connection, whatever the client sent after it: the next one opens another, and
// is checked in turn.
class SecretExchange
{
public:
    struct Result
    {
        std::vector<std::string> added; // the secrets put in
        uint64_t up = 0;                // bytes to the host, and back to the client
        uint64_t down = 0;
        std::string error; // the request could not be passed on (the client got a 4xx or 502)
    };
    // How long the client may take between two pieces of its request, and the host between two
    // pieces of its answer (a model's answer may take minutes to start).
    static constexpr int kRequestIdleMs = 60000;
    static constexpr int kAnswerIdleMs = 10 * 60000;

    SecretExchange(const SecretRewriter &rewriter, std::string host, int port)
        : m_rewriter(rewriter), m_host(std::move(host)), m_port(port)
    {}

    // `raw`: what the client sent so far, from the start of the request's head (the rest is
    // read from `client`); `headBytes`: the head's length there; `head`: the head as the host
    // gets it (ProxyRequest::originHead or upstreamHead). `injected` is called before the
    // request leaves, with the secrets put in (when any).
    Result run(ByteChannel &client, ByteChannel &origin, const std::string &raw, size_t headBytes,
               const std::string &head,
               const std::function<void(const std::vector<std::string> &)> &injected);

    // An answer from the gateway itself on `channel`.
    static void answer(ByteChannel &channel, int status, const std::string &reason);

private:
    const SecretRewriter &m_rewriter;
    std::string m_host;
    int m_port;
};
