#include "codehighlighter.h"

#include "languageregistry.h"

#include <QGuiApplication>
#include <QHash>
#include <QPalette>

namespace {

QSet<QString> words(std::initializer_list<const char *> list)
{
    QSet<QString> set;
    for (const char *word : list)
        set.insert(QString::fromLatin1(word));
    return set;
}

const QSet<QString> &cKeywords()
{
    static const QSet<QString> set =
        words({"auto",    "break",   "case",     "char",     "const",    "continue", "default",
               "do",      "double",  "else",     "enum",     "extern",   "float",    "for",
               "goto",    "if",      "inline",   "int",      "long",     "register", "restrict",
               "return",  "short",   "signed",   "sizeof",   "static",   "struct",   "switch",
               "typedef", "union",   "unsigned", "void",     "volatile", "while",    "_Bool",
               "bool",    "true",    "false",    "NULL",     "size_t",   "int8_t",   "int16_t",
               "int32_t", "int64_t", "uint8_t",  "uint16_t", "uint32_t", "uint64_t"});
    return set;
}

} // namespace

CodeHighlighter::CodeHighlighter(QTextDocument *document) : QSyntaxHighlighter(document)
{
    updateColors();
}

void CodeHighlighter::setLanguage(const QString &language)
{
    const QString name = language.trimmed().toLower();
    if (name == m_language)
        return;
    m_language = name;
    // Names and aliases are the language table's (resources/languages.json).
    static const LanguageRegistry languages = LanguageRegistry::builtIn();
    const Language *known = languages.find(name);
    m_syntax = syntaxFor(known ? known->name : QString());
    m_enabled = !m_syntax.keywords.isEmpty();
    rehighlight();
}

void CodeHighlighter::updateColors()
{
    // Two sets of mid-saturation colours, chosen by the palette's lightness: one set cannot
    // reach a readable contrast on both white and near-black.
    const bool dark = QGuiApplication::palette().color(QPalette::Base).lightness() < 128;
    m_keywordFormat = {};
    m_keywordFormat.setForeground(dark ? QColor(0xc3, 0x9b, 0xff) : QColor(0x6f, 0x42, 0xc1));
    m_keywordFormat.setFontWeight(QFont::Bold);
    m_stringFormat = {};
    m_stringFormat.setForeground(dark ? QColor(0x9e, 0xcb, 0x7a) : QColor(0x22, 0x86, 0x3a));
    m_commentFormat = {};
    m_commentFormat.setForeground(dark ? QColor(0x8b, 0x94, 0x9e) : QColor(0x6a, 0x73, 0x7d));
    m_commentFormat.setFontItalic(true);
    m_numberFormat = {};
    m_numberFormat.setForeground(dark ? QColor(0xf0, 0xa3, 0x5e) : QColor(0xb3, 0x59, 0x00));
    m_preprocessorFormat = {};
    m_preprocessorFormat.setForeground(dark ? QColor(0x79, 0xb8, 0xff) : QColor(0x00, 0x5c, 0xc5));
    rehighlight();
}

CodeHighlighter::Syntax CodeHighlighter::syntaxFor(const QString &language)
{
    using Maker = Syntax (*)(const QString &);
    static const QHash<QString, Maker> makers{
        {QStringLiteral("python"), &CodeHighlighter::pythonSyntax},
        {QStringLiteral("javascript"), &CodeHighlighter::scriptSyntax},
        {QStringLiteral("typescript"), &CodeHighlighter::scriptSyntax},
        {QStringLiteral("bash"), &CodeHighlighter::bashSyntax},
        {QStringLiteral("c"), &CodeHighlighter::cSyntax},
        {QStringLiteral("cpp"), &CodeHighlighter::cppSyntax},
        {QStringLiteral("go"), &CodeHighlighter::goSyntax},
        {QStringLiteral("java"), &CodeHighlighter::javaSyntax},
        {QStringLiteral("ruby"), &CodeHighlighter::rubySyntax},
        {QStringLiteral("r"), &CodeHighlighter::rSyntax},
        {QStringLiteral("rust"), &CodeHighlighter::rustSyntax},
    };
    const Maker make = makers.value(language);
    return make ? make(language) : Syntax();
}

CodeHighlighter::Syntax CodeHighlighter::pythonSyntax(const QString &)
{
    Syntax s;
    s.keywords =
        words({"False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
               "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
               "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
               "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
               "while",   "with",     "yield",    "match",  "case", "self"});
    s.hashComments = true;
    s.tripleQuotes = true;
    s.annotations = true;
    return s;
}

CodeHighlighter::Syntax CodeHighlighter::scriptSyntax(const QString &language)
{
    Syntax s;
    s.keywords =
        words({"async",    "await",      "break",   "case",   "catch",    "class", "const",
               "continue", "debugger",   "default", "delete", "do",       "else",  "export",
               "extends",  "false",      "finally", "for",    "function", "if",    "import",
               "in",       "instanceof", "let",     "new",    "null",     "of",    "return",
               "static",   "super",      "switch",  "this",   "throw",    "true",  "try",
               "typeof",   "undefined",  "var",     "void",   "while",    "with",  "yield"});
    if (language.startsWith(u't')) {
        s.keywords.unite(
            words({"abstract",   "any",    "as",        "boolean",   "declare", "enum",
                   "implements", "infer",  "interface", "is",        "keyof",   "namespace",
                   "never",      "number", "private",   "protected", "public",  "readonly",
                   "satisfies",  "string", "type",      "unknown"}));
        s.annotations = true;
    }
    s.slashComments = true;
    s.backtickStrings = true;
    s.backtickEscapes = true;
    return s;
}

CodeHighlighter::Syntax CodeHighlighter::bashSyntax(const QString &)
{
    Syntax s;
    s.keywords = words({"if",     "then",     "else",    "elif",  "fi",    "case",     "esac",
                        "for",    "while",    "until",   "do",    "done",  "in",       "function",
                        "select", "time",     "return",  "exit",  "break", "continue", "local",
                        "export", "readonly", "declare", "unset", "shift", "source",   "trap",
                        "eval",   "exec",     "set",     "true",  "false"});
    s.hashComments = true;
    s.hashAfterSpaceOnly = true;
    return s;
}

CodeHighlighter::Syntax CodeHighlighter::cSyntax(const QString &)
{
    Syntax s;
    s.keywords = cKeywords();
    s.slashComments = true;
    s.quoteIsChar = true;
    s.preprocessor = true;
    return s;
}

CodeHighlighter::Syntax CodeHighlighter::cppSyntax(const QString &)
{
    Syntax s;
    s.keywords = cKeywords();
    s.keywords.unite(words({"alignas",
                            "alignof",
                            "and",
                            "asm",
                            "catch",
                            "char8_t",
                            "char16_t",
                            "char32_t",
                            "class",
                            "co_await",
                            "co_return",
                            "co_yield",
                            "concept",
                            "consteval",
                            "constexpr",
                            "constinit",
                            "const_cast",
                            "decltype",
                            "delete",
                            "dynamic_cast",
                            "explicit",
                            "export",
                            "final",
                            "friend",
                            "mutable",
                            "namespace",
                            "new",
                            "noexcept",
                            "not",
                            "nullptr",
                            "operator",
                            "or",
                            "override",
                            "private",
                            "protected",
                            "public",
                            "reinterpret_cast",
                            "requires",
                            "static_assert",
                            "static_cast",
                            "template",
                            "this",
                            "thread_local",
                            "throw",
                            "try",
                            "typeid",
                            "typename",
                            "using",
                            "virtual",
                            "wchar_t",
                            "xor",
                            "std"}));
    s.slashComments = true;
    s.quoteIsChar = true;
    s.preprocessor = true;
    return s;
}

CodeHighlighter::Syntax CodeHighlighter::goSyntax(const QString &)
{
    Syntax s;
    s.keywords = words(
        {"break",       "case",    "chan",  "const",  "continue", "default", "defer",   "else",
         "fallthrough", "for",     "func",  "go",     "goto",     "if",      "import",  "interface",
         "map",         "package", "range", "return", "select",   "struct",  "switch",  "type",
         "var",         "true",    "false", "nil",    "iota",     "bool",    "byte",    "error",
         "float32",     "float64", "int",   "int8",   "int16",    "int32",   "int64",   "rune",
         "string",      "uint",    "uint8", "uint16", "uint32",   "uint64",  "uintptr", "any"});
    s.slashComments = true;
    s.quoteIsChar = true;
    s.backtickStrings = true;
    return s;
}

CodeHighlighter::Syntax CodeHighlighter::javaSyntax(const QString &)
{
    Syntax s;
    s.keywords = words(
        {"abstract", "assert", "boolean",    "break",     "byte",       "case",      "catch",
         "char",     "class",  "const",      "continue",  "default",    "do",        "double",
         "else",     "enum",   "extends",    "final",     "finally",    "float",     "for",
         "goto",     "if",     "implements", "import",    "instanceof", "int",       "interface",
         "long",     "native", "new",        "package",   "private",    "protected", "public",
         "return",   "short",  "static",     "strictfp",  "super",      "switch",    "synchronized",
         "this",     "throw",  "throws",     "transient", "try",        "void",      "volatile",
         "while",    "var",    "record",     "sealed",    "permits",    "yield",     "true",
         "false",    "null"});
    s.slashComments = true;
    s.quoteIsChar = true;
    s.annotations = true;
    return s;
}

CodeHighlighter::Syntax CodeHighlighter::rubySyntax(const QString &)
{
    Syntax s;
    s.keywords = words(
        {"BEGIN", "END",     "alias", "and",    "begin", "break", "case",    "class",
         "def",   "defined", "do",    "else",   "elsif", "end",   "ensure",  "false",
         "for",   "if",      "in",    "module", "next",  "nil",   "not",     "or",
         "redo",  "rescue",  "retry", "return", "self",  "super", "then",    "true",
         "undef", "unless",  "until", "when",   "while", "yield", "require", "require_relative"});
    s.hashComments = true;
    return s;
}

CodeHighlighter::Syntax CodeHighlighter::rSyntax(const QString &)
{
    Syntax s;
    s.keywords = words({"if",      "else",    "repeat", "while",       "function", "for",
                        "in",      "next",    "break",  "TRUE",        "FALSE",    "NULL",
                        "Inf",     "NaN",     "NA",     "NA_integer_", "NA_real_", "NA_character_",
                        "library", "require", "return"});
    s.hashComments = true;
    s.dotInIdentifiers = true;
    return s;
}

CodeHighlighter::Syntax CodeHighlighter::rustSyntax(const QString &)
{
    Syntax s;
    s.keywords = words({"as",   "async",  "await",  "break", "const",  "continue", "crate", "dyn",
                        "else", "enum",   "extern", "false", "fn",     "for",      "if",    "impl",
                        "in",   "let",    "loop",   "match", "mod",    "move",     "mut",   "pub",
                        "ref",  "return", "self",   "Self",  "static", "struct",   "super", "trait",
                        "true", "type",   "unsafe", "use",   "where",  "while",    "i8",    "i16",
                        "i32",  "i64",    "i128",   "isize", "u8",     "u16",      "u32",   "u64",
                        "u128", "usize",  "f32",    "f64",   "bool",   "char",     "str"});
    s.slashComments = true;
    s.quoteIsChar = true;
    return s;
}

bool CodeHighlighter::isIdentifierChar(QChar c) const
{
    return c.isLetterOrNumber() || c == u'_' || (m_syntax.dotInIdentifiers && c == u'.');
}

void CodeHighlighter::highlightBlock(const QString &text)
{
    setCurrentBlockState(Normal);
    if (!m_enabled)
        return;
    const int n = int(text.size());
    int i = 0;
    const int previous = previousBlockState();
    if (previous > Normal) {
        i = closeMultiLine(text, 0, 0, BlockState(previous));
        if (currentBlockState() != Normal)
            return;
    }
    // Each scanner formats the construct that starts at `i` and says where scanning goes on, or
    // -1 when none of its constructs starts there. Their order matters: a comment or directive
    // is looked for before a string, a string before a word.
    while (i < n) {
        int next = scanComment(text, i);
        if (next < 0)
            next = scanLiteral(text, i);
        if (next < 0)
            next = scanWord(text, i);
        i = next < 0 ? i + 1 : next;
    }
}

int CodeHighlighter::scanComment(const QString &text, int i)
{
    const int n = int(text.size());
    const QChar c = text.at(i);
    const QChar next = i + 1 < n ? text.at(i + 1) : QChar();
    if (m_syntax.slashComments && c == u'/' && next == u'/') {
        setFormat(i, n - i, m_commentFormat);
        return n;
    }
    if (m_syntax.slashComments && c == u'/' && next == u'*')
        return closeMultiLine(text, i, i + 2, InBlockComment);
    if (m_syntax.hashComments && c == u'#') {
        const QChar before = i > 0 ? text.at(i - 1) : QChar(u' ');
        if (!m_syntax.hashAfterSpaceOnly || before.isSpace() || before == u';' || before == u'(') {
            setFormat(i, n - i, m_commentFormat);
            return n;
        }
    }
    if (m_syntax.preprocessor && c == u'#' && text.left(i).trimmed().isEmpty()) {
        int j = i + 1;
        while (j < n && text.at(j).isSpace())
            ++j;
        while (j < n && isIdentifierChar(text.at(j)))
            ++j;
        setFormat(i, j - i, m_preprocessorFormat);
        return j;
    }
    if (m_syntax.annotations && c == u'@' && (next.isLetter() || next == u'_')) {
        int j = i + 1;
        while (j < n && (isIdentifierChar(text.at(j)) || text.at(j) == u'.'))
            ++j;
        setFormat(i, j - i, m_preprocessorFormat);
        return j;
    }
    return -1;
}

int CodeHighlighter::scanLiteral(const QString &text, int i)
{
    const QChar c = text.at(i);
    if (m_syntax.tripleQuotes && (c == u'"' || c == u'\'') &&
        QStringView(text).mid(i, 3) == QString(3, c))
        return closeMultiLine(text, i, i + 3, c == u'"' ? InTripleDouble : InTripleSingle);
    if (c == u'"' || (c == u'\'' && !m_syntax.quoteIsChar)) {
        const int end = scanString(text, i, c);
        setFormat(i, end - i, m_stringFormat);
        return end;
    }
    if (c == u'\'') {
        // A character literal, or in Rust a lifetime ('a), which is left plain.
        const int end = scanCharLiteral(text, i);
        if (end > i)
            setFormat(i, end - i, m_stringFormat);
        return end > i ? end : i + 1;
    }
    if (m_syntax.backtickStrings && c == u'`')
        return closeMultiLine(text, i, i + 1, InBacktick);
    if (c.isDigit() && (i == 0 || !isIdentifierChar(text.at(i - 1)))) {
        const int end = scanNumber(text, i);
        setFormat(i, end - i, m_numberFormat);
        return end;
    }
    return -1;
}

int CodeHighlighter::scanWord(const QString &text, int i)
{
    const QChar c = text.at(i);
    if (!c.isLetter() && c != u'_')
        return -1;
    const int n = int(text.size());
    int j = i + 1;
    while (j < n && isIdentifierChar(text.at(j)))
        ++j;
    // A word glued to a "." in R (is.na) or a "$" in bash ($if) is a name, not a keyword.
    if (m_syntax.keywords.contains(text.mid(i, j - i)) && (i == 0 || text.at(i - 1) != u'$'))
        setFormat(i, j - i, m_keywordFormat);
    return j;
}

int CodeHighlighter::closeMultiLine(const QString &text, int start, int searchFrom,
                                    BlockState state)
{
    const int n = int(text.size());
    const bool escapes = state == InTripleDouble || state == InTripleSingle ||
                         (state == InBacktick && m_syntax.backtickEscapes);
    int end = -1;
    for (int j = searchFrom; j < n; ++j) {
        const QChar c = text.at(j);
        if (escapes && c == u'\\') {
            ++j;
            continue;
        }
        if (state == InBlockComment && c == u'*' && j + 1 < n && text.at(j + 1) == u'/')
            end = j + 2;
        else if (state == InTripleDouble && QStringView(text).mid(j, 3) == u"\"\"\"")
            end = j + 3;
        else if (state == InTripleSingle && QStringView(text).mid(j, 3) == u"'''")
            end = j + 3;
        else if (state == InBacktick && c == u'`')
            end = j + 1;
        if (end >= 0)
            break;
    }
    if (end < 0) {
        setCurrentBlockState(state);
        end = n;
    }
    setFormat(start, end - start, state == InBlockComment ? m_commentFormat : m_stringFormat);
    return end;
}

int CodeHighlighter::scanString(const QString &text, int start, QChar quote) const
{
    const int n = int(text.size());
    // Bash single quotes are fully literal: a backslash there escapes nothing.
    const bool escapes = !(m_syntax.hashAfterSpaceOnly && quote == u'\'');
    for (int j = start + 1; j < n; ++j) {
        if (escapes && text.at(j) == u'\\')
            ++j;
        else if (text.at(j) == quote)
            return j + 1;
    }
    return n; // unterminated: the rest of the line
}

int CodeHighlighter::scanCharLiteral(const QString &text, int start) const
{
    const int n = int(text.size());
    int j = start + 1;
    if (j < n && text.at(j) == u'\\') {
        // '\n', '\x41', '\u{1F600}': an escape, then anything up to a close quote nearby.
        j += 2;
        while (j < n && text.at(j) != u'\'' && j - start < 12)
            ++j;
        return j < n && text.at(j) == u'\'' ? j + 1 : start;
    }
    if (j < n && text.at(j).isHighSurrogate())
        ++j;
    return j + 1 < n && text.at(j) != u'\'' && text.at(j + 1) == u'\'' ? j + 2 : start;
}

int CodeHighlighter::scanNumber(const QString &text, int start) const
{
    const int n = int(text.size());
    const QString prefix = text.mid(start, 2).toLower();
    const bool radix = prefix == u"0x" || prefix == u"0b" || prefix == u"0o";
    int j = start;
    while (j < n) {
        const QChar c = text.at(j);
        const QChar next = j + 1 < n ? text.at(j + 1) : QChar();
        if (!radix && (c == u'e' || c == u'E') && (next == u'+' || next == u'-'))
            j += 2; // 1e-5
        else if (c.isLetterOrNumber() || c == u'_')
            ++j; // digits, 0x1F, suffixes (10L, 1.5f, 10u32)
        else if (c == u'.' && !radix && next.isDigit())
            ++j; // 1.5, but not 1..10 or 1.method()
        else if (c == u'\'' && m_syntax.quoteIsChar && next.isDigit())
            ++j; // C++14 digit separators: 1'000'000
        else
            break;
    }
    return j;
}
