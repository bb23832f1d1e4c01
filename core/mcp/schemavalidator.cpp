#include "schemavalidator.h"

#include <QJsonArray>
#include <QStringList>
#include <cmath>

QString SchemaValidator::typeName(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return QStringLiteral("boolean");
    case QJsonValue::Double: {
        const double d = value.toDouble();
        return d == std::floor(d) ? QStringLiteral("integer") : QStringLiteral("number");
    }
    case QJsonValue::String:
        return QStringLiteral("string");
    case QJsonValue::Array:
        return QStringLiteral("array");
    case QJsonValue::Object:
        return QStringLiteral("object");
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("nothing");
}

bool SchemaValidator::hasType(const QJsonValue &value, const QString &type)
{
    const QString actual = typeName(value);
    return actual == type || (type == u"number" && actual == u"integer");
}

QString SchemaValidator::validate(const QJsonObject &schema, const QJsonValue &value,
                                  const QString &path)
{
    const QString where =
        path.isEmpty() ? QStringLiteral("arguments") : QStringLiteral("argument '%1'").arg(path);
    const QString err = checkValue(schema, value, where);
    return err.isEmpty() ? checkChildren(schema, value, path) : err;
}

QString SchemaValidator::checkValue(const QJsonObject &schema, const QJsonValue &value,
                                    const QString &where)
{
    const QJsonValue typeSpec = schema.value(u"type");
    if (!typeSpec.isUndefined()) {
        QStringList types;
        if (typeSpec.isArray())
            for (const QJsonValue &t : typeSpec.toArray())
                types.append(t.toString());
        else
            types.append(typeSpec.toString());
        bool ok = false;
        for (const QString &t : types)
            ok = ok || hasType(value, t);
        if (!ok)
            return QStringLiteral("%1 must be %2, got %3")
                .arg(where, types.join(QStringLiteral(" or ")), typeName(value));
    }
    if (schema.contains(u"enum")) {
        const QJsonArray options = schema.value(u"enum").toArray();
        if (!options.contains(value)) {
            QStringList names;
            for (const QJsonValue &o : options)
                names.append(o.toVariant().toString());
            return QStringLiteral("%1 must be one of: %2")
                .arg(where, names.join(QStringLiteral(", ")));
        }
    }
    if (value.isDouble()) {
        const double d = value.toDouble();
        if (schema.contains(u"minimum") && d < schema.value(u"minimum").toDouble())
            return QStringLiteral("%1 must be at least %2")
                .arg(where)
                .arg(schema.value(u"minimum").toDouble());
        if (schema.contains(u"maximum") && d > schema.value(u"maximum").toDouble())
            return QStringLiteral("%1 must be at most %2")
                .arg(where)
                .arg(schema.value(u"maximum").toDouble());
    }
    if (value.isString()) {
        // JSON Schema counts characters (code points), not UTF-16 units.
        const qsizetype len = value.toString().toUcs4().size();
        if (schema.contains(u"minLength") && len < schema.value(u"minLength").toInteger())
            return QStringLiteral("%1 must not be shorter than %2 characters")
                .arg(where)
                .arg(schema.value(u"minLength").toInteger());
        if (schema.contains(u"maxLength") && len > schema.value(u"maxLength").toInteger())
            return QStringLiteral("%1 must not be longer than %2 characters")
                .arg(where)
                .arg(schema.value(u"maxLength").toInteger());
    }
    return {};
}

QString SchemaValidator::checkChildren(const QJsonObject &schema, const QJsonValue &value,
                                       const QString &path)
{
    if (value.isArray() && schema.contains(u"items")) {
        const QJsonObject items = schema.value(u"items").toObject();
        const QJsonArray arr = value.toArray();
        for (qsizetype i = 0; i < arr.size(); ++i) {
            const QString err =
                validate(items, arr.at(i), QStringLiteral("%1[%2]").arg(path).arg(i));
            if (!err.isEmpty())
                return err;
        }
    }
    if (value.isObject()) {
        const QJsonObject obj = value.toObject();
        const QJsonObject props = schema.value(u"properties").toObject();
        const auto child = [&](const QString &key) {
            return path.isEmpty() ? key : path + u'.' + key;
        };
        for (const QJsonValue &r : schema.value(u"required").toArray())
            if (!obj.contains(r.toString()))
                return QStringLiteral("argument '%1' is required").arg(child(r.toString()));
        const bool closed = schema.value(u"additionalProperties").isBool() &&
                            !schema.value(u"additionalProperties").toBool();
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            if (props.contains(it.key())) {
                const QString err =
                    validate(props.value(it.key()).toObject(), it.value(), child(it.key()));
                if (!err.isEmpty())
                    return err;
            } else if (closed) {
                return QStringLiteral("unknown argument '%1'; expected: %2")
                    .arg(child(it.key()), props.keys().join(QStringLiteral(", ")));
            }
        }
    }
    return {};
}
