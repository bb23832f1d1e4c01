#pragma once

#include <QHash>
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
    // For binary resources instead of read: the bytes, sent base64-encoded as "blob".
    std::function<QByteArray()> readBlob;
    // MCP Apps: a view (ui://) is listed and read only by clients that declare the extension;
    // `ui` is its _meta.ui (csp, prefersBorder), on the listing and on the contents.
    bool forUi = false;
    QJsonObject ui;

    QJsonObject toJson() const;
    QJsonObject contents() const; // {uri, mimeType, text | blob}
};

// RFC 6570 level-1 templates ("test://template/{id}/data"): each {name} matches one path
// segment's worth of characters other than '/'.
struct ResourceTemplateDefinition
{
    QString uriTemplate;
    QString name;
    QString title;
    QString description;
    QString mimeType;
    // Returns the contents entry for a URI the template matched, given its variables.
    std::function<QJsonObject(const QString &uri, const QHash<QString, QString> &variables)> read;

    QJsonObject toJson() const;
    bool match(const QString &uri, QHash<QString, QString> *variables) const;
};

class ResourceRegistry
{
public:
    void add(const ResourceDefinition &resource) { m_resources.append(resource); }
    void addTemplate(const ResourceTemplateDefinition &t) { m_templates.append(t); }
    const ResourceDefinition *find(const QString &uri) const;
    const QList<ResourceDefinition> &all() const { return m_resources; }
    const QList<ResourceTemplateDefinition> &templates() const { return m_templates; }
    // The contents of a fixed resource or of the first template that matches; empty if none (and
    // for a view, unless `ui`: the client declared the MCP Apps extension).
    QJsonObject read(const QString &uri, bool ui = false) const;
    bool isEmpty() const { return m_resources.isEmpty() && m_templates.isEmpty(); }

private:
    QList<ResourceDefinition> m_resources;
    QList<ResourceTemplateDefinition> m_templates;
};
