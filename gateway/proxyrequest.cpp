#include "proxyrequest.h"

#include "hostpattern.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <http_parser.h>

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

bool decodeBase64(const std::string &in, std::string *out)
{
    static const std::string alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out->clear();
    unsigned value = 0;
    int bits = 0;
    size_t padding = 0;
    for (char c : in) {
        if (c == '=') {
            ++padding;
            continue;
        }
        const size_t index = alphabet.find(c);
        if (index == std::string::npos || padding > 0)
            return false;
        value = (value << 6) | unsigned(index);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out->push_back(char((value >> bits) & 0xff));
        }
    }
    return padding <= 2 && (in.size() % 4 == 0);
}

// Headers a proxy must not pass on (RFC 9110 7.6.1) and the proxy's own.
bool isHopByHop(const std::string &name)
{
    static const char *const names[] = {"connection",
                                        "keep-alive",
                                        "proxy-connection",
                                        "proxy-authorization",
                                        "proxy-authenticate",
                                        "te",
                                        "trailer",
                                        "transfer-encoding",
                                        "upgrade"};
    return std::any_of(std::begin(names), std::end(names),
                       [&](const char *n) { return name == n; });
}

// The password of `Proxy-Authorization: Basic` into `credential` ("" without the header); false
// for a header in another form.
bool readCredential(const std::vector<std::pair<std::string, std::string>> &headers,
                    std::string *credential)
{
    for (const auto &[name, value] : headers) {
        if (lower(name) != "proxy-authorization")
            continue;
        const size_t space = value.find(' ');
        std::string decoded;
        if (space == std::string::npos || lower(value.substr(0, space)) != "basic" ||
            !decodeBase64(value.substr(space + 1), &decoded) ||
            decoded.find(':') == std::string::npos)
            return false;
        *credential = decoded.substr(decoded.find(':') + 1);
    }
    return true;
}

// RFC 9110 5.6.2's tchar.
bool isTokenChar(char c)
{
    // (strchr finds the terminating NUL too.)
    return std::isalnum(static_cast<unsigned char>(c)) ||
           (c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

// Headers are written on as they came: a name that is not a token (a line that starts with
// whitespace, read as a name, would fold into the line before it, Host say) or a value with a
// line break would change what the next reader sees. (libhttp-parser joins an obsolete fold into
// one line itself.) Why one is refused, or "".
std::string unsafeHeader(const std::vector<std::pair<std::string, std::string>> &headers)
{
    for (const auto &[name, value] : headers) {
        if (name.empty() || !std::all_of(name.begin(), name.end(), isTokenChar))
            return "a header name that is not a token";
        if (value.find_first_of(std::string("\r\n\0", 3)) != std::string::npos)
            return "a header value with a line break or a NUL";
    }
    return {};
}

} // namespace

// The parser's callbacks, with the request they fill.
struct ProxyRequestParse
{
    ProxyRequest request;
    std::string field;
    bool inValue = false;
    bool complete = false;

    static ProxyRequestParse *of(http_parser *p)
    {
        return static_cast<ProxyRequestParse *>(p->data);
    }
    static int onUrl(http_parser *p, const char *at, size_t n)
    {
        of(p)->request.m_url.append(at, n);
        return 0;
    }
    static int onField(http_parser *p, const char *at, size_t n)
    {
        ProxyRequestParse *s = of(p);
        if (s->inValue) {
            s->field.clear();
            s->inValue = false;
        }
        if (s->field.empty() && n > 0 && s->request.m_headers.size() >= 100)
            return 1; // more headers than any client sends
        s->field.append(at, n);
        return 0;
    }
    static int onValue(http_parser *p, const char *at, size_t n)
    {
        ProxyRequestParse *s = of(p);
        if (!s->inValue) {
            s->request.m_headers.emplace_back(s->field, std::string());
            s->inValue = true;
        }
        s->request.m_headers.back().second.append(at, n);
        return 0;
    }
    static int onHeadersComplete(http_parser *p)
    {
        ProxyRequestParse *s = of(p);
        s->complete = true;
        s->request.m_major = p->http_major;
        s->request.m_minor = p->http_minor;
        s->request.m_method = http_method_str(static_cast<http_method>(p->method));
        http_parser_pause(p, 1); // the head is all we read
        return 0;
    }
    static http_parser_settings settings()
    {
        http_parser_settings s;
        http_parser_settings_init(&s);
        s.on_url = &onUrl;
        s.on_header_field = &onField;
        s.on_header_value = &onValue;
        s.on_headers_complete = &onHeadersComplete;
        return s;
    }
};

ProxyRequest ProxyRequest::parse(const char *data, size_t size)
{
    return parseHead(data, size, false);
}

ProxyRequest ProxyRequest::parseInTunnel(const char *data, size_t size, int defaultPort)
{
    return parseHead(data, size, true, defaultPort);
}

ProxyRequest ProxyRequest::parseHead(const char *data, size_t size, bool inTunnel, int defaultPort)
{
    ProxyRequestParse s;
    ProxyRequest &r = s.request;
    auto bad = [&](int status, const std::string &why) {
        r.m_state = Status::Bad;
        r.m_status = status;
        r.m_error = why;
        return r;
    };
    http_parser parser;
    http_parser_init(&parser, HTTP_REQUEST);
    parser.data = &s;
    const http_parser_settings settings = ProxyRequestParse::settings();
    const size_t window = std::min(size, kMaxHeadBytes);
    const size_t used = http_parser_execute(&parser, &settings, data, window);
    const http_errno err = HTTP_PARSER_ERRNO(&parser);
    if (!s.complete) {
        if (err == HPE_CB_header_field)
            return bad(431, "too many header fields");
        if (err != HPE_OK)
            return bad(400, std::string("not an HTTP request: ") + http_errno_description(err));
        if (size >= kMaxHeadBytes)
            return bad(431, "the request head is larger than 16 KiB");
        return r; // NeedMore
    }
    // Paused in on_headers_complete: the parser has not counted the byte that ended the head.
    r.m_headBytes = err == HPE_PAUSED ? used + 1 : used;
    const std::string refused = unsafeHeader(r.m_headers);
    if (!refused.empty())
        return bad(400, refused);
    if (inTunnel)
        return readTunnelRequest(std::move(r), parser.method == HTTP_CONNECT, defaultPort);
    const bool connect = parser.method == HTTP_CONNECT;
    r.m_kind = connect ? Kind::Connect : Kind::Forward;
    http_parser_url url;
    http_parser_url_init(&url);
    if (http_parser_parse_url(r.m_url.data(), r.m_url.size(), connect ? 1 : 0, &url) != 0)
        return bad(400, "the request target is not " +
                            std::string(connect ? "host:port" : "an absolute URI"));
    auto field = [&](int f) {
        return (url.field_set & (1 << f))
                   ? r.m_url.substr(url.field_data[f].off, url.field_data[f].len)
                   : std::string();
    };
    if (!connect) {
        if (lower(field(UF_SCHEMA)) != "http")
            return bad(400, field(UF_SCHEMA).empty()
                                ? "a proxy request needs an absolute URI (http://host/path)"
                                : "only http:// goes through as a request; use CONNECT for " +
                                      field(UF_SCHEMA));
        if (url.field_set & (1 << UF_USERINFO))
            return bad(400, "user names in the URI are not passed on");
        r.m_path = field(UF_PATH).empty() ? "/" : field(UF_PATH);
        if (url.field_set & (1 << UF_QUERY))
            r.m_path += "?" + field(UF_QUERY);
    }
    r.m_host = HostPattern::normalise(field(UF_HOST));
    if (r.m_host.empty())
        return bad(400, "the request names no valid host");
    r.m_port = (url.field_set & (1 << UF_PORT)) ? url.port : (connect ? 0 : 80);
    if (r.m_port == 0)
        return bad(400, "CONNECT needs host:port");
    if (!readCredential(r.m_headers, &r.m_credential))
        return bad(407, "Proxy-Authorization must be Basic user:password");
    if (r.m_credential.empty())
        return bad(407, "the gateway needs the sandbox's credential (the proxy URL's password)");
    if (!connect) {
        // The origin routes by Host (a shared front, a CDN): it must name the host the
        // allow-list and the secrets were checked for, or the request goes elsewhere with them.
        const std::string mismatch = r.hostHeaderMismatch();
        if (!mismatch.empty())
            return bad(mismatch == kSeveralHosts ? 400 : 421, mismatch);
    }
    r.m_state = Status::Ok;
    return r;
}

ProxyRequest ProxyRequest::readTunnelRequest(ProxyRequest r, bool connect, int defaultPort)
{
    auto bad = [&](int status, const std::string &why) {
        r.m_state = Status::Bad;
        r.m_status = status;
        r.m_error = why;
        return r;
    };
    if (connect)
        return bad(400, "no CONNECT inside a tunnel");
    r.m_kind = Kind::Forward;
    r.m_defaultPort = defaultPort;
    if (!r.m_url.empty() && r.m_url[0] != '/' && r.m_url != "*") {
        // The absolute form (RFC 9112 3.2.2): a server routes such a request by the target's
        // own authority, whatever Host says, so that authority is the one checked, and the
        // origin gets the origin form.
        http_parser_url url;
        http_parser_url_init(&url);
        if (http_parser_parse_url(r.m_url.data(), r.m_url.size(), 0, &url) != 0 ||
            !(url.field_set & (1 << UF_HOST)))
            return bad(400, "the request in the tunnel has a target that is neither a path nor "
                            "an absolute URI");
        const auto field = [&](int f) {
            return (url.field_set & (1 << f))
                       ? r.m_url.substr(url.field_data[f].off, url.field_data[f].len)
                       : std::string();
        };
        const std::string scheme = lower(field(UF_SCHEMA));
        if (scheme != "http" && scheme != "https")
            return bad(400, "the request in the tunnel names the scheme " + field(UF_SCHEMA));
        if (url.field_set & (1 << UF_USERINFO))
            return bad(400, "user names in the URI are not passed on");
        r.m_host = HostPattern::normalise(field(UF_HOST));
        if (r.m_host.empty())
            return bad(400, "the request in the tunnel names no valid host");
        r.m_port = (url.field_set & (1 << UF_PORT)) ? url.port : scheme == "https" ? 443 : 80;
        r.m_path = field(UF_PATH).empty() ? "/" : field(UF_PATH);
        if (url.field_set & (1 << UF_QUERY))
            r.m_path += "?" + field(UF_QUERY);
        const std::string mismatch = r.hostHeaderMismatch();
        if (!mismatch.empty())
            return bad(mismatch == kSeveralHosts ? 400 : 421, mismatch);
        r.m_state = Status::Ok;
        return r;
    }
    std::string hostHeader;
    int hosts = 0;
    for (const auto &[name, value] : r.m_headers)
        if (lower(name) == "host" && hosts++ == 0)
            hostHeader = value;
    if (hosts > 1)
        return bad(400, kSeveralHosts);
    if (!parseAuthority(hostHeader, defaultPort, &r.m_host, &r.m_port))
        return bad(400, "the request in the tunnel has no valid Host header");
    r.m_path = r.m_url;
    r.m_state = Status::Ok;
    return r;
}

bool ProxyRequest::parseAuthority(const std::string &authority, int defaultPort, std::string *host,
                                  int *port)
{
    // host[:port], read as the authority of a URI.
    const std::string uri = "http://" + authority + "/";
    http_parser_url url;
    http_parser_url_init(&url);
    if (authority.empty() || http_parser_parse_url(uri.data(), uri.size(), 0, &url) != 0 ||
        !(url.field_set & (1 << UF_HOST)) || (url.field_set & (1 << UF_USERINFO)) ||
        url.field_data[UF_PATH].off != uri.size() - 1)
        return false;
    *host = HostPattern::normalise(
        uri.substr(url.field_data[UF_HOST].off, url.field_data[UF_HOST].len));
    *port = (url.field_set & (1 << UF_PORT)) ? url.port : defaultPort;
    return !host->empty();
}

std::string ProxyRequest::hostHeaderMismatch() const
{
    int hosts = 0;
    std::string value;
    for (const auto &[name, v] : m_headers)
        if (lower(name) == "host" && hosts++ == 0)
            value = v;
    if (hosts > 1)
        return kSeveralHosts;
    if (hosts == 0)
        return {};
    std::string host;
    int port = 0;
    if (!parseAuthority(value, m_defaultPort, &host, &port) || host != m_host || port != m_port)
        return "the Host header names " + value.substr(0, 200) + ", not the request target's " +
               authority(false);
    return {};
}

std::string ProxyRequest::originHead() const
{
    return headFor(m_path, {});
}

std::string ProxyRequest::authority(bool defaultPort) const
{
    const bool v6 = m_host.find(':') != std::string::npos;
    return (v6 ? "[" + m_host + "]" : m_host) +
           (m_port == m_defaultPort && !defaultPort ? std::string() : ":" + std::to_string(m_port));
}

std::string ProxyRequest::upstreamHead(const std::string &authorization) const
{
    return headFor("http://" + authority(false) + m_path,
                   authorization.empty() ? std::string()
                                         : "Proxy-Authorization: " + authorization + "\r\n");
}

std::string ProxyRequest::headFor(const std::string &target, const std::string &extra) const
{
    // Host first and always the target's authority (a client's own Host was checked against it
    // when the request was read): whatever routes by Host reaches the host that was allowed.
    std::string head = m_method + " " + target + " HTTP/" + std::to_string(m_major) + "." +
                       std::to_string(m_minor) + "\r\nHost: " + authority(false) + "\r\n" + extra;
    for (const auto &[name, value] : m_headers) {
        const std::string n = lower(name);
        if (isHopByHop(n) || n == "host")
            continue;
        head += name + ": " + value + "\r\n";
    }
    head += "Connection: close\r\n\r\n";
    return head;
}
