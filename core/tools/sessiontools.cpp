#include "sessiontools.h"

#include "mcpserver.h"
#include "mcpsession.h"
#include "sandboxservice.h"
#include "sandboxsession.h"
#include "sessionmanager.h"
#include "toolcall.h"
#include "toolregistry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>

namespace {
QJsonObject describe(const SandboxSession *s, int idleSec)
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const qint64 left = s->state() == SandboxSession::State::Idle
                            ? qMax<qint64>(0, idleSec - s->lastUsedAt().secsTo(now))
                            : idleSec;
    return {{QStringLiteral("session_id"), s->id()},
            {QStringLiteral("language"), s->language().name},
            {QStringLiteral("state"), SandboxSession::stateName(s->state())},
            {QStringLiteral("live_state"), s->language().liveSession},
            {QStringLiteral("libraries"), QJsonArray::fromStringList(s->libraries())},
            {QStringLiteral("calls"), s->calls()},
            {QStringLiteral("created_at"), s->createdAt().toString(Qt::ISODate)},
            {QStringLiteral("last_used_at"), s->lastUsedAt().toString(Qt::ISODate)},
            {QStringLiteral("expires_in_sec"), left},
            {QStringLiteral("timeout_sec"), s->timeoutSec()}};
}

QJsonObject result(const QString &text, const QJsonObject &structured)
{
    return {{QStringLiteral("content"), QJsonArray{ToolCall::textContent(text)}},
            {QStringLiteral("structuredContent"), structured}};
}
} // namespace

void SessionTools::registerAll(McpServer &server, SessionManager &sessions)
{
    SessionManager *sm = &sessions;
    const int idleSec = sessions.limits().idleSec;
    const SandboxService *sandbox = sessions.sandbox();

    ToolDefinition create;
    create.name = QStringLiteral("create_session");
    create.title = QStringLiteral("Create a session");
    create.description =
        QStringLiteral("Start a sandbox session that keeps its state between calls: pass its "
                       "session_id to execute_code, run_python_code or run_javascript_code. "
                       "Python and JavaScript keep variables, imports and functions; every "
                       "language keeps the files in /sandbox and the session's libraries. A "
                       "session ends with close_session, after %1 minutes without a call, or "
                       "when this client disconnects. Calls without session_id never see it.")
            .arg(idleSec / 60.0, 0, 'g', 3);
    QJsonObject language = ToolDefinition::property(
        QStringLiteral("string"), QStringLiteral("Language of the session (default python)"));
    language.insert(QStringLiteral("enum"),
                    QJsonArray::fromStringList(sandbox->languages().names()));
    QJsonObject libraries = ToolDefinition::property(
        QStringLiteral("array"),
        QStringLiteral("Packages to install into the session first (needs a server started "
                       "with --allow-network-for-install)"));
    libraries.insert(QStringLiteral("items"),
                     QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}});
    libraries.insert(QStringLiteral("maxItems"), 50);
    QJsonObject timeout = ToolDefinition::property(
        QStringLiteral("integer"),
        QStringLiteral("Seconds each call may run unless it says otherwise"));
    timeout.insert(QStringLiteral("minimum"), 1);
    timeout.insert(QStringLiteral("maximum"), sandbox->config().maxTimeoutSec);
    create.inputSchema = {
        {QStringLiteral("type"), QStringLiteral("object")},
        {QStringLiteral("properties"), QJsonObject{{QStringLiteral("language"), language},
                                                   {QStringLiteral("libraries"), libraries},
                                                   {QStringLiteral("timeout"), timeout}}},
        {QStringLiteral("additionalProperties"), false}};
    create.annotations = ToolDefinition::localAnnotations(create.title, false);
    create.handler = [sm, idleSec](ToolCall *call) {
        const QJsonObject args = call->arguments();
        QStringList libs;
        for (const QJsonValue &v : args.value(u"libraries").toArray())
            libs.append(v.toString());
        QPointer<ToolCall> guard(call);
        call->progress(QStringLiteral("starting the session's sandbox"));
        sm->create(
            call->owner(), args.value(u"language").toString(QStringLiteral("python")), libs,
            args.value(u"timeout").toInt(0),
            [guard](const QString &message) {
                if (guard)
                    guard->progress(message);
            },
            [guard, idleSec](SandboxSession *session, const QString &error) {
                if (!guard)
                    return;
                if (!session) {
                    guard->finishWithError(error.left(1).toUpper() + error.mid(1) + u'.');
                    return;
                }
                const QString keeps =
                    session->language().liveSession
                        ? QStringLiteral("variables, imports, functions and files persist")
                        : QStringLiteral("files and libraries persist; each call runs its "
                                         "program anew");
                guard->finish(result(QStringLiteral("Session %1 (%2) is ready: %3 between "
                                                    "calls that pass session_id \"%1\".")
                                         .arg(session->id(), session->language().name, keeps),
                                     describe(session, idleSec)));
            });
    };
    server.tools().add(create);

    ToolDefinition list;
    list.name = QStringLiteral("list_sessions");
    list.title = QStringLiteral("List sessions");
    list.description = QStringLiteral("The sessions this client has open, with their language, "
                                      "state (starting, idle, busy) and time left before they "
                                      "expire.");
    list.inputSchema = {{QStringLiteral("type"), QStringLiteral("object")},
                        {QStringLiteral("properties"), QJsonObject()}};
    list.annotations = ToolDefinition::localAnnotations(list.title, true);
    list.handler = [sm, idleSec](ToolCall *call) {
        QJsonArray all;
        QStringList lines;
        for (const SandboxSession *s : sm->sessionsOf(call->owner())) {
            all.append(describe(s, idleSec));
            lines.append(
                QStringLiteral("%1  %2  %3  %4 call(s)")
                    .arg(s->id(), s->language().name, SandboxSession::stateName(s->state()))
                    .arg(s->calls()));
        }
        call->finish(
            result(lines.isEmpty() ? QStringLiteral("No sessions open.") : lines.join(u'\n'),
                   QJsonObject{{QStringLiteral("sessions"), all}}));
    };
    server.tools().add(list);

    ToolDefinition close;
    close.name = QStringLiteral("close_session");
    close.title = QStringLiteral("Close a session");
    close.description = QStringLiteral("End a session: its sandbox and everything in it are "
                                       "removed.");
    close.inputSchema = {
        {QStringLiteral("type"), QStringLiteral("object")},
        {QStringLiteral("properties"),
         QJsonObject{{QStringLiteral("session_id"),
                      ToolDefinition::property(QStringLiteral("string"),
                                               QStringLiteral("From create_session"))}}},
        {QStringLiteral("required"), QJsonArray{QStringLiteral("session_id")}},
        {QStringLiteral("additionalProperties"), false}};
    close.annotations = ToolDefinition::localAnnotations(close.title, false);
    close.handler = [sm](ToolCall *call) {
        const QString id = call->arguments().value(u"session_id").toString();
        QString error;
        if (!sm->close(id, call->owner(), &error)) {
            call->finishWithError(error.left(1).toUpper() + error.mid(1) + u'.');
            return;
        }
        call->finish(result(
            QStringLiteral("Session %1 closed; its sandbox is removed.").arg(id),
            QJsonObject{{QStringLiteral("session_id"), id}, {QStringLiteral("closed"), true}}));
    };
    server.tools().add(close);

    // A client's sessions end with its MCP session (an HTTP session deleted or expired; the
    // stdio server's end removes every container anyway).
    QObject::connect(&server, &McpServer::sessionOpened, sm, [sm](McpSession *session) {
        const QString owner = session->id();
        QObject::connect(session, &QObject::destroyed, sm,
                         [sm, owner] { sm->closeOwnedBy(owner); });
    });
}
