#include "workspace.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

namespace {
// What a pattern matches: anything, directories only (a trailing '/'), or anything but a
// directory (the defaults that name credential files, so that a folder "id_tools" stays in).
enum class Target
{
    Any,
    Directories,
    NonDirectories
};

struct Rule
{
    QStringView glob;
    bool anchored = false; // from the folder's root, component by component
    Target target = Target::Any;
};

struct DefaultPattern
{
    const char16_t *pattern;
    Target target;
};

// The credentials that stay out of every sandbox (Workspace::defaultExclusions).
constexpr DefaultPattern kDefaults[] = {
    {u".env*", Target::NonDirectories},   {u"*.pem", Target::NonDirectories},
    {u"*.key", Target::NonDirectories},   {u"id_*", Target::NonDirectories},
    {u".netrc", Target::NonDirectories},  {u".npmrc", Target::NonDirectories},
    {u".pypirc", Target::NonDirectories}, {u".aws", Target::Directories},
    {u".ssh", Target::Directories},       {u".gnupg", Target::Directories},
};

Rule ruleOf(QStringView pattern)
{
    Rule rule;
    if (pattern.endsWith(u'/')) {
        rule.target = Target::Directories;
        pattern.chop(1);
    }
    if (pattern.startsWith(u'/')) {
        rule.anchored = true;
        pattern = pattern.mid(1);
    }
    rule.anchored = rule.anchored || pattern.contains(u'/');
    rule.glob = pattern;
    return rule;
}

bool sameChar(QChar a, QChar b)
{
    return a == b || a.toCaseFolded() == b.toCaseFolded();
}

// '*' and '?' within one name (neither pattern nor name holds a '/'); ignoring case. The usual
// single-backtrack algorithm: linear apart from the retries of the last '*'.
bool globMatch(QStringView glob, QStringView name)
{
    qsizetype g = 0, n = 0, star = -1, resume = 0;
    while (n < name.size()) {
        if (g < glob.size() && glob[g] == u'*') {
            star = g++;
            resume = n;
        } else if (g < glob.size() && (glob[g] == u'?' || sameChar(glob[g], name[n]))) {
            ++g;
            ++n;
        } else if (star >= 0) {
            g = star + 1;
            n = ++resume;
        } else {
            return false;
        }
    }
    while (g < glob.size() && glob[g] == u'*')
        ++g;
    return g == glob.size();
}

// `path` ('/'-separated, from the root) against an anchored glob: as many components, each
// matching its own.
bool anchoredMatch(QStringView glob, QStringView path)
{
    const auto globParts = glob.split(u'/');
    const auto pathParts = path.split(u'/');
    if (globParts.size() != pathParts.size())
        return false;
    for (qsizetype i = 0; i < globParts.size(); ++i) {
        if (!globMatch(globParts.at(i), pathParts.at(i)))
            return false;
    }
    return true;
}

bool matches(const Rule &rule, QStringView path, QStringView name, bool isDir)
{
    if (rule.glob.isEmpty() || (rule.target == Target::Directories && !isDir) ||
        (rule.target == Target::NonDirectories && isDir))
        return false;
    return rule.anchored ? anchoredMatch(rule.glob, path) : globMatch(rule.glob, name);
}

bool anyMatches(const QStringList &patterns, QStringView path, QStringView name, bool isDir)
{
    for (const QString &pattern : patterns) {
        if (matches(ruleOf(QStringView(pattern).trimmed()), path, name, isDir))
            return true;
    }
    return false;
}

bool defaultMatches(QStringView path, QStringView name, bool isDir)
{
    for (const DefaultPattern &d : kDefaults) {
        Rule rule;
        rule.glob = QStringView(d.pattern);
        rule.target = d.target;
        if (matches(rule, path, name, isDir))
            return true;
    }
    return false;
}

} // namespace

bool Workspace::isValidName(const QString &name)
{
    // Anchored as a whole: '$' alone would let a name end with a newline.
    static const QRegularExpression valid(
        QRegularExpression::anchoredPattern(QStringLiteral("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")));
    return valid.match(name).hasMatch();
}

std::optional<Workspace> Workspace::parse(const QString &argument, QString *error)
{
    const auto fail = [&](const QString &why) {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const qsizetype equals = argument.indexOf(u'=');
    if (equals < 0)
        return fail(
            QStringLiteral("workspace '%1' is not NAME=PATH (or NAME=PATH:rw[:ask|:always])")
                .arg(argument.left(200)));
    Workspace ws;
    ws.name = argument.left(equals);
    if (!isValidName(ws.name))
        return fail(QStringLiteral("workspace name '%1' is not valid: a letter or digit, then up "
                                   "to 63 letters, digits, '_', '.' or '-'")
                        .arg(ws.name.left(100)));
    QString path = argument.mid(equals + 1);
    // ":rw:ask", ":rw:always", ":rw:never": what happens to a copy-on-write run's changes.
    std::optional<Apply> apply;
    const qsizetype colon = path.lastIndexOf(u':');
    if (colon >= 0 && (apply = parseApply(path.mid(colon + 1))))
        path.truncate(colon);
    if (path.endsWith(QStringLiteral(":rw")) || path.endsWith(QStringLiteral(":ro"))) {
        ws.mode = path.endsWith(QStringLiteral(":rw")) ? Mode::CopyOnWrite : Mode::ReadOnly;
        path.chop(3);
    }
    if (apply && ws.mode != Mode::CopyOnWrite)
        return fail(QStringLiteral("workspace '%1': :%2 is for a copy-on-write workspace "
                                   "(NAME=PATH:rw:%2)")
                        .arg(ws.name, applyName(*apply)));
    ws.apply = apply.value_or(Apply::Never);
    if (path.isEmpty())
        return fail(QStringLiteral("workspace '%1' names no folder").arg(ws.name));
    const QFileInfo info(QDir::current().absoluteFilePath(expandHome(path)));
    ws.path = info.canonicalFilePath();
    if (ws.path.isEmpty())
        return fail(QStringLiteral("workspace '%1': the folder %2 does not exist")
                        .arg(ws.name, info.absoluteFilePath()));
    if (!info.isDir())
        return fail(QStringLiteral("workspace '%1': %2 is not a folder").arg(ws.name, ws.path));
    if (QDir(ws.path).isRoot())
        return fail(QStringLiteral("workspace '%1': the file system's root cannot be a workspace")
                        .arg(ws.name));
    return ws;
}

QString Workspace::expandHome(const QString &path)
{
    if (path == u"~")
        return QDir::homePath();
    if (path.startsWith(QStringLiteral("~/")))
        return QDir::homePath() + path.mid(1);
    return path;
}

QStringList Workspace::defaultExclusions()
{
    QStringList patterns;
    for (const DefaultPattern &d : kDefaults)
        patterns.append(QString::fromUtf16(d.pattern) +
                        (d.target == Target::Directories ? QStringLiteral("/") : QString()));
    return patterns;
}

bool Workspace::excludes(const QString &relativePath, bool isDir) const
{
    // Each directory on the way down, then the path itself: a directory kept out keeps out all
    // it holds, whatever the patterns say of the names inside.
    qsizetype start = 0;
    while (start < relativePath.size()) {
        qsizetype slash = relativePath.indexOf(u'/', start);
        const bool last = slash < 0;
        if (last)
            slash = relativePath.size();
        const QStringView path = QStringView(relativePath).left(slash);
        const QStringView name = QStringView(relativePath).mid(start, slash - start);
        const bool dir = !last || isDir;
        if (!name.isEmpty() &&
            (defaultMatches(path, name, dir) || anyMatches(exclude, path, name, dir)) &&
            !anyMatches(include, path, name, dir))
            return true;
        start = slash + 1;
    }
    return false;
}

QString Workspace::modeName(Mode mode)
{
    return mode == Mode::CopyOnWrite ? QStringLiteral("copy-on-write")
                                     : QStringLiteral("read-only");
}

QString Workspace::applyName(Apply apply)
{
    switch (apply) {
    case Apply::Ask:
        return QStringLiteral("ask");
    case Apply::Always:
        return QStringLiteral("always");
    case Apply::Never:
        break;
    }
    return QStringLiteral("never");
}

std::optional<Workspace::Apply> Workspace::parseApply(const QString &text)
{
    const QString t = text.trimmed().toLower();
    for (Apply apply : {Apply::Never, Apply::Ask, Apply::Always}) {
        if (t == applyName(apply))
            return apply;
    }
    return std::nullopt;
}
