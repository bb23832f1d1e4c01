#include "clienthello.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace {

using Status = ClientHello::Status;

// A cursor over the handshake message that fails, rather than reads past its end.
class Reader
{
public:
    Reader(const uint8_t *data, size_t size) : m_data(data), m_size(size) {}
    bool ok() const { return m_ok; }
    size_t left() const { return m_size - m_at; }
    uint32_t number(int bytes)
    {
        uint32_t value = 0;
        if (!need(size_t(bytes)))
            return 0;
        for (int i = 0; i < bytes; ++i)
            value = value << 8 | m_data[m_at++];
        return value;
    }
    Reader sub(size_t length)
    {
        if (!need(length)) {
            Reader failed(m_data, 0);
            failed.m_ok = false; // what it would read is not there
            return failed;
        }
        Reader r(m_data + m_at, length);
        m_at += length;
        return r;
    }
    void skip(size_t length)
    {
        if (need(length))
            m_at += length;
    }
    const uint8_t *here() const { return m_data + m_at; }

private:
    bool need(size_t n)
    {
        if (!m_ok || n > left()) {
            m_ok = false;
            return false;
        }
        return true;
    }
    const uint8_t *m_data;
    size_t m_size;
    size_t m_at = 0;
    bool m_ok = true;
};

// Encrypted Client Hello (draft-ietf-tls-esni): the real server name travels encrypted inside.
constexpr uint32_t kEncryptedClientHello = 0xfe0d;

ClientHello::Result finish(Status status, std::string name = {})
{
    return ClientHello::Result{status, std::move(name)};
}

// The body of a whole ClientHello handshake message (after its 4-byte header).
ClientHello::Result readHello(Reader hello)
{
    hello.skip(2 + 32);          // client_version, random
    hello.skip(hello.number(1)); // session_id
    hello.skip(hello.number(2)); // cipher_suites
    hello.skip(hello.number(1)); // compression_methods
    if (!hello.ok())
        return finish(Status::Malformed);
    if (hello.left() == 0)
        return finish(Status::NoName); // no extensions at all
    Reader extensions = hello.sub(hello.number(2));
    if (!extensions.ok())
        return finish(Status::Malformed);
    // Every extension is read: an encrypted_client_hello anywhere means the name outside is not
    // the one the server will serve.
    std::string name;
    bool named = false;
    bool encrypted = false;
    while (extensions.ok() && extensions.left() > 0) {
        const uint32_t type = extensions.number(2);
        Reader body = extensions.sub(extensions.number(2));
        if (!extensions.ok())
            break;
        if (type == kEncryptedClientHello)
            encrypted = true;
        if (type != 0 || named) // server_name, the first
            continue;
        Reader list = body.sub(body.number(2));
        while (list.ok() && list.left() > 0 && !named) {
            const uint32_t nameType = list.number(1);
            const uint32_t length = list.number(2);
            const uint8_t *start = list.here();
            list.skip(length);
            if (!list.ok() || length == 0)
                return finish(Status::Malformed);
            if (nameType != 0) // host_name
                continue;
            name.assign(reinterpret_cast<const char *>(start), length);
            for (char &c : name) {
                const unsigned char u = static_cast<unsigned char>(c);
                if (u < 0x21 || u > 0x7e)
                    return finish(Status::Malformed);
                c = char(std::tolower(u));
            }
            named = true;
        }
        if (!list.ok())
            return finish(Status::Malformed);
    }
    if (!extensions.ok())
        return finish(Status::Malformed);
    if (encrypted)
        return finish(Status::EncryptedName);
    return named ? finish(Status::ServerName, std::move(name)) : finish(Status::NoName);
}

} // namespace

ClientHello::Result ClientHello::parse(const uint8_t *data, size_t size)
{
    // The handshake message may span several records: gather the records' payloads in order
    // until it is whole.
    std::vector<uint8_t> handshake;
    size_t at = 0;
    while (true) {
        if (size - at < 5)
            return finish(size == 0 || data[0] == 0x16 ? Status::NeedMore : Status::NotTls);
        const uint8_t *record = data + at;
        if (record[0] != 0x16 || record[1] != 0x03) // handshake, TLS 1.x (SSL 3 framing)
            return finish(at == 0 ? Status::NotTls : Status::Malformed);
        const size_t length = size_t(record[3]) << 8 | record[4];
        if (length == 0 || length > 16384 + 2048)
            return finish(Status::Malformed);
        if (size - at - 5 < length)
            return finish(at + 5 + length > kMaxBytes ? Status::Malformed : Status::NeedMore);
        handshake.insert(handshake.end(), record + 5, record + 5 + length);
        at += 5 + length;
        if (handshake.size() >= 4) {
            if (handshake[0] != 0x01) // client_hello
                return finish(Status::Malformed);
            const size_t body =
                size_t(handshake[1]) << 16 | size_t(handshake[2]) << 8 | handshake[3];
            if (4 + body > kMaxBytes)
                return finish(Status::Malformed);
            if (handshake.size() >= 4 + body)
                return readHello(Reader(handshake.data() + 4, body));
        }
        if (at >= kMaxBytes)
            return finish(Status::Malformed);
    }
}
