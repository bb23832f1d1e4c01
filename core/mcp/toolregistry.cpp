#include "toolregistry.h"

#include <QRegularExpression>

QJsonObject ToolDefinition::property(const QString &type, const QString &description)
{
    return {{QStringLiteral("type"), type}, {QStringLiteral("description"), description}};
}

QJsonObject ToolDefinition::localAnnotations(const QString &title, bool readOnly)
{
    return {{QStringLiteral("title"), title},
            {QStringLiteral("readOnlyHint"), readOnly},
            {QStringLiteral("destructiveHint"), false},
            {QStringLiteral("idempotentHint"), readOnly},
            {QStringLiteral("openWorldHint"), false}};
}

QJsonObject ToolDefinition::toJson() const
{
    QJsonObject o{{QStringLiteral("name"), name},
                  {QStringLiteral("description"), description},
                  {QStringLiteral("inputSchema"), inputSchema}};
    if (!title.isEmpty())
        o.insert(QStringLiteral("title"), title);
    if (!outputSchema.isEmpty())
        o.insert(QStringLiteral("outputSchema"), outputSchema);
    if (!annotations.isEmpty())
        o.insert(QStringLiteral("annotations"), annotations);
    if (!taskSupport.isEmpty()) // 2025-11-25: how a client learns it may ask for a task
        o.insert(QStringLiteral("execution"),
                 QJsonObject{{QStringLiteral("taskSupport"), taskSupport}});
    return o;
}

QJsonObject ToolDefinition::toJsonForUi() const
{
    QJsonObject o = toJson();
    if (ui.isEmpty())
        return o;
    QJsonObject meta{{QStringLiteral("ui"), ui}};
    if (ui.contains(u"resourceUri"))
        meta.insert(QStringLiteral("ui/resourceUri"), ui.value(u"resourceUri"));
    o.insert(QStringLiteral("_meta"), meta);
    return o;
}

bool ToolRegistry::isValidName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9_.-]{1,128}$"));
    return re.match(name).hasMatch();
}

bool ToolRegistry::add(const ToolDefinition &tool)
{
    if (!isValidName(tool.name) || find(tool.name) || !tool.handler)
        return false;
    m_tools.append(tool);
    return true;
}

const ToolDefinition *ToolRegistry::find(const QString &name) const
{
    for (const ToolDefinition &t : m_tools)
        if (t.name == name)
            return &t;
    return nullptr;
}
