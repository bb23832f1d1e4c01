#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

// The head of a request a sandbox sends to the egress gateway, as HTTP proxies take them:
// `CONNECT host:port` (a tunnel, for TLS) or a plain-HTTP request with an absolute URI. Read with
// libhttp-parser; what the gateway needs to decide and to pass the request on is kept, the rest
// refused with the status the client should get.
class ProxyRequest
{
public:
    enum class Kind
    {
        Connect,
        Forward
    };
    enum class Status
    {
        NeedMore, // the head is not complete yet (under kMaxHeadBytes)
        Ok,
        Bad // `status` and `error` say why
    };
    static constexpr size_t kMaxHeadBytes = 16 * 1024;

    // Reads the head at the start of `data`. On Ok, headBytes() is its length: for a CONNECT
    // what follows is the tunnel's; for a forward, the request's body (if any) follows.
    static ProxyRequest parse(const char *data, size_t size);
    // The first request inside a CONNECT tunnel that does not start with TLS (Node's undici
    // tunnels plain http: too): an origin-form request, its host and port from its Host header,
    // no credential (the CONNECT carried it).
    // `defaultPort`: the port a Host header without one means (443 inside TLS the gateway
    // terminated itself).
    static ProxyRequest parseInTunnel(const char *data, size_t size, int defaultPort = 80);

    Status state() const { return m_state; }
    // with Bad: 400, 407 (no credential), 421 (Host names another host than the target), 431
    int status() const { return m_status; }
    const std::string &error() const { return m_error; }
    size_t headBytes() const { return m_headBytes; }

    Kind kind() const { return m_kind; }
    const std::string &method() const { return m_method; }
    const std::string &host() const { return m_host; } // normalised (HostPattern::normalise)
    int port() const { return m_port; }
    // The password of `Proxy-Authorization: Basic` (the user name is ignored: the credential is
    // the sandbox's token, given as the proxy URL's password); "" when there is none.
    const std::string &credential() const { return m_credential; }
    // For a forward: the request as the origin server gets it — origin-form target, the
    // client's headers without Proxy-* and hop-by-hop ones, `Connection: close`.
    std::string originHead() const;
    // The same for a proxy upstream: the absolute-form target, and its Proxy-Authorization
    // value when given (the sandbox's own credential never leaves the gateway).
    std::string upstreamHead(const std::string &authorization) const;
    // host:port as a request names it ([…] around an IPv6 address); without ":80" unless
    // `defaultPort` (a CONNECT target always has its port).
    std::string authority(bool defaultPort) const;

    // Why a request's Host header does not go with its target: more than one (kSeveralHosts),
    // or one naming another host or port; "" when it agrees or there is none.
    std::string hostHeaderMismatch() const;
    static constexpr const char *kSeveralHosts = "the request has more than one Host header";

private:
    friend struct ProxyRequestParse;
    static bool parseAuthority(const std::string &authority, int defaultPort, std::string *host,
                               int *port);
    static ProxyRequest parseHead(const char *data, size_t size, bool inTunnel,
                                  int defaultPort = 80);
    // The request inside a tunnel: its target in origin form with Host, or in absolute form
    // (whose authority then counts, and must agree with Host).
    static ProxyRequest readTunnelRequest(ProxyRequest r, bool connect, int defaultPort);
    std::string headFor(const std::string &target, const std::string &extra) const;
    Status m_state = Status::NeedMore;
    int m_status = 0;
    std::string m_error;
    size_t m_headBytes = 0;
    Kind m_kind = Kind::Forward;
    std::string m_method;
    std::string m_url;
    std::string m_host;
    int m_port = 0;
    int m_defaultPort = 80; // the port a target or Host without one means
    std::string m_path;     // origin-form, with the query
    std::string m_credential;
    int m_major = 1;
    int m_minor = 1;
    std::vector<std::pair<std::string, std::string>> m_headers;
};
