#include "bytechannel.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>

ByteChannel::~ByteChannel()
{
    SSL_free(m_ssl);
}

int64_t ByteChannel::nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

bool ByteChannel::waitReadable(int64_t deadlineMs)
{
    if (deadlineMs < 0)
        return true;
    pollfd p{m_fd, POLLIN, 0};
    const int64_t left = deadlineMs - nowMs();
    return left > 0 && ::poll(&p, 1, int(left)) > 0;
}

bool ByteChannel::handshake(SSL *ssl, bool accept, int64_t deadlineMs, std::string *why)
{
    SSL_free(m_ssl);
    m_ssl = ssl;
    SSL_set_fd(ssl, m_fd);
    // The handshake's reads wait on the socket with the deadline: a peer that stops answering
    // must not hold the thread.
    timeval timeout{};
    const int64_t left = std::max<int64_t>(1, deadlineMs - nowMs());
    timeout.tv_sec = left / 1000;
    timeout.tv_usec = (left % 1000) * 1000;
    ::setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const int rc = accept ? SSL_accept(ssl) : SSL_connect(ssl);
    timeout = {};
    ::setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    if (rc == 1)
        return true;
    const long verify = SSL_get_verify_result(ssl);
    if (!accept && verify != X509_V_OK) {
        *why = std::string("its certificate is not trusted (") +
               X509_verify_cert_error_string(verify) + ")";
    } else {
        const unsigned long e = ERR_get_error();
        char text[256] = "the connection ended during the handshake";
        if (e != 0)
            ERR_error_string_n(e, text, sizeof text);
        *why = text;
    }
    ERR_clear_error();
    return false;
}

long ByteChannel::read(char *data, size_t size, int64_t deadlineMs)
{
    if (!m_ssl) {
        while (true) {
            if (!waitReadable(deadlineMs))
                return -1;
            const ssize_t n = ::recv(m_fd, data, size, 0);
            if (n < 0 && errno == EINTR)
                continue;
            return n;
        }
    }
    if (SSL_pending(m_ssl) == 0 && !waitReadable(deadlineMs))
        return -1;
    const int n = SSL_read(m_ssl, data, int(std::min<size_t>(size, 1 << 20)));
    if (n > 0)
        return n;
    const int error = SSL_get_error(m_ssl, n);
    ERR_clear_error();
    // A peer that closes without close_notify ends its side all the same.
    return error == SSL_ERROR_ZERO_RETURN || error == SSL_ERROR_SYSCALL ? 0 : -1;
}

bool ByteChannel::write(const std::string &bytes)
{
    const char *data = bytes.data();
    size_t size = bytes.size();
    while (size > 0) {
        long n;
        if (m_ssl) {
            n = SSL_write(m_ssl, data, int(std::min<size_t>(size, 1 << 20)));
            if (n <= 0) {
                ERR_clear_error();
                return false;
            }
        } else {
            return writeAll(m_fd, data, size);
        }
        data += n;
        size -= size_t(n);
    }
    return true;
}

bool ByteChannel::writeAll(int fd, const char *data, size_t size)
{
    while (size > 0) {
        const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= size_t(n);
    }
    return true;
}

void ByteChannel::finish()
{
    if (m_ssl)
        SSL_shutdown(m_ssl);
    ERR_clear_error();
    ::shutdown(m_fd, SHUT_WR);
}
