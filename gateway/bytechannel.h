#pragma once

#include <cstddef>
#include <cstdint>
#include <openssl/ssl.h>
#include <string>

// One side of a connection the gateway reads requests or answers from: a socket, with TLS over
// it once handshake() succeeded. Blocking, used by one thread only (an SSL session is not safe
// to read and write from two).
class ByteChannel
{
public:
    explicit ByteChannel(int fd) : m_fd(fd) {}
    ~ByteChannel();
    ByteChannel(const ByteChannel &) = delete;
    ByteChannel &operator=(const ByteChannel &) = delete;

    // Takes `ssl` and runs its handshake on the socket: as the server (accept) or the client.
    bool handshake(SSL *ssl, bool accept, int64_t deadlineMs, std::string *why);
    SSL *tls() const { return m_ssl; }

    // Up to `size` bytes; 0 at the end, -1 on an error or past `deadlineMs` (-1: none).
    long read(char *data, size_t size, int64_t deadlineMs);
    bool write(const std::string &bytes);
    // TLS's close_notify, so that a body that ends with the connection is read as whole.
    void finish();

    static int64_t nowMs();
    // All of `size` bytes to the socket (no TLS), or false.
    static bool writeAll(int fd, const char *data, size_t size);

private:
    bool waitReadable(int64_t deadlineMs);

    int m_fd;
    SSL *m_ssl = nullptr;
};
