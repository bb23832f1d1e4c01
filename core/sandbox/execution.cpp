#include "execution.h"

#include "outputcollector.h"
#include "preloadplanner.h"
#include "sandboxcontainer.h"
#include "sandboxlayout.h"
#include "sandboxlog.h"
#include "tararchive.h"
#include "workspacetransfer.h"

#include <QAtomicInteger>
#include <QRandomGenerator>
#include <QSet>
#include <QTimerEvent>
#include <QUuid>

namespace {
QAtomicInteger<quint64> g_nextId{1};

QByteArray makeNonce()
{
    // 128 random bits: no output can be taken for the end line by accident. (A program that goes
    // looking for the nonce can report a status of its choosing, which it could as well by
    // exiting with it; it gains nothing else, see tests/integration/tst_abuse.cpp.)
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    return QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex();
}
} // namespace

Execution::Execution(const ExecutionRequest &request, const QString &language, int timeoutSec,
                     qint64 outputCap, QObject *parent)
    : QObject(parent), m_id(g_nextId.fetchAndAddRelaxed(1)),
      m_runId(QUuid::createUuid().toString(QUuid::WithoutBraces)), m_request(request),
      m_cap(outputCap), m_nonce(makeNonce()), m_outScanner(m_nonce), m_errScanner(m_nonce)
{
    m_result.language = language;
    m_result.timeoutSec = timeoutSec;
    m_timer.setSingleShot(true);
    // A coarse timer may fire up to 5% early; a timeout must never cut a program short.
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &Execution::onTimeout);
}

Execution::~Execution()
{
    // Whatever happened, the container must not outlive its run.
    if (m_container)
        m_container->remove();
}

void Execution::run(SandboxContainer *container)
{
    m_container = container;
    m_result.image = container->image();
    m_result.runtime = container->runtime();
    connect(container, &SandboxContainer::output, this, &Execution::onOutput);
    connect(container, &SandboxContainer::streamEnded, this, &Execution::onStreamEnded);
    connect(container, &SandboxContainer::failed, this, &Execution::fail);
    connect(container, &SandboxContainer::networkEvent, this, &Execution::onNetworkEvent);
    // Until the program starts, a generous bound guards against an engine that never answers;
    // the caller's timeout then applies to the program alone.
    m_phase = Phase::Preparing;
    m_clock.start();
    m_timer.start(qMax(kStartupTimeoutMs, m_result.timeoutSec * 1000));
    if (container->state() == SandboxContainer::State::Ready) {
        // From the event loop, so the caller has connected to started() first.
        QMetaObject::invokeMethod(this, &Execution::onReady, Qt::QueuedConnection);
    } else {
        connect(container, &SandboxContainer::ready, this, &Execution::onReady);
        container->prepare();
    }
}

void Execution::onNetworkEvent(const GatewayProtocol::NetworkEvent &event)
{
    using P = GatewayProtocol;
    if (m_phase == Phase::Finished)
        return;
    if (const auto *end = std::get_if<P::End>(&event)) {
        for (NetworkAttempt &a : m_result.network)
            if (a.id == end->id) {
                a.bytesUp = qint64(end->up);
                a.bytesDown = qint64(end->down);
                a.ms = qint64(end->ms);
                Q_EMIT networkAttempt(a);
            }
        return;
    }
    if (const auto *used = std::get_if<P::SecretsUsed>(&event)) {
        for (NetworkAttempt &a : m_result.network)
            if (a.id == used->id) {
                for (const std::string &name : used->names)
                    if (!a.secrets.contains(QString::fromStdString(name)))
                        a.secrets.append(QString::fromStdString(name));
                Q_EMIT networkAttempt(a);
            }
        return;
    }
    if (const auto *ask = std::get_if<P::Ask>(&event)) {
        // Held by the gateway until answerConnection(); a program that keeps asking gets no more
        // questions than its record has room for (the rest are refused at once).
        if (m_held.size() + m_result.network.size() >= ExecutionResult::kMaxNetwork) {
            answerConnection(ask->id, false);
            return;
        }
        m_held.insert(ask->id);
        // Shown as waiting while the question is open (not in the result: its decision is).
        NetworkAttempt held;
        held.id = ask->id;
        held.host = QString::fromStdString(ask->host);
        held.port = ask->port;
        held.verdict = NetworkAttempt::Verdict::Held;
        Q_EMIT networkAttempt(held);
        Q_EMIT connectionHeld(held.id, held.host, held.port);
        return;
    }
    const auto *conn = std::get_if<P::Connection>(&event);
    if (!conn || m_result.network.size() >= ExecutionResult::kMaxNetwork)
        return;
    m_held.remove(conn->id);
    NetworkAttempt a;
    a.id = conn->id;
    a.host = QString::fromStdString(conn->host);
    a.port = conn->port;
    // Allowed, refused, or allowed but the way to the host failed.
    using Outcome = P::Connection::Outcome;
    a.verdict = conn->outcome == Outcome::Allow   ? NetworkAttempt::Verdict::Allowed
                : conn->outcome == Outcome::Error ? NetworkAttempt::Verdict::Failed
                                                  : NetworkAttempt::Verdict::Refused;
    a.rule = QString::fromStdString(conn->rule);
    m_result.network.append(a);
    Q_EMIT networkAttempt(a);
}

void Execution::answerConnection(quint64 connection, bool allow, const QString &widenTo)
{
    if (!m_held.remove(connection) || !m_container)
        return;
    m_container->answerConnection(connection, allow, widenTo);
}

void Execution::onReady()
{
    if (m_phase == Phase::Finished)
        return;
    m_result.containerId = m_container->id();
    if (!m_workspaces) {
        sendFiles();
        return;
    }
    reportProgress(m_session ? QStringLiteral("bringing the session's workspaces up to date")
                             : QStringLiteral("copying the workspaces into the sandbox"));
    // A session's workspaces outlive this call: their answer may come after it ended.
    const QPointer<Execution> self(this);
    m_workspaces->send(m_container, [self](const QString &error) {
        if (!self || self->m_phase == Phase::Finished)
            return;
        if (error.isEmpty()) {
            self->sendFiles();
            return;
        }
        self->m_workspacesRefused = self->m_session;
        self->fail(error);
    });
}

void Execution::sendFiles()
{
    if (m_request.files.isEmpty()) {
        sendProgram();
        return;
    }
    // Input files go into the workdir volume before the program exists; the supervisor is
    // still waiting for it on stdin.
    QList<TarArchive::Entry> entries;
    QSet<QString> dirs;
    for (const InputFile &f : m_request.files) {
        const QStringList parts = f.path.split(u'/');
        for (int i = 1; i < parts.size(); ++i) {
            const QString dir = parts.mid(0, i).join(u'/');
            if (!dirs.contains(dir)) {
                dirs.insert(dir);
                entries.append({dir, {}, 0755, true});
            }
        }
        entries.append({f.path, f.content, 0644, false});
    }
    QString error;
    const QByteArray tar = TarArchive::pack(entries, &error);
    if (tar.isEmpty()) {
        fail(QStringLiteral("could not pack the input files: %1").arg(error));
        return;
    }
    m_container->putFiles(QString::fromLatin1(SandboxLayout::kWorkdir), tar, this,
                          [this](const QString &error) {
                              if (m_phase == Phase::Finished)
                                  return;
                              if (!error.isEmpty()) {
                                  fail(QStringLiteral("could not place the input files in the "
                                                      "sandbox: %1")
                                           .arg(error));
                                  return;
                              }
                              sendProgram();
                          });
}

void Execution::sendProgram()
{
    const QByteArray code = m_request.code.toUtf8();
    m_phase = Phase::Running;
    m_clock.restart();
    m_timer.start(m_result.timeoutSec * 1000);
    m_container->write(m_nonce + ' ' + QByteArray::number(code.size()) + '\n' + code);
    m_sampleTimer.start(kFirstSampleMs, Qt::CoarseTimer, this);
    Q_EMIT started();
}

void Execution::timerEvent(QTimerEvent *event)
{
    if (event->timerId() != m_sampleTimer.timerId()) {
        QObject::timerEvent(event);
        return;
    }
    m_sampleTimer.stop();
    sampleUsage();
}

void Execution::sampleUsage()
{
    // Only while the program runs: once it ended there is nothing left to watch. A reading
    // never holds up or fails the run: it is dropped if it comes late, and a failed one is
    // only missing from the chart.
    if (m_phase != Phase::Running || !m_container || m_sampling)
        return;
    const qint64 askedAt = m_clock.elapsed();
    m_sampling = true;
    const bool asked =
        m_container->sampleUsage(this, [this, askedAt](qint64 memoryBytes, qint64 cpuTimeMs) {
            m_sampling = false;
            if (m_phase != Phase::Running)
                return;
            // The engine reads the cgroup just before it answers (Docker at its next reading, up
            // to a second later), so the answer's time is the reading's.
            const qint64 now = m_clock.elapsed();
            if (memoryBytes >= 0 && cpuTimeMs >= 0)
                Q_EMIT usageSampled(now, memoryBytes, cpuTimeMs);
            else
                qCDebug(lcSandbox) << "execution" << m_id << "got no usage reading";
            // Asked again kSampleIntervalMs after the last question, or at once when the answer
            // took longer than that (Docker paces the readings itself).
            m_sampleTimer.start(int(qMax<qint64>(0, kSampleIntervalMs - (now - askedAt))),
                                Qt::CoarseTimer, this);
        });
    if (!asked) {
        m_sampling = false;
        m_sampleTimer.start(kSampleIntervalMs, Qt::CoarseTimer, this);
    }
}

void Execution::onOutput(int stream, const QByteArray &bytes)
{
    if (m_phase == Phase::Finished)
        return;
    ExitMarkerScanner &scanner = stream == 2 ? m_errScanner : m_outScanner;
    const QByteArray visible = scanner.feed(bytes);
    if (!visible.isEmpty())
        append(stream, visible);
    if (m_outScanner.found() && m_errScanner.found() && !m_endSeen) {
        m_result.exitCode = m_outScanner.status();
        m_result.outOfMemory = m_outScanner.outOfMemory();
        m_result.compileError = m_outScanner.hasFlag("compile");
        m_result.peakMemoryBytes = m_outScanner.value("mem");
        m_result.cpuTimeMs = m_outScanner.value("cpu");
        readPreload();
        // The program's time ends here, whatever comes after (files, the gateway's last events).
        m_result.durationMs = m_clock.elapsed();
        m_endSeen = true;
        m_timer.stop();
        m_sampleTimer.stop();
        // The gateway reports connections on its own stream, which can lag behind this one: the
        // result waits for its events up to now (bounded), alongside fetching the files.
        m_networkPending = m_container != nullptr;
        if (m_container)
            m_container->settleNetwork(this, [this] {
                m_networkPending = false;
                if (m_finishWhenSettled)
                    finish();
            });
        const bool files = m_outScanner.hasFlag("out") || m_outScanner.hasFlag("plots");
        const bool workspaces = m_workspaces && m_workspaces->hasCopyOnWrite() && m_container;
        m_collecting = int(files) + int(workspaces);
        if (files)
            collectFiles();
        if (workspaces) {
            m_phase = Phase::Collecting;
            m_timer.start(kCollectTimeoutMs);
            const QPointer<Execution> self(this);
            m_workspaces->collect(m_container, [self] {
                if (self)
                    self->collected();
            });
        }
        if (m_collecting == 0)
            finishWhenSettled();
    }
}

void Execution::readPreload()
{
    // Names as the loader wrote them, checked again here: the program decides what is in its
    // sys.modules (require.cache), so only module names pass (the planner then keeps the
    // image's own).
    for (const QByteArray &item : m_outScanner.list("preloaded")) {
        const qsizetype colon = item.indexOf(':');
        const QByteArray name = item.left(colon);
        if (!PreloadPlanner::isModuleName(name))
            continue;
        m_result.preloaded.append(QString::fromLatin1(name));
        m_result.preloadCosts.append(colon < 0 ? 0 : qMax(0LL, item.mid(colon + 1).toLongLong()));
    }
    for (const QByteArray &name : m_outScanner.list("preload-dropped"))
        if (PreloadPlanner::isModuleName(name))
            m_result.preloadDropped.append(QString::fromLatin1(name));
    for (const QByteArray &name : m_outScanner.list("imports"))
        if (PreloadPlanner::isModuleName(name))
            m_result.imports.append(QString::fromLatin1(name));
}

void Execution::finishWhenSettled()
{
    if (m_networkPending)
        m_finishWhenSettled = true;
    else
        finish();
}

void Execution::collectFiles()
{
    // The program has ended, so its time is taken now; fetching is bounded separately. The
    // supervisor keeps the container up until the files are read (the workdir volume goes when
    // the container stops).
    m_phase = Phase::Collecting;
    m_timer.start(kCollectTimeoutMs);
    auto *collector = new OutputCollector(m_container, m_fileLimits, this);
    connect(collector, &OutputCollector::finished, this,
            [this, collector](const QList<OutputFile> &files, const QStringList &notes) {
                collector->deleteLater();
                if (m_phase == Phase::Finished)
                    return;
                m_result.files = files;
                m_result.notes += notes;
                collected();
            });
    collector->start(m_outScanner.hasFlag("plots"), m_outScanner.hasFlag("out"));
}

void Execution::collected()
{
    if (m_phase == Phase::Finished)
        return;
    if (--m_collecting <= 0)
        finishWhenSettled();
}

WorkspaceTransfer *Execution::workspaces() const
{
    return m_workspaces;
}

void Execution::setWorkspaces(WorkspaceTransfer *transfer)
{
    // A session's outlives its calls.
    if (transfer->kind() != WorkspaceTransfer::Kind::Session)
        transfer->setParent(this);
    m_workspaces = transfer;
}

void Execution::setFileLimits(const OutputManifest::Limits &limits)
{
    m_fileLimits = limits;
}

void Execution::reportProgress(const QString &message)
{
    if (m_phase != Phase::Finished)
        Q_EMIT progress(message);
}

void Execution::fail(const QString &message)
{
    if (m_phase == Phase::Finished)
        return;
    m_result.error = message;
    finish();
}

void Execution::append(int stream, const QByteArray &bytes)
{
    QByteArray &buf = stream == 2 ? m_result.stderrData : m_result.stdoutData;
    bool &truncated = stream == 2 ? m_result.stderrTruncated : m_result.stdoutTruncated;
    const qint64 room = m_cap - buf.size();
    if (room <= 0) {
        truncated = true;
        return;
    }
    const QByteArray part = bytes.size() > room ? bytes.left(room) : bytes;
    if (part.size() < bytes.size())
        truncated = true;
    buf += part;
    Q_EMIT output(stream, part);
}

void Execution::onStreamEnded()
{
    // After the end line the stream's end says nothing new (the result waits for its files or
    // the gateway's last events).
    if (m_phase == Phase::Finished || m_phase == Phase::Collecting || m_endSeen)
        return;
    // The stream closed without the supervisor's end line: the container died (killed, or the
    // program took the supervisor down). Keep what was printed and say what we know.
    append(1, m_outScanner.flush());
    append(2, m_errScanner.flush());
    if (!programSent() || !m_container || m_container->id().isEmpty()) {
        if (m_result.error.isEmpty())
            m_result.error =
                QStringLiteral("the sandbox container stopped before the program started");
        finish();
        return;
    }
    if (!m_container->streamError().isEmpty()) {
        // The connection to the engine broke: the output may be incomplete and the program may
        // still run (removal will stop it); an exit status from the engine would hide that.
        m_result.error = QStringLiteral("lost the connection to the container engine while the "
                                        "program ran: %1")
                             .arg(m_container->streamError());
        finish();
        return;
    }
    // The program ran but its result line never came (it killed its supervisor, or deleted the
    // file the status goes through): the engine still knows how the container ended.
    if (m_phase == Phase::AskingEngine)
        return;
    m_phase = Phase::AskingEngine;
    m_container->exitStatus(this, [this](int status, const QString &error) {
        if (m_phase == Phase::Finished)
            return;
        if (error.isEmpty())
            m_result.exitCode = status;
        else
            m_result.error = QStringLiteral("the program's result line never came, and the "
                                            "container engine could not say how it ended: %1")
                                 .arg(error);
        finish();
    });
}

void Execution::setSession(bool interruptible)
{
    m_session = true;
    m_interruptible = interruptible;
}

void Execution::onTimeout()
{
    if (m_phase == Phase::Finished)
        return;
    if (m_session && programSent() && m_phase != Phase::Collecting) {
        m_result.timedOut = true;
        if (m_interruptible && !m_interrupted && m_container) {
            // The session's interpreter turns SIGINT into KeyboardInterrupt in the running
            // program and reports; its state survives.
            m_interrupted = true;
            qCInfo(lcSandbox) << "execution" << m_id << "timed out after" << m_result.timeoutSec
                              << "s; interrupting it";
            m_container->interrupt();
            m_timer.start(kInterruptGraceMs);
            return;
        }
        m_endSession = true;
        m_sessionEndTold = true;
        m_result.notes.append(
            m_interrupted
                ? QStringLiteral("the session ended: the program did not stop when interrupted")
                : QStringLiteral("the session ended: a call past its timeout ends a session of "
                                 "this language (its interpreter cannot be interrupted)"));
        finish();
        return;
    }
    if (m_phase == Phase::Collecting) {
        m_result.notes.append(QStringLiteral("the output files could not be fetched within %1 s")
                                  .arg(kCollectTimeoutMs / 1000));
        finish();
        return;
    }
    if (!programSent()) {
        m_result.error =
            QStringLiteral("the container engine did not start the sandbox within %1 s")
                .arg(m_timer.interval() / 1000);
        finish();
        return;
    }
    m_result.timedOut = true;
    qCInfo(lcSandbox) << "execution" << m_id << "timed out after" << m_result.timeoutSec << "s";
    finish();
}

void Execution::setQueuePosition(int position)
{
    if (m_phase != Phase::Finished)
        Q_EMIT queued(position);
}

void Execution::cancel(const QString &reason)
{
    if (m_phase == Phase::Finished)
        return;
    m_result.cancelled = true;
    m_result.cancelReason = reason;
    finish();
}

void Execution::failEarly(const QString &message, const QString &image)
{
    if (m_phase == Phase::Finished)
        return;
    m_result.image = image;
    m_result.error = message;
    QMetaObject::invokeMethod(this, &Execution::finish, Qt::QueuedConnection);
}

void Execution::finish()
{
    if (m_phase == Phase::Finished)
        return;
    m_phase = Phase::Finished;
    if (m_workspaces)
        m_result.workspaces = m_workspaces->runs();
    // With several engines, a failure says which one it happened on (unless it already does).
    if (!m_result.error.isEmpty() && !m_result.engine.isEmpty() &&
        !m_result.error.contains(m_result.engine))
        m_result.error =
            QStringLiteral("on the engine %1: %2").arg(m_result.engine, m_result.error);
    m_timer.stop();
    m_sampleTimer.stop();
    if (!m_endSeen)
        m_result.durationMs = m_clock.isValid() ? m_clock.elapsed() : 0;
    // A session's container that came through the run serves the next one: it is handed back
    // untouched. Anything that went wrong mid-run (no result line, a lost stream, a timeout that
    // could not be interrupted) ends the session with its container.
    if (m_session && m_container) {
        const bool clean = (m_outScanner.found() && m_errScanner.found() && !m_endSession &&
                            m_result.error.isEmpty() && !m_result.cancelled) ||
                           (m_workspacesRefused && !programSent());
        if (clean) {
            disconnect(m_container, nullptr, this, nullptr);
            m_container = nullptr;
        } else {
            m_endSession = true;
        }
    }
    if (m_endSession && !m_sessionEndTold) {
        m_result.notes.append(m_result.cancelled
                                  ? QStringLiteral("the session ended: the call was cancelled "
                                                   "while it ran")
                                  : QStringLiteral("the session ended: its sandbox stopped "
                                                   "during the call"));
    }
    // Removal (which also kills a program still running) happens after the answer, off the
    // critical path; the service keeps the container until the engine confirms. A container
    // whose program reported its end without files to fetch has nothing left running (the
    // supervisor ended what the program left) and waits, idle, for the end of stdin, so its
    // removal, and with it the engine's teardown, may wait for a quiet moment; one with files
    // is removed once they are fetched.
    if (m_container) {
        const bool ended = m_outScanner.found() && m_errScanner.found() && !m_result.timedOut &&
                           !m_result.cancelled && m_result.error.isEmpty() && !m_session &&
                           !m_outScanner.hasFlag("out") && !m_outScanner.hasFlag("plots");
        // Handed over: the remover decides when it goes, not this execution's end (which comes
        // right after the answer, and would remove it at once).
        SandboxContainer *container = m_container;
        disconnect(container, nullptr, this, nullptr);
        m_container = nullptr;
        if (m_remover)
            m_remover(container, ended);
        else
            container->remove();
    }
    Q_EMIT finished(m_result);
}
