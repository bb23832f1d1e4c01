#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <functional>

struct ResourceDefinition
{
    QString uri;
    QString name;
    QString title;
    QString description;
    QString mimeType;
    // Produces the current text; resources here are small and computed on demand.
    std::function<QString()> read;

    QJsonObject toJson() const;
    QJsonObject contents() const; // {uri, mimeType, text}
};

class ResourceRegistry
{
public:
    void add(const ResourceDefinition &resource) { m_resources.append(resource); }
    const ResourceDefinition *find(const QString &uri) const;
    const QList<ResourceDefinition> &all() const { return m_resources; }

private:
    QList<ResourceDefinition> m_resources;
};
