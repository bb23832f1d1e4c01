#include "egresslist.h"

#include "hostpattern.h"

#include <QFile>

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
