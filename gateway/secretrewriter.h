#pragma once

#include "base64.h"
#include "hostpattern.h"

#include <string>
#include <utility>
#include <vector>

// A secret bound to hosts (--secret NAME=HOSTVAR@HOST,…): the sandbox holds only its
// placeholder; the gateway puts the value in place of it in requests to those hosts, and the
// placeholder in place of the value in whatever comes back.
struct BoundSecret
{
    std::string name;
    std::string placeholder;
    std::string value;
    std::vector<HostPattern> hosts;

    bool boundTo(const std::string &host, int port) const;
};

// One sandbox's secrets, applied to the HTTP it sends and gets through the gateway. Plain C++
// (with libcrypto's base64), so that tests/unit checks it without a gateway.
class SecretRewriter
{
public:
    SecretRewriter() = default;
    explicit SecretRewriter(std::vector<BoundSecret> secrets);

    bool empty() const { return m_secrets.empty(); }
    // Whether a request to host:port gets a secret: then the gateway terminates its TLS.
    bool bindsTo(const std::string &host, int port) const;

    // A request head (request line, header lines, the blank line) for host:port, with every
    // placeholder of a secret bound there replaced by its value: in the request line (a key in
    // the query), in header values, and inside Basic credentials. `added`: the names of those
    // put in. Accept-Encoding goes where a secret is bound (a compressed answer could not be
    // searched for a value that it echoes), Expect always (the gateway answers 100 itself;
    // `expectContinue` says so). `echoes`: what the request now carries in another form than the
    // value itself (Basic credentials, base64 of user:value) with what it carried before, for the
    // answer's masking.
    std::string inject(const std::string &head, const std::string &host, int port,
                       std::vector<std::string> *added, bool *expectContinue = nullptr,
                       std::vector<std::pair<std::string, std::string>> *echoes = nullptr) const;
    // For a request that goes out in plain HTTP: only the secrets whose binding names the port
    // explicitly (`api.test:8080`) are put in; one bound without a port (which reads as 80 and
    // 443) goes only inside TLS the gateway verified. Every value is still masked.
    SecretRewriter plainHttp() const;
    // This rewriter, masking besides each `echoes` pair's first with its second.
    SecretRewriter withEchoes(const std::vector<std::pair<std::string, std::string>> &echoes) const;
    // `text` with every value of this sandbox's secrets, whatever their hosts, replaced by its
    // placeholder.
    std::string mask(const std::string &text) const;

    // mask() over a stream that comes in pieces: a value cut across two pieces is still found,
    // since the end of each piece that could begin one is held back for the next.
    class Masker
    {
    public:
        explicit Masker(const SecretRewriter &rewriter) : m_rewriter(rewriter) {}
        std::string feed(const char *data, size_t size);
        // What was held back, masked: the stream has ended.
        std::string finish();

    private:
        const SecretRewriter &m_rewriter;
        std::string m_held;
    };

    // Base64 (the shared part's, which the control protocol uses too), under the names the
    // rewriter's unit test and fuzz target know it by.
    static std::string encodeBase64(const std::string &bytes) { return Base64::encode(bytes); }
    // false for text that is not base64 (padding optional).
    static bool decodeBase64(const std::string &text, std::string *bytes)
    {
        return Base64::decode(text, bytes);
    }

private:
    // The first value of any secret at or after `from`; its secret in `which`.
    size_t findValue(const std::string &text, size_t from, const BoundSecret **which) const;
    std::string replacePlaceholders(std::string text, const std::string &host, int port,
                                    std::vector<std::string> *added) const;

    std::vector<BoundSecret> m_secrets;
    size_t m_longestValue = 0;
};
