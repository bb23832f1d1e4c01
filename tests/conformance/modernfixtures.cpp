#include "modernfixtures.h"

#include "mcpserver.h"
#include "toolcall.h"

#include <QByteArray>
#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageAuthenticationCode>
#include <QRandomGenerator>
#include <QTimer>
#include <QUuid>

namespace {
QJsonObject schemaOf(const QString &field, const QString &type)
{
    return {{QStringLiteral("type"), QStringLiteral("object")},
            {QStringLiteral("properties"),
             QJsonObject{{field, QJsonObject{{QStringLiteral("type"), type}}}}},
            {QStringLiteral("required"), QJsonArray{field}}};
}

QJsonObject elicitation(const QString &message, const QString &field,
                        const QString &type = QStringLiteral("string"))
{
    return {{QStringLiteral("method"), QStringLiteral("elicitation/create")},
            {QStringLiteral("params"),
             QJsonObject{{QStringLiteral("message"), message},
                         {QStringLiteral("requestedSchema"), schemaOf(field, type)}}}};
}

QJsonObject sampling(const QString &prompt, int maxTokens)
{
    return {{QStringLiteral("method"), QStringLiteral("sampling/createMessage")},
            {QStringLiteral("params"),
             QJsonObject{{QStringLiteral("messages"),
                          QJsonArray{QJsonObject{
                              {QStringLiteral("role"), QStringLiteral("user")},
                              {QStringLiteral("content"),
                               QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                           {QStringLiteral("text"), prompt}}}}}},
                         {QStringLiteral("maxTokens"), maxTokens}}}};
}

QJsonObject listRoots()
{
    return {{QStringLiteral("method"), QStringLiteral("roots/list")},
            {QStringLiteral("params"), QJsonObject()}};
}

QJsonObject textResult(const QString &text)
{
    return {{QStringLiteral("content"),
             QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                    {QStringLiteral("text"), text}}}}};
}

QJsonObject inputRequired(const QJsonObject &requests, const QString &state = QString())
{
    QJsonObject r{{QStringLiteral("resultType"), QStringLiteral("input_required")},
                  {QStringLiteral("inputRequests"), requests}};
    if (!state.isEmpty())
        r.insert(QStringLiteral("requestState"), state);
    return r;
}

// requestState travels through the client, so it is signed: a key per process.
QByteArray stateKey()
{
    static const QByteArray key = [] {
        quint32 words[8];
        QRandomGenerator::system()->fillRange(words);
        return QByteArray(reinterpret_cast<const char *>(words), sizeof words);
    }();
    return key;
}

QString sign(const QJsonObject &state)
{
    const QByteArray payload =
        QJsonDocument(state)
            .toJson(QJsonDocument::Compact)
            .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
    const QByteArray mac =
        QMessageAuthenticationCode::hash(payload, stateKey(), QCryptographicHash::Sha256)
            .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
    return QString::fromLatin1(payload + '.' + mac);
}

// The verified state, or an empty object when it was altered.
QJsonObject verify(const QString &state)
{
    const QByteArray bytes = state.toLatin1();
    const qsizetype dot = bytes.indexOf('.');
    if (dot < 0)
        return {};
    const QByteArray payload = bytes.left(dot);
    const QByteArray mac =
        QMessageAuthenticationCode::hash(payload, stateKey(), QCryptographicHash::Sha256)
            .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
    if (mac != bytes.mid(dot + 1))
        return {};
    return QJsonDocument::fromJson(
               QByteArray::fromBase64(payload, QByteArray::Base64UrlEncoding |
                                                   QByteArray::OmitTrailingEquals))
        .object();
}

QString nonce()
{
    return QUuid::createUuid().toString(QUuid::WithoutBraces);
}

// An elicitation answer's field, or empty when the answer is not an accepted object.
QString accepted(const QJsonValue &response, const QString &field)
{
    const QJsonObject o = response.toObject();
    return o.value(u"content").toObject().value(field).toVariant().toString();
}

ToolDefinition tool(const QString &name, const QString &description,
                    const std::function<void(ToolCall *)> &handler)
{
    ToolDefinition t;
    t.name = name;
    t.description = description;
    t.inputSchema = QJsonObject{{QStringLiteral("type"), QStringLiteral("object")},
                                {QStringLiteral("properties"), QJsonObject()}};
    t.handler = handler;
    return t;
}

// Every MRTR fixture: refuses the legacy era (it has server-to-client requests instead) and
// malformed inputResponses, then hands the responses and state to `body`.
ToolDefinition mrtr(
    const QString &name, const QString &description,
    const std::function<void(ToolCall *, const QJsonObject &responses, const QString &state)> &body)
{
    return tool(name, description, [body](ToolCall *call) {
        if (!call->isModern()) {
            call->finishWithError(QStringLiteral("this fixture needs revision 2026-07-28"));
            return;
        }
        const QJsonObject params = call->requestParams();
        const QJsonValue responses = params.value(u"inputResponses");
        if (!responses.isUndefined() && !responses.isObject()) {
            call->fail(-32602, QStringLiteral("inputResponses must be an object"));
            return;
        }
        body(call, responses.toObject(), params.value(u"requestState").toString());
    });
}
} // namespace

void ModernFixtures::registerAll(McpServer &server)
{
    server.tools().add(mrtr(
        QStringLiteral("test_input_required_result_elicitation"),
        QStringLiteral("MRTR: returns InputRequiredResult with elicitation"),
        [](ToolCall *call, const QJsonObject &responses, const QString &) {
            const QString name = accepted(responses.value(u"user_name"), QStringLiteral("name"));
            if (!name.isEmpty())
                call->finish(textResult(QStringLiteral("Hello, %1!").arg(name)));
            else
                call->finish(inputRequired(QJsonObject{
                    {QStringLiteral("user_name"),
                     elicitation(QStringLiteral("What is your name?"), QStringLiteral("name"))}}));
        }));
    server.tools().add(
        mrtr(QStringLiteral("test_input_required_result_sampling"),
             QStringLiteral("MRTR: returns InputRequiredResult with sampling"),
             [](ToolCall *call, const QJsonObject &responses, const QString &) {
                 const QJsonObject sample = responses.value(u"sample_request").toObject();
                 if (!sample.isEmpty())
                     call->finish(textResult(
                         QStringLiteral("Sampling result: %1")
                             .arg(sample.value(u"content").toObject().value(u"text").toString())));
                 else
                     call->finish(inputRequired(QJsonObject{
                         {QStringLiteral("sample_request"),
                          sampling(QStringLiteral("What is the capital of France?"), 100)}}));
             }));
    server.tools().add(
        mrtr(QStringLiteral("test_input_required_result_list_roots"),
             QStringLiteral("MRTR: returns InputRequiredResult with roots/list"),
             [](ToolCall *call, const QJsonObject &responses, const QString &) {
                 const QJsonObject roots = responses.value(u"roots_request").toObject();
                 if (roots.value(u"roots").isArray())
                     call->finish(textResult(QStringLiteral("Found %1 root(s)")
                                                 .arg(roots.value(u"roots").toArray().size())));
                 else
                     call->finish(inputRequired(
                         QJsonObject{{QStringLiteral("roots_request"), listRoots()}}));
             }));
    server.tools().add(
        mrtr(QStringLiteral("test_input_required_result_request_state"),
             QStringLiteral("MRTR: returns InputRequiredResult with requestState"),
             [](ToolCall *call, const QJsonObject &responses, const QString &state) {
                 const QJsonObject verified = verify(state);
                 if (verified.value(u"kind").toString() == u"request-state" &&
                     responses.value(u"confirm").isObject()) {
                     call->finish(textResult(
                         QStringLiteral("State verified: %1")
                             .arg(accepted(responses.value(u"confirm"), QStringLiteral("ok")))));
                     return;
                 }
                 call->finish(inputRequired(
                     QJsonObject{{QStringLiteral("confirm"),
                                  elicitation(QStringLiteral("Please confirm"),
                                              QStringLiteral("ok"), QStringLiteral("boolean"))}},
                     sign(QJsonObject{{QStringLiteral("kind"), QStringLiteral("request-state")},
                                      {QStringLiteral("nonce"), nonce()}})));
             }));
    server.tools().add(mrtr(
        QStringLiteral("test_input_required_result_multiple_inputs"),
        QStringLiteral("MRTR: returns InputRequiredResult with multiple input requests"),
        [](ToolCall *call, const QJsonObject &responses, const QString &state) {
            if (verify(state).value(u"kind").toString() == u"multiple-inputs" &&
                responses.contains(u"user_name") && responses.contains(u"greeting") &&
                responses.contains(u"client_roots")) {
                const QString greeting = responses.value(u"greeting")
                                             .toObject()
                                             .value(u"content")
                                             .toObject()
                                             .value(u"text")
                                             .toString(QStringLiteral("Hello there!"));
                call->finish(textResult(
                    QStringLiteral("Name: %1; Greeting: %2; Roots: %3")
                        .arg(accepted(responses.value(u"user_name"), QStringLiteral("name")),
                             greeting)
                        .arg(responses.value(u"client_roots")
                                 .toObject()
                                 .value(u"roots")
                                 .toArray()
                                 .size())));
                return;
            }
            call->finish(inputRequired(
                QJsonObject{
                    {QStringLiteral("user_name"),
                     elicitation(QStringLiteral("What is your name?"), QStringLiteral("name"))},
                    {QStringLiteral("greeting"),
                     sampling(QStringLiteral("Generate a greeting"), 50)},
                    {QStringLiteral("client_roots"), listRoots()}},
                sign(QJsonObject{{QStringLiteral("kind"), QStringLiteral("multiple-inputs")},
                                 {QStringLiteral("nonce"), nonce()}})));
        }));
    server.tools().add(mrtr(
        QStringLiteral("test_input_required_result_multi_round"),
        QStringLiteral("MRTR: multi-round InputRequiredResult workflow"),
        [](ToolCall *call, const QJsonObject &responses, const QString &state) {
            const QJsonObject s = verify(state);
            const int round = s.value(u"round").toInt();
            if (round == 1 && responses.contains(u"step1")) {
                call->finish(inputRequired(
                    QJsonObject{{QStringLiteral("step2"),
                                 elicitation(QStringLiteral("Step 2: What is your favorite color?"),
                                             QStringLiteral("color"))}},
                    sign(QJsonObject{{QStringLiteral("round"), 2},
                                     {QStringLiteral("name"),
                                      accepted(responses.value(u"step1"), QStringLiteral("name"))},
                                     {QStringLiteral("nonce"), nonce()}})));
                return;
            }
            if (round == 2 && responses.contains(u"step2")) {
                call->finish(textResult(
                    QStringLiteral("Multi-round complete for %1 who likes %2")
                        .arg(s.value(u"name").toString(),
                             accepted(responses.value(u"step2"), QStringLiteral("color")))));
                return;
            }
            call->finish(
                inputRequired(QJsonObject{{QStringLiteral("step1"),
                                           elicitation(QStringLiteral("Step 1: What is your name?"),
                                                       QStringLiteral("name"))}},
                              sign(QJsonObject{{QStringLiteral("round"), 1},
                                               {QStringLiteral("nonce"), nonce()}})));
        }));
    server.tools().add(
        mrtr(QStringLiteral("test_input_required_result_tampered_state"),
             QStringLiteral("MRTR: HMAC-signed requestState integrity test"),
             [](ToolCall *call, const QJsonObject &responses, const QString &state) {
                 if (!state.isEmpty()) {
                     const QJsonObject verified = verify(state);
                     if (verified.isEmpty()) {
                         call->fail(-32602, QStringLiteral("requestState integrity check failed"));
                         return;
                     }
                     if (verified.value(u"kind").toString() == u"tamper-test" &&
                         responses.contains(u"confirm")) {
                         call->finish(textResult(QStringLiteral("integrity-ok: state verified")));
                         return;
                     }
                 }
                 call->finish(inputRequired(
                     QJsonObject{{QStringLiteral("confirm"),
                                  elicitation(QStringLiteral("Please confirm"),
                                              QStringLiteral("ok"), QStringLiteral("boolean"))}},
                     sign(QJsonObject{{QStringLiteral("kind"), QStringLiteral("tamper-test")},
                                      {QStringLiteral("nonce"), nonce()}})));
             }));
    server.tools().add(mrtr(
        QStringLiteral("test_input_required_result_capabilities"),
        QStringLiteral("MRTR: respects client capabilities in inputRequests"),
        [](ToolCall *call, const QJsonObject &responses, const QString &) {
            if (!responses.isEmpty()) {
                call->finish(textResult(QStringLiteral("capabilities-ok: received %1")
                                            .arg(responses.keys().join(u','))));
                return;
            }
            const QJsonObject caps = call->clientCapabilities();
            QJsonObject requests;
            if (caps.contains(u"elicitation"))
                requests.insert(
                    QStringLiteral("elicit_input"),
                    elicitation(QStringLiteral("Elicitation input"), QStringLiteral("value")));
            if (caps.contains(u"sampling"))
                requests.insert(QStringLiteral("sample_input"),
                                sampling(QStringLiteral("Sample request"), 50));
            if (requests.isEmpty())
                call->finish(textResult(QStringLiteral("No supported capabilities declared")));
            else
                call->finish(inputRequired(
                    requests,
                    sign(QJsonObject{{QStringLiteral("kind"), QStringLiteral("capabilities-test")},
                                     {QStringLiteral("nonce"), nonce()}})));
        }));
    server.tools().add(tool(
        QStringLiteral("test_missing_capability"), QStringLiteral("Test tool requiring sampling"),
        [](ToolCall *call) {
            if (!call->clientCapabilities().contains(u"sampling")) {
                call->fail(-32021,
                           QStringLiteral("Missing required client "
                                          "capability: sampling"),
                           QJsonObject{{QStringLiteral("requiredCapabilities"),
                                        QJsonObject{{QStringLiteral("sampling"), QJsonObject()}}}});
                return;
            }
            call->finish(textResult(QStringLiteral("Success")));
        }));
    server.tools().add(tool(QStringLiteral("test_logging_tool"),
                            QStringLiteral("Diagnostic logging validator tool"),
                            [](ToolCall *call) {
                                call->log(QStringLiteral("info"), QString(),
                                          QStringLiteral("Diagnostic trace logging activated"));
                                call->finish(textResult(QStringLiteral("Logging evaluated")));
                            }));

    server.tools().add(tool(QStringLiteral("test_streaming_elicitation"),
                            QStringLiteral("Diagnostic tool validating response progress streams"),
                            [](ToolCall *call) {
                                call->progress(QStringLiteral("half way"), 2);
                                QTimer::singleShot(50, call, [call] {
                                    call->finish(textResult(QStringLiteral("Streaming complete")));
                                });
                            }));

    // The tasks extension's fixtures.
    ToolDefinition greet =
        tool(QStringLiteral("greet"), QStringLiteral("Greets synchronously"), [](ToolCall *call) {
            call->finish(textResult(
                QStringLiteral("Hello, %1!")
                    .arg(call->arguments().value(u"name").toString(QStringLiteral("World")))));
        });
    greet.inputSchema.insert(
        QStringLiteral("properties"),
        QJsonObject{{QStringLiteral("name"),
                     QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}}}});
    server.tools().add(greet);
    ToolDefinition slow = tool(
        QStringLiteral("slow_compute"),
        QStringLiteral("Computes for a number of seconds (runs as a task)"), [](ToolCall *call) {
            const double seconds = call->arguments().value(u"seconds").toDouble(1);
            const QString label = call->arguments().value(u"label").toString();
            call->progress(QStringLiteral("computing"));
            QTimer::singleShot(int(seconds * 1000), call, [call, label] {
                call->finish(textResult(QStringLiteral("computed %1").arg(label)));
            });
        });
    slow.inputSchema.insert(
        QStringLiteral("properties"),
        QJsonObject{{QStringLiteral("seconds"),
                     QJsonObject{{QStringLiteral("type"), QStringLiteral("number")}}},
                    {QStringLiteral("label"),
                     QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}}}});
    slow.taskSupport = QStringLiteral("optional");
    server.tools().add(slow);
    ToolDefinition failing =
        tool(QStringLiteral("failing_job"), QStringLiteral("Always fails (runs as a task)"),
             [](ToolCall *call) {
                 QTimer::singleShot(100, call, [call] {
                     call->finishWithError(QStringLiteral("the job failed"));
                 });
             });
    failing.taskSupport = QStringLiteral("required");
    server.tools().add(failing);

    PromptDefinition prompt;
    prompt.name = QStringLiteral("test_input_required_result_prompt");
    prompt.description = QStringLiteral("MRTR: prompt that requires elicitation input");
    prompt.get = [](const QJsonObject &) { return QJsonObject(); };
    prompt.getWithParams = [](const QJsonObject &params) {
        const QString context =
            accepted(params.value(u"inputResponses").toObject().value(u"user_context"),
                     QStringLiteral("context"));
        if (context.isEmpty())
            return inputRequired(
                QJsonObject{{QStringLiteral("user_context"),
                             elicitation(QStringLiteral("What context should the prompt use?"),
                                         QStringLiteral("context"))}});
        return QJsonObject{
            {QStringLiteral("messages"),
             QJsonArray{QJsonObject{
                 {QStringLiteral("role"), QStringLiteral("user")},
                 {QStringLiteral("content"),
                  QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                              {QStringLiteral("text"),
                               QStringLiteral("Prompt with context: %1").arg(context)}}}}}}};
    };
    server.prompts().add(prompt);
}
