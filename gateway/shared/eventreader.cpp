#include "eventreader.h"

namespace {

void appendUtf8(std::string *out, uint32_t code)
{
    if (code < 0x80) {
        *out += char(code);
    } else if (code < 0x800) {
        *out += char(0xc0 | (code >> 6));
        *out += char(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
        *out += char(0xe0 | (code >> 12));
        *out += char(0x80 | ((code >> 6) & 0x3f));
        *out += char(0x80 | (code & 0x3f));
    } else {
        *out += char(0xf0 | (code >> 18));
        *out += char(0x80 | ((code >> 12) & 0x3f));
        *out += char(0x80 | ((code >> 6) & 0x3f));
        *out += char(0x80 | (code & 0x3f));
    }
}

} // namespace

EventReader::EventReader(const std::string &line) : m_line(line)
{
    // The line is read here, whole; nothing after the constructor looks at it again.
    parse();
}

size_t EventReader::utf8Length(const std::string &text, size_t at)
{
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char c = byte(at);
    size_t n = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        low = c == 0xe0 ? 0xa0 : 0x80;
        high = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        low = c == 0xf0 ? 0x90 : 0x80;
        high = c == 0xf4 ? 0x8f : 0xbf;
    } else {
        return 0;
    }
    if (at + n > text.size() || byte(at + 1) < low || byte(at + 1) > high)
        return 0;
    for (size_t i = 2; i < n; ++i)
        if (byte(at + i) < 0x80 || byte(at + i) > 0xbf)
            return 0;
    return n;
}

// ---- Taking the fields

std::optional<EventReader::Value> EventReader::take(const char *key, Value::Type type)
{
    if (failed())
        return std::nullopt;
    const auto it = m_fields.find(key);
    if (it == m_fields.end() || it->second.type != type) {
        fail(Fault::BadField, std::string("an event whose ") + key +
                                  (it == m_fields.end() ? " is missing" : " is of another type"));
        return std::nullopt;
    }
    Value value = std::move(it->second);
    m_fields.erase(it);
    return value;
}

uint64_t EventReader::number(const char *key, uint64_t max)
{
    const std::optional<Value> v = take(key, Value::Type::Number);
    if (v && v->number > max)
        fail(Fault::BadNumber,
             std::string("an event's ") + key + " is past " + std::to_string(max));
    return v && v->number <= max ? v->number : 0;
}

std::string EventReader::text(const char *key, size_t max)
{
    std::optional<Value> v = take(key, Value::Type::Text);
    if (v && v->text.size() > max)
        fail(Fault::BadField, std::string("an event's ") + key + " is longer than " +
                                  std::to_string(max) + " bytes");
    return v && v->text.size() <= max ? std::move(v->text) : std::string();
}

std::vector<std::string> EventReader::texts(const char *key, size_t maxEach)
{
    std::optional<Value> v = take(key, Value::Type::Texts);
    if (!v)
        return {};
    for (const std::string &text : v->texts)
        if (text.size() > maxEach) {
            fail(Fault::BadField, std::string("an event's ") + key + " has one longer than " +
                                      std::to_string(maxEach) + " bytes");
            return {};
        }
    return std::move(v->texts);
}

void EventReader::yes(const char *key)
{
    const std::optional<Value> v = take(key, Value::Type::Flag);
    if (v && !v->flag)
        fail(Fault::BadField, std::string("an event's ") + key + " is false");
}

void EventReader::fail(Fault fault, std::string why)
{
    if (!failed()) {
        m_fault = fault;
        m_why = std::move(why);
    }
}

EventReader::Fault EventReader::fault() const
{
    return failed() || m_fields.empty() ? m_fault : Fault::BadField;
}

std::string EventReader::why() const
{
    if (failed() || m_fields.empty())
        return m_why;
    return "an event with a field it does not have: " + m_fields.begin()->first.substr(0, 40);
}

// ---- Parsing

bool EventReader::refuse(Fault fault, std::string why)
{
    fail(fault, std::move(why));
    return false;
}

void EventReader::skipSpace()
{
    while (!atEnd() && (m_line[m_at] == ' ' || m_line[m_at] == '\t'))
        ++m_at;
}

bool EventReader::accept(char c)
{
    skipSpace();
    if (atEnd() || m_line[m_at] != c)
        return false;
    ++m_at;
    return true;
}

bool EventReader::expect(char c)
{
    return accept(c) || refuse(Fault::Malformed, std::string("a JSON object without its ") + c);
}

bool EventReader::literal(const char *word)
{
    const std::string_view text(word);
    if (m_line.compare(m_at, text.size(), text) != 0)
        return false;
    m_at += text.size();
    return true;
}

bool EventReader::parse()
{
    if (!accept('{'))
        return refuse(Fault::Malformed, "an event that is not a JSON object");
    if (!accept('}')) {
        do {
            if (!parseField())
                return false;
        } while (accept(','));
        if (!expect('}'))
            return false;
    }
    skipSpace();
    return atEnd() || refuse(Fault::Malformed, "more after the event's object");
}

bool EventReader::parseField()
{
    std::string key;
    Value value;
    skipSpace();
    if (!parseString(&key) || !expect(':') || !parseValue(&value))
        return false;
    if (m_fields.size() == kMaxFields)
        return refuse(Fault::Malformed,
                      "an event with more than " + std::to_string(kMaxFields) + " fields");
    if (!m_fields.emplace(std::move(key), std::move(value)).second)
        return refuse(Fault::Malformed, "an event with a field twice");
    return true;
}

bool EventReader::parseValue(Value *value)
{
    skipSpace();
    const char c = atEnd() ? '\0' : m_line[m_at];
    if (c == '"')
        return parseString(&value->text);
    if (c == '[') {
        value->type = Value::Type::Texts;
        return parseTexts(&value->texts);
    }
    const bool yes = literal("true");
    if (yes || literal("false")) {
        value->type = Value::Type::Flag;
        value->flag = yes;
        return true;
    }
    if (c == '-')
        return refuse(Fault::BadNumber, "an event with a negative number");
    if (c >= '0' && c <= '9') {
        value->type = Value::Type::Number;
        return parseNumber(&value->number);
    }
    return refuse(Fault::Malformed, "an event with a value it does not have (null, an object)");
}

bool EventReader::parseString(std::string *out)
{
    if (atEnd() || m_line[m_at] != '"')
        return refuse(Fault::Malformed, "an event with something else where a string goes");
    ++m_at;
    while (!atEnd()) {
        if (out->size() > GatewayProtocol::kMaxText)
            return refuse(Fault::BadField, "an event with a string longer than " +
                                               std::to_string(GatewayProtocol::kMaxText) +
                                               " bytes");
        const auto c = static_cast<unsigned char>(m_line[m_at]);
        const size_t n = c < 0x80 ? 1 : utf8Length(m_line, m_at);
        if (c == '"') {
            ++m_at;
            return true;
        }
        if (c == '\\') {
            if (!parseEscape(out))
                return false;
        } else if (c < 0x20 || n == 0) {
            return refuse(Fault::BadCharacter,
                          "an event with a control character or a byte other than UTF-8");
        } else {
            out->append(m_line, m_at, n);
            m_at += n;
        }
    }
    return refuse(Fault::Malformed, "an event with a string without its end");
}

bool EventReader::parseEscape(std::string *out)
{
    static const std::string from = "\"\\/bfnrt";
    static const std::string to = "\"\\/\b\f\n\r\t";
    const char e = m_at + 1 < m_line.size() ? m_line[m_at + 1] : '\0';
    m_at += 2;
    if (const size_t k = from.find(e); k != std::string::npos) {
        *out += to[k];
        return true;
    }
    uint32_t code = 0;
    if (e != 'u' || !parseHex4(&code))
        return refuse(Fault::Malformed, "an event with an escape JSON does not have");
    if (code >= 0xdc00 && code <= 0xdfff)
        return refuse(Fault::BadCharacter, "an event with half a surrogate pair");
    if (code >= 0xd800 && code <= 0xdbff) {
        uint32_t low = 0;
        if (!literal("\\u") || !parseHex4(&low) || low < 0xdc00 || low > 0xdfff)
            return refuse(Fault::BadCharacter, "an event with half a surrogate pair");
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    }
    appendUtf8(out, code);
    return true;
}

bool EventReader::parseHex4(uint32_t *code)
{
    if (m_at + 4 > m_line.size())
        return false;
    *code = 0;
    for (size_t i = 0; i < 4; ++i) {
        const char c = m_line[m_at + i];
        const int digit = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
        if (digit < 0)
            return false;
        *code = *code * 16 + uint32_t(digit);
    }
    m_at += 4;
    return true;
}

bool EventReader::parseNumber(uint64_t *out)
{
    uint64_t n = 0;
    for (; !atEnd() && m_line[m_at] >= '0' && m_line[m_at] <= '9'; ++m_at) {
        const auto digit = uint64_t(m_line[m_at] - '0');
        if (n > (std::numeric_limits<uint64_t>::max() - digit) / 10)
            return refuse(Fault::BadNumber, "an event with a number past 2^64");
        n = n * 10 + digit;
    }
    if (!atEnd() && (m_line[m_at] == '.' || m_line[m_at] == 'e' || m_line[m_at] == 'E'))
        return refuse(Fault::BadNumber, "an event with a number that is not whole");
    *out = n;
    return true;
}

bool EventReader::parseTexts(std::vector<std::string> *out)
{
    ++m_at; // [
    if (accept(']'))
        return true;
    do {
        std::string text;
        skipSpace();
        if (!parseString(&text))
            return false;
        if (out->size() == GatewayProtocol::kMaxListItems)
            return refuse(Fault::BadField, "an event with a list of more than " +
                                               std::to_string(GatewayProtocol::kMaxListItems) +
                                               " items");
        out->push_back(std::move(text));
    } while (accept(','));
    return expect(']');
}
