#pragma once

#include "clienthello.h"
#include "gateway.h"
#include "proxyrequest.h"
#include "secretrewriter.h"

#include <cstdint>
#include <string>
#include <vector>

// One client connection of the egress gateway, served on a thread of its own (bounded in number
// by ConnectionLimits): the request head
// (ProxyRequest), the sandbox's credential and its allow-list (Gateway::decide), the name
// resolved once and every address checked (AddressClass), the connection to exactly those
// addresses, for a tunnel the TLS server name (ClientHello), then the bytes both ways; an event
// for the decision and one at the end.
class GatewayConnection
{
public:
    // Deadlines: the request head, the connection out, the first bytes of a tunnel.
    static constexpr int kStepTimeoutMs = 10000;
    // A tunnel where no byte moved either way for this long ends (as long as the longest wait
    // for an answer through SecretExchange: a model's answer may take minutes to start).
    static constexpr int64_t kTunnelIdleMs = 10 * 60000;

    GatewayConnection(Gateway &gateway, int fd, std::string peer);
    ~GatewayConnection();
    GatewayConnection(const GatewayConnection &) = delete;
    GatewayConnection &operator=(const GatewayConnection &) = delete;

    void run();

private:
    bool readMore(std::string *buffer, size_t max, int64_t deadlineMs);
    // The request's head (read into `buffer` and `request`), a credential the gateway knows from
    // this peer, within its connection cap; false (answered) otherwise.
    bool admit(std::string *buffer, ProxyRequest *request);
    // Bounds every blocking read (`receiveMs`) and write on `fd`.
    static void limitBlocking(int fd, int64_t receiveMs);
    void answer(int status, const std::string &reason);
    void report(GatewayProtocol::Connection::Outcome outcome, const std::string &rule);
    // Addresses for the host (the test map, an address as itself, else DNS); "" and `why` when
    // none, or one the decision does not allow.
    // With an upstream proxy, a name the gateway cannot resolve is left to the proxy.
    bool resolve(bool exact, bool upstream, std::string *why);
    int connectTo(const std::vector<std::string> &addresses, int port, std::string *why);
    int openUpstream(const Gateway::Upstream &upstream, std::string *why);
    // CONNECT through the upstream proxy to `target` (host:port, as asked for); `early`: bytes
    // the proxy sent after its answer's head (the tunnel's first).
    bool tunnelUpstream(int out, const Gateway::Upstream &upstream, const std::string &target,
                        std::string *early, std::string *why);
    // After the CONNECT's 200: what comes first through the tunnel decides (TLS with the
    // CONNECT's host as its server name, spliced; plain HTTP for that host, exchanged; else
    // refused). `rest`: what the client sent after the CONNECT's head.
    void tunnel(int out, const std::string &rest, const std::string &rule);
    // Why a tunnel's ClientHello does not go through ("" when it does).
    std::string helloRefusal(const ClientHello::Result &hello) const;
    void splice(int out, const std::string &toOut);
    // For a host that a secret of this sandbox is bound to: one request through SecretExchange,
    // over TLS terminated here for a tunnel (`raw` and `head` then come from inside it).
    void exchangePlain(int out, const std::string &raw, size_t headBytes, const std::string &head,
                       const std::string &rule);
    void exchangeTls(int out, const std::string &rule);
    void secretEvent(const std::vector<std::string> &names);
    void endEvent(uint64_t up, uint64_t down, int64_t started);
    // For a tunnel that does not start with TLS: "" when its first request is an HTTP request
    // for the CONNECT's host and port (read into `inner`), else why not.
    std::string checkPlainTunnel(std::string *first, int64_t deadlineMs, ProxyRequest *inner);

    Gateway &m_gateway;
    int m_fd;
    std::string m_peer;
    uint64_t m_id = 0;
    std::string m_credential;
    std::string m_host;
    int m_port = 0;
    std::vector<std::string> m_addresses;
    SecretRewriter m_secrets;
    bool m_credentialCounted = false; // ConnectionLimits counts this connection for m_credential
};
