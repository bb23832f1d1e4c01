#include "eventwriter.h"

#include "eventreader.h"

#include <algorithm>
#include <cstdio>

EventWriter::EventWriter(const char *kind) : m_line(std::string("{\"ev\":\"") + kind + '"') {}

void EventWriter::key(const char *key)
{
    m_line += ",\"";
    m_line += key;
    m_line += "\":";
}

EventWriter &EventWriter::number(const char *key, uint64_t value)
{
    this->key(key);
    m_line += std::to_string(value);
    return *this;
}

EventWriter &EventWriter::port(const char *key, int value)
{
    return number(key, uint64_t(std::clamp(value, 0, 65535)));
}

EventWriter &EventWriter::text(const char *key, const std::string &value, size_t max)
{
    this->key(key);
    quoted(value, max);
    return *this;
}

EventWriter &EventWriter::yes(const char *key)
{
    this->key(key);
    m_line += "true";
    return *this;
}

EventWriter &EventWriter::texts(const char *key, const std::vector<std::string> &values,
                                size_t maxEach, size_t maxCount)
{
    this->key(key);
    m_line += '[';
    for (size_t i = 0; i < values.size() && i < maxCount; ++i) {
        if (i > 0)
            m_line += ',';
        quoted(values[i], maxEach);
    }
    m_line += ']';
    return *this;
}

void EventWriter::quoted(const std::string &text, size_t max)
{
    m_line += '"';
    size_t kept = 0; // the bytes the reader will have
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const size_t n = c < 0x80 ? 1 : EventReader::utf8Length(text, i);
        kept += n == 0 ? 3 : n; // U+FFFD is three
        if (kept > max)
            break;
        if (n == 0) {
            m_line += "\\ufffd";
            ++i;
            continue;
        }
        if (c == '"' || c == '\\') {
            m_line += '\\';
            m_line += char(c);
        } else if (c < 0x20 || c == 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
            m_line += escaped;
        } else {
            m_line.append(text, i, n);
        }
        i += n;
    }
    m_line += '"';
}
