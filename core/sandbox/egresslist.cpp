#include "egresslist.h"

#include "hostpattern.h"

#include <QFile>
#include <algorithm>

namespace {
std::optional<HostPattern> patternOf(const QString &entry)
{
    const QByteArray text = entry.toUtf8();
    return HostPattern::parse(std::string_view(text.constData(), size_t(text.size())));
}

// Whether `wide` lets through every host and port `narrow` does, for one port of narrow's.
bool coversPort(const HostPattern &wide, const HostPattern &narrow, int port)
{
    if (narrow.isWildcard()) {
        // "*.a.example.com" lies within "*.example.com": its suffix is a name below wide's
        // (or the same suffix). A name pattern never covers a wildcard.
        if (!wide.isWildcard())
            return false;
        const std::vector<int> &ports = wide.ports();
        return std::find(ports.begin(), ports.end(), port) != ports.end() &&
               (narrow.host() == wide.host() || wide.matches(narrow.host(), port));
    }
    // A name, or an address: one host, which `wide` matches (an address only its own literal;
    // HostPattern never matches an address by a wildcard, since literals are not names).
    if (narrow.isAddress() != wide.isAddress())
        return false;
    return wide.matches(narrow.host(), port);
}

bool covered(const HostPattern &narrow, const QList<HostPattern> &allowed)
{
    for (int port : narrow.ports()) {
        const bool any = std::any_of(allowed.begin(), allowed.end(), [&](const HostPattern &w) {
            return coversPort(w, narrow, port);
        });
        if (!any)
            return false;
    }
    return true;
}

QList<HostPattern> patternsOf(const QStringList &entries)
{
    QList<HostPattern> out;
    for (const QString &entry : entries)
        if (const std::optional<HostPattern> p = patternOf(entry))
            out.append(*p);
    return out;
}
} // namespace

QStringList EgressList::parse(const QStringList &entries, QString *error)
{
    QStringList out;
    for (const QString &entry : entries) {
        const QByteArray text = entry.trimmed().toUtf8();
        std::string why;
        const std::optional<HostPattern> pattern =
            HostPattern::parse(std::string_view(text.constData(), size_t(text.size())), &why);
        if (!pattern) {
            // `why` names the entry.
            *error = QStringLiteral("not a host pattern: %1 (write host, *.suffix or an IP "
                                    "address, each with an optional :port)")
                         .arg(QString::fromStdString(why));
            return {};
        }
        const QString normal = QString::fromStdString(pattern->text());
        if (!out.contains(normal))
            out.append(normal);
    }
    return out;
}

QStringList EgressList::parseEach(const QStringList &entries, QStringList *rejected)
{
    QStringList out;
    for (const QString &entry : entries) {
        if (entry.trimmed().isEmpty())
            continue;
        QString error;
        const QStringList one = parse({entry}, &error);
        if (one.isEmpty())
            rejected->append(entry.trimmed());
        else if (!out.contains(one.first()))
            out.append(one.first());
    }
    return out;
}

QStringList EgressList::readFile(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        *error = QStringLiteral("cannot read %1: %2").arg(path, file.errorString());
        return {};
    }
    QStringList entries;
    int line = 0;
    while (!file.atEnd()) {
        ++line;
        const QString text = QString::fromUtf8(file.readLine()).trimmed();
        if (text.isEmpty() || text.startsWith(u'#'))
            continue;
        entries.append(text);
    }
    QStringList out = parse(entries, error);
    if (!error->isEmpty())
        *error = QStringLiteral("%1: %2").arg(path, *error);
    return out;
}

QString EgressList::uncovered(const QStringList &asked, const QStringList &allowed)
{
    const QList<HostPattern> wide = patternsOf(allowed);
    for (const QString &entry : asked) {
        const std::optional<HostPattern> narrow = patternOf(entry);
        if (!narrow || !covered(*narrow, wide))
            return entry;
    }
    return QString();
}

QStringList EgressList::within(const QStringList &asked, const QStringList &allowed)
{
    const QList<HostPattern> wide = patternsOf(allowed);
    QStringList out;
    for (const QString &entry : asked) {
        const std::optional<HostPattern> narrow = patternOf(entry);
        if (narrow && covered(*narrow, wide))
            out.append(entry);
    }
    return out;
}
