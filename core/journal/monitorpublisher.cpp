#include "monitorpublisher.h"

#include "journallog.h"
#include "lineframer.h"
#include "monitorsocket.h"

#include <QFileInfo>
#include <QLocalSocket>
#include <algorithm>
#include <unistd.h>

MonitorPublisher::MonitorPublisher(const QString &socketPath, const QString &instanceId,
                                   const QString &mode, QObject *parent)
    : QObject(parent), m_path(socketPath), m_instanceId(instanceId), m_mode(mode),
      m_socket(new QLocalSocket(this)), m_framer(std::make_unique<LineFramer>(kMaxIncomingLine))
{
    connect(m_socket, &QLocalSocket::connected, this, &MonitorPublisher::onConnected);
    connect(m_socket, &QLocalSocket::readyRead, this, &MonitorPublisher::onReadyRead);
    // The state alone decides when to try again: QLocalSocket reports a failed connection's
    // error before it leaves the connecting state, so the error is no cue.
    connect(m_socket, &QLocalSocket::stateChanged, this, &MonitorPublisher::onStateChanged);
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &MonitorPublisher::tryConnect);
    tryConnect();
}

MonitorPublisher::~MonitorPublisher()
{
    // Whatever is queued still goes out (the window learns how runs ended on a clean stop).
    if (isConnected())
        m_socket->flush();
}

bool MonitorPublisher::isConnected() const
{
    return m_trusted && m_socket->state() == QLocalSocket::ConnectedState;
}

void MonitorPublisher::tryConnect()
{
    // Connecting: its end, either way, is a state change, which arms the next try.
    if (m_socket->state() != QLocalSocket::UnconnectedState)
        return;
    ++m_attempt;
    QString why;
    switch (MonitorSocket::checkFolder(m_path, &why)) {
    case MonitorSocket::Folder::Private:
        break;
    case MonitorSocket::Folder::Missing: // no window has made its place yet
        scheduleRetry();
        return;
    case MonitorSocket::Folder::Unsafe:
        refuse(QStringLiteral("its folder %1 is %2").arg(QFileInfo(m_path).absolutePath(), why));
        scheduleRetry();
        return;
    }
    m_socket->connectToServer(m_path);
    if (m_socket->state() == QLocalSocket::UnconnectedState)
        scheduleRetry();
}

void MonitorPublisher::scheduleRetry()
{
    if (m_retry.isActive())
        return;
    m_retry.start(m_retryMs);
    m_retryMs = std::min(m_retryMs * 2, kRetryMs);
}

void MonitorPublisher::onStateChanged()
{
    if (m_socket->state() != QLocalSocket::UnconnectedState)
        return;
    if (m_trusted) {
        qCDebug(lcJournal) << "monitor: the window went away";
        m_trusted = false;
        // What a previous window left half-written means nothing to the next.
        m_framer = std::make_unique<LineFramer>(kMaxIncomingLine);
        Q_EMIT connectedChanged(false);
    }
    scheduleRetry();
}

void MonitorPublisher::onConnected()
{
    // Who listens is the kernel's word, not the folder's: another user's listener gets nothing
    // (a folder made by someone else before the window, or a path given by mistake).
    const qint64 uid = MonitorSocket::peerUid(m_socket->socketDescriptor());
    if (uid != qint64(::geteuid())) {
        refuse(uid < 0 ? QStringLiteral("the user of its listener cannot be told")
                       : QStringLiteral("its listener runs as user %1, not this user").arg(uid));
        // Dropped once QLocalSocket is done with its own connect handling (and only this
        // connection: a later one is not this check's to end).
        const quint64 attempt = m_attempt;
        QMetaObject::invokeMethod(
            this,
            [this, attempt] {
                if (attempt == m_attempt && !m_trusted)
                    m_socket->abort();
            },
            Qt::QueuedConnection);
        return;
    }
    m_trusted = true;
    m_retry.stop();
    m_retryMs = kFirstRetryMs;
    m_lastRefusal.clear();
    qCInfo(lcJournal).noquote() << "monitor: a Code Sandbox window is watching (" << m_path << ")";
    write(MonitorProtocol::Hello{m_instanceId, qint64(::getpid()), m_mode,
                                 QStringLiteral(CODE_SANDBOX_VERSION)});
    if (m_greeting) {
        for (const RunRecord &run : m_greeting())
            write(JournalEvent{JournalEvent::Type::Created, run, 1, {}, {}});
    }
    Q_EMIT connectedChanged(true);
}

void MonitorPublisher::refuse(const QString &why)
{
    if (why != m_lastRefusal) {
        qCWarning(lcJournal).noquote()
            << QStringLiteral("monitor: not sending to %1: %2; runs are not shown in a window "
                              "until it is this user's own")
                   .arg(m_path, why);
        m_lastRefusal = why;
    }
    Q_EMIT refused(why);
}

void MonitorPublisher::send(const JournalEvent &event)
{
    if (!isConnected())
        return;
    const qint64 backlog = m_socket->bytesToWrite();
    if (backlog > 4 * kBacklogLimit) {
        qCWarning(lcJournal) << "monitor: the window does not read; disconnecting from it";
        m_socket->abort(); // the state change arms the next try
        return;
    }
    // Live output, usage samples and connections give way first (the end carries the
    // connections again); a run's start and end always go.
    if ((event.type == JournalEvent::Type::Output || event.type == JournalEvent::Type::Sample ||
         event.type == JournalEvent::Type::Connection) &&
        backlog > kBacklogLimit) {
        ++m_dropped;
        return;
    }
    write(event);
}

bool MonitorPublisher::sendControl(const MonitorProtocol::Message &message)
{
    if (!isConnected())
        return false;
    write(message);
    return true;
}

void MonitorPublisher::onReadyRead()
{
    // A listener that is not this user's window is not heard either.
    if (!m_trusted) {
        m_socket->readAll();
        return;
    }
    const LineFramer::Output out = m_framer->feed(m_socket->readAll());
    if (out.oversized)
        qCWarning(lcJournal) << "monitor: ignored" << out.oversized
                             << "oversized message(s) from the window";
    for (const QByteArray &line : out.lines) {
        using P = MonitorProtocol;
        const P::Decoded decoded = P::decode(line, P::Direction::ToInstance);
        if (!decoded.message) {
            qCDebug(lcJournal).noquote()
                << "monitor: ignored from the window" << decoded.error << decoded.type;
        } else if (const auto *stop = std::get_if<P::Stop>(&*decoded.message)) {
            Q_EMIT stopRequested(stop->run);
        } else if (const auto *answer = std::get_if<P::Answer>(&*decoded.message)) {
            Q_EMIT approvalAnswered(answer->id, answer->answer, answer->reason);
        } else if (const auto *signIn = std::get_if<P::SignInAnswer>(&*decoded.message)) {
            Q_EMIT signInAnswered(signIn->id, signIn->allow, signIn->assistant);
        }
    }
}

void MonitorPublisher::write(const MonitorProtocol::Message &message)
{
    m_socket->write(MonitorProtocol::encode(message));
}
