#pragma once

#include "gatewayprotocol.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// One event line of the gateway (GatewayProtocol), as EventWriter writes it: read whole at once,
// then its fields taken by name, each of the type and within the limit its event gives it. The
// line comes from another process, so the reader takes only this subset of JSON (a flat object
// of strings, whole numbers from 0, true or false, and lists of strings; UTF-8 only) and stops at
// the first thing wrong, which fault() and why() tell: a line that is not such an object, a field
// missing or of another type, one past its limit, or one left over that the event does not have.
class EventReader
{
public:
    using Fault = GatewayProtocol::Fault;
    // An event has a handful of fields; a line with more is not one of ours.
    static constexpr size_t kMaxFields = 16;

    explicit EventReader(const std::string &line);

    bool has(const char *key) const { return m_fields.count(key) > 0; }
    uint64_t number(const char *key, uint64_t max = std::numeric_limits<uint64_t>::max());
    int port(const char *key) { return int(number(key, 65535)); }
    std::string text(const char *key, size_t max);
    std::vector<std::string> texts(const char *key, size_t maxEach);
    // A field that must be true.
    void yes(const char *key);
    // The caller's own finding about a field (a word that is none of its words).
    void fail(Fault fault, std::string why);

    bool failed() const { return m_fault != Fault::None; }
    // The first thing wrong; once every field is taken, also a field left over.
    Fault fault() const;
    std::string why() const;

    // The length of the well-formed UTF-8 sequence at `at` (RFC 3629: no overlong forms, no
    // surrogates, nothing past U+10FFFF), or 0.
    static size_t utf8Length(const std::string &text, size_t at);

private:
    struct Value
    {
        enum class Type
        {
            Text,
            Number,
            Flag,
            Texts
        };
        Type type = Type::Text;
        std::string text;
        uint64_t number = 0;
        bool flag = false;
        std::vector<std::string> texts;
    };

    bool parse();
    bool parseField();
    bool parseValue(Value *value);
    bool parseString(std::string *out);
    bool parseEscape(std::string *out);
    bool parseNumber(uint64_t *out);
    bool parseTexts(std::vector<std::string> *out);
    bool parseHex4(uint32_t *code);
    bool refuse(Fault fault, std::string why);
    bool atEnd() const { return m_at >= m_line.size(); }
    void skipSpace();
    bool accept(char c);
    bool expect(char c);
    bool literal(const char *word);
    std::optional<Value> take(const char *key, Value::Type type);

    const std::string &m_line;
    size_t m_at = 0;
    std::map<std::string, Value> m_fields;
    Fault m_fault = Fault::None;
    std::string m_why;
};
