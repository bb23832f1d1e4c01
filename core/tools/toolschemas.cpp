#include "toolschemas.h"

#include "toolslog.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

namespace {
QJsonValue fill(const QJsonValue &value, const ToolSchemas::Values &values)
{
    if (value.isString()) {
        QString text = value.toString();
        if (text.startsWith(u"${") && text.endsWith(u'}') && text.indexOf(u"${", 2) < 0)
            return values.value(text.mid(2, text.size() - 3)); // Undefined when not given
        for (auto it = values.cbegin(); it != values.cend(); ++it)
            if (it.value().isString())
                text.replace(QStringLiteral("${%1}").arg(it.key()), it.value().toString());
        return text;
    }
    if (value.isArray()) {
        QJsonArray out;
        for (const QJsonValue item : value.toArray()) {
            const QJsonValue filled = fill(item, values);
            if (!filled.isUndefined())
                out.append(filled);
        }
        return out;
    }
    if (value.isObject()) {
        QJsonObject out;
        const QJsonObject in = value.toObject();
        for (auto it = in.begin(); it != in.end(); ++it) {
            const QJsonValue filled = fill(it.value(), values);
            if (!filled.isUndefined())
                out.insert(it.key(), filled);
        }
        return out;
    }
    return value;
}
} // namespace

QJsonObject ToolSchemas::file(const QString &name)
{
    QFile f(QStringLiteral(":/code-sandbox/tools/%1.json").arg(name));
    if (!f.open(QIODevice::ReadOnly)) {
        qCCritical(lcTools) << "tool schema" << name << "is missing from the build";
        return {};
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &error);
    if (error.error != QJsonParseError::NoError)
        qCCritical(lcTools) << "tool schema" << name << "is not valid JSON:" << error.errorString();
    return doc.object();
}

QJsonObject ToolSchemas::fragment(const QString &name, const Values &values)
{
    return fill(file(name), values).toObject();
}

ToolDefinition ToolSchemas::tool(const QString &name, const Values &values)
{
    const QJsonObject o = fragment(name, values);
    ToolDefinition t;
    t.name = o.value(u"name").toString();
    t.title = o.value(u"title").toString();
    t.description = o.value(u"description").toString();
    t.inputSchema = o.value(u"inputSchema").toObject();
    t.outputSchema = o.value(u"outputSchema").toObject();
    t.annotations = ToolDefinition::localAnnotations(t.title, o.value(u"readOnly").toBool());
    return t;
}
