#include "resourceregistry.h"

#include <QRegularExpression>

namespace {
// The optional descriptive fields resources and templates share.
void insertDescriptive(QJsonObject &o, const QString &title, const QString &description,
                       const QString &mimeType)
{
    if (!title.isEmpty())
        o.insert(QStringLiteral("title"), title);
    if (!description.isEmpty())
        o.insert(QStringLiteral("description"), description);
    if (!mimeType.isEmpty())
        o.insert(QStringLiteral("mimeType"), mimeType);
}
} // namespace

QJsonObject ResourceDefinition::toJson() const
{
    QJsonObject o{{QStringLiteral("uri"), uri}, {QStringLiteral("name"), name}};
    insertDescriptive(o, title, description, mimeType);
    if (!ui.isEmpty())
        o.insert(QStringLiteral("_meta"), QJsonObject{{QStringLiteral("ui"), ui}});
    return o;
}

QJsonObject ResourceDefinition::contents() const
{
    QJsonObject o{{QStringLiteral("uri"), uri}};
    if (readBlob)
        o.insert(QStringLiteral("blob"), QString::fromLatin1(readBlob().toBase64()));
    else
        o.insert(QStringLiteral("text"), read ? read() : QString());
    if (!mimeType.isEmpty())
        o.insert(QStringLiteral("mimeType"), mimeType);
    if (!ui.isEmpty())
        o.insert(QStringLiteral("_meta"), QJsonObject{{QStringLiteral("ui"), ui}});
    return o;
}

QJsonObject ResourceTemplateDefinition::toJson() const
{
    QJsonObject o{{QStringLiteral("uriTemplate"), uriTemplate}, {QStringLiteral("name"), name}};
    insertDescriptive(o, title, description, mimeType);
    return o;
}

bool ResourceTemplateDefinition::match(const QString &uri, QHash<QString, QString> *variables) const
{
    QString pattern = QStringLiteral("^");
    QStringList names;
    static const QRegularExpression var(QStringLiteral("\\{([A-Za-z0-9_]+)\\}"));
    qsizetype last = 0;
    for (auto it = var.globalMatch(uriTemplate); it.hasNext();) {
        const auto m = it.next();
        pattern += QRegularExpression::escape(uriTemplate.mid(last, m.capturedStart() - last));
        pattern += QStringLiteral("([^/]+)");
        names.append(m.captured(1));
        last = m.capturedEnd();
    }
    pattern += QRegularExpression::escape(uriTemplate.mid(last)) + u'$';
    const auto m = QRegularExpression(pattern).match(uri);
    if (!m.hasMatch())
        return false;
    if (variables)
        for (int i = 0; i < names.size(); ++i)
            variables->insert(names[i], m.captured(i + 1));
    return true;
}

const ResourceDefinition *ResourceRegistry::find(const QString &uri) const
{
    for (const ResourceDefinition &r : m_resources)
        if (r.uri == uri)
            return &r;
    return nullptr;
}

QJsonObject ResourceRegistry::read(const QString &uri, bool ui) const
{
    if (const ResourceDefinition *r = find(uri))
        return r->forUi && !ui ? QJsonObject() : r->contents();
    for (const ResourceTemplateDefinition &t : m_templates) {
        QHash<QString, QString> vars;
        if (t.match(uri, &vars) && t.read)
            return t.read(uri, vars);
    }
    return {};
}
