#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

// Checks tool arguments against the subset of JSON Schema our tools declare (type, properties,
// required, additionalProperties, items, enum, minimum, maximum, minLength, maxLength). The
// message names the offending field so a model can correct its call.
class SchemaValidator
{
public:
    // Returns an empty string when `value` conforms.
    static QString validate(const QJsonObject &schema, const QJsonValue &value,
                            const QString &path = QString());

private:
    static QString typeName(const QJsonValue &value);
    static bool hasType(const QJsonValue &value, const QString &type);
    // What the value itself must be: type, enum, bounds, length. `where` names it.
    static QString checkValue(const QJsonObject &schema, const QJsonValue &value,
                              const QString &where);
    // What an array's items and an object's properties must be.
    static QString checkChildren(const QJsonObject &schema, const QJsonValue &value,
                                 const QString &path);
};
