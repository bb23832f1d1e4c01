#include "sessiontools.h"

#include "mcpserver.h"
#include "mcpsession.h"
#include "rungate.h"
#include "runwording.h"
#include "sandboxservice.h"
#include "sandboxsession.h"
#include "sandboxtools.h"
#include "sessionmanager.h"
#include "toolcall.h"
#include "toolregistry.h"
#include "toolschemas.h"

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

// Starts the session's sandbox (installing its libraries first) with its network as decided,
// and answers once it is ready.
void startSession(SessionManager *sm, int idleSec, ToolCall *call, const QStringList &libs,
                  const RunNetwork &network)
{
    const QJsonObject args = call->arguments();
    QPointer<ToolCall> guard(call);
    call->progress(QStringLiteral("starting the session's sandbox"));
    sm->create(
        call->owner(), args.value(u"language").toString(QStringLiteral("python")), libs,
        args.value(u"timeout").toInt(0), network,
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
}

// create_session: the assistant's policy first. Its rules and a refusing policy hold for every
// session; its runs pass the gate each. Libraries are different: they are installed now, in a
// container with network, under package names the assistant chose, so under an asking policy a
// person allows that first (the question shows the language and the libraries, and no code).
void createSession(SessionManager *sm, int idleSec, RunGate *gate, ToolCall *call)
{
    const QJsonObject args = call->arguments();
    QStringList libs;
    for (const QJsonValue &v : args.value(u"libraries").toArray())
        libs.append(v.toString());
    std::optional<QStringList> egress;
    const QString badNetwork = SandboxTools::parseNetwork(args, sm->sandbox()->config(), &egress);
    if (!badNetwork.isEmpty()) {
        call->finishWithError(badNetwork);
        return;
    }
    if (!gate) {
        startSession(sm, idleSec, call, libs, RunNetwork::decide(sm->sandbox()->config(), egress));
        return;
    }
    const QString asked = args.value(u"language").toString(QStringLiteral("python"));
    const Language *language = sm->sandbox()->languages().find(asked);
    ExecutionRequest install;
    install.language = language ? language->name : asked;
    install.timeoutSec = args.value(u"timeout").toInt(0);
    install.libraries = libs;
    const QString refusal =
        gate->screen(call->clientName(), install.language, install.timeoutSec, libs, &egress);
    if (!refusal.isEmpty()) {
        call->finishWithError(refusal);
        return;
    }
    // Nothing to install, or nothing this server would install (create() says why): no question.
    if (libs.isEmpty() || !language ||
        !sm->sandbox()->librariesRefusal(*language, libs).isEmpty()) {
        startSession(sm, idleSec, call, libs, gate->networkFor(call->clientName(), egress));
        return;
    }
    QPointer<ToolCall> guard(call);
    gate->admit(
        call, install, egress,
        [sm, idleSec, guard, libs](const ExecutionRequest &admitted, const QString &refusal) {
            if (!guard)
                return;
            if (!refusal.isEmpty()) {
                // A person's reason may end without a stop.
                const QString said = refusal.trimmed();
                guard->finishWithError(said +
                                       (said.endsWith(u'.') ? QString() : QStringLiteral(".")) +
                                       QStringLiteral(" No session was created and "
                                                      "nothing was installed."));
                return;
            }
            startSession(sm, idleSec, guard, libs, *admitted.network);
        });
}
} // namespace

QString SessionTools::refusalText(const SessionAdmission &verdict, const QString &id)
{
    using Refusal = SessionAdmission::Refusal;
    const SandboxSession *session = verdict.session;
    switch (verdict.refusal) {
    case Refusal::None:
        break;
    case Refusal::Ended:
        return QStringLiteral("Session '%1' has ended (%2); start a new one with create_session.")
            .arg(id, verdict.endedReason);
    case Refusal::OtherInstance:
        return QStringLiteral("Session '%1' belongs to another instance of this server (%2; this "
                              "is %3): send calls with this session_id to the instance that "
                              "created it, or start one here with create_session.")
            .arg(id, verdict.instance, verdict.here);
    case Refusal::Unknown:
        return QStringLiteral("No session '%1' here; create_session starts one, list_sessions "
                              "shows yours.")
            .arg(id);
    case Refusal::OtherLanguage:
        return QStringLiteral("Session '%1' runs %2, not %3; use execute_code with language %2, "
                              "or create a %3 session.")
            .arg(id, session->language().name, verdict.asked);
    case Refusal::Libraries:
        return QStringLiteral("A session's libraries are installed when it is created "
                              "(create_session's libraries); start a new session for others.");
    case Refusal::Starting:
        return QStringLiteral("Session '%1' is still starting.").arg(id);
    case Refusal::Busy:
        return QStringLiteral("Session '%1' is running another call; a session runs one call at "
                              "a time.")
            .arg(id);
    }
    return {};
}

void SessionTools::registerAll(McpServer &server, SessionManager &sessions, RunGate *gate)
{
    SessionManager *sm = &sessions;
    const int idleSec = sessions.limits().idleSec;
    const SandboxService *sandbox = sessions.sandbox();

    const ToolSchemas::Values values{
        {QStringLiteral("idle_minutes"), QStringLiteral("%1").arg(idleSec / 60.0, 0, 'g', 3)},
        {QStringLiteral("language_names"),
         QJsonArray::fromStringList(sandbox->languages().names())},
        {QStringLiteral("max_timeout"), sandbox->config().maxTimeoutSec},
        {QStringLiteral("network"), RunWording::networkFragment(sandbox->config())}};

    ToolDefinition create = ToolSchemas::tool(QStringLiteral("create_session"), values);
    create.handler = [sm, idleSec, gate](ToolCall *call) {
        createSession(sm, idleSec, gate, call);
    };
    server.tools().add(create);

    ToolDefinition list = ToolSchemas::tool(QStringLiteral("list_sessions"));
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

    ToolDefinition close = ToolSchemas::tool(QStringLiteral("close_session"));
    close.handler = [sm](ToolCall *call) {
        const QString id = call->arguments().value(u"session_id").toString();
        const SessionAdmission closed = sm->close(id, call->owner());
        if (!closed.admitted()) {
            call->finishWithError(refusalText(closed, id));
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
