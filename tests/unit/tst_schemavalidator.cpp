#include "schemavalidator.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

namespace {
// Any JSON value from text, scalars included.
QJsonValue json(const QByteArray &text)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson("[" + text + "]", &error);
    if (error.error != QJsonParseError::NoError || doc.array().size() != 1)
        qFatal("bad JSON in the test itself: %s", text.constData());
    return doc.array().at(0);
}

QByteArray propertySchema(const QByteArray &name, const QByteArray &schema)
{
    return R"({"type":"object","properties":{")" + name + R"(":)" + schema + "}}";
}
} // namespace

class tst_SchemaValidator : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void typeMatrix_data();
    void typeMatrix();
    void validate_data();
    void validate();
    void topLevelPathIsUsedAsPrefix();
};

void tst_SchemaValidator::typeMatrix_data()
{
    QTest::addColumn<QString>("type");
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<QString>("expected");

    // Each sample with the JSON Schema type it is an instance of.
    const QList<std::pair<QByteArray, QString>> samples = {
        {R"("text")", "string"}, {"7", "integer"},         {"1.5", "number"}, {"false", "boolean"},
        {"[1]", "array"},        {R"({"a":1})", "object"}, {"null", "null"}};
    const QStringList types = {"string", "integer", "number", "boolean", "array", "object", "null"};
    for (const QString &type : types) {
        for (const auto &[value, actual] : samples) {
            // An integer is also a number; nothing else is more than its own type.
            const bool ok = actual == type || (type == "number" && actual == "integer");
            const QString expected =
                ok ? QString()
                   : QStringLiteral("argument 'v' must be %1, got %2").arg(type, actual);
            QTest::addRow("%s vs %s", qPrintable(type), qPrintable(actual))
                << type << value << expected;
        }
    }
}

void tst_SchemaValidator::typeMatrix()
{
    QFETCH(QString, type);
    QFETCH(QByteArray, value);
    QFETCH(QString, expected);

    const QJsonObject schema =
        json(propertySchema("v", R"({"type":")" + type.toUtf8() + R"("})")).toObject();
    QCOMPARE(SchemaValidator::validate(schema, json(R"({"v":)" + value + "}")), expected);
}

void tst_SchemaValidator::validate_data()
{
    QTest::addColumn<QByteArray>("schema");
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<QString>("expected");

    const QByteArray code =
        R"({"type":"object","properties":{"code":{"type":"string"},"language":{"type":"string"}},)"
        R"("required":["code"],"additionalProperties":false})";
    QTest::newRow("conforming") << code << QByteArray(R"json({"code":"print(1)"})json")
                                << QString();
    QTest::newRow("conforming with optional")
        << code << QByteArray(R"({"code":"x","language":"python"})") << QString();
    QTest::newRow("required missing")
        << code << QByteArray("{}") << QStringLiteral("argument 'code' is required");
    QTest::newRow("required missing, other present")
        << code << QByteArray(R"({"language":"python"})")
        << QStringLiteral("argument 'code' is required");
    QTest::newRow("required wrong type")
        << code << QByteArray(R"({"code":42})")
        << QStringLiteral("argument 'code' must be string, got integer");
    QTest::newRow("required null") << code << QByteArray(R"({"code":null})")
                                   << QStringLiteral("argument 'code' must be string, got null");
    QTest::newRow("unknown key") << code << QByteArray(R"({"code":"x","cmd":"rm -rf /"})")
                                 << QStringLiteral(
                                        "unknown argument 'cmd'; expected: code, language");
    QTest::newRow("arguments an array")
        << code << QByteArray("[]") << QStringLiteral("arguments must be object, got array");
    QTest::newRow("arguments a string") << code << QByteArray(R"json("print(1)")json")
                                        << QStringLiteral("arguments must be object, got string");
    QTest::newRow("arguments null")
        << code << QByteArray("null") << QStringLiteral("arguments must be object, got null");

    const QByteArray open = R"({"type":"object","properties":{"a":{"type":"string"}}})";
    QTest::newRow("additional properties allowed by default")
        << open << QByteArray(R"({"a":"x","b":1})") << QString();
    QTest::newRow("additional properties true")
        << QByteArray(R"({"type":"object","properties":{},"additionalProperties":true})")
        << QByteArray(R"({"b":1})") << QString();

    const QByteArray integer = propertySchema("n", R"({"type":"integer"})");
    QTest::newRow("integer given 1.5")
        << integer << QByteArray(R"({"n":1.5})")
        << QStringLiteral("argument 'n' must be integer, got number");
    QTest::newRow("integer given 2.0") << integer << QByteArray(R"({"n":2.0})") << QString();
    QTest::newRow("integer given -3") << integer << QByteArray(R"({"n":-3})") << QString();
    QTest::newRow("integer given \"3\"")
        << integer << QByteArray(R"({"n":"3"})")
        << QStringLiteral("argument 'n' must be integer, got string");

    const QByteArray nullable = propertySchema("v", R"({"type":["integer","null"]})");
    QTest::newRow("type array, first") << nullable << QByteArray(R"({"v":3})") << QString();
    QTest::newRow("type array, second") << nullable << QByteArray(R"({"v":null})") << QString();
    QTest::newRow("type array, neither")
        << nullable << QByteArray(R"({"v":"3"})")
        << QStringLiteral("argument 'v' must be integer or null, got string");
    QTest::newRow("type array, fraction")
        << nullable << QByteArray(R"({"v":0.5})")
        << QStringLiteral("argument 'v' must be integer or null, got number");

    const QByteArray language =
        propertySchema("language", R"({"type":"string","enum":["python","javascript"]})");
    QTest::newRow("enum member") << language << QByteArray(R"({"language":"javascript"})")
                                 << QString();
    QTest::newRow("enum non-member")
        << language << QByteArray(R"({"language":"cobol"})")
        << QStringLiteral("argument 'language' must be one of: python, javascript");
    QTest::newRow("enum is case-sensitive")
        << language << QByteArray(R"({"language":"Python"})")
        << QStringLiteral("argument 'language' must be one of: python, javascript");
    QTest::newRow("enum of numbers")
        << propertySchema("level", R"({"enum":[1,2,3]})") << QByteArray(R"({"level":4})")
        << QStringLiteral("argument 'level' must be one of: 1, 2, 3");

    const QByteArray timeout =
        propertySchema("timeout", R"({"type":"integer","minimum":1,"maximum":300})");
    QTest::newRow("at minimum") << timeout << QByteArray(R"({"timeout":1})") << QString();
    QTest::newRow("at maximum") << timeout << QByteArray(R"({"timeout":300})") << QString();
    QTest::newRow("below minimum") << timeout << QByteArray(R"({"timeout":0})")
                                   << QStringLiteral("argument 'timeout' must be at least 1");
    QTest::newRow("negative") << timeout << QByteArray(R"({"timeout":-30})")
                              << QStringLiteral("argument 'timeout' must be at least 1");
    QTest::newRow("above maximum") << timeout << QByteArray(R"({"timeout":301})")
                                   << QStringLiteral("argument 'timeout' must be at most 300");
    QTest::newRow("fractional bound")
        << propertySchema("x", R"({"type":"number","minimum":0.5})") << QByteArray(R"({"x":0.25})")
        << QStringLiteral("argument 'x' must be at least 0.5");

    const QByteArray name = propertySchema("s", R"({"type":"string","minLength":1,"maxLength":3})");
    QTest::newRow("at minLength") << name << QByteArray(R"({"s":"a"})") << QString();
    QTest::newRow("at maxLength") << name << QByteArray(R"({"s":"abc"})") << QString();
    QTest::newRow("below minLength")
        << name << QByteArray(R"({"s":""})")
        << QStringLiteral("argument 's' must not be shorter than 1 characters");
    QTest::newRow("above maxLength")
        << name << QByteArray(R"({"s":"abcd"})")
        << QStringLiteral("argument 's' must not be longer than 3 characters");
    QTest::newRow("maxLength counts characters, not bytes")
        << name << QByteArray(R"({"s":"日本語"})") << QString();
    // JSON Schema measures length in Unicode code points; each emoji here is one.
    QTest::newRow("maxLength counts code points")
        << name << QByteArray(R"({"s":"😀😀😀"})") << QString();

    const QByteArray libraries =
        propertySchema("libraries", R"({"type":"array","items":{"type":"string"}})");
    QTest::newRow("items conforming")
        << libraries << QByteArray(R"({"libraries":["numpy","pandas"]})") << QString();
    QTest::newRow("items empty") << libraries << QByteArray(R"({"libraries":[]})") << QString();
    QTest::newRow("item wrong type")
        << libraries << QByteArray(R"({"libraries":["numpy",2,"x"]})")
        << QStringLiteral("argument 'libraries[1]' must be string, got integer");
    QTest::newRow("array given object")
        << libraries << QByteArray(R"({"libraries":{"0":"numpy"}})")
        << QStringLiteral("argument 'libraries' must be array, got object");

    const QByteArray nested =
        R"({"type":"object","properties":{"outer":{"type":"object","properties":)"
        R"({"inner":{"type":"integer"},"list":{"type":"array","items":{"type":"object",)"
        R"("properties":{"name":{"type":"string"}},"required":["name"]}}},)"
        R"("required":["inner"],"additionalProperties":false}}})";
    QTest::newRow("nested conforming")
        << nested << QByteArray(R"({"outer":{"inner":1,"list":[{"name":"a"}]}})") << QString();
    QTest::newRow("nested wrong type")
        << nested << QByteArray(R"({"outer":{"inner":"1"}})")
        << QStringLiteral("argument 'outer.inner' must be integer, got string");
    QTest::newRow("nested required") << nested << QByteArray(R"({"outer":{}})")
                                     << QStringLiteral("argument 'outer.inner' is required");
    QTest::newRow("nested unknown key")
        << nested << QByteArray(R"({"outer":{"inner":1,"extra":true}})")
        << QStringLiteral("unknown argument 'outer.extra'; expected: inner, list");
    QTest::newRow("object in array in object")
        << nested << QByteArray(R"({"outer":{"inner":1,"list":[{"name":"a"},{}]}})")
        << QStringLiteral("argument 'outer.list[1].name' is required");

    QTest::newRow("empty schema accepts anything")
        << QByteArray("{}") << QByteArray(R"([1,"x",null])") << QString();
}

void tst_SchemaValidator::validate()
{
    QFETCH(QByteArray, schema);
    QFETCH(QByteArray, value);
    QFETCH(QString, expected);

    QCOMPARE(SchemaValidator::validate(json(schema).toObject(), json(value)), expected);
}

void tst_SchemaValidator::topLevelPathIsUsedAsPrefix()
{
    const QJsonObject schema = json(R"({"type":"integer","maximum":5})").toObject();
    QCOMPARE(SchemaValidator::validate(schema, 6, QStringLiteral("timeout")),
             QStringLiteral("argument 'timeout' must be at most 5"));
    QCOMPARE(SchemaValidator::validate(schema, 6), QStringLiteral("arguments must be at most 5"));
}

QTEST_GUILESS_MAIN(tst_SchemaValidator)
#include "tst_schemavalidator.moc"
