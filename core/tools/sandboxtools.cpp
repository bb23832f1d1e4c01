#include "sandboxtools.h"

#include "egresslist.h"
#include "execution.h"
#include "executionrequest.h"
#include "imagewording.h"
#include "lineframer.h"
#include "liveruns.h"
#include "mcpserver.h"
#include "protocolera.h"
#include "rungate.h"
#include "runstopreason.h"
#include "runwording.h"
#include "sandboxbackend.h"
#include "sandboxservice.h"
#include "sandboxsession.h"
#include "sandboxsite.h"
#include "sessionmanager.h"
#include "sessiontools.h"
#include "toolcall.h"
#include "toolschemas.h"
#include "workdirpath.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QSet>
#include <QStringDecoder>
#include <QTimer>
#include <QUrl>
#include <array>
#include <functional>
#include <memory>

namespace {
ExecutionRequest request(const QString &language, const QJsonObject &args)
{
    ExecutionRequest r;
    r.language = language;
    r.code = args.value(u"code").toString();
    r.timeoutSec = args.value(u"timeout").toInt(0);
    return r;
}

// The server's workspaces as a model may see them: name and mode, never the host path.
QJsonArray workspacesJson(const SandboxConfig &config)
{
    QJsonArray list;
    for (const Workspace &w : config.workspaces)
        list.append(QJsonObject{{QStringLiteral("name"), w.name},
                                {QStringLiteral("path"), QStringLiteral("/workspace/") + w.name},
                                {QStringLiteral("mode"), Workspace::modeName(w.mode)}});
    return list;
}

// A call in a session sees the session's workspaces, chosen when it was created: it may name
// them (or some of them), or none, never others. `request` gets them all, so that the policy
// checks them and a person asked about the call sees them. The refusal, or empty. (A session
// that is not the caller's is refused later, as any call in it.)
QString sessionWorkspaces(const SessionManager &sessions, const ToolCall *call,
                          const QString &sessionId, ExecutionRequest *request)
{
    const SessionAdmission found = sessions.lookup(sessionId, call->owner());
    if (!found.admitted())
        return QString();
    const QStringList own = found.session->workspaceNames();
    QStringList others;
    for (const QString &name : std::as_const(request->workspaces))
        if (!own.contains(name))
            others.append(name);
    request->workspaces = own;
    if (others.isEmpty())
        return QString();
    return QStringLiteral("Session '%1' %2: a session's workspaces are chosen when it is created "
                          "(create_session's workspaces), so a call in it cannot add %3. Call "
                          "without workspaces to use the session's, or start a new session "
                          "with the ones needed.")
        .arg(sessionId,
             own.isEmpty()
                 ? QStringLiteral("has no workspaces")
                 : QStringLiteral("has the workspaces %1").arg(own.join(QStringLiteral(", "))),
             others.join(QStringLiteral(", ")));
}

// Output lines longer than this give no progress message (a progress line is a glimpse).
constexpr qsizetype kMaxProgressLine = 64 * 1024;

QString progressLine(const QByteArray &line)
{
    return QString::fromUtf8(line).trimmed().left(200);
}

} // namespace

// The service watches its engines (SandboxSite) only when it has several. A lone one is asked
// here, for get_supported_languages and sandbox://environments, and its last answer kept for the
// resource, which is read without waiting.
struct LoneEngine
{
    bool answered = false;            // an answer (or a timeout) came
    bool reachable = false;           // in the last answer
    QString error;                    // of the last answer
    SandboxBackend::Health described; // the last full answer (product, version, CPUs)
    bool asking = false;
    QList<std::function<void()>> waiting;
};

namespace {

// Asks the lone engine, if the service has one; `done` (unless `context` went away) once it
// answered, or after SandboxSite::kAnswerTimeoutMs with it marked as not answering. With several
// engines the service's own watch is current: `done` at once.
void askEngines(SandboxService &sandbox, const std::shared_ptr<LoneEngine> &lone, QObject *context,
                const std::function<void()> &done)
{
    if (sandbox.sites().size() != 1) {
        if (done)
            done();
        return;
    }
    if (done) {
        auto fired = std::make_shared<bool>(false);
        QPointer<QObject> guard(context);
        const auto fire = [fired, guard, done] {
            if (*fired || !guard)
                return;
            *fired = true;
            done();
        };
        lone->waiting.append(fire);
        QTimer::singleShot(SandboxSite::kAnswerTimeoutMs, context, [lone, fire] {
            if (lone->asking) {
                lone->answered = true;
                lone->reachable = false;
                lone->error = QStringLiteral("it did not answer within %1 s")
                                  .arg(SandboxSite::kAnswerTimeoutMs / 1000);
                // The waiters hold their callers (which hold `lone`): an answer that never
                // comes must not keep them. Each waiter has a timer of its own like this one.
                lone->waiting.clear();
            }
            fire();
        });
    }
    if (lone->asking)
        return;
    lone->asking = true;
    // Once described, a ping tells that it still answers: Podman takes about a second for a
    // full answer.
    const bool pingOnly = lone->reachable && !lone->described.version.isEmpty();
    sandbox.sites().constFirst()->backend()->health(
        pingOnly, &sandbox, [lone, pingOnly](const SandboxBackend::Health &h) {
            lone->asking = false;
            lone->answered = true;
            lone->reachable = h.reachable;
            lone->error = h.reachable ? QString() : h.error;
            if (h.reachable && !pingOnly)
                lone->described = h;
            const QList<std::function<void()>> waiting = std::exchange(lone->waiting, {});
            for (const auto &fire : waiting)
                fire();
        });
}

// One engine as the tools describe it (schemas/engine.json).
QJsonObject engineJson(const SandboxSite &site, const LoneEngine *lone)
{
    SandboxSite::State state = site.state();
    QString error = site.error();
    SandboxBackend::Health described = site.health();
    if (lone) {
        state = !lone->answered   ? SandboxSite::State::Unknown
                : lone->reachable ? SandboxSite::State::Up
                                  : SandboxSite::State::Down;
        error = lone->error;
        described = lone->described;
    }
    QJsonObject o{{QStringLiteral("address"), site.endpoint()},
                  {QStringLiteral("state"), SandboxSite::stateName(state)},
                  {QStringLiteral("running"), site.running()},
                  {QStringLiteral("capacity"), site.capacity()},
                  {QStringLiteral("placed"), qint64(site.placed())}};
    if (!described.product.isEmpty())
        o.insert(QStringLiteral("product"), described.product);
    if (!described.version.isEmpty())
        o.insert(QStringLiteral("version"), described.version);
    if (!described.apiVersion.isEmpty())
        o.insert(QStringLiteral("api_version"), described.apiVersion);
    if (described.cpus > 0)
        o.insert(QStringLiteral("cpus"), described.cpus);
    if (described.memoryBytes > 0)
        o.insert(QStringLiteral("memory_bytes"), described.memoryBytes);
    // Known before the engine answers: it is the server's setting.
    if (const QString runtime = site.backend()->runtime(); !runtime.isEmpty())
        o.insert(QStringLiteral("runtime"), runtime);
    if (!described.runtimes.isEmpty())
        o.insert(QStringLiteral("runtimes"), QJsonArray::fromStringList(described.runtimes));
    if (state == SandboxSite::State::Down)
        o.insert(QStringLiteral("error"), error);
    return o;
}

QJsonArray enginesJson(const SandboxService &sandbox, const LoneEngine &lone)
{
    QJsonArray engines;
    const bool alone = sandbox.sites().size() == 1;
    for (const SandboxSite *site : sandbox.sites())
        engines.append(engineJson(*site, alone ? &lone : nullptr));
    return engines;
}

// Each language's image on the first engine (several would repeat the list per engine for what is
// nearly always the same answer): ready, being built (with containers/build-images.sh's
// estimate), missing... `done` with the schema's "images" once all answered.
void askImages(SandboxService &sandbox, QObject *context,
               const std::function<void(const QJsonArray &)> &done)
{
    const QStringList names = sandbox.languages().names();
    auto answers = std::make_shared<QHash<QString, QJsonObject>>();
    auto left = std::make_shared<int>(int(names.size()));
    const auto finish = [names, answers, done] {
        QJsonArray images;
        for (const QString &name : names)
            images.append(answers->value(name));
        done(images);
    };
    if (names.isEmpty() || sandbox.sites().isEmpty()) {
        finish();
        return;
    }
    SandboxBackend *backend = sandbox.sites().constFirst()->backend();
    for (const QString &name : names) {
        const Language *language = sandbox.languages().find(name);
        const QString image = language ? language->image : QString();
        const QString build = language ? language->buildName : QString();
        backend->imageStatus(
            image, context,
            [name, image, build, answers, left, finish](const SandboxBackend::ImageStatus &s) {
                using State = SandboxBackend::ImageStatus::State;
                QJsonObject o{{QStringLiteral("language"), name},
                              {QStringLiteral("image"), image},
                              {QStringLiteral("state"), s.stateName()}};
                if (s.secondsLeft() >= 0 &&
                    (s.state == State::Building || s.state == State::Queued))
                    o.insert(QStringLiteral("seconds_left"), s.secondsLeft());
                const QString message = ImageWording::listing(s, name, image, build);
                if (!message.isEmpty())
                    o.insert(QStringLiteral("message"), message);
                answers->insert(name, o);
                if (--*left == 0)
                    finish();
            });
    }
}

// For a model that reads the text only: which images are not ready, and why.
QString imagesText(const QJsonArray &images)
{
    QStringList ready;
    QStringList lines;
    for (const QJsonValue &v : images) {
        const QJsonObject i = v.toObject();
        if (i.value(u"state").toString() == u"ready")
            ready.append(i.value(u"language").toString());
        else
            lines.append(QStringLiteral("- %1: %2")
                             .arg(i.value(u"language").toString(), i.value(u"message").toString()));
    }
    if (lines.isEmpty())
        return QStringLiteral("Images: all ready.");
    return QStringLiteral("Images ready: %1.\nNot ready:\n%2")
        .arg(ready.isEmpty() ? QStringLiteral("none") : ready.join(QStringLiteral(", ")),
             lines.join(u'\n'));
}

// For a model that reads the text only: one line per engine.
QString enginesText(const QJsonArray &engines)
{
    QStringList lines;
    for (const QJsonValue &v : engines) {
        const QJsonObject e = v.toObject();
        QString line = QStringLiteral("- %1: %2")
                           .arg(e.value(u"address").toString(), e.value(u"state").toString());
        if (e.contains(u"product"))
            line += QStringLiteral(", %1 %2").arg(e.value(u"product").toString(),
                                                  e.value(u"version").toString());
        if (e.contains(u"runtime"))
            line += QStringLiteral(", runtime %1").arg(e.value(u"runtime").toString());
        // Nothing runs on one that is down, unless it went down under them.
        if (!e.contains(u"error") || e.value(u"running").toInt() > 0)
            line += QStringLiteral(", %1 of %2 running")
                        .arg(e.value(u"running").toInt())
                        .arg(e.value(u"capacity").toInt());
        if (e.contains(u"error"))
            line += QStringLiteral(" (%1)").arg(e.value(u"error").toString());
        lines.append(line);
    }
    return QStringLiteral("Container engine%1:\n%2")
        .arg(engines.size() == 1 ? QString() : QStringLiteral("s"), lines.join(u'\n'));
}

// The preinstalled libraries of a language, as the run tools' descriptions name them.
QString preinstalledOf(const SandboxService &sandbox, const QString &language)
{
    const Language *l = sandbox.languages().find(language);
    return l ? l->preinstalled.join(QStringLiteral(", ")) : QString();
}
} // namespace

bool SandboxTools::parseFiles(const QJsonArray &files, const QString &programFile,
                              ExecutionRequest *request, QString *error)
{
    QSet<QString> seen;
    for (const QJsonValue &v : files) {
        const QJsonObject f = v.toObject();
        const QString path = WorkdirPath::normalize(f.value(u"path").toString(), error);
        if (path.isEmpty())
            return false;
        if (path == programFile) {
            *error =
                QStringLiteral("file path '%1' is where the program itself is written").arg(path);
            return false;
        }
        if (seen.contains(path)) {
            *error = QStringLiteral("file path '%1' is given twice").arg(path);
            return false;
        }
        seen.insert(path);
        const QString content = f.value(u"content").toString();
        QByteArray bytes;
        if (f.value(u"encoding").toString() == u"base64") {
            // Line breaks (as base64 tools wrap their output) are not part of the data.
            QByteArray encoded = content.toLatin1();
            encoded.replace('\n', QByteArray()).replace('\r', QByteArray());
            auto decoded =
                QByteArray::fromBase64Encoding(encoded, QByteArray::AbortOnBase64DecodingErrors);
            if (!decoded || encoded.size() % 4 == 1) {
                *error = QStringLiteral("file '%1': content is not valid base64").arg(path);
                return false;
            }
            bytes = *decoded;
        } else {
            bytes = content.toUtf8();
        }
        request->files.append({path, bytes});
    }
    return true;
}

QString SandboxTools::parseNetwork(const QJsonObject &args, const SandboxConfig &config,
                                   std::optional<QStringList> *egress)
{
    if (!args.contains(u"network"))
        return QString();
    QStringList entries;
    for (const QJsonValue &v : args.value(u"network").toArray())
        entries.append(v.toString());
    QString error;
    const QStringList asked = EgressList::parse(entries, &error);
    if (!error.isEmpty())
        return QStringLiteral("Invalid network: %1.").arg(error);
    *egress = asked;
    if (asked.isEmpty())
        return QString();
    const QString hosts = asked.join(QStringLiteral(", "));
    // The allow-list and the hosts of the bound secrets.
    const RunNetwork server = RunNetwork::decide(config);
    const QStringList reachable = server.reachableHosts();
    if (!reachable.isEmpty()) {
        const QString beyond = EgressList::uncovered(asked, reachable);
        // Named by the options that made the list.
        const QString source = !server.bindsSecrets()    ? QStringLiteral("--egress")
                               : config.egress.isEmpty() ? QStringLiteral("--secret")
                                                         : QStringLiteral("--egress and --secret");
        if (!beyond.isEmpty())
            return QStringLiteral("Refused by this Code Sandbox server: runs may reach only the "
                                  "hosts of its allow-list (%3: %1), and %2 is not among them. "
                                  "Ask only for those, or ask the user to add %2 to the server's "
                                  "--egress.")
                .arg(reachable.join(QStringLiteral(", ")), beyond, source);
        return QString();
    }
    if (config.network)
        return QString(); // the open network: the run narrows it to its list
    return QStringLiteral("Refused by this Code Sandbox server: its runs have no network (it was "
                          "started without --egress), so %1 cannot be reached. Ask the user "
                          "to start it with --egress for the hosts needed.")
        .arg(hosts);
}

QString SandboxTools::parseWorkspaces(const QJsonObject &args, const SandboxConfig &config,
                                      QStringList *names)
{
    QStringList unknown;
    for (const QJsonValue &v : args.value(u"workspaces").toArray()) {
        const QString name = v.toString();
        if (!config.workspace(name))
            unknown.append(name);
        else if (!names->contains(name))
            names->append(name);
    }
    if (unknown.isEmpty())
        return QString();
    QStringList known;
    for (const Workspace &w : config.workspaces)
        known.append(w.name);
    if (known.isEmpty())
        return QStringLiteral("This Code Sandbox server has no workspaces, so %1 cannot be "
                              "used. Ask the user to start it with --workspace NAME=PATH (or to "
                              "add one in Settings → Workspaces).")
            .arg(unknown.join(QStringLiteral(", ")));
    return QStringLiteral("Unknown workspace %1: this Code Sandbox server has %2.")
        .arg(unknown.join(QStringLiteral(", ")), known.join(QStringLiteral(", ")));
}

struct SandboxTools::RunContext
{
    SandboxService *sandbox;
    SessionManager *sessions;
    RunGate *gate;
    LiveRuns *live; // the runs of clients with the run view
};

void SandboxTools::runCode(const RunContext &context, ToolCall *call, const ExecutionRequest &asked,
                           bool jsonText)
{
    // A kept session of an earlier server comes back first, for its own assistant only.
    const QString kept = call->arguments().value(u"session_id").toString();
    const RunContext again = context;
    if (context.sessions && SessionTools::reviveFirst(context.sessions, call, kept,
                                                      [again, asked, jsonText](ToolCall *t) {
                                                          runCode(again, t, asked, jsonText);
                                                      }))
        return;
    ExecutionRequest request = asked;
    // A host that renders the run view follows the run from now on, approval included.
    if (ProtocolEra::declaresUi(call->clientCapabilities()))
        context.live->add(call, request.language, request.code);
    std::optional<QStringList> hosts;
    const QString refused = parseNetwork(call->arguments(), context.sandbox->config(), &hosts);
    if (!refused.isEmpty()) {
        call->finishWithError(refused);
        return;
    }
    const QString badWorkspace =
        parseWorkspaces(call->arguments(), context.sandbox->config(), &request.workspaces);
    if (!badWorkspace.isEmpty()) {
        call->finishWithError(badWorkspace);
        return;
    }
    const QString sessionId = call->arguments().value(u"session_id").toString();
    if (!sessionId.isEmpty() && context.sessions) {
        const QString refusal = sessionWorkspaces(*context.sessions, call, sessionId, &request);
        if (!refusal.isEmpty()) {
            call->finishWithError(refusal);
            return;
        }
    }
    if (hosts && !sessionId.isEmpty()) {
        call->finishWithError(QStringLiteral("A session's network is its own, chosen when it "
                                             "was created: call without network in a session."));
        return;
    }
    // A call in a session runs with the session's network: the policy checks it, and the
    // approval shows it (a call that is not the caller's own session is refused later).
    if (!sessionId.isEmpty() && context.sessions) {
        const SessionAdmission session =
            context.sessions->admit(sessionId, call->owner(), nullptr, false);
        if (session.admitted())
            request.network = session.session->network();
    }
    if (!context.gate) {
        // No policies: the server's settings and the call decide.
        if (!request.network)
            request.network = RunNetwork::decide(context.sandbox->config(), hosts);
        startRun(context, call, request, jsonText);
        return;
    }
    const RunContext c = context;
    context.gate->admit(
        call, request, hosts,
        [c, call, jsonText](const ExecutionRequest &admitted, const QString &refusal) {
            if (!refusal.isEmpty())
                call->finishWithError(refusal);
            else
                startRun(c, call, admitted, jsonText);
        });
}

void SandboxTools::startRun(const RunContext &context, ToolCall *call,
                            const ExecutionRequest &asked, bool jsonText)
{
    SandboxService &sandbox = *context.sandbox;
    SessionManager *sessions = context.sessions;
    ExecutionRequest request = asked;
    request.source = call->assistant().isEmpty() ? QStringLiteral("MCP client") : call->assistant();
    if (call->assistant() != call->clientName())
        request.claimedName = call->clientName();
    request.identity = call->identity().describe();
    if (context.gate)
        context.gate->policyFor(call, &request.identityNote);
    if (!request.identityNote.isEmpty())
        request.identityNote = QStringLiteral("Ran under the default policy: it ") +
                               request.identityNote + QLatin1Char('.');
    request.tool = call->tool();
    const QString language = request.language;
    // Resolved once here (execute_code already did) and carried on to the service.
    if (!request.resolved)
        if (const Language *found = sandbox.languages().find(language))
            request.resolved = *found;
    const Language *lang = request.resolved ? &*request.resolved : nullptr;
    const QString sessionId = call->arguments().value(u"session_id").toString();
    Execution *execution = nullptr;
    if (!sessionId.isEmpty()) {
        if (!sessions) {
            call->finishWithError(QStringLiteral("This server has no sessions."));
            return;
        }
        const SessionAdmission verdict =
            sessions->admit(sessionId, call->owner(), lang, !request.libraries.isEmpty());
        if (!verdict.admitted()) {
            call->finishWithError(SessionTools::refusalText(verdict, sessionId));
            return;
        }
        request.sessionId = sessionId;
        request.session = verdict.session;
        execution = sessions->execute(request);
    } else {
        execution = sandbox.execute(request);
    }
    context.live->started(call, execution);
    call->progress(QStringLiteral("starting a %1 sandbox").arg(language));
    followRun(context, call, execution, lang ? lang->printHint : QString(), jsonText,
              execution->request().network && execution->request().network->askOtherHosts);
}

void SandboxTools::followRun(const RunContext &context, ToolCall *call, Execution *execution,
                             const QString &hint, bool jsonText, bool askOtherHosts)
{
    QObject::connect(execution, &Execution::queued, call, [call](int position) {
        call->progress(QStringLiteral("queued: %1 ahead (all sandboxes busy)").arg(position - 1));
    });
    QObject::connect(execution, &Execution::started, call,
                     [call] { call->progress(QStringLiteral("running")); });
    // Progress names whole lines: output arrives in pieces that the engine's framing and the end
    // line's scanner cut anywhere, and half a line ("starte", "host=3f2a") misleads a client that
    // reads it. A line too long for a progress message gives none.
    auto lines = std::make_shared<std::array<LineFramer, 2>>(
        std::array<LineFramer, 2>{LineFramer(kMaxProgressLine), LineFramer(kMaxProgressLine)});
    QObject::connect(
        execution, &Execution::output, call, [call, lines](int stream, const QByteArray &bytes) {
            const QString logger =
                stream == 2 ? QStringLiteral("stderr") : QStringLiteral("stdout");
            call->log(QStringLiteral("info"), logger, QString::fromUtf8(bytes));
            if (!call->wantsProgress())
                return;
            // A carriage return ends a line too: progress bars redraw with it.
            QByteArray text = bytes;
            text.replace('\r', '\n');
            const LineFramer::Output complete = (*lines)[stream == 2 ? 1 : 0].feed(text);
            if (!complete.lines.isEmpty())
                call->progress(logger + QStringLiteral(": ") +
                               progressLine(complete.lines.first()));
        });
    const QString viewId = context.live->idOf(call);
    // A session's call is followed by a snapshot, which the view shows once it is kept
    // (list_snapshots finds it by the run it followed).
    QJsonObject snapshotOf;
    if (!viewId.isEmpty() && context.sessions && context.sessions->snapshots() &&
        !execution->request().sessionId.isEmpty())
        snapshotOf = {{QStringLiteral("session_id"), execution->request().sessionId},
                      {QStringLiteral("after_run"), execution->runId()}};
    QObject::connect(execution, &Execution::finished, call,
                     [call, hint, jsonText, viewId, snapshotOf](const ExecutionResult &r) {
                         QJsonObject result = RunWording::toolResult(r, hint, jsonText);
                         // For the run view only (hosts without it get today's result): what
                         // the window shows beside the exit code.
                         if (!viewId.isEmpty())
                             result.insert(QStringLiteral("_meta"),
                                           viewFigures(r, viewId, snapshotOf));
                         call->finish(result);
                     });
    QObject::connect(call, &ToolCall::cancelRequested, execution,
                     [execution] { execution->cancel(); });
    if (context.gate && askOtherHosts) {
        // A connection beyond the run's list waits for a person, as a run does.
        const QPointer<Execution> run(execution);
        const QPointer<RunGate> asker(context.gate);
        QObject::connect(execution, &Execution::connectionHeld, call,
                         [asker, call, run](quint64 id, const QString &host, int port) {
                             if (!run)
                                 return;
                             const auto answer = [run, id](bool allow, const QString &widenTo) {
                                 if (run)
                                     run->answerConnection(id, allow, widenTo);
                             };
                             if (asker)
                                 asker->askHost(call, run, host, port, answer);
                             else
                                 answer(false, QString());
                         });
    }
}

void SandboxTools::registerAll(McpServer &server, SandboxService &sandbox, SessionManager *sessions,
                               RunGate *gate)
{
    const SandboxConfig &config = sandbox.config();
    const ToolSchemas::Values values{
        {QStringLiteral("limits"), RunWording::describeLimits(config)},
        {QStringLiteral("execution_output"), RunWording::executionOutputSchema()},
        {QStringLiteral("session_id"),
         sessions ? QJsonValue(ToolSchemas::fragment(QStringLiteral("session_id")))
                  : QJsonValue(QJsonValue::Undefined)},
        {QStringLiteral("languages"), sandbox.languages().names().join(QStringLiteral(", "))},
        {QStringLiteral("python_libraries"), preinstalledOf(sandbox, QStringLiteral("python"))},
        {QStringLiteral("javascript_libraries"),
         preinstalledOf(sandbox, QStringLiteral("javascript"))},
        {QStringLiteral("max_timeout"), config.maxTimeoutSec},
        {QStringLiteral("default_timeout"), config.defaultTimeoutSec},
        {QStringLiteral("engine"), ToolSchemas::fragment(QStringLiteral("engine"))},
        {QStringLiteral("network"), RunWording::networkFragment(config)},
        {QStringLiteral("workspaces"), RunWording::workspacesFragment(config)},
        {QStringLiteral("libraries_description"),
         ToolSchemas::file(QStringLiteral("execute_code"))
             .value(u"librariesDescription")
             .toObject()
             .value(config.allowInstall ? QStringLiteral("installAllowed")
                                        : QStringLiteral("installRefused"))}};
    // A lone engine is asked once now, so the first read of sandbox://environments knows it.
    const auto lone = std::make_shared<LoneEngine>();
    askEngines(sandbox, lone, nullptr, {});
    // The run view's state lives as long as the server.
    auto *live = new LiveRuns(&server);
    if (gate)
        QObject::connect(gate, &RunGate::asking, live,
                         [live](ToolCall *call) { live->waitingForApproval(call); });
    const RunContext context{&sandbox, sessions, gate, live};
    registerRunTools(server, context, values);
    registerViewTools(server, context);
    registerLanguageTools(server, sandbox, lone, values);
    registerResources(server, sandbox, lone);
    if (sessions)
        SessionTools::registerAll(server, *sessions, gate);
}

void SandboxTools::registerRunTools(McpServer &server, const RunContext &context,
                                    const ToolSchemas::Values &values)
{
    SandboxService *sb = context.sandbox;
    SessionManager *sessions = context.sessions;
    ToolDefinition py = ToolSchemas::tool(QStringLiteral("run_python_code"), values);
    py.handler = [context](ToolCall *call) {
        runCode(context, call, request(QStringLiteral("python"), call->arguments()), false);
    };
    // A run may outlast what a client waits for one request (often 60 s): these tools may run
    // as tasks, answered at once with a handle the client polls.
    py.taskSupport = QStringLiteral("optional");
    py.ui = viewMeta();
    server.tools().add(py);

    ToolDefinition js = ToolSchemas::tool(QStringLiteral("run_javascript_code"), values);
    js.handler = [context](ToolCall *call) {
        runCode(context, call, request(QStringLiteral("javascript"), call->arguments()), false);
    };
    js.taskSupport = QStringLiteral("optional");
    js.ui = viewMeta();
    server.tools().add(js);

    ToolDefinition exec = ToolSchemas::tool(QStringLiteral("execute_code"), values);
    exec.handler = [context, sb, sessions](ToolCall *call) {
        const QJsonObject args = call->arguments();
        // In a session the language is the session's unless the call says otherwise.
        QString lang = args.value(u"language").toString(QStringLiteral("python"));
        if (!args.contains(u"language") && sessions) {
            const SessionAdmission found =
                sessions->lookup(args.value(u"session_id").toString(), call->owner());
            if (found.admitted())
                lang = found.session->language().name;
        }
        const Language *l = sb->languages().find(lang);
        if (!l) {
            call->finishWithError(
                QStringLiteral("Unsupported language '%1'. Supported: %2.")
                    .arg(lang, sb->languages().names().join(QStringLiteral(", "))));
            return;
        }
        ExecutionRequest r = request(l->name, args);
        r.resolved = *l;
        QString error;
        if (!parseFiles(args.value(u"files").toArray(), l->fileName, &r, &error)) {
            call->finishWithError(QStringLiteral("Invalid files: %1.").arg(error));
            return;
        }
        for (const QJsonValue &v : args.value(u"libraries").toArray())
            r.libraries.append(v.toString());
        runCode(context, call, r, true);
    };
    exec.taskSupport = QStringLiteral("optional");
    exec.ui = viewMeta();
    server.tools().add(exec);
}

QJsonObject SandboxTools::viewFigures(const ExecutionResult &r, const QString &viewId,
                                      const QJsonObject &snapshotOf)
{
    QJsonObject run{{QStringLiteral("run_id"), viewId}};
    if (!snapshotOf.isEmpty())
        run.insert(QStringLiteral("snapshot_of"), snapshotOf);
    if (r.peakMemoryBytes >= 0)
        run.insert(QStringLiteral("peak_memory_bytes"), r.peakMemoryBytes);
    if (r.cpuTimeMs >= 0)
        run.insert(QStringLiteral("cpu_time_ms"), r.cpuTimeMs);
    if (!r.runtime.isEmpty())
        run.insert(QStringLiteral("runtime"), r.runtime);
    return {{QStringLiteral("code-sandbox/run"), run}};
}

QJsonObject SandboxTools::viewMeta()
{
    return {{QStringLiteral("resourceUri"), QLatin1String(kViewUri)}};
}

void SandboxTools::registerViewTools(McpServer &server, const RunContext &context)
{
    LiveRuns *live = context.live;
    SandboxService *sb = context.sandbox;
    // Called by the view, never by the model: hosts leave them out of the model's tools.
    const QJsonObject appOnly{{QStringLiteral("visibility"), QJsonArray{QStringLiteral("app")}}};

    ToolDefinition read = ToolSchemas::tool(QStringLiteral("read_run_output"), {});
    read.ui = appOnly;
    read.appOnly = true;
    read.handler = [live, sb](ToolCall *call) {
        QString error;
        // The view sends the language as the call gave it ("py", "Python"): runs know its name.
        QJsonObject arguments = call->arguments();
        if (const Language *l = sb->languages().find(arguments.value(u"language").toString()))
            arguments.insert(QStringLiteral("language"), l->name);
        const QJsonObject o = live->read(call->owner(), arguments, &error);
        if (o.isEmpty()) {
            call->finishWithError(error);
            return;
        }
        call->finish({{QStringLiteral("content"),
                       QJsonArray{ToolCall::textContent(
                           QStringLiteral("run %1: %2")
                               .arg(o.value(u"run_id").toString(), o.value(u"state").toString()))}},
                      {QStringLiteral("structuredContent"), o}});
    };
    server.tools().add(read);

    ToolDefinition stop = ToolSchemas::tool(QStringLiteral("stop_run"), {});
    stop.ui = appOnly;
    stop.appOnly = true;
    stop.handler = [live](ToolCall *call) {
        QString error;
        const QString id = call->arguments().value(u"run_id").toString();
        if (!live->stop(call->owner(), id, RunStopReason::fromView(), &error)) {
            call->finishWithError(error);
            return;
        }
        call->finish(
            {{QStringLiteral("content"),
              QJsonArray{ToolCall::textContent(QStringLiteral("run %1: stopping").arg(id))}}});
    };
    server.tools().add(stop);

    ResourceDefinition view;
    view.uri = QLatin1String(kViewUri);
    view.name = QStringLiteral("run-view");
    view.title = QStringLiteral("Code Sandbox run");
    view.description = QStringLiteral("A run as it happens: its code, output, figures, files and "
                                      "status, with a Stop button.");
    view.mimeType = ProtocolEra::kUiMimeType;
    view.forUi = true;
    // Everything is inline: no origin to reach, nothing to load (the host's strictest policy).
    view.ui = {
        {QStringLiteral("csp"), QJsonObject{{QStringLiteral("connectDomains"), QJsonArray()},
                                            {QStringLiteral("resourceDomains"), QJsonArray()},
                                            {QStringLiteral("frameDomains"), QJsonArray()},
                                            {QStringLiteral("baseUriDomains"), QJsonArray()}}},
        {QStringLiteral("prefersBorder"), true}};
    view.read = [] {
        QFile file(QStringLiteral(":/code-sandbox/views/run.html"));
        return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
    };
    server.resources().add(view);
}

void SandboxTools::registerLanguageTools(McpServer &server, SandboxService &sandbox,
                                         const std::shared_ptr<LoneEngine> &lone,
                                         const ToolSchemas::Values &values)
{
    SandboxService *sb = &sandbox;
    const QJsonArray languageNames = QJsonArray::fromStringList(sandbox.languages().names());
    ToolDefinition list = ToolSchemas::tool(QStringLiteral("get_supported_languages"), values);
    list.handler = [sb, lone, languageNames](ToolCall *call) {
        askEngines(*sb, lone, call, [sb, lone, languageNames, call] {
            askImages(*sb, call, [sb, lone, languageNames, call](const QJsonArray &images) {
                const QJsonArray engines = enginesJson(*sb, *lone);
                // The first text is the list alone, as llm-sandbox answered; the engines and
                // the images follow.
                call->finish(
                    {{QStringLiteral("content"),
                      QJsonArray{ToolCall::textContent(QString::fromUtf8(
                                     QJsonDocument(languageNames).toJson(QJsonDocument::Compact))),
                                 ToolCall::textContent(enginesText(engines)),
                                 ToolCall::textContent(imagesText(images))}},
                     {QStringLiteral("structuredContent"),
                      QJsonObject{{QStringLiteral("languages"), languageNames},
                                  {QStringLiteral("engines"), engines},
                                  {QStringLiteral("images"), images}}}});
            });
        });
    };
    server.tools().add(list);

    ToolDefinition details = ToolSchemas::tool(QStringLiteral("get_language_details"), values);
    details.handler = [sb](ToolCall *call) {
        const QString name = call->arguments().value(u"language").toString();
        const Language *l = sb->languages().find(name);
        if (!l) {
            call->finishWithError(
                QStringLiteral("Unsupported language '%1'. Supported: %2.")
                    .arg(name, sb->languages().names().join(QStringLiteral(", "))));
            return;
        }
        QJsonObject base = l->toJson();
        if (!sb->config().workspaces.isEmpty())
            base.insert(QStringLiteral("workspaces"), workspacesJson(sb->config()));
        QPointer<ToolCall> guard(call);
        // The version is read from the image itself, once, by running its version command.
        sb->languageVersion(l->name, [guard, base](const QString &version) {
            if (!guard)
                return;
            QJsonObject o = base;
            // The first line is the version; further lines, where the language prints them, are
            // the preinstalled libraries as the image has them ("numpy 1.24.2").
            const QStringList lines = version.split(u'\n', Qt::SkipEmptyParts);
            o.insert(QStringLiteral("version"),
                     lines.isEmpty() ? QStringLiteral("unknown (the image could not be run)")
                                     : lines.first().trimmed());
            if (lines.size() > 1) {
                QJsonArray libraries;
                for (const QString &l : lines.mid(1))
                    libraries.append(l.trimmed());
                o.insert(QStringLiteral("preinstalled_libraries"), libraries);
            }
            guard->finish({{QStringLiteral("content"),
                            QJsonArray{ToolCall::textContent(QString::fromUtf8(
                                QJsonDocument(o).toJson(QJsonDocument::Indented)))}},
                           {QStringLiteral("structuredContent"), o}});
        });
    };
    server.tools().add(details);
}

void SandboxTools::registerResources(McpServer &server, SandboxService &sandbox,
                                     const std::shared_ptr<LoneEngine> &lone)
{
    SandboxService *sb = &sandbox;
    // A JSON document about the languages, made anew each time it is read.
    const auto add = [&server](const char *name, const QString &title, const QString &description,
                               const std::function<QJsonDocument()> &make) {
        ResourceDefinition r;
        r.uri = QStringLiteral("sandbox://") + QLatin1String(name);
        r.name = QLatin1String(name);
        r.title = title;
        r.description = description;
        r.mimeType = QStringLiteral("application/json");
        r.read = [make] { return QString::fromUtf8(make().toJson(QJsonDocument::Indented)); };
        server.resources().add(r);
    };
    add("languages", QStringLiteral("Supported languages"),
        QStringLiteral("Every language with its image, run command and libraries"), [sb] {
            QJsonArray arr;
            for (const Language &l : sb->languages().all())
                arr.append(l.toJson());
            return QJsonDocument(arr);
        });
    add("environments", QStringLiteral("Sandbox environments"),
        QStringLiteral("Language → image and preinstalled libraries; \"engines\": the container "
                       "engines the sandboxes run on (address, product, version, state, running "
                       "and capacity, why one is down)"),
        [sb, lone] {
            QJsonObject map;
            for (const Language &l : sb->languages().all())
                map.insert(l.name, QJsonObject{{QStringLiteral("image"), l.image},
                                               {QStringLiteral("libraries"),
                                                QJsonArray::fromStringList(l.preinstalled)}});
            map.insert(QStringLiteral("engines"), enginesJson(*sb, *lone));
            if (!sb->config().workspaces.isEmpty())
                map.insert(QStringLiteral("workspaces"), workspacesJson(sb->config()));
            // Read without waiting: what the lone engine said last, and a fresh question for the
            // next read.
            askEngines(*sb, lone, nullptr, {});
            return QJsonDocument(map);
        });
}
