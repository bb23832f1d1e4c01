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
#include "workspacetransfer.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>

namespace {
// The session's workspaces as a model may see them: name, mode and path in the sandbox, never
// the folder's path.
QJsonArray workspacesOf(const SandboxSession *s)
{
    QJsonArray list;
    if (const WorkspaceTransfer *transfer = s->workspaces())
        for (const WorkspaceRun &run : transfer->runs())
            list.append(QJsonObject{
                {QStringLiteral("name"), run.workspace.name},
                {QStringLiteral("mode"), Workspace::modeName(run.workspace.mode)},
                {QStringLiteral("path"), QStringLiteral("/workspace/") + run.workspace.name}});
    return list;
}

// "/workspace/data (read-only), /workspace/proj (copy-on-write)", or "" without any.
QString workspacesLine(const SandboxSession *s)
{
    QStringList listed;
    for (const QJsonValue &v : workspacesOf(s)) {
        const QJsonObject w = v.toObject();
        listed.append(QStringLiteral("%1 (%2)").arg(w.value(u"path").toString(),
                                                    w.value(u"mode").toString()));
    }
    return listed.join(QStringLiteral(", "));
}

QJsonObject describe(const SandboxSession *s, int idleSec)
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const qint64 left = s->state() == SandboxSession::State::Idle
                            ? qMax<qint64>(0, idleSec - s->lastUsedAt().secsTo(now))
                            : idleSec;
    QJsonObject o{{QStringLiteral("session_id"), s->id()},
                  {QStringLiteral("language"), s->language().name},
                  {QStringLiteral("state"), SandboxSession::stateName(s->state())},
                  {QStringLiteral("live_state"), s->language().liveSession},
                  {QStringLiteral("libraries"), QJsonArray::fromStringList(s->libraries())},
                  {QStringLiteral("calls"), s->calls()},
                  {QStringLiteral("created_at"), s->createdAt().toString(Qt::ISODate)},
                  {QStringLiteral("last_used_at"), s->lastUsedAt().toString(Qt::ISODate)},
                  {QStringLiteral("expires_in_sec"), left},
                  {QStringLiteral("timeout_sec"), s->timeoutSec()}};
    if (s->kept())
        o.insert(QStringLiteral("kept"), true);
    // Only a session that has some says so: the others answer as they always did.
    if (const QJsonArray workspaces = workspacesOf(s); !workspaces.isEmpty())
        o.insert(QStringLiteral("workspaces"), workspaces);
    return o;
}

// create_session's `workspaces`: the run tools' argument, described for a whole session; not
// offered by a server without workspaces.
QJsonValue workspacesArgument(const SandboxConfig &config)
{
    const QJsonValue fragment = RunWording::workspacesFragment(config);
    if (!fragment.isObject())
        return fragment;
    QStringList listed;
    for (const Workspace &w : config.workspaces)
        listed.append(QStringLiteral("%1 (%2)").arg(w.name, Workspace::modeName(w.mode)));
    QJsonObject o = fragment.toObject();
    o.insert(QStringLiteral("description"),
             ToolSchemas::file(QStringLiteral("create_session"))
                 .value(u"workspacesDescription")
                 .toString()
                 .replace(QStringLiteral("${workspace_list}"), listed.join(QStringLiteral(", "))));
    return o;
}

QJsonObject result(const QString &text, const QJsonObject &structured)
{
    return {{QStringLiteral("content"), QJsonArray{ToolCall::textContent(text)}},
            {QStringLiteral("structuredContent"), structured}};
}

// Starts the session's sandbox (installing its libraries first) with its network as decided and
// its workspaces copied in, and answers once it is ready.
void startSession(SessionManager *sm, int idleSec, ToolCall *call, const QStringList &libs,
                  const RunNetwork &network, const QStringList &workspaces, bool keepByPolicy)
{
    const QJsonObject args = call->arguments();
    QPointer<ToolCall> guard(call);
    call->progress(QStringLiteral("starting the session's sandbox"));
    SessionBlueprint blueprint;
    blueprint.owner = call->owner();
    blueprint.assistant = call->assistant();
    blueprint.language = args.value(u"language").toString(QStringLiteral("python"));
    blueprint.libraries = libs;
    blueprint.timeoutSec = args.value(u"timeout").toInt(0);
    blueprint.network = network;
    blueprint.workspaces = workspaces;
    // As asked; without a word, as the assistant's policy says.
    blueprint.kept = args.contains(u"keep") ? args.value(u"keep").toBool() : keepByPolicy;
    sm->create(
        blueprint,
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
            QString text = QStringLiteral("Session %1 (%2) is ready: %3 between calls that "
                                          "pass session_id \"%1\".")
                               .arg(session->id(), session->language().name, keeps);
            if (const QString line = workspacesLine(session); !line.isEmpty())
                text += QStringLiteral(" Every call in it sees its workspaces: %1.").arg(line);
            if (session->kept())
                text += QStringLiteral(" It is kept: when this server or this client stops, the "
                                       "first call with its session_id afterwards brings it "
                                       "back as it was after its last call.");
            guard->finish(result(text, describe(session, idleSec)));
        });
}

// create_session: the assistant's policy first. Its rules and a refusing policy hold for every
// session; its runs pass the gate each. Libraries and workspaces are different: libraries are
// installed now, in a container with network, under package names the assistant chose, and the
// workspaces' folders are copied into the session's sandbox now (on whichever engine it runs),
// so under an asking policy a person allows that first (the question shows the language, the
// libraries and the workspaces, and no code).
void createFromSnapshot(SessionManager *sm, int idleSec, ToolCall *call);

void createSession(SessionManager *sm, int idleSec, RunGate *gate, ToolCall *call)
{
    const QJsonObject args = call->arguments();
    if (args.contains(u"from_snapshot")) {
        createFromSnapshot(sm, idleSec, call);
        return;
    }
    const SandboxConfig &config = sm->sandbox()->config();
    QStringList libs;
    for (const QJsonValue &v : args.value(u"libraries").toArray())
        libs.append(v.toString());
    std::optional<QStringList> egress;
    QString bad = SandboxTools::parseNetwork(args, config, &egress);
    QStringList workspaces;
    if (bad.isEmpty())
        bad = SandboxTools::parseWorkspaces(args, config, &workspaces);
    if (!bad.isEmpty()) {
        call->finishWithError(bad);
        return;
    }
    if (!gate) {
        startSession(sm, idleSec, call, libs, RunNetwork::decide(config, egress), workspaces,
                     false);
        return;
    }
    const QString asked = args.value(u"language").toString(QStringLiteral("python"));
    const Language *language = sm->sandbox()->languages().find(asked);
    ExecutionRequest install;
    install.language = language ? language->name : asked;
    install.timeoutSec = args.value(u"timeout").toInt(0);
    install.libraries = libs;
    install.workspaces = workspaces;
    const QString refusal =
        gate->screen(call, install.language, install.timeoutSec, libs, &egress, workspaces);
    const bool keep = gate->policyFor(call).keepSessions;
    if (!refusal.isEmpty()) {
        call->finishWithError(refusal);
        return;
    }
    // Nothing to install or copy in, or libraries this server would not install (create() says
    // why): no question.
    const bool refusedLibraries =
        !libs.isEmpty() &&
        (!language || !sm->sandbox()->librariesRefusal(*language, libs).isEmpty());
    if ((libs.isEmpty() && workspaces.isEmpty()) || refusedLibraries) {
        startSession(sm, idleSec, call, libs, gate->networkFor(call, egress), workspaces, keep);
        return;
    }
    QPointer<ToolCall> guard(call);
    gate->admit(call, install, egress,
                [sm, idleSec, guard, libs, workspaces, keep](const ExecutionRequest &admitted,
                                                             const QString &refusal) {
                    if (!guard)
                        return;
                    if (!refusal.isEmpty()) {
                        // A person's reason may end without a stop.
                        const QString said = refusal.trimmed();
                        guard->finishWithError(
                            said + (said.endsWith(u'.') ? QString() : QStringLiteral(".")) +
                            QStringLiteral(" No session was created and nothing was installed."));
                        return;
                    }
                    startSession(sm, idleSec, guard, libs, *admitted.network, workspaces, keep);
                });
}
// "12.3 kB", "4.1 MB"
QString bytesText(qint64 bytes)
{
    if (bytes < 1000)
        return QStringLiteral("%1 B").arg(bytes);
    if (bytes < 1000 * 1000)
        return QStringLiteral("%1 kB").arg(double(bytes) / 1000, 0, 'f', 1);
    return QStringLiteral("%1 MB").arg(double(bytes) / 1e6, 0, 'f', 1);
}

// The snapshot tools' first check: snapshots are kept here, and the session is (or was) the
// caller's. Finishes the call with the error and returns false otherwise.
bool snapshotsFor(SessionManager *sm, ToolCall *call, const QString &id)
{
    if (!sm->snapshots()) {
        call->finishWithError(QStringLiteral("This server keeps no snapshots of sessions "
                                             "(--snapshot-max 0)."));
        return false;
    }
    if (!sm->ownedBy(id, call->owner())) {
        call->finishWithError(SessionTools::refusalText(sm->lookup(id, call->owner()), id));
        return false;
    }
    return true;
}

// Calls `then` once the session's snapshot being taken (if any) is kept, so that what a call
// just did is listed; at once for a session that is not live.
void afterSnapshot(SessionManager *sm, ToolCall *call, const QString &id,
                   const std::function<void(ToolCall *)> &then)
{
    const SessionAdmission live = sm->lookup(id, call->owner());
    if (!live.admitted() || !live.session->snapshotting()) {
        then(call);
        return;
    }
    QPointer<ToolCall> guard(call);
    live.session->afterSnapshot([guard, then] {
        if (guard)
            then(guard);
    });
}

void listSnapshots(SessionManager *sm, ToolCall *call)
{
    const QString id = call->arguments().value(u"session_id").toString();
    if (SessionTools::reviveFirst(sm, call, id, [sm](ToolCall *c) { listSnapshots(sm, c); }))
        return;
    if (!snapshotsFor(sm, call, id))
        return;
    afterSnapshot(sm, call, id, [sm, id](ToolCall *call) {
        const SessionAdmission live = sm->lookup(id, call->owner());
        const QString now = live.admitted() ? live.session->lastSnapshot() : QString();
        QJsonArray all;
        QStringList lines;
        for (const SessionSnapshot &s : sm->snapshots()->of(id)) {
            QJsonObject o = s.toJson();
            o.insert(QStringLiteral("current"), s.id == now);
            all.append(o);
            QString line = QStringLiteral("%1  after call %2  %3  %4")
                               .arg(s.id)
                               .arg(s.afterCall)
                               .arg(bytesText(s.bytes), s.kind);
            if (!s.parent.isEmpty())
                line += QStringLiteral("  from %1").arg(s.parent);
            if (!s.notKept.isEmpty())
                line += QStringLiteral("  not kept: ") + SessionSnapshot::namesOf(s.notKept);
            if (s.id == now)
                line += QStringLiteral("  (the session is here)");
            lines.append(line);
        }
        call->finish(result(
            lines.isEmpty() ? QStringLiteral("Session %1 has no snapshot yet: one is "
                                             "taken after each call.")
                                  .arg(id)
                            : lines.join(u'\n'),
            QJsonObject{{QStringLiteral("session_id"), id}, {QStringLiteral("snapshots"), all}}));
    });
}

// The text and structured result of a session restored from a snapshot (a rewind, a fork).
QJsonObject restoredResult(const QString &text, const QJsonObject &record, QJsonObject structured)
{
    const QJsonArray restored = record.value(u"restored").toArray();
    const QJsonArray notRestored = record.value(u"not_restored").toArray();
    structured.insert(QStringLiteral("restored"), restored);
    structured.insert(QStringLiteral("not_restored"), notRestored);
    QString said = text;
    if (!restored.isEmpty()) {
        QStringList names;
        for (const QJsonValue &v : restored)
            names.append(v.toString());
        said += QStringLiteral(" Variables back: %1.").arg(names.join(QStringLiteral(", ")));
    }
    if (!notRestored.isEmpty())
        said += QStringLiteral(" Not brought back: %1.").arg(SessionSnapshot::namesOf(notRestored));
    return result(said, structured);
}

void rewindSession(SessionManager *sm, ToolCall *call)
{
    const QJsonObject args = call->arguments();
    const QString id = args.value(u"session_id").toString();
    const QString snapshotId = args.value(u"snapshot_id").toString();
    if (SessionTools::reviveFirst(sm, call, id, [sm](ToolCall *c) { rewindSession(sm, c); }))
        return;
    if (!snapshotsFor(sm, call, id))
        return;
    const SessionAdmission verdict = sm->admit(id, call->owner(), nullptr, false);
    if (!verdict.admitted()) {
        QString text = SessionTools::refusalText(verdict, id);
        if (verdict.refusal == SessionAdmission::Refusal::Ended)
            text += QStringLiteral(" Its snapshots are kept: fork_session starts a new session "
                                   "from one.");
        call->finishWithError(text);
        return;
    }
    QPointer<ToolCall> guard(call);
    call->progress(QStringLiteral("rewinding session %1 to %2").arg(id, snapshotId));
    sm->rewind(
        verdict.session, snapshotId,
        [guard](const QString &message) {
            if (guard)
                guard->progress(message);
        },
        [guard, id, snapshotId](SandboxSession *session, const QJsonObject &record,
                                const QString &error) {
            if (!guard)
                return;
            if (!session) {
                guard->finishWithError(
                    QStringLiteral("Session %1 was not rewound: %2.").arg(id, error));
                return;
            }
            guard->finish(restoredResult(
                QStringLiteral("Session %1 is back at snapshot %2, in a fresh sandbox.")
                    .arg(id, snapshotId),
                record,
                QJsonObject{{QStringLiteral("session_id"), id},
                            {QStringLiteral("snapshot_id"), snapshotId}}));
        });
}

void forkFrom(SessionManager *sm, int idleSec, ToolCall *call);

// A new session from the snapshot (of session `id`, the caller's): fork_session, and
// create_session's from_snapshot.
void forkInto(SessionManager *sm, int idleSec, ToolCall *call, const QString &id,
              const QString &snapshotId, bool keep)
{
    QPointer<ToolCall> guard(call);
    call->progress(QStringLiteral("starting a session from %1").arg(snapshotId));
    sm->fork(
        call->owner(), snapshotId, keep,
        [guard](const QString &message) {
            if (guard)
                guard->progress(message);
        },
        [guard, id, snapshotId, idleSec](SandboxSession *session, const QJsonObject &record,
                                         const QString &error) {
            if (!guard)
                return;
            if (!session) {
                guard->finishWithError(
                    QStringLiteral("No session from %1: %2.").arg(snapshotId, error));
                return;
            }
            QJsonObject structured = describe(session, idleSec);
            structured.insert(QStringLiteral("forked_from"), snapshotId);
            structured.insert(QStringLiteral("parent_session_id"), id);
            guard->finish(restoredResult(
                QStringLiteral("Session %1 (%2) is ready, forked from %3: pass session_id \"%1\" "
                               "to use it; session %4 goes on unchanged.")
                    .arg(session->id(), session->language().name, snapshotId, id),
                record, structured));
        });
}

// create_session with from_snapshot: a fork, which takes everything but keep from the
// snapshot's session.
void createFromSnapshot(SessionManager *sm, int idleSec, ToolCall *call)
{
    const QJsonObject args = call->arguments();
    const QString snapshotId = args.value(u"from_snapshot").toString();
    for (const QString &other : args.keys())
        if (other != u"from_snapshot" && other != u"keep") {
            call->finishWithError(QStringLiteral("create_session with from_snapshot takes its "
                                                 "language, libraries, network, timeout and "
                                                 "workspaces from the snapshot's session: leave "
                                                 "out '%1'.")
                                      .arg(other));
            return;
        }
    const SessionSnapshot *s =
        sm->snapshots() ? sm->snapshotOf(snapshotId, call->owner()) : nullptr;
    if (!s) {
        call->finishWithError(QStringLiteral("No snapshot '%1' of yours is kept "
                                             "(list_snapshots shows a session's).")
                                  .arg(snapshotId));
        return;
    }
    forkInto(sm, idleSec, call, s->sessionId, snapshotId, args.value(u"keep").toBool());
}

void forkSession(SessionManager *sm, int idleSec, ToolCall *call)
{
    const QString id = call->arguments().value(u"session_id").toString();
    if (!snapshotsFor(sm, call, id))
        return;
    afterSnapshot(sm, call, id, [sm, idleSec](ToolCall *call) { forkFrom(sm, idleSec, call); });
}

// fork_session once the session's last snapshot is kept.
void forkFrom(SessionManager *sm, int idleSec, ToolCall *call)
{
    const QJsonObject args = call->arguments();
    const QString id = args.value(u"session_id").toString();
    if (SessionTools::reviveFirst(sm, call, id,
                                  [sm, idleSec](ToolCall *c) { forkFrom(sm, idleSec, c); }))
        return;
    QString snapshotId = args.value(u"snapshot_id").toString();
    if (snapshotId.isEmpty()) {
        // The state the session is at now; for one that ended, its last snapshot.
        const SessionAdmission live = sm->lookup(id, call->owner());
        if (live.admitted())
            snapshotId = live.session->lastSnapshot();
        const QList<SessionSnapshot> kept = sm->snapshots()->of(id);
        if (snapshotId.isEmpty() && !kept.isEmpty())
            snapshotId = kept.last().id;
        if (snapshotId.isEmpty()) {
            call->finishWithError(QStringLiteral("Session %1 has no snapshot yet: one is taken "
                                                 "after each call.")
                                      .arg(id));
            return;
        }
    }
    if (const SessionSnapshot *s = sm->snapshotOf(snapshotId, call->owner());
        s && s->sessionId != id) {
        call->finishWithError(
            QStringLiteral("Snapshot %1 is not session %2's.").arg(snapshotId, id));
        return;
    }
    forkInto(sm, idleSec, call, id, snapshotId, false);
}
// list_sessions: the caller's live sessions, and the kept ones of its assistant that a call
// brings back.
void listSessions(SessionManager *sm, int idleSec, ToolCall *call)
{
    QJsonArray all;
    QStringList lines;
    for (const SandboxSession *s : sm->sessionsOf(call->owner())) {
        all.append(describe(s, idleSec));
        QString line = QStringLiteral("%1  %2  %3  %4 call(s)%5")
                           .arg(s->id(), s->language().name, SandboxSession::stateName(s->state()))
                           .arg(s->calls())
                           .arg(s->kept() ? QStringLiteral("  kept") : QString());
        if (const QString workspaces = workspacesLine(s); !workspaces.isEmpty())
            line += QStringLiteral("  workspaces: ") + workspaces;
        lines.append(line);
    }
    // Kept sessions of an earlier server of this assistant's, which a call brings back.
    for (const QString &id : sm->dormantOf(call->assistant())) {
        const SessionBlueprint *b = sm->dormant(id);
        all.append(
            QJsonObject{{QStringLiteral("session_id"), id},
                        {QStringLiteral("language"), b->language},
                        {QStringLiteral("state"), QStringLiteral("kept")},
                        {QStringLiteral("kept"), true},
                        {QStringLiteral("libraries"), QJsonArray::fromStringList(b->libraries)}});
        lines.append(QStringLiteral("%1  %2  kept (not running: the next call with its "
                                    "session_id brings it back)")
                         .arg(id, b->language));
    }
    call->finish(result(lines.isEmpty() ? QStringLiteral("No sessions open.") : lines.join(u'\n'),
                        QJsonObject{{QStringLiteral("sessions"), all}}));
}

} // namespace

bool SessionTools::reviveFirst(SessionManager *sm, ToolCall *call, const QString &id,
                               const std::function<void(ToolCall *call)> &then)
{
    if (id.isEmpty() || !sm->dormant(id))
        return false;
    QPointer<ToolCall> guard(call);
    sm->revive(
        id, call->owner(), call->assistant(),
        [guard](const QString &message) {
            if (guard)
                guard->progress(message);
        },
        [guard, id, then](const QString &error) {
            if (!guard)
                return;
            if (error.isEmpty())
                then(guard);
            else
                guard->finishWithError(
                    QStringLiteral("Session '%1' could not be brought back: %2.").arg(id, error));
        });
    return true;
}

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
        {QStringLiteral("network"), RunWording::networkFragment(sandbox->config())},
        {QStringLiteral("workspaces"), workspacesArgument(sandbox->config())}};

    ToolDefinition create = ToolSchemas::tool(QStringLiteral("create_session"), values);
    create.handler = [sm, idleSec, gate](ToolCall *call) {
        createSession(sm, idleSec, gate, call);
    };
    server.tools().add(create);

    ToolDefinition list = ToolSchemas::tool(QStringLiteral("list_sessions"));
    list.handler = [sm, idleSec](ToolCall *call) { listSessions(sm, idleSec, call); };
    server.tools().add(list);

    ToolDefinition close = ToolSchemas::tool(QStringLiteral("close_session"));
    close.handler = [sm](ToolCall *call) {
        const QString id = call->arguments().value(u"session_id").toString();
        // A kept session not running: closing it is the end of its keeping.
        if (const SessionBlueprint *b = sm->dormant(id); b && b->assistant == call->assistant()) {
            sm->dropKept(id);
            call->finish(result(
                QStringLiteral("Kept session %1 closed; its snapshots are removed.").arg(id),
                QJsonObject{{QStringLiteral("session_id"), id}, {QStringLiteral("closed"), true}}));
            return;
        }
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

    ToolDefinition snapshots = ToolSchemas::tool(QStringLiteral("list_snapshots"));
    snapshots.handler = [sm](ToolCall *call) { listSnapshots(sm, call); };
    server.tools().add(snapshots);

    ToolDefinition rewind = ToolSchemas::tool(QStringLiteral("rewind_session"));
    rewind.handler = [sm](ToolCall *call) { rewindSession(sm, call); };
    server.tools().add(rewind);

    ToolDefinition fork = ToolSchemas::tool(QStringLiteral("fork_session"));
    fork.handler = [sm, idleSec](ToolCall *call) { forkSession(sm, idleSec, call); };
    server.tools().add(fork);

    // A client's sessions end with its MCP session (an HTTP session deleted or expired; the
    // stdio server's end removes every container anyway).
    QObject::connect(&server, &McpServer::sessionOpened, sm, [sm](McpSession *session) {
        const QString owner = session->id();
        QObject::connect(session, &QObject::destroyed, sm,
                         [sm, owner] { sm->closeOwnedBy(owner); });
    });
}
