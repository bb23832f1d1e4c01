#include "sessionmanager.h"

#include "execution.h"
#include "language.h"
#include "sandboxlog.h"
#include "sandboxservice.h"
#include "sandboxsession.h"
#include "snapshotexchange.h"
#include "workspacetransfer.h"

#include <QFile>
#include <QPointer>
#include <QUuid>

namespace {
// The owner of an imported snapshot: whoever may start a session from it.
const QString kImported = QStringLiteral("*");
// Why a session ends when it is over for good (a kept one too).
const QString kClosedReason = QStringLiteral("closed with close_session");
const QString kExpiredReason = QStringLiteral("expired after");
// How many ended sessions are remembered to explain later calls.
constexpr int kRememberEnded = 256;
} // namespace

SessionManager::SessionManager(SandboxService *sandbox, const Limits &limits, QObject *parent)
    : QObject(parent), m_sandbox(sandbox), m_limits(limits)
{
    m_expiry.setInterval(qBound(1000, m_limits.idleSec * 1000 / 10, 15000));
    connect(&m_expiry, &QTimer::timeout, this, &SessionManager::expireIdle);
    m_expiry.start();
    if (!m_limits.snapshotFolder.isEmpty()) {
        m_snapshots = std::make_unique<SnapshotStore>(m_limits.snapshotFolder, m_limits.snapshots);
        m_kept = std::make_unique<KeptSessions>(m_limits.snapshotFolder);
        for (const KeptSessions::Kept &k : m_kept->load(m_sandbox->config())) {
            for (const SessionSnapshot &s : k.snapshots)
                m_snapshots->adopt(s);
            m_dormant.insert(k.id, k);
        }
        // Sessions of an instance that stopped without cleaning up (killed), not kept: none can
        // use them.
        m_snapshots->sweepStale(24 * 3600);
    }
}

SessionManager::~SessionManager()
{
    m_stopping = true;
    closeAll(QStringLiteral("the server stopped"));
    // A session's snapshots are its own: they go with this instance, unless it is kept.
    if (m_snapshots)
        for (auto it = m_blueprints.cbegin(); it != m_blueprints.cend(); ++it)
            if (!it->kept || !m_dormant.contains(it.key()))
                m_snapshots->removeSession(it.key());
}

void SessionManager::create(const QString &owner, const QString &languageName,
                            const QStringList &libraries, int timeoutSec, const RunNetwork &network,
                            const std::function<void(const QString &)> &progress,
                            const Created &done, const QStringList &workspaces)
{
    SessionBlueprint b;
    b.owner = owner;
    b.language = languageName;
    b.libraries = libraries;
    b.timeoutSec = timeoutSec;
    b.network = network;
    b.workspaces = workspaces;
    create(b, progress, done);
}

void SessionManager::create(const SessionBlueprint &blueprint,
                            const std::function<void(const QString &)> &progress,
                            const Created &done, const QString &givenId)
{
    const QString &owner = blueprint.owner;
    const QStringList &libraries = blueprint.libraries;
    const RunNetwork &network = blueprint.network;
    QList<Workspace> folders;
    QString refusal;
    const Language *language = admitBlueprint(blueprint, &folders, &refusal);
    if (!language) {
        done(nullptr, refusal);
        return;
    }
    // The id names the instance that holds the container, so that a call reaching another
    // instance (behind a load balancer, say) is told where its session lives.
    const QString id =
        !givenId.isEmpty()
            ? givenId
            : QStringLiteral("s-%1-%2").arg(instanceTag(),
                                            QUuid::createUuid().toString(QUuid::Id128).left(12));
    const int timeout = m_sandbox->config().callTimeout().forCall(blueprint.timeoutSec);
    auto *session = new SandboxSession(id, owner, *language, timeout, this);
    session->setLibraries(libraries);
    session->setNetwork(network);
    if (!folders.isEmpty())
        session->setWorkspaces(new WorkspaceTransfer(folders, m_sandbox->workspaceScanner(),
                                                     m_sandbox->config().workspaceMaxBytes, nullptr,
                                                     WorkspaceTransfer::Kind::Session));
    m_sessions.insert(id, session);
    SessionBlueprint made = blueprint;
    made.language = language->name;
    if (!made.createdAt.isValid())
        made.createdAt = QDateTime::currentDateTimeUtc();
    m_blueprints.insert(id, made);
    session->setKept(made.kept);
    connect(session, &SandboxSession::ended, this,
            [this, session](const QString &reason) { forget(session, reason); });

    QPointer<SandboxSession> guard(session);
    // Answered once: ready, or ended before it was.
    auto answered = std::make_shared<bool>(false);
    const auto answer = [guard, done, answered](const QString &error) {
        if (*answered)
            return;
        *answered = true;
        done(error.isEmpty() ? guard.data() : nullptr, error);
    };
    connect(session, &SandboxSession::ready, this, [this, answer, guard] {
        answer(QString());
        if (guard)
            Q_EMIT sessionCreated(guard);
    });
    connect(session, &SandboxSession::ended, this, [answer](const QString &reason) {
        answer(QStringLiteral("the session could not start: ") + reason);
    });
    if (progress)
        connect(session, &SandboxSession::progress, this, progress);
    launch(session, libraries, network, progress);
}

const Language *SessionManager::admitBlueprint(const SessionBlueprint &b, QList<Workspace> *folders,
                                               QString *refusal) const
{
    const Language *language = m_sandbox->languages().find(b.language);
    if (!language) {
        *refusal = QStringLiteral("unsupported language '%1'; supported: %2")
                       .arg(b.language, m_sandbox->languages().names().join(u", "));
        return nullptr;
    }
    if (m_sessions.size() >= m_limits.maxSessions) {
        *refusal = QStringLiteral("%1 sessions are open, the most this server allows; close "
                                  "one with close_session (list_sessions shows yours)")
                       .arg(m_sessions.size());
        return nullptr;
    }
    if (!b.libraries.isEmpty()) {
        *refusal = m_sandbox->librariesRefusal(*language, b.libraries);
        if (!refusal->isEmpty())
            return nullptr;
    }
    for (const QString &name : b.workspaces) {
        const Workspace *w = m_sandbox->config().workspace(name);
        if (!w) {
            *refusal = QStringLiteral("this server has no workspace '%1'").arg(name);
            return nullptr;
        }
        folders->append(*w);
    }
    return language;
}

void SessionManager::launch(SandboxSession *session, const QStringList &libraries,
                            const RunNetwork &network,
                            const std::function<void(const QString &)> &progress)
{
    QPointer<SandboxSession> guard(session);
    const Language lang = session->language();
    const auto start = [this, guard, lang, network](const QString &volume) {
        if (!guard || guard->state() == SandboxSession::State::Ended)
            return;
        guard->setLibrariesVolume(volume);
        QString error;
        SandboxContainer *container =
            m_sandbox->createSessionContainer(lang, network, volume, &error);
        if (container)
            guard->attach(container);
        else
            guard->end(error);
    };
    if (libraries.isEmpty()) {
        m_sandbox->whenSettled(session, [start] { start(QString()); });
        return;
    }
    m_sandbox->ensureLibraries(
        lang, libraries, progress,
        [guard, start](const QString &volume, const QString &error) {
            if (!guard)
                return;
            if (!error.isEmpty())
                guard->end(error);
            else
                start(volume);
        },
        network);
}

SessionAdmission SessionManager::lookup(const QString &id, const QString &owner) const
{
    using Refusal = SessionAdmission::Refusal;
    SessionAdmission verdict;
    SandboxSession *session = m_sessions.value(id);
    // Another client's session is reported like an unknown one: its existence is not theirs to
    // learn.
    if (session && session->owner() == owner) {
        verdict.refusal = Refusal::None;
        verdict.session = session;
    } else if (!session && m_ended.contains(id)) {
        verdict.refusal = Refusal::Ended;
        verdict.endedReason = m_ended.value(id);
    } else if (id.count(u'-') == 2 && id.section(u'-', 1, 1) != instanceTag()) {
        verdict.refusal = Refusal::OtherInstance;
        verdict.instance = id.section(u'-', 1, 1);
        verdict.here = instanceTag();
    }
    return verdict;
}

SessionAdmission SessionManager::admit(const QString &id, const QString &owner,
                                       const Language *language, bool withLibraries) const
{
    using Refusal = SessionAdmission::Refusal;
    SessionAdmission verdict = lookup(id, owner);
    if (!verdict.admitted())
        return verdict;
    const SandboxSession *session = verdict.session;
    if (language && session->language().name != language->name) {
        verdict.refusal = Refusal::OtherLanguage;
        verdict.asked = language->name;
    } else if (withLibraries) {
        verdict.refusal = Refusal::Libraries;
    } else if (session->state() == SandboxSession::State::Starting) {
        verdict.refusal = Refusal::Starting;
    } else if (session->state() == SandboxSession::State::Busy) {
        verdict.refusal = Refusal::Busy;
    }
    return verdict;
}

QString SessionManager::instanceTag() const
{
    QString tag;
    for (const QChar c : m_sandbox->config().instanceId)
        if (c.isLetterOrNumber() && c.unicode() < 128)
            tag += c.toLower();
    return tag.isEmpty() ? QStringLiteral("local") : tag.left(8);
}

Execution *SessionManager::execute(ExecutionRequest request)
{
    SandboxSession *session = request.session;
    Q_ASSERT(session);
    if (request.timeoutSec <= 0)
        request.timeoutSec = session->timeoutSec();
    // Its sandbox reaches what the session was given, and holds the session's workspaces: the
    // record and the questions say so.
    request.network = session->network();
    request.workspaces = session->workspaceNames();
    // A snapshot being taken finishes first: the call's program goes in after it.
    const bool now = !session->snapshotting();
    Execution *execution = m_sandbox->executeIn(session->container(), session->language(), request,
                                                session->workspaces(), now);
    // What the last snapshot could not keep is told with this call (once that snapshot is done).
    if (now)
        if (const QString note = session->takeSnapshotNote(); !note.isEmpty())
            execution->addNote(note);
    session->begin(execution);
    QPointer<SandboxSession> guard(session);
    QPointer<Execution> run(execution);
    if (!now)
        session->afterSnapshot([guard, run] {
            if (!run || run->isFinished())
                return;
            if (!guard || guard->state() == SandboxSession::State::Ended || !guard->container()) {
                run->fail(QStringLiteral("the session ended: ") +
                          (guard ? guard->endReason() : QStringLiteral("it is gone")));
                return;
            }
            if (const QString note = guard->takeSnapshotNote(); !note.isEmpty())
                run->addNote(note);
            run->run(guard->container());
        });
    connect(execution, &Execution::finished, this, [this, guard, runId = execution->runId()] {
        if (guard && guard->state() == SandboxSession::State::Idle)
            takeSnapshot(guard, runId);
    });
    return execution;
}

void SessionManager::takeSnapshot(SandboxSession *session, const QString &runId)
{
    if (!m_snapshots || !session->container())
        return;
    session->setSnapshotting(true);
    const int afterCall = session->calls();
    QPointer<SandboxSession> guard(session);
    SnapshotExchange::take(
        session->container(), m_snapshots->limits().perSessionBytes, session,
        [this, guard, afterCall, runId](const SnapshotExchange::Taken &taken) {
            if (!guard)
                return;
            SessionSnapshot snapshot;
            snapshot.sessionId = guard->id();
            snapshot.afterCall = afterCall;
            snapshot.afterRun = runId;
            snapshot.parent = guard->lastSnapshot();
            snapshot.createdAt = QDateTime::currentDateTimeUtc();
            snapshot.kind = taken.record.value(u"kind").toString(QStringLiteral("files"));
            snapshot.language = guard->language().name;
            snapshot.notKept = taken.record.value(u"not_kept").toArray();
            QString error = taken.error;
            const qsizetype before = m_snapshots->count();
            if (error.isEmpty())
                error = m_snapshots->add(&snapshot, taken.state, taken.files);
            // The caps made room: older steps (of any session) went.
            if (error.isEmpty() && m_snapshots->count() <= before)
                Q_EMIT snapshotsRemoved(QString());
            if (!error.isEmpty()) {
                qCWarning(lcSandbox).noquote()
                    << "session" << guard->id() << "no snapshot after call" << afterCall << ":"
                    << error;
                guard->setSnapshotNote(QStringLiteral("no snapshot was kept after call %1: %2")
                                           .arg(afterCall)
                                           .arg(error));
            } else {
                guard->setLastSnapshot(snapshot.id);
                if (!snapshot.notKept.isEmpty())
                    guard->setSnapshotNote(QStringLiteral("snapshot %1 (after call %2) did not "
                                                          "keep: %3")
                                               .arg(snapshot.id)
                                               .arg(afterCall)
                                               .arg(SessionSnapshot::namesOf(snapshot.notKept)));
                qCInfo(lcSandbox).noquote()
                    << "snapshot" << snapshot.id << snapshot.bytes << "bytes" << snapshot.kind;
                Q_EMIT snapshotTaken(guard, snapshot);
            }
            guard->setSnapshotting(false);
        });
}

KeptSessions::Kept SessionManager::keptOf(const SandboxSession *session) const
{
    KeptSessions::Kept k;
    k.id = session->id();
    k.blueprint = m_blueprints.value(k.id);
    k.blueprint.owner.clear(); // whoever brings it back owns it then
    k.lastSnapshot = session->lastSnapshot();
    k.calls = session->calls();
    k.snapshots = m_snapshots->of(k.id);
    return k;
}

KeptSessions::Kept SessionManager::saveKept(SandboxSession *session)
{
    if (!m_kept || !session->kept())
        return {};
    const KeptSessions::Kept k = keptOf(session);
    const QString error = m_kept->save(k);
    if (!error.isEmpty())
        qCWarning(lcSandbox).noquote() << "kept session" << k.id << "not saved:" << error;
    return k;
}

const SessionBlueprint *SessionManager::dormant(const QString &id) const
{
    const auto it = m_dormant.constFind(id);
    return it == m_dormant.cend() ? nullptr : &it->blueprint;
}

QStringList SessionManager::dormantOf(const QString &assistant) const
{
    QStringList ids;
    for (const KeptSessions::Kept &k : m_dormant)
        if (k.blueprint.assistant == assistant)
            ids.append(k.id);
    ids.sort();
    return ids;
}

void SessionManager::removeSnapshot(const QString &id)
{
    const SessionSnapshot *snapshot = m_snapshots ? m_snapshots->find(id) : nullptr;
    if (!snapshot)
        return;
    const QString sessionId = snapshot->sessionId;
    m_snapshots->remove(id);
    if (SandboxSession *live = m_sessions.value(sessionId))
        saveKept(live);
    Q_EMIT snapshotsRemoved(sessionId);
}

void SessionManager::dropKept(const QString &id)
{
    if (!m_dormant.remove(id))
        return;
    m_kept->drop(id);
    m_snapshots->removeSession(id);
    m_blueprints.remove(id);
}

void SessionManager::revive(const QString &id, const QString &owner, const QString &assistant,
                            const std::function<void(const QString &)> &progress,
                            const std::function<void(const QString &)> &done)
{
    const auto it = m_dormant.constFind(id);
    if (it == m_dormant.cend()) {
        done(QStringLiteral("no kept session '%1' here").arg(id));
        return;
    }
    // Another client's kept session is not theirs to learn of, nor to take.
    if (it->blueprint.assistant != assistant) {
        done(QStringLiteral("session '%1' was kept for another assistant").arg(id));
        return;
    }
    if (!m_kept->claim(id)) {
        m_dormant.remove(id);
        done(QStringLiteral("session '%1' was taken back by another instance of this server")
                 .arg(id));
        return;
    }
    const KeptSessions::Kept kept = m_dormant.take(id);
    SessionBlueprint b = kept.blueprint;
    b.owner = owner;
    if (progress)
        progress(QStringLiteral("bringing kept session %1 back").arg(id));
    // What went wrong leaves it kept as it was, for another try.
    const auto keepAgain = [this, kept](const QString &why) {
        m_kept->save(kept);
        m_dormant.insert(kept.id, kept);
        return why;
    };
    create(
        b, progress,
        [this, kept, progress, done, keepAgain](SandboxSession *session, const QString &error) {
            if (!session) {
                done(keepAgain(error));
                return;
            }
            session->setLastSnapshot(kept.lastSnapshot);
            if (kept.lastSnapshot.isEmpty()) {
                saveKept(session);
                done(QString());
                return;
            }
            restoreInto(session, kept.lastSnapshot, progress,
                        [this, session, done, keepAgain](SandboxSession *restored,
                                                         const QJsonObject &, const QString &why) {
                            if (!restored) {
                                session->setKept(false);
                                session->end(
                                    QStringLiteral("its snapshot could not be restored: ") + why);
                                done(keepAgain(why));
                                return;
                            }
                            saveKept(restored);
                            done(QString());
                        });
        },
        id);
}

const SessionSnapshot *SessionManager::snapshotOf(const QString &id, const QString &owner) const
{
    const SessionSnapshot *snapshot = m_snapshots ? m_snapshots->find(id) : nullptr;
    if (!snapshot)
        return nullptr;
    const QString &whose = m_blueprints.value(snapshot->sessionId).owner;
    // An imported one is everyone's: a person gave it.
    return whose == owner || whose == kImported ? snapshot : nullptr;
}

const SessionSnapshot *SessionManager::snapshotAfterRun(const QString &runId) const
{
    const SessionSnapshot *s = m_snapshots ? m_snapshots->afterRun(runId) : nullptr;
    // (Those of sessions this server knows: not a dormant kept one's.)
    return s && m_blueprints.contains(s->sessionId) ? s : nullptr;
}

QString SessionManager::exportSnapshot(const QString &id, const QString &path) const
{
    if (!m_snapshots || !m_snapshots->find(id))
        return QStringLiteral("no snapshot '%1' is kept").arg(id);
    return m_snapshots->exportTo(id, path);
}

QString SessionManager::importSnapshot(const QString &path, QString *id)
{
    if (!m_snapshots)
        return QStringLiteral("this server keeps no snapshots (--snapshot-max 0)");
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return QStringLiteral("cannot read %1: %2").arg(path, file.errorString());
    const qint64 cap = m_snapshots->limits().perSessionBytes;
    // The archive's own headers on top of its content.
    if (file.size() > cap + 1024 * 1024)
        return QStringLiteral("%1 is %2 MiB, more than a session's snapshots may hold (%3 MiB, "
                              "--snapshot-max)")
            .arg(path)
            .arg(double(file.size()) / (1 << 20), 0, 'f', 1)
            .arg(double(cap) / (1 << 20), 0, 'f', 0);
    SessionSnapshot read;
    QByteArray state, files;
    const QString error = SnapshotStore::unpack(file.readAll(), cap, &read, &state, &files);
    if (!error.isEmpty())
        return error;
    const Language *language = m_sandbox->languages().find(read.language);
    if (!language)
        return QStringLiteral("the snapshot is of %1, a language this server does not have")
            .arg(read.language);
    // The kind goes with the language's interpreter: state of one is nothing to another's.
    const QString kind = language->name == u"python" ? QStringLiteral("python")
                         : language->liveSession     ? QStringLiteral("javascript")
                                                     : QStringLiteral("files");
    if (read.kind != kind)
        return QStringLiteral("the snapshot's state is %1, which a %2 session does not read")
            .arg(read.kind, language->name);
    SessionSnapshot kept = read;
    kept.sessionId = QStringLiteral("import-") + read.sha256.left(12);
    kept.parent.clear();
    kept.afterRun.clear();
    if (const QList<SessionSnapshot> same = m_snapshots->of(kept.sessionId); !same.isEmpty()) {
        *id = same.first().id;
        return QString(); // the same content, imported before
    }
    const QString added = m_snapshots->add(&kept, state, files);
    if (!added.isEmpty())
        return added;
    SessionBlueprint b;
    b.owner = kImported;
    b.language = language->name;
    b.createdAt = QDateTime::currentDateTimeUtc();
    m_blueprints.insert(kept.sessionId, b);
    *id = kept.id;
    return QString();
}

void SessionManager::restoreInto(SandboxSession *session, const QString &snapshotId,
                                 const std::function<void(const QString &)> &progress,
                                 const Restored &done)
{
    QByteArray state, files;
    const QString error = m_snapshots->load(snapshotId, &state, &files);
    if (!error.isEmpty()) {
        done(nullptr, {}, error);
        return;
    }
    if (progress)
        progress(QStringLiteral("restoring snapshot %1").arg(snapshotId));
    session->setSnapshotting(true);
    QPointer<SandboxSession> guard(session);
    SnapshotExchange::restore(
        session->container(), state, files, session,
        [guard, snapshotId, done](const QJsonObject &record, const QString &why) {
            if (!guard)
                return;
            if (why.isEmpty()) {
                guard->setLastSnapshot(snapshotId);
                // What a later snapshot could not keep is no longer the session's state.
                guard->takeSnapshotNote();
            }
            guard->setSnapshotting(false);
            done(why.isEmpty() ? guard.data() : nullptr, record, why);
        });
}

void SessionManager::rewind(SandboxSession *session, const QString &snapshotId,
                            const std::function<void(const QString &)> &progress,
                            const Restored &done)
{
    const SessionSnapshot *snapshot = snapshotOf(snapshotId, session->owner());
    if (!snapshot || snapshot->sessionId != session->id()) {
        done(nullptr, {},
             snapshot ? QStringLiteral("snapshot %1 is another session's; fork_session starts a "
                                       "new session from it")
                            .arg(snapshotId)
                      : QStringLiteral("session %1 has no snapshot '%2' (list_snapshots shows "
                                       "its snapshots)")
                            .arg(session->id(), snapshotId));
        return;
    }
    QPointer<SandboxSession> guard(session);
    session->afterSnapshot([this, guard, snapshotId, progress, done] {
        if (!guard || guard->state() == SandboxSession::State::Ended) {
            done(nullptr, {}, QStringLiteral("the session ended"));
            return;
        }
        QString error;
        SandboxContainer *container = m_sandbox->createSessionContainer(
            guard->language(), guard->network(), guard->librariesVolume(), &error);
        if (!container) {
            done(nullptr, {}, error);
            return;
        }
        if (progress)
            progress(QStringLiteral("starting a fresh sandbox for the session"));
        guard->replaceContainer(container);
        // Once: ready (the snapshot goes in), or ended.
        auto once = std::make_shared<QList<QMetaObject::Connection>>();
        const auto disconnectAll = [once] {
            for (const QMetaObject::Connection &c : std::as_const(*once))
                QObject::disconnect(c);
        };
        once->append(connect(guard, &SandboxSession::ready, this,
                             [this, guard, snapshotId, progress, done, disconnectAll] {
                                 disconnectAll();
                                 restoreInto(guard, snapshotId, progress, done);
                             }));
        once->append(connect(guard, &SandboxSession::ended, this,
                             [done, disconnectAll](const QString &reason) {
                                 disconnectAll();
                                 done(nullptr, {}, QStringLiteral("the session ended: ") + reason);
                             }));
    });
}

void SessionManager::fork(const QString &owner, const QString &snapshotId, bool keep,
                          const std::function<void(const QString &)> &progress,
                          const Restored &done)
{
    const SessionSnapshot *snapshot = snapshotOf(snapshotId, owner);
    if (!snapshot) {
        done(nullptr, {},
             QStringLiteral("no snapshot '%1' of yours is kept (list_snapshots shows a session's)")
                 .arg(snapshotId));
        return;
    }
    SessionBlueprint b = m_blueprints.value(snapshot->sessionId);
    b.owner = owner;
    b.kept = keep;
    b.createdAt = QDateTime();
    create(b, progress,
           [this, snapshotId, progress, done](SandboxSession *session, const QString &error) {
               if (!session) {
                   done(nullptr, {}, error);
                   return;
               }
               restoreInto(session, snapshotId, progress,
                           [session, done](SandboxSession *restored, const QJsonObject &record,
                                           const QString &why) {
                               // A fork that did not become the snapshot's is no use to anyone.
                               if (!restored)
                                   session->end(
                                       QStringLiteral("its snapshot could not be restored: ") +
                                       why);
                               done(restored, record, why);
                           });
           });
}

SessionAdmission SessionManager::close(const QString &id, const QString &owner)
{
    const SessionAdmission verdict = lookup(id, owner);
    if (verdict.admitted())
        verdict.session->end(kClosedReason);
    return verdict;
}

QList<SandboxSession *> SessionManager::sessionsOf(const QString &owner) const
{
    QList<SandboxSession *> list;
    for (SandboxSession *s : m_sessions) {
        if (s->owner() == owner)
            list.append(s);
    }
    std::sort(list.begin(), list.end(),
              [](SandboxSession *a, SandboxSession *b) { return a->createdAt() < b->createdAt(); });
    return list;
}

void SessionManager::closeOwnedBy(const QString &owner)
{
    for (SandboxSession *s : sessionsOf(owner))
        s->end(QStringLiteral("its client disconnected"));
}

void SessionManager::closeAll(const QString &reason)
{
    const QList<SandboxSession *> all = m_sessions.values();
    for (SandboxSession *s : all)
        s->end(reason);
}

void SessionManager::expireIdle()
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QList<SandboxSession *> all = m_sessions.values();
    for (SandboxSession *s : all) {
        if (s->state() == SandboxSession::State::Idle &&
            s->lastUsedAt().secsTo(now) >= m_limits.idleSec)
            s->end(kExpiredReason + QStringLiteral(" %1 s without a call").arg(m_limits.idleSec));
    }
}

void SessionManager::forget(SandboxSession *session, const QString &reason)
{
    if (m_sessions.remove(session->id()) == 0)
        return;
    // A kept session that ends with its server or its client stays kept, to come back; closed
    // or expired, it is no longer.
    if (session->kept() && m_kept) {
        // Closed or expired, it is over; anything else (its server or client gone, its sandbox
        // lost to a crash) leaves it to come back from its last snapshot.
        const bool over = reason == kClosedReason || reason.startsWith(kExpiredReason);
        if (!over && !session->lastSnapshot().isEmpty())
            m_dormant.insert(session->id(), saveKept(session));
        else
            m_kept->drop(session->id());
    }
    m_ended.insert(session->id(), reason);
    m_endedOrder.append(session->id());
    while (m_endedOrder.size() > kRememberEnded) {
        const QString forgotten = m_endedOrder.takeFirst();
        m_ended.remove(forgotten);
        if (m_dormant.contains(forgotten))
            continue; // kept: its snapshots stay for it
        m_blueprints.remove(forgotten);
        if (m_snapshots)
            m_snapshots->removeSession(forgotten);
    }
    Q_EMIT sessionEnded(session->id(), reason);
    session->deleteLater();
}
