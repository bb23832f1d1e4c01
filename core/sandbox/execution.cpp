#include "execution.h"

#include "engineclient.h"
#include "enginereply.h"
#include "sandboxcontainer.h"
#include "sandboxlog.h"

#include <QAtomicInteger>
#include <QRandomGenerator>

namespace {
QAtomicInteger<quint64> g_nextId{1};

QByteArray makeNonce()
{
    // 128 random bits: the program cannot guess the end line, so it cannot fake its own status.
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    return QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex();
}
} // namespace

Execution::Execution(const ExecutionRequest &request, const QString &language, int timeoutSec,
                     qint64 outputCap, QObject *parent)
    : QObject(parent), m_id(g_nextId.fetchAndAddRelaxed(1)), m_request(request), m_cap(outputCap),
      m_nonce(makeNonce()), m_outScanner(m_nonce), m_errScanner(m_nonce)
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
    connect(container, &SandboxContainer::output, this, &Execution::onOutput);
    connect(container, &SandboxContainer::streamEnded, this, &Execution::onStreamEnded);
    connect(container, &SandboxContainer::failed, this, [this](const QString &message) {
        if (m_finished)
            return;
        m_result.error = message;
        finish();
    });
    // Until the program starts, a generous bound guards against an engine that never answers;
    // the caller's timeout then applies to the program alone.
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

void Execution::onReady()
{
    if (m_finished)
        return;
    m_result.containerId = m_container->id();
    const QByteArray code = m_request.code.toUtf8();
    m_running = true;
    m_clock.restart();
    m_timer.start(m_result.timeoutSec * 1000);
    m_container->write(m_nonce + ' ' + QByteArray::number(code.size()) + '\n' + code);
    Q_EMIT started();
}

void Execution::onOutput(int stream, const QByteArray &bytes)
{
    if (m_finished)
        return;
    ExitMarkerScanner &scanner = stream == 2 ? m_errScanner : m_outScanner;
    const QByteArray visible = scanner.feed(bytes);
    if (!visible.isEmpty())
        append(stream, visible);
    if (m_outScanner.found() && m_errScanner.found()) {
        m_result.exitCode = m_outScanner.status();
        m_result.outOfMemory = m_outScanner.outOfMemory();
        finish();
    }
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
    if (m_finished)
        return;
    // The stream closed without the supervisor's end line: the container died (killed, or the
    // program took the supervisor down). Keep what was printed and say what we know.
    append(1, m_outScanner.flush());
    append(2, m_errScanner.flush());
    if (!m_running || !m_container || m_container->id().isEmpty()) {
        if (m_result.error.isEmpty())
            m_result.error =
                QStringLiteral("the sandbox container stopped before the program started");
        finish();
        return;
    }
    // The program ran but its result line never came (it killed its supervisor, or deleted the
    // file the status goes through): the engine still knows how the container ended.
    if (m_waitingForEngine)
        return;
    m_waitingForEngine = true;
    EngineReply *reply = m_container->engine()->post(
        "/containers/" + EngineClient::encode(m_container->id()) + "/wait");
    connect(reply, &EngineReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (m_finished)
            return;
        if (reply->ok())
            m_result.exitCode = reply->json().value(u"StatusCode").toInt(-1);
        else
            m_result.error =
                QStringLiteral("the sandbox container ended without reporting an exit status");
        finish();
    });
}

void Execution::onTimeout()
{
    if (m_finished)
        return;
    if (!m_running) {
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
    if (!m_finished)
        Q_EMIT queued(position);
}

void Execution::cancel()
{
    if (m_finished)
        return;
    m_result.cancelled = true;
    finish();
}

void Execution::failEarly(const QString &message, const QString &image)
{
    if (m_finished)
        return;
    m_result.image = image;
    m_result.error = message;
    QMetaObject::invokeMethod(this, &Execution::finish, Qt::QueuedConnection);
}

void Execution::finish()
{
    if (m_finished)
        return;
    m_finished = true;
    m_timer.stop();
    m_result.durationMs = m_clock.isValid() ? m_clock.elapsed() : 0;
    // Removal (which also kills a program still running) happens after the answer, off the
    // critical path; the service keeps the container until the engine confirms.
    if (m_container)
        m_container->remove();
    Q_EMIT finished(m_result);
}
