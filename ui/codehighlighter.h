#pragma once

#include <QSet>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

// Keywords, strings, comments and numbers for the sandbox's languages. A hand-written scanner
// rather than a list of regular expressions, so a "#" or "//" inside a string is not a comment
// and a quote inside a comment starts no string. Constructs that span lines (block comments,
// Python triple quotes, JavaScript template strings, Go raw strings) carry over in the block
// state.
class CodeHighlighter : public QSyntaxHighlighter
{
    Q_OBJECT
public:
    explicit CodeHighlighter(QTextDocument *document);

    // python, javascript, typescript, bash, c, cpp, go, java, ruby, r, rust, by name or by an
    // alias of LanguageRegistry (py, js, ts, sh, c++, golang, rb, rs, ...); anything else is
    // shown plain.
    void setLanguage(const QString &language);
    QString language() const { return m_language; }

    // The colours follow the application palette (light or dark); call after it changes.
    void updateColors();

protected:
    void highlightBlock(const QString &text) override;

private:
    enum BlockState
    {
        Normal = 0,
        InBlockComment = 1,
        InTripleDouble = 2,
        InTripleSingle = 3,
        InBacktick = 4
    };

    struct Syntax
    {
        QSet<QString> keywords;
        bool hashComments = false;       // # to the end of the line
        bool slashComments = false;      // // and /* */
        bool backtickStrings = false;    // `…`, may span lines
        bool backtickEscapes = false;    // JavaScript's may hold \`; Go's raw ones may not
        bool tripleQuotes = false;       // Python
        bool quoteIsChar = false;        // '…' is one character (C family, Go, Rust)
        bool preprocessor = false;       // #include and friends
        bool annotations = false;        // @decorator / @Annotation
        bool dotInIdentifiers = false;   // R: is.na
        bool hashAfterSpaceOnly = false; // bash: ${#x} and a#b are not comments
    };

    static Syntax syntaxFor(const QString &language);
    // One per language family (syntaxFor's table).
    static Syntax pythonSyntax(const QString &language);
    static Syntax scriptSyntax(const QString &language);
    static Syntax bashSyntax(const QString &language);
    static Syntax cSyntax(const QString &language);
    static Syntax cppSyntax(const QString &language);
    static Syntax goSyntax(const QString &language);
    static Syntax javaSyntax(const QString &language);
    static Syntax rubySyntax(const QString &language);
    static Syntax rSyntax(const QString &language);
    static Syntax rustSyntax(const QString &language);
    // highlightBlock's scanners, tried in this order at each position: each formats what starts
    // at `i` and returns where scanning goes on, or -1 when nothing of its kind starts there.
    int scanComment(const QString &text, int i); // comments, directives, annotations
    int scanLiteral(const QString &text, int i); // strings, characters, numbers
    int scanWord(const QString &text, int i);    // keywords (other words are left plain)
    int scanString(const QString &text, int start, QChar quote) const;
    int scanCharLiteral(const QString &text, int start) const;
    int scanNumber(const QString &text, int start) const;
    // Formats from `start` up to the end of the construct `state` names, looking for its end
    // from `searchFrom`; unclosed, it runs to the end of the line and into the next block.
    // Returns where scanning goes on.
    int closeMultiLine(const QString &text, int start, int searchFrom, BlockState state);
    bool isIdentifierChar(QChar c) const;

    QString m_language;
    Syntax m_syntax;
    bool m_enabled = false;
    QTextCharFormat m_keywordFormat;
    QTextCharFormat m_stringFormat;
    QTextCharFormat m_commentFormat;
    QTextCharFormat m_numberFormat;
    QTextCharFormat m_preprocessorFormat;
};
