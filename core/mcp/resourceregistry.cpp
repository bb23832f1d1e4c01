#include "resourceregistry.h"

QJsonObject ResourceDefinition::toJson() const
{
    QJsonObject o{{QStringLiteral("uri"), uri}, {QStringLiteral("name"), name}};
    if (!title.isEmpty())
        o.insert(QStringLiteral("title"), title);
    if (!description.isEmpty())
        o.insert(QStringLiteral("description"), description);
    if (!mimeType.isEmpty())
        o.insert(QStringLiteral("mimeType"), mimeType);
    return o;
}

QJsonObject ResourceDefinition::contents() const
{
    QJsonObject o{{QStringLiteral("uri"), uri},
                  {QStringLiteral("text"), read ? read() : QString()}};
    if (!mimeType.isEmpty())
        o.insert(QStringLiteral("mimeType"), mimeType);
    return o;
}

const ResourceDefinition *ResourceRegistry::find(const QString &uri) const
{
    for (const ResourceDefinition &r : m_resources)
        if (r.uri == uri)
            return &r;
    return nullptr;
}
