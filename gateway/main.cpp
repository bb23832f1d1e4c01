// cs-gateway: the egress gateway of Code Sandbox's allow-list network mode. It listens for the
// sandboxes' proxy requests and takes its rules from the server on stdin (see gateway.h); when
// stdin ends, or no line comes for --control-timeout-ms, it exits, and with it every tunnel
// (fail closed: no gateway is no network, never an open one).
#include "gateway.h"
#include "gatewayconnection.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace {

void usage(const char *why)
{
    std::fprintf(stderr,
                 "cs-gateway: %s\n"
                 "usage: cs-gateway [--listen ADDRESS:PORT] [--control-timeout-ms MS]\n"
                 "                  [--ask-timeout-ms MS] [--hosts NAME=ADDRESS,...]\n"
                 "                  [--public CIDR,...]\n"
                 "  --listen              where sandboxes reach it (default 0.0.0.0:3128)\n"
                 "  --control-timeout-ms  exit when no control line came for this long\n"
                 "                        (default 10000; 0: only when stdin ends)\n"
                 "  --ask-timeout-ms      how long a held connection waits for a verdict\n"
                 "  --hosts, --public     tests only: names resolved without DNS, and IPv4\n"
                 "                        ranges treated as public\n",
                 why);
    std::exit(2);
}

std::vector<std::string> list(const std::string &text)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        if (comma > start)
            out.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

int listenOn(const std::string &where)
{
    const size_t colon = where.rfind(':');
    if (colon == std::string::npos)
        usage("--listen needs ADDRESS:PORT");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(uint16_t(std::atoi(where.c_str() + colon + 1)));
    if (inet_pton(AF_INET, where.substr(0, colon).c_str(), &address.sin_addr) != 1)
        usage("--listen needs an IPv4 address");
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
        ::listen(fd, 128) != 0) {
        std::fprintf(stderr, "cs-gateway: cannot listen on %s: %s\n", where.c_str(),
                     std::strerror(errno));
        std::exit(1);
    }
    return fd;
}

// A connection the gateway will not serve: a clear answer (it fits a new socket's buffer, so
// the accept loop never waits on it), then the end.
// 429 for a sandbox over its own share, 503 for a full gateway.
void refuse(int fd, bool own, const std::string &why)
{
    const std::string body = "Code Sandbox egress gateway: " + why + "\n";
    const std::string answer =
        std::string(own ? "HTTP/1.1 429 Too Many Requests" : "HTTP/1.1 503 Service Unavailable") +
        "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    ::send(fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    ::close(fd);
}

// --hosts NAME=ADDRESS,...
std::map<std::string, std::string> hostsOption(const std::string &value)
{
    std::map<std::string, std::string> hosts;
    for (const std::string &entry : list(value)) {
        const size_t eq = entry.find('=');
        if (eq == std::string::npos)
            usage("--hosts takes NAME=ADDRESS entries");
        hosts[HostPattern::normalise(entry.substr(0, eq))] = entry.substr(eq + 1);
    }
    return hosts;
}

// --public CIDR,...
std::vector<std::pair<uint32_t, int>> publicOption(const std::string &value)
{
    std::vector<std::pair<uint32_t, int>> ranges;
    for (const std::string &entry : list(value)) {
        const size_t slash = entry.find('/');
        in_addr a;
        if (slash == std::string::npos ||
            inet_pton(AF_INET, entry.substr(0, slash).c_str(), &a) != 1)
            usage("--public takes IPv4 CIDR ranges");
        ranges.emplace_back(ntohl(a.s_addr), std::atoi(entry.c_str() + slash + 1));
    }
    return ranges;
}

struct Options
{
    std::string listen = "0.0.0.0:3128";
    int controlTimeoutMs = 10000;
};

// The command line; what is the gateway's goes to it.
Options readOptions(int argc, char **argv, Gateway &gateway)
{
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc)
            usage(("missing value after " + arg).c_str());
        const std::string value = argv[++i];
        if (arg == "--listen")
            options.listen = value;
        else if (arg == "--control-timeout-ms")
            options.controlTimeoutMs = std::atoi(value.c_str());
        else if (arg == "--ask-timeout-ms")
            gateway.setAskTimeoutMs(std::atoi(value.c_str()));
        else if (arg == "--hosts")
            gateway.setHosts(hostsOption(value));
        else if (arg == "--public")
            gateway.setPublicRanges(publicOption(value));
        else
            usage(("unknown option " + arg).c_str());
    }
    return options;
}

// The sandboxes' connections, each on a thread of its own within the gateway's limits; for ever.
void serve(Gateway &gateway, int server)
{
    while (true) {
        sockaddr_storage peer{};
        socklen_t length = sizeof peer;
        const int fd =
            ::accept4(server, reinterpret_cast<sockaddr *>(&peer), &length, SOCK_CLOEXEC);
        if (fd < 0) {
            // Out of descriptors, say: wait a little rather than spin on accept.
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        char text[INET6_ADDRSTRLEN] = {};
        if (peer.ss_family == AF_INET)
            inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(&peer)->sin_addr, text,
                      sizeof text);
        const std::string address = text;
        const ConnectionLimits::Admission admission = gateway.limits().admit(address);
        if (admission != ConnectionLimits::Admission::Admitted) {
            const bool own = admission == ConnectionLimits::Admission::SourceFull;
            refuse(fd, own,
                   own ? "this sandbox has " + std::to_string(ConnectionLimits::kMaxPerSource) +
                             " connections open through the gateway, the most one "
                             "sandbox may"
                       : "the gateway holds " + std::to_string(ConnectionLimits::kMaxConnections) +
                             " connections, the most it takes");
            continue;
        }
        try {
            std::thread([&gateway, fd, address] {
                GatewayConnection(gateway, fd, address).run();
                gateway.limits().release(address);
            }).detach();
        } catch (const std::system_error &) {
            // No thread to be had (the pids limit, memory): this connection is refused,
            // the gateway and every other connection go on.
            gateway.limits().release(address);
            refuse(fd, false, "the gateway cannot take another connection now");
        }
    }
}

// The control channel, line by line; its end is the gateway's. Returns the exit status.
int control(Gateway &gateway, int timeoutMs)
{
    std::string pending;
    char chunk[4096];
    while (true) {
        pollfd p{STDIN_FILENO, POLLIN, 0};
        const int ready = ::poll(&p, 1, timeoutMs > 0 ? timeoutMs : -1);
        if (ready == 0)
            return 3; // the server stopped talking: fail closed
        const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
        if (n <= 0)
            return 0;
        pending.append(chunk, size_t(n));
        size_t newline;
        while ((newline = pending.find('\n')) != std::string::npos) {
            std::string line = pending.substr(0, newline);
            pending.erase(0, newline + 1);
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            const std::string reply = gateway.control(line);
            if (!reply.empty())
                gateway.writeLine(reply);
        }
        if (pending.size() > GatewayProtocol::kMaxCommandLine)
            return 4; // no line ends: not a server talking
    }
}

} // namespace

int main(int argc, char **argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    Gateway gateway;
    const Options options = readOptions(argc, argv, gateway);
    const int server = listenOn(options.listen);
    sockaddr_in bound{};
    socklen_t size = sizeof bound;
    ::getsockname(server, reinterpret_cast<sockaddr *>(&bound), &size);
    gateway.emit(GatewayProtocol::Ready{ntohs(bound.sin_port)});
    std::thread([&gateway, server] { serve(gateway, server); }).detach();
    return control(gateway, options.controlTimeoutMs);
}
