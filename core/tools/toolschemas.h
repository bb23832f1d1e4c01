#pragma once

#include "toolregistry.h"

#include <QHash>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

// The tools' names, titles, descriptions and JSON schemas are data: core/tools/schemas/*.json,
// compiled in. A file names what depends on the server's configuration as "${name}": a string
// that is only a placeholder becomes the value (of any JSON type; an object member whose value
// is missing is left out, e.g. session_id without sessions), and a placeholder inside a longer
// string takes a string value's text.
class ToolSchemas
{
public:
    using Values = QHash<QString, QJsonValue>;

    // schemas/<name>.json as it is, or an empty object (logged) if the build lacks it.
    static QJsonObject file(const QString &name);
    // A file with its placeholders filled in.
    static QJsonObject fragment(const QString &name, const Values &values = {});
    // The tool described by schemas/<name>.json (annotations from its "readOnly"); the caller
    // adds the handler.
    static ToolDefinition tool(const QString &name, const Values &values = {});
};
