#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// One event of the gateway (GatewayProtocol) as a line of JSON: a flat object, "ev" first, whose
// values are strings, whole numbers from 0, true, and lists of strings; EventReader reads it
// back. Every string is written as the reader takes it: UTF-8 (a byte that begins no whole,
// well-formed character, as in a name from a request in another encoding, is written as U+FFFD),
// control characters escaped, and cut on a character to the number of bytes the reader allows
// that field.
class EventWriter
{
public:
    explicit EventWriter(const char *kind);

    EventWriter &number(const char *key, uint64_t value);
    // A port is 0 to 65535, whatever the caller had.
    EventWriter &port(const char *key, int value);
    EventWriter &text(const char *key, const std::string &value, size_t max);
    EventWriter &yes(const char *key);
    // At most `maxCount` items of at most `maxEach` bytes.
    EventWriter &texts(const char *key, const std::vector<std::string> &values, size_t maxEach,
                       size_t maxCount);
    // The object, without a newline.
    std::string line() const { return m_line + '}'; }

private:
    void key(const char *key);
    void quoted(const std::string &text, size_t max);

    std::string m_line;
};
