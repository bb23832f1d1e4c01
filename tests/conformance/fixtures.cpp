#include "fixtures.h"

#include "mcpserver.h"
#include "modernfixtures.h"
#include "toolcall.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QTimer>

namespace {
// A 1x1 red PNG and a minimal WAV: the smallest payloads the content checks accept.
const QString kPng =
    QStringLiteral("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8D"
                   "whwAFBQIAX8jx0gAAAABJRU5ErkJggg==");
const QString kWav = QStringLiteral("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=");

// The schemas below are long nested literals; JSON text keeps them readable and identical to
// what the suite's documentation shows.
QJsonObject json(const char *text)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray(text), &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("malformed fixture JSON: %s", qPrintable(error.errorString()));
    return doc.object();
}

QJsonObject stringArgumentSchema(const QString &name, const QString &description)
{
    return {{QStringLiteral("type"), QStringLiteral("object")},
            {QStringLiteral("properties"),
             QJsonObject{{name, QJsonObject{{QStringLiteral("type"), QStringLiteral("string")},
                                            {QStringLiteral("description"), description}}}}},
            {QStringLiteral("required"), QJsonArray{name}}};
}

ToolDefinition tool(const QString &name, const QString &description,
                    const std::function<void(ToolCall *)> &handler)
{
    ToolDefinition t;
    t.name = name;
    t.description = description;
    t.handler = handler;
    return t;
}

QJsonObject userMessage(const QJsonObject &content)
{
    return {{QStringLiteral("role"), QStringLiteral("user")}, {QStringLiteral("content"), content}};
}
} // namespace

void Fixtures::registerAll(McpServer &server)
{
    addContentTools(server);
    addStreamingTools(server);
    addClientRequestTools(server);
    addResources(server);
    addPrompts(server);
    ModernFixtures::registerAll(server);
    addCompletions(server);
}

QJsonObject Fixtures::noArguments()
{
    return {{QStringLiteral("type"), QStringLiteral("object")},
            {QStringLiteral("properties"), QJsonObject()}};
}

QJsonObject Fixtures::result(const QJsonArray &content)
{
    return {{QStringLiteral("content"), content}};
}

QJsonObject Fixtures::text(const QString &text)
{
    return ToolCall::textContent(text);
}

QJsonObject Fixtures::image()
{
    return {{QStringLiteral("type"), QStringLiteral("image")},
            {QStringLiteral("data"), kPng},
            {QStringLiteral("mimeType"), QStringLiteral("image/png")}};
}

QJsonObject Fixtures::embedded(const QString &uri, const QString &mimeType, const QString &text)
{
    return {{QStringLiteral("type"), QStringLiteral("resource")},
            {QStringLiteral("resource"), QJsonObject{{QStringLiteral("uri"), uri},
                                                     {QStringLiteral("mimeType"), mimeType},
                                                     {QStringLiteral("text"), text}}}};
}

void Fixtures::addContentTools(McpServer &server)
{
    const auto fixed = [&server](const QString &name, const QString &description,
                                 const QJsonObject &answer) {
        ToolDefinition t =
            tool(name, description, [answer](ToolCall *call) { call->finish(answer); });
        t.inputSchema = noArguments();
        server.tools().add(t);
    };
    fixed(QStringLiteral("test_simple_text"), QStringLiteral("Tests simple text content response"),
          result({text(QStringLiteral("This is a simple text response for testing."))}));
    fixed(QStringLiteral("test_image_content"), QStringLiteral("Tests image content response"),
          result({image()}));
    fixed(QStringLiteral("test_audio_content"), QStringLiteral("Tests audio content response"),
          result({QJsonObject{{QStringLiteral("type"), QStringLiteral("audio")},
                              {QStringLiteral("data"), kWav},
                              {QStringLiteral("mimeType"), QStringLiteral("audio/wav")}}}));
    fixed(QStringLiteral("test_embedded_resource"),
          QStringLiteral("Tests embedded resource content response"),
          result({embedded(QStringLiteral("test://embedded-resource"), QStringLiteral("text/plain"),
                           QStringLiteral("This is an embedded resource content."))}));
    fixed(QStringLiteral("test_multiple_content_types"),
          QStringLiteral("Tests response with multiple content types (text, image, resource)"),
          result({text(QStringLiteral("Multiple content types test:")), image(),
                  embedded(QStringLiteral("test://mixed-content-resource"),
                           QStringLiteral("application/json"),
                           QStringLiteral("{\"test\":\"data\",\"value\":123}"))}));

    ToolDefinition error =
        tool(QStringLiteral("test_error_handling"), QStringLiteral("Tests error response handling"),
             [](ToolCall *call) {
                 call->finishWithError(
                     QStringLiteral("This tool intentionally returns an error for testing"));
             });
    error.inputSchema = noArguments();
    server.tools().add(error);

    // SEP-1613: the listing must carry $schema, $defs and additionalProperties untouched.
    ToolDefinition schema = tool(
        QStringLiteral("json_schema_2020_12_tool"),
        QStringLiteral("Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"),
        [](ToolCall *call) {
            call->finish(result(
                {text(QStringLiteral("JSON Schema 2020-12 tool called with: %1")
                          .arg(QString::fromUtf8(
                              QJsonDocument(call->arguments()).toJson(QJsonDocument::Compact))))}));
        });
    schema.inputSchema = json(R"json({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": false
    })json");
    server.tools().add(schema);
}

void Fixtures::emitThenFinish(ToolCall *call, int steps, int delayMs,
                              const std::function<void(ToolCall *, int)> &notify,
                              const QJsonObject &answer)
{
    // The call is each timer's context: a cancelled call is deleted and its timers with it.
    notify(call, 0);
    for (int i = 1; i < steps; ++i)
        QTimer::singleShot(i * delayMs, call, [call, i, steps, notify, answer] {
            notify(call, i);
            if (i + 1 == steps)
                call->finish(answer);
        });
    if (steps <= 1)
        call->finish(answer);
}

void Fixtures::addStreamingTools(McpServer &server)
{
    ToolDefinition logging = tool(
        QStringLiteral("test_tool_with_logging"),
        QStringLiteral("Tests tool that emits log messages during execution"), [](ToolCall *call) {
            static const QStringList lines = {QStringLiteral("Tool execution started"),
                                              QStringLiteral("Tool processing data"),
                                              QStringLiteral("Tool execution completed")};
            emitThenFinish(
                call, int(lines.size()), 50,
                [](ToolCall *c, int i) {
                    c->log(QStringLiteral("info"), QStringLiteral("conformance-test-server"),
                           lines[i]);
                },
                result({text(QStringLiteral("Tool with logging executed successfully"))}));
        });
    logging.inputSchema = noArguments();
    server.tools().add(logging);

    ToolDefinition progress =
        tool(QStringLiteral("test_tool_with_progress"),
             QStringLiteral("Tests tool that reports progress notifications"), [](ToolCall *call) {
                 emitThenFinish(
                     call, 3, 50,
                     [](ToolCall *c, int i) {
                         c->progress(QStringLiteral("Completed step %1 of 3").arg(i + 1), 3);
                     },
                     result({text(QStringLiteral("Tool with progress executed successfully"))}));
             });
    progress.inputSchema = noArguments();
    server.tools().add(progress);

    // SEP-1699 asks the server to close the call's event stream before answering, so that the
    // client resumes with Last-Event-ID; the library offers no way to close it, so the answer
    // comes on the open stream after the same short pause, which the suite reports as INFO.
    ToolDefinition reconnection =
        tool(QStringLiteral("test_reconnection"),
             QStringLiteral("Tests SSE stream disconnection and client reconnection (SEP-1699)"),
             [](ToolCall *call) {
                 QTimer::singleShot(100, call, [call] {
                     call->finish(result({text(
                         QStringLiteral("Reconnection test completed successfully. If you received "
                                        "this, the client properly reconnected after stream "
                                        "closure."))}));
                 });
             });
    reconnection.inputSchema = noArguments();
    server.tools().add(reconnection);
}

void Fixtures::elicit(ToolCall *call, const QString &message, const QJsonObject &requestedSchema,
                      const QString &prefix)
{
    if (!call->clientCapabilities().contains(u"elicitation")) {
        call->finishWithError(QStringLiteral("The client does not support elicitation"));
        return;
    }
    const QPointer<ToolCall> guard(call);
    call->request(QStringLiteral("elicitation/create"),
                  {{QStringLiteral("message"), message},
                   {QStringLiteral("requestedSchema"), requestedSchema}},
                  [guard, prefix](const QJsonObject &answer, const QJsonObject &error) {
                      if (!guard)
                          return;
                      if (!error.isEmpty()) {
                          guard->finishWithError(QStringLiteral("Elicitation failed: %1")
                                                     .arg(error.value(u"message").toString()));
                          return;
                      }
                      const QJsonObject content = answer.value(u"content").toObject();
                      guard->finish(
                          result({text(QStringLiteral("%1: action=%2, content=%3")
                                           .arg(prefix, answer.value(u"action").toString(),
                                                QString::fromUtf8(QJsonDocument(content).toJson(
                                                    QJsonDocument::Compact))))}));
                  });
}

void Fixtures::addClientRequestTools(McpServer &server)
{
    ToolDefinition sampling = tool(
        QStringLiteral("test_sampling"),
        QStringLiteral("Tests server-initiated sampling (LLM completion request)"),
        [](ToolCall *call) {
            if (!call->clientCapabilities().contains(u"sampling")) {
                call->finishWithError(QStringLiteral("The client does not support sampling"));
                return;
            }
            const QJsonObject params{
                {QStringLiteral("messages"),
                 QJsonArray{userMessage(text(call->arguments().value(u"prompt").toString()))}},
                {QStringLiteral("maxTokens"), 100}};
            const QPointer<ToolCall> guard(call);
            call->request(
                QStringLiteral("sampling/createMessage"), params,
                [guard](const QJsonObject &answer, const QJsonObject &error) {
                    if (!guard)
                        return;
                    if (!error.isEmpty()) {
                        guard->finishWithError(QStringLiteral("Sampling failed: %1")
                                                   .arg(error.value(u"message").toString()));
                        return;
                    }
                    const QString reply = answer.value(u"content")
                                              .toObject()
                                              .value(u"text")
                                              .toString(QStringLiteral("No response"));
                    guard->finish(result({text(QStringLiteral("LLM response: %1").arg(reply))}));
                });
        });
    sampling.inputSchema = stringArgumentSchema(QStringLiteral("prompt"),
                                                QStringLiteral("The prompt to send to the LLM"));
    server.tools().add(sampling);

    ToolDefinition elicitation =
        tool(QStringLiteral("test_elicitation"),
             QStringLiteral("Tests server-initiated elicitation (user input request)"),
             [](ToolCall *call) {
                 elicit(call, call->arguments().value(u"message").toString(), json(R"json({
                       "type": "object",
                       "properties": {
                           "username": {"type": "string", "description": "User's response"},
                           "email": {"type": "string", "description": "User's email address"}
                       },
                       "required": ["username", "email"]
                   })json"),
                        QStringLiteral("User response"));
             });
    elicitation.inputSchema = stringArgumentSchema(QStringLiteral("message"),
                                                   QStringLiteral("The message to show the user"));
    server.tools().add(elicitation);

    ToolDefinition defaults = tool(
        QStringLiteral("test_elicitation_sep1034_defaults"),
        QStringLiteral("Tests elicitation with default values per SEP-1034"), [](ToolCall *call) {
            elicit(call, QStringLiteral("Please review and update the form fields with defaults"),
                   json(R"json({
                       "type": "object",
                       "properties": {
                           "name": {"type": "string", "description": "User name",
                                    "default": "John Doe"},
                           "age": {"type": "integer", "description": "User age", "default": 30},
                           "score": {"type": "number", "description": "User score",
                                     "default": 95.5},
                           "status": {"type": "string", "description": "User status",
                                      "enum": ["active", "inactive", "pending"],
                                      "default": "active"},
                           "verified": {"type": "boolean", "description": "Verification status",
                                        "default": true}
                       },
                       "required": []
                   })json"),
                   QStringLiteral("Elicitation completed"));
        });
    defaults.inputSchema = noArguments();
    server.tools().add(defaults);

    ToolDefinition enums = tool(
        QStringLiteral("test_elicitation_sep1330_enums"),
        QStringLiteral("Tests elicitation with enum schema improvements per SEP-1330"),
        [](ToolCall *call) {
            elicit(call, QStringLiteral("Please select options from the enum fields"), json(R"json({
                       "type": "object",
                       "properties": {
                           "untitledSingle": {
                               "type": "string", "description": "Select one option",
                               "enum": ["option1", "option2", "option3"]
                           },
                           "titledSingle": {
                               "type": "string", "description": "Select one option with titles",
                               "oneOf": [
                                   {"const": "value1", "title": "First Option"},
                                   {"const": "value2", "title": "Second Option"},
                                   {"const": "value3", "title": "Third Option"}
                               ]
                           },
                           "legacyEnum": {
                               "type": "string", "description": "Select one option (legacy)",
                               "enum": ["opt1", "opt2", "opt3"],
                               "enumNames": ["Option One", "Option Two", "Option Three"]
                           },
                           "untitledMulti": {
                               "type": "array", "description": "Select multiple options",
                               "minItems": 1, "maxItems": 3,
                               "items": {"type": "string",
                                         "enum": ["option1", "option2", "option3"]}
                           },
                           "titledMulti": {
        "type" : "array",
                 "description" : "Select multiple options with titles",
                                 "minItems" : 1,
                                 "maxItems" : 3,
                                 "items":
        {
            "anyOf" : [
                {"const" : "value1", "title" : "First Choice"},
                {"const" : "value2", "title" : "Second Choice"},
                {"const" : "value3", "title" : "Third Choice"}
            ]
        }
                           }
}
, "required" : []
})json"),
                   QStringLiteral("Elicitation completed"));
        });
    enums.inputSchema = noArguments();
    server.tools().add(enums);
}

void Fixtures::addResources(McpServer &server)
{
    ResourceDefinition staticText;
    staticText.uri = QStringLiteral("test://static-text");
    staticText.name = QStringLiteral("static-text");
    staticText.title = QStringLiteral("Static Text Resource");
    staticText.description = QStringLiteral("A static text resource for testing");
    staticText.mimeType = QStringLiteral("text/plain");
    staticText.read = [] {
        return QStringLiteral("This is the content of the static text resource.");
    };
    server.resources().add(staticText);

    ResourceDefinition staticBinary;
    staticBinary.uri = QStringLiteral("test://static-binary");
    staticBinary.name = QStringLiteral("static-binary");
    staticBinary.title = QStringLiteral("Static Binary Resource");
    staticBinary.description = QStringLiteral("A static binary resource (image) for testing");
    staticBinary.mimeType = QStringLiteral("image/png");
    staticBinary.readBlob = [] { return QByteArray::fromBase64(kPng.toLatin1()); };
    server.resources().add(staticBinary);

    ResourceDefinition watched;
    watched.uri = QStringLiteral("test://watched-resource");
    watched.name = QStringLiteral("watched-resource");
    watched.title = QStringLiteral("Watched Resource");
    watched.description = QStringLiteral("A resource clients can subscribe to");
    watched.mimeType = QStringLiteral("text/plain");
    watched.read = [] { return QStringLiteral("Watched resource content"); };
    server.resources().add(watched);
    server.setResourceSubscriptions(true);

    ResourceTemplateDefinition templ;
    templ.uriTemplate = QStringLiteral("test://template/{id}/data");
    templ.name = QStringLiteral("template");
    templ.title = QStringLiteral("Resource Template");
    templ.description = QStringLiteral("A resource template with parameter substitution");
    templ.mimeType = QStringLiteral("application/json");
    templ.read = [](const QString &uri, const QHash<QString, QString> &vars) {
        const QString id = vars.value(QStringLiteral("id"));
        const QJsonObject data{{QStringLiteral("id"), id},
                               {QStringLiteral("templateTest"), true},
                               {QStringLiteral("data"), QStringLiteral("Data for ID: %1").arg(id)}};
        return QJsonObject{{QStringLiteral("uri"), uri},
                           {QStringLiteral("mimeType"), QStringLiteral("application/json")},
                           {QStringLiteral("text"),
                            QString::fromUtf8(QJsonDocument(data).toJson(QJsonDocument::Compact))}};
    };
    server.resources().addTemplate(templ);
}

void Fixtures::addPrompts(McpServer &server)
{
    const auto argument = [](const QString &name, const QString &description) {
        return QJsonObject{{QStringLiteral("name"), name},
                           {QStringLiteral("description"), description},
                           {QStringLiteral("required"), true}};
    };
    const auto messages = [](const QJsonArray &list) {
        return QJsonObject{{QStringLiteral("messages"), list}};
    };

    PromptDefinition simple;
    simple.name = QStringLiteral("test_simple_prompt");
    simple.title = QStringLiteral("Simple Test Prompt");
    simple.description = QStringLiteral("A simple prompt without arguments");
    simple.get = [messages](const QJsonObject &) {
        return messages(
            {userMessage(text(QStringLiteral("This is a simple prompt for testing.")))});
    };
    server.prompts().add(simple);

    PromptDefinition withArgs;
    withArgs.name = QStringLiteral("test_prompt_with_arguments");
    withArgs.title = QStringLiteral("Prompt With Arguments");
    withArgs.description = QStringLiteral("A prompt with required arguments");
    withArgs.arguments = {argument(QStringLiteral("arg1"), QStringLiteral("First test argument")),
                          argument(QStringLiteral("arg2"), QStringLiteral("Second test argument"))};
    withArgs.get = [messages](const QJsonObject &args) {
        return messages({userMessage(
            text(QStringLiteral("Prompt with arguments: arg1='%1', arg2='%2'")
                     .arg(args.value(u"arg1").toString(), args.value(u"arg2").toString())))});
    };
    server.prompts().add(withArgs);

    PromptDefinition withResource;
    withResource.name = QStringLiteral("test_prompt_with_embedded_resource");
    withResource.title = QStringLiteral("Prompt With Embedded Resource");
    withResource.description = QStringLiteral("A prompt that includes an embedded resource");
    withResource.arguments = {
        argument(QStringLiteral("resourceUri"), QStringLiteral("URI of the resource to embed"))};
    withResource.get = [messages](const QJsonObject &args) {
        return messages(
            {userMessage(embedded(args.value(u"resourceUri").toString(),
                                  QStringLiteral("text/plain"),
                                  QStringLiteral("Embedded resource content for testing."))),
             userMessage(text(QStringLiteral("Please process the embedded resource above.")))});
    };
    server.prompts().add(withResource);

    PromptDefinition withImage;
    withImage.name = QStringLiteral("test_prompt_with_image");
    withImage.title = QStringLiteral("Prompt With Image");
    withImage.description = QStringLiteral("A prompt that includes image content");
    withImage.get = [messages](const QJsonObject &) {
        return messages({userMessage(image()),
                         userMessage(text(QStringLiteral("Please analyze the image above.")))});
    };
    server.prompts().add(withImage);
}

void Fixtures::addCompletions(McpServer &server)
{
    // Offers the values of each known argument that start with what the user typed.
    server.setCompletionHandler([](const QJsonObject &ref, const QJsonObject &argument,
                                   const QJsonObject &) {
        static const QHash<QString, QStringList> candidates = {
            {QStringLiteral("test_prompt_with_arguments/arg1"),
             {QStringLiteral("test"), QStringLiteral("testValue1"), QStringLiteral("paris"),
              QStringLiteral("park")}},
            {QStringLiteral("test_prompt_with_arguments/arg2"),
             {QStringLiteral("testValue2"), QStringLiteral("world")}},
            {QStringLiteral("test://template/{id}/data/id"),
             {QStringLiteral("1"), QStringLiteral("123"), QStringLiteral("42")}}};
        const QString owner = ref.value(u"type").toString() == u"ref/prompt"
                                  ? ref.value(u"name").toString()
                                  : ref.value(u"uri").toString();
        const QString typed = argument.value(u"value").toString();
        QStringList values;
        for (const QString &v : candidates.value(owner + u'/' + argument.value(u"name").toString()))
            if (v.startsWith(typed))
                values.append(v);
        return values;
    });
}
