#include "gatewayconnection.h"

#include "addressclass.h"
#include "bytechannel.h"
#include "clienthello.h"
#include "gateway.h"
#include "proxyrequest.h"
#include "secretexchange.h"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace {

using Outcome = GatewayProtocol::Connection::Outcome;

int64_t nowMs()
{
    return ByteChannel::nowMs();
}

const char *statusText(int status)
{
    switch (status) {
    case 400:
        return "Bad Request";
    case 403:
        return "Forbidden";
    case 407:
        return "Proxy Authentication Required";
    case 421:
        return "Misdirected Request";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 502:
        return "Bad Gateway";
    case 504:
        return "Gateway Timeout";
    default:
        return "Error";
    }
}

// The addresses DNS gives for `host` (at most 16), or getaddrinfo's error in `rc`.
std::vector<std::string> lookUp(const std::string &host, int *rc)
{
    std::vector<std::string> out;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *list = nullptr;
    *rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &list);
    if (*rc != 0)
        return out;
    for (addrinfo *a = list; a && out.size() < 16; a = a->ai_next) {
        char text[INET6_ADDRSTRLEN] = {};
        const void *raw =
            a->ai_family == AF_INET
                ? static_cast<const void *>(&reinterpret_cast<sockaddr_in *>(a->ai_addr)->sin_addr)
                : &reinterpret_cast<sockaddr_in6 *>(a->ai_addr)->sin6_addr;
        if (inet_ntop(a->ai_family, raw, text, sizeof text))
            out.emplace_back(text);
    }
    ::freeaddrinfo(list);
    return out;
}

// One direction of a spliced tunnel, on non-blocking sockets.
struct SpliceDirection
{
    int from;
    int to;
    std::string pending; // read from `from`, not yet written to `to`
    size_t written = 0;
    bool reading = true;
    uint64_t count = 0;

    bool open() const { return reading || !pending.empty(); }
    // Writes what is pending; false when the other side is gone.
    bool flush(int64_t *activity)
    {
        while (written < pending.size()) {
            const ssize_t n =
                ::send(to, pending.data() + written, pending.size() - written, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return true;
            if (n <= 0)
                return false;
            written += size_t(n);
            count += uint64_t(n);
            *activity = nowMs();
        }
        pending.clear();
        written = 0;
        // The other side learns that nothing more comes; the reverse direction goes on.
        if (!reading)
            ::shutdown(to, SHUT_WR);
        return true;
    }
    // Reads what `from` has and writes it on; false when a side is broken.
    bool receive(std::vector<char> &buffer, int64_t *activity)
    {
        const ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n < 0)
            return false;
        *activity = nowMs();
        if (n == 0)
            reading = false;
        else
            pending.append(buffer.data(), size_t(n));
        return flush(activity);
    }
};

} // namespace

GatewayConnection::GatewayConnection(Gateway &gateway, int fd, std::string peer)
    : m_gateway(gateway), m_fd(fd), m_peer(std::move(peer))
{}

GatewayConnection::~GatewayConnection()
{
    if (m_credentialCounted)
        m_gateway.limits().releaseCredential(m_credential);
    ::close(m_fd);
}

bool GatewayConnection::readMore(std::string *buffer, size_t max, int64_t deadlineMs)
{
    if (buffer->size() >= max)
        return false;
    pollfd p{m_fd, POLLIN, 0};
    const int64_t left = deadlineMs - nowMs();
    if (left <= 0 || ::poll(&p, 1, int(left)) <= 0)
        return false;
    char chunk[4096];
    const ssize_t n = ::recv(m_fd, chunk, std::min(sizeof chunk, max - buffer->size()), 0);
    if (n <= 0)
        return false;
    buffer->append(chunk, size_t(n));
    return true;
}

void GatewayConnection::answer(int status, const std::string &reason)
{
    const std::string body = "Code Sandbox egress gateway: " + reason + "\n";
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " + statusText(status) + "\r\n";
    if (status == 407)
        head += "Proxy-Authenticate: Basic realm=\"code-sandbox\"\r\n";
    head += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
    const std::string all = head + body;
    ByteChannel::writeAll(m_fd, all.data(), all.size());
}

void GatewayConnection::report(Outcome outcome, const std::string &rule)
{
    m_gateway.emit(GatewayProtocol::Connection{m_id, m_credential, m_host, m_port, outcome, rule});
}

bool GatewayConnection::resolve(bool exact, bool upstream, std::string *why)
{
    m_addresses.clear();
    const auto mapped = m_gateway.hosts().find(m_host);
    if (mapped != m_gateway.hosts().end()) {
        m_addresses.push_back(mapped->second);
    } else if (HostPattern::isAddressLiteral(m_host)) {
        m_addresses.push_back(m_host);
    } else {
        int rc = 0;
        m_addresses = lookUp(m_host, &rc);
        // Behind a proxy of the host's network the gateway may have no resolver for outside
        // names: the proxy resolves them (and the address checks are the proxy's network's).
        if (rc != 0 && upstream)
            return true;
        if (rc != 0) {
            *why = "cannot resolve " + m_host + ": " + gai_strerror(rc);
            return false;
        }
    }
    // Every address, not only the one used: a name that also resolves inward is refused as a
    // whole (no choosing the harmless one now and the other on a retry).
    for (const std::string &a : m_addresses) {
        const std::string restriction = AddressClass::restriction(a);
        if (!restriction.empty() && !exact && !m_gateway.isPublicOverride(a)) {
            *why = m_host + " resolves to " + a + ", " + restriction +
                   " (allowed only when this exact host is listed)";
            return false;
        }
    }
    if (m_addresses.empty()) {
        *why = m_host + " has no address";
        return false;
    }
    return true;
}

int GatewayConnection::connectTo(const std::vector<std::string> &addresses, int port,
                                 std::string *why)
{
    const int64_t deadline = nowMs() + kStepTimeoutMs;
    for (const std::string &a : addresses) {
        sockaddr_storage storage{};
        socklen_t length = 0;
        auto *v4 = reinterpret_cast<sockaddr_in *>(&storage);
        auto *v6 = reinterpret_cast<sockaddr_in6 *>(&storage);
        if (inet_pton(AF_INET, a.c_str(), &v4->sin_addr) == 1) {
            v4->sin_family = AF_INET;
            v4->sin_port = htons(uint16_t(port));
            length = sizeof *v4;
        } else if (inet_pton(AF_INET6, a.c_str(), &v6->sin6_addr) == 1) {
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(uint16_t(port));
            length = sizeof *v6;
        } else {
            continue;
        }
        const int fd = ::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        int rc = ::connect(fd, reinterpret_cast<sockaddr *>(&storage), length);
        if (rc < 0 && errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            const int64_t left = deadline - nowMs();
            int error = ETIMEDOUT;
            socklen_t size = sizeof error;
            if (left > 0 && ::poll(&p, 1, int(left)) > 0)
                ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
            rc = error == 0 ? 0 : -1;
            errno = error;
        }
        if (rc == 0) {
            ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            return fd;
        }
        *why = "cannot connect to " + a + " port " + std::to_string(port) + ": " +
               std::strerror(errno);
        ::close(fd);
    }
    if (why->empty())
        *why = "no address to connect to";
    return -1;
}

int GatewayConnection::openUpstream(const Gateway::Upstream &upstream, std::string *why)
{
    int rc = 0;
    const std::vector<std::string> addresses = HostPattern::isAddressLiteral(upstream.host)
                                                   ? std::vector<std::string>{upstream.host}
                                                   : lookUp(upstream.host, &rc);
    if (rc != 0) {
        *why = "cannot resolve the upstream proxy " + upstream.host + ": " + gai_strerror(rc);
        return -1;
    }
    const int fd = connectTo(addresses, upstream.port, why);
    if (fd < 0)
        *why = "the upstream proxy: " + *why;
    return fd;
}

bool GatewayConnection::tunnelUpstream(int out, const Gateway::Upstream &upstream,
                                       const std::string &target, std::string *early,
                                       std::string *why)
{
    std::string head = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n";
    if (!upstream.authorization.empty())
        head += "Proxy-Authorization: " + upstream.authorization + "\r\n";
    head += "\r\n";
    if (!ByteChannel::writeAll(out, head.data(), head.size())) {
        *why = "the upstream proxy closed the connection";
        return false;
    }
    // Its answer's head, byte by byte up to its end: what follows is the tunnel's.
    std::string answer;
    const int64_t deadline = nowMs() + kStepTimeoutMs;
    while (answer.find("\r\n\r\n") == std::string::npos) {
        pollfd p{out, POLLIN, 0};
        const int64_t left = deadline - nowMs();
        char chunk[4096];
        ssize_t n = 0;
        if (answer.size() > ProxyRequest::kMaxHeadBytes || left <= 0 ||
            ::poll(&p, 1, int(left)) <= 0 || (n = ::recv(out, chunk, sizeof chunk, 0)) <= 0) {
            *why = "the upstream proxy did not answer the CONNECT";
            return false;
        }
        answer.append(chunk, size_t(n));
    }
    const size_t end = answer.find("\r\n\r\n");
    const std::string status = answer.substr(0, answer.find("\r\n"));
    // "HTTP/1.x 2xx …"
    if (status.size() < 12 || status.compare(0, 5, "HTTP/") != 0 || status[9] != '2') {
        *why = "the upstream proxy refused the tunnel: " + status.substr(0, 200);
        return false;
    }
    *early = answer.substr(end + 4);
    return true;
}

void GatewayConnection::splice(int out, const std::string &toOut)
{
    const int64_t started = nowMs();
    // Both directions on this thread, neither socket blocking: a side that does not read holds
    // only its own direction back (its bytes wait here, and nothing more is read for it), never
    // the other one. A tunnel where nothing moves for kTunnelIdleMs ends.
    SpliceDirection up{m_fd, out, toOut};
    SpliceDirection down{out, m_fd, {}};
    for (int fd : {m_fd, out})
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    std::vector<char> buffer(65536);
    int64_t lastActivity = nowMs();
    bool broken = !up.flush(&lastActivity);
    while (!broken && (up.open() || down.open())) {
        const int64_t left = lastActivity + kTunnelIdleMs - nowMs();
        if (left <= 0)
            break;
        // A side is read only while what came from it before has been written on.
        pollfd p[2] = {{m_fd, 0, 0}, {out, 0, 0}};
        const auto of = [&](int fd) -> pollfd & { return fd == m_fd ? p[0] : p[1]; };
        for (SpliceDirection *d : {&up, &down}) {
            if (!d->pending.empty())
                of(d->to).events |= POLLOUT;
            else if (d->reading)
                of(d->from).events |= POLLIN;
        }
        // A socket neither direction waits on is left out: poll reports a hang-up or an error
        // whatever is asked, and one that nothing acts on would wake it at once, for ever.
        for (pollfd &q : p)
            if (q.events == 0)
                q.fd = -1;
        const int ready = ::poll(p, 2, int(std::min<int64_t>(left, 60000)));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0)
            break;
        for (SpliceDirection *d : {&up, &down}) {
            if (!d->pending.empty() && (of(d->to).revents & (POLLOUT | POLLERR | POLLHUP)))
                broken = broken || !d->flush(&lastActivity);
            else if (d->pending.empty() && d->reading &&
                     (of(d->from).revents & (POLLIN | POLLERR | POLLHUP)))
                broken = broken || !d->receive(buffer, &lastActivity);
        }
    }
    ::close(out);
    endEvent(up.count, down.count, started);
}

void GatewayConnection::endEvent(uint64_t up, uint64_t down, int64_t started)
{
    m_gateway.emit(
        GatewayProtocol::End{m_id, up, down, uint64_t(std::max<int64_t>(0, nowMs() - started))});
}

void GatewayConnection::exchangePlain(int out, const std::string &raw, size_t headBytes,
                                      const std::string &head, const std::string &rule)
{
    const int64_t started = nowMs();
    report(Outcome::Allow, rule);
    ByteChannel client(m_fd);
    ByteChannel origin(out);
    const SecretExchange::Result r =
        SecretExchange(m_secrets, m_host, m_port)
            .run(client, origin, raw, headBytes, head,
                 [this](const std::vector<std::string> &names) { secretEvent(names); });
    ::close(out);
    endEvent(r.up, r.down, started);
}

void GatewayConnection::secretEvent(const std::vector<std::string> &names)
{
    m_gateway.emit(GatewayProtocol::SecretsUsed{m_id, names});
}

void GatewayConnection::exchangeTls(int out, const std::string &rule)
{
    const int64_t started = nowMs();
    ByteChannel client(m_fd);
    ByteChannel origin(out);
    const auto fail = [&](Outcome outcome, const std::string &why) {
        ::close(out);
        report(outcome, why);
    };
    std::string why;
    SSL *served = m_gateway.mint().serve(m_host, &why);
    if (!served)
        return fail(Outcome::Error, why);
    if (!client.handshake(served, true, nowMs() + kStepTimeoutMs, &why))
        return fail(Outcome::Deny, "the sandbox's TLS handshake for " + m_host + " failed: " + why);
    const bool address = HostPattern::isAddressLiteral(m_host);
    const char *name = SSL_get_servername(client.tls(), TLSEXT_NAMETYPE_host_name);
    if (name ? HostPattern::normalise(name) != m_host : !address) {
        SecretExchange::answer(client, 421, "the TLS server name is not " + m_host);
        return fail(Outcome::Deny,
                    name ? "the TLS server name " + std::string(name) + " is not " + m_host
                         : "the TLS ClientHello names no server");
    }
    SSL *reached = m_gateway.mint().reach(m_host, &why);
    if (!reached || !origin.handshake(reached, false, nowMs() + kStepTimeoutMs, &why)) {
        why = "cannot reach " + m_host + " securely: " + why;
        SecretExchange::answer(client, 502, why);
        return fail(Outcome::Error, why);
    }
    // The request inside, for the host the CONNECT named and nothing else.
    std::string raw;
    const int64_t deadline = nowMs() + kStepTimeoutMs;
    ProxyRequest inner = ProxyRequest::parseInTunnel(raw.data(), raw.size(), 443);
    char chunk[4096];
    while (inner.state() == ProxyRequest::Status::NeedMore &&
           raw.size() <= ProxyRequest::kMaxHeadBytes) {
        const long n = client.read(chunk, sizeof chunk, deadline);
        if (n <= 0)
            break;
        raw.append(chunk, size_t(n));
        inner = ProxyRequest::parseInTunnel(raw.data(), raw.size(), 443);
    }
    if (inner.state() != ProxyRequest::Status::Ok) {
        const bool bad = inner.state() == ProxyRequest::Status::Bad;
        why = bad ? inner.error() : "no whole HTTP request came";
        SecretExchange::answer(client, bad && inner.status() == 421 ? 421 : 400, why);
        return fail(Outcome::Deny, why);
    }
    if (inner.host() != m_host || inner.port() != m_port) {
        why = "the request in the tunnel is for " + inner.host() + ":" +
              std::to_string(inner.port()) + ", not " + m_host + ":" + std::to_string(m_port);
        SecretExchange::answer(client, 421, why);
        return fail(Outcome::Deny, why);
    }
    report(Outcome::Allow, rule);
    const SecretExchange::Result r =
        SecretExchange(m_secrets, m_host, m_port)
            .run(client, origin, raw, inner.headBytes(), inner.originHead(),
                 [this](const std::vector<std::string> &names) { secretEvent(names); });
    origin.finish();
    ::close(out);
    endEvent(r.up, r.down, started);
}

std::string GatewayConnection::checkPlainTunnel(std::string *first, int64_t deadlineMs,
                                                ProxyRequest *inner)
{
    // Plain HTTP through the tunnel: its request must be for the host the CONNECT named, by its
    // target (absolute form) and by its Host header.
    *inner = ProxyRequest::parseInTunnel(first->data(), first->size());
    while (inner->state() == ProxyRequest::Status::NeedMore) {
        if (!readMore(first, ProxyRequest::kMaxHeadBytes + 1, deadlineMs))
            return "the tunnel started with neither TLS nor a whole HTTP request";
        *inner = ProxyRequest::parseInTunnel(first->data(), first->size());
    }
    if (inner->state() == ProxyRequest::Status::Bad)
        return inner->status() == 421
                   ? inner->error()
                   : "the tunnel started with neither TLS nor HTTP (" + inner->error() + ")";
    if (inner->host() != m_host || inner->port() != m_port)
        return "the request in the tunnel is for " + inner->host() + ":" +
               std::to_string(inner->port()) + ", not " + m_host + ":" + std::to_string(m_port);
    return {};
}

void GatewayConnection::limitBlocking(int fd, int64_t receiveMs)
{
    // The exchanges read and write with blocking calls (a TLS record that never completes, a
    // client that never reads its answer): no call waits past these, so every deadline holds.
    // (The splice's sockets are non-blocking and keep their own idle time.)
    const auto set = [fd](int option, int64_t ms) {
        timeval t{};
        t.tv_sec = time_t(ms / 1000);
        t.tv_usec = suseconds_t(ms % 1000 * 1000);
        ::setsockopt(fd, SOL_SOCKET, option, &t, sizeof t);
    };
    set(SO_RCVTIMEO, receiveMs);
    set(SO_SNDTIMEO, SecretExchange::kRequestIdleMs);
}

bool GatewayConnection::admit(std::string *buffer, ProxyRequest *request)
{
    const int64_t headDeadline = nowMs() + kStepTimeoutMs;
    *request = ProxyRequest::parse(buffer->data(), buffer->size());
    while (request->state() == ProxyRequest::Status::NeedMore) {
        if (!readMore(buffer, ProxyRequest::kMaxHeadBytes + 1, headDeadline))
            return false; // gone, or silent: nothing to answer
        *request = ProxyRequest::parse(buffer->data(), buffer->size());
    }
    if (request->state() == ProxyRequest::Status::Bad) {
        answer(request->status(), request->error());
        return false;
    }
    m_credential = request->credential();
    m_host = request->host();
    m_port = request->port();
    if (!m_gateway.knows(m_credential, m_peer)) {
        answer(407, "the sandbox's credential is not valid here");
        return false;
    }
    if (!m_gateway.limits().admitCredential(m_credential)) {
        answer(429, "this sandbox has " + std::to_string(ConnectionLimits::kMaxPerCredential) +
                        " connections open through the gateway, the most one sandbox may");
        return false;
    }
    m_credentialCounted = true;
    return true;
}

void GatewayConnection::run()
{
    m_id = m_gateway.nextConnectionId();
    limitBlocking(m_fd, SecretExchange::kRequestIdleMs);
    std::string buffer;
    ProxyRequest request;
    if (!admit(&buffer, &request))
        return;
    const Gateway::Decision decision = m_gateway.decide(m_id, m_credential, m_host, m_port);
    if (!decision.allowed) {
        report(Outcome::Deny, decision.rule);
        answer(403, m_host + ":" + std::to_string(m_port) + " is " + decision.rule);
        return;
    }
    std::string why;
    const std::optional<Gateway::Upstream> upstream = m_gateway.upstreamFor(m_host);
    if (!resolve(decision.exact, upstream.has_value(), &why)) {
        report(Outcome::Deny, why);
        answer(403, why);
        return;
    }
    // Straight to the addresses just checked, or through the host's proxy: a tunnel to the
    // host:port asked for, or the request in absolute form.
    std::string early;
    int out = -1;
    if (!upstream) {
        out = connectTo(m_addresses, m_port, &why);
    } else if ((out = openUpstream(*upstream, &why)) >= 0 &&
               request.kind() == ProxyRequest::Kind::Connect &&
               !tunnelUpstream(out, *upstream, request.authority(true), &early, &why)) {
        ::close(out);
        out = -1;
    }
    if (out < 0) {
        report(Outcome::Error, why);
        answer(502, why);
        return;
    }
    limitBlocking(out, SecretExchange::kAnswerIdleMs);
    const std::string rest = buffer.substr(request.headBytes());
    // A host one of this sandbox's secrets is bound to: its requests are read and rewritten.
    m_secrets = m_gateway.secretsFor(m_credential);
    const bool rewrite = m_secrets.bindsTo(m_host, m_port);
    if (request.kind() == ProxyRequest::Kind::Forward) {
        // In plain HTTP a value goes only where its binding names the port (anyone on the way
        // reads it): the program must not be able to choose cleartext for a key bound to a
        // host's TLS.
        m_secrets = m_secrets.plainHttp();
        // Exactly one request, framed as the client framed it (a chunked body stays chunked),
        // whatever follows it on the connection: a pipelined request for another host is never
        // passed on, to the origin or to the host's proxy. The next request opens another
        // connection and is checked in turn.
        exchangePlain(out, buffer, request.headBytes(),
                      upstream ? request.upstreamHead(upstream->authorization)
                               : request.originHead(),
                      decision.rule);
        return;
    }
    if (rewrite) {
        // The client waits for the answer to its CONNECT before its TLS: bytes before it, or
        // from the host's proxy after its answer, would be neither the client's TLS nor ours.
        if (!rest.empty() || !early.empty()) {
            ::close(out);
            report(Outcome::Deny, "bytes came before the tunnel was open");
            return;
        }
        const std::string established = "HTTP/1.1 200 Connection Established\r\n\r\n";
        ByteChannel::writeAll(m_fd, established.data(), established.size());
        exchangeTls(out, decision.rule);
        return;
    }
    const std::string established = "HTTP/1.1 200 Connection Established\r\n\r\n" + early;
    ByteChannel::writeAll(m_fd, established.data(), established.size());
    tunnel(out, rest, decision.rule);
}

void GatewayConnection::tunnel(int out, const std::string &rest, const std::string &rule)
{
    // The first bytes through the tunnel: a TLS ClientHello whose server name is the host the
    // CONNECT named (an address needs none), so that an allowed name fronts for no other.
    std::string first = rest;
    const int64_t helloDeadline = nowMs() + kStepTimeoutMs;
    ClientHello::Result hello;
    while (true) {
        hello = ClientHello::parse(reinterpret_cast<const uint8_t *>(first.data()), first.size());
        if (hello.status != ClientHello::Status::NeedMore)
            break;
        if (!readMore(&first, ClientHello::kMaxBytes, helloDeadline)) {
            hello.status = ClientHello::Status::Malformed;
            break;
        }
    }
    std::string refusal;
    if (hello.status == ClientHello::Status::NotTls) {
        // Plain HTTP through the tunnel (Node's undici tunnels http: URLs): the gateway reads
        // it, so each request is checked as a forward is, one a connection.
        ProxyRequest inner;
        refusal = checkPlainTunnel(&first, helloDeadline, &inner);
        if (refusal.empty()) {
            m_secrets = m_secrets.plainHttp();
            exchangePlain(out, first, inner.headBytes(), inner.originHead(), rule);
            return;
        }
    } else {
        refusal = helloRefusal(hello);
    }
    if (!refusal.empty()) {
        ::close(out);
        report(Outcome::Deny, refusal);
        return;
    }
    report(Outcome::Allow, rule);
    splice(out, first);
}

std::string GatewayConnection::helloRefusal(const ClientHello::Result &hello) const
{
    switch (hello.status) {
    case ClientHello::Status::ServerName:
        if (HostPattern::normalise(hello.serverName) != m_host)
            return "the TLS server name " + hello.serverName + " is not " + m_host;
        return {};
    case ClientHello::Status::NoName:
        return HostPattern::isAddressLiteral(m_host) ? std::string()
                                                     : "the TLS ClientHello names no server";
    case ClientHello::Status::EncryptedName:
        return "the TLS ClientHello hides its server name (Encrypted Client Hello), so the "
               "host it reaches cannot be checked";
    case ClientHello::Status::NeedMore:
    case ClientHello::Status::NotTls:
    case ClientHello::Status::Malformed:
        break;
    }
    return "the tunnel did not start with a whole TLS ClientHello";
}
