#include "monitorpublisher.h"

#include "journallog.h"
#include "lineframer.h"

#include <QJsonDocument>
#include <QLocalSocket>
#include <unistd.h>

MonitorPublisher::MonitorPublisher(const QString &socketPath, const QString &instanceId,
                                   const QString &mode, QObject *parent)
    : QObject(parent), m_path(socketPath), m_instanceId(instanceId), m_mode(mode),
      m_socket(new QLocalSocket(this)), m_framer(std::make_unique<LineFramer>(kMaxIncomingLine))
{
    connect(m_socket, &QLocalSocket::connected, this, &MonitorPublisher::onConnected);
    connect(m_socket, &QLocalSocket::readyRead, this, &MonitorPublisher::onReadyRead);
    connect(m_socket, &QLocalSocket::disconnected, this, [this] {
        qCDebug(lcJournal) << "monitor: the window went away";
        // What a previous window left half-written means nothing to the next.
        m_framer = std::make_unique<LineFramer>(kMaxIncomingLine);
        Q_EMIT connectedChanged(false);
        m_retry.start();
    });
    connect(m_socket, &QLocalSocket::errorOccurred, this, [this] {
        // No window (no socket file, or nobody listening): try again later, quietly.
        if (m_socket->state() == QLocalSocket::UnconnectedState && !m_retry.isActive())
            m_retry.start();
    });
    m_retry.setInterval(kRetryMs);
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &MonitorPublisher::tryConnect);
    tryConnect();
}

MonitorPublisher::~MonitorPublisher()
{
    // Whatever is queued still goes out (the window learns how runs ended on a clean stop).
    if (m_socket->state() == QLocalSocket::ConnectedState)
        m_socket->flush();
}

bool MonitorPublisher::isConnected() const
{
    return m_socket->state() == QLocalSocket::ConnectedState;
}

void MonitorPublisher::tryConnect()
{
    if (m_socket->state() != QLocalSocket::UnconnectedState)
        return;
    m_socket->connectToServer(m_path);
}

void MonitorPublisher::onConnected()
{
    qCInfo(lcJournal).noquote() << "monitor: a Code Sandbox window is watching (" << m_path << ")";
    m_retry.stop();
    write(QJsonObject{{QStringLiteral("type"), QStringLiteral("hello")},
                      {QStringLiteral("instance"), m_instanceId},
                      {QStringLiteral("pid"), qint64(::getpid())},
                      {QStringLiteral("mode"), m_mode},
                      {QStringLiteral("version"), QStringLiteral(CODE_SANDBOX_VERSION)}});
    if (m_greeting) {
        for (const RunRecord &run : m_greeting())
            write(JournalEvent{JournalEvent::Type::Created, run, 1, {}, {}}.toJson());
    }
    Q_EMIT connectedChanged(true);
}

void MonitorPublisher::send(const JournalEvent &event)
{
    if (!isConnected())
        return;
    const qint64 backlog = m_socket->bytesToWrite();
    if (backlog > 4 * kBacklogLimit) {
        qCWarning(lcJournal) << "monitor: the window does not read; disconnecting from it";
        m_socket->abort();
        m_retry.start();
        return;
    }
    // Live output and usage samples give way first; a run's start and end always go.
    if ((event.type == JournalEvent::Type::Output || event.type == JournalEvent::Type::Sample) &&
        backlog > kBacklogLimit) {
        ++m_dropped;
        return;
    }
    write(event.toJson());
}

bool MonitorPublisher::sendControl(const QJsonObject &message)
{
    if (!isConnected())
        return false;
    write(message);
    return true;
}

void MonitorPublisher::onReadyRead()
{
    const LineFramer::Output out = m_framer->feed(m_socket->readAll());
    if (out.oversized)
        qCWarning(lcJournal) << "monitor: ignored" << out.oversized
                             << "oversized message(s) from the window";
    for (const QByteArray &line : out.lines) {
        const QJsonObject json = QJsonDocument::fromJson(line).object();
        const QString type = json.value(u"type").toString();
        if (type == u"stop") {
            const QString run = json.value(u"run").toString();
            if (!run.isEmpty())
                Q_EMIT stopRequested(run);
        } else if (type == u"approval") {
            const QString id = json.value(u"id").toString();
            if (!id.isEmpty())
                Q_EMIT approvalAnswered(id, json.value(u"answer").toString(),
                                        json.value(u"reason").toString());
        } else {
            qCDebug(lcJournal).noquote()
                << "monitor: ignored a message from the window" << type.left(40);
        }
    }
}

void MonitorPublisher::write(const QJsonObject &json)
{
    QByteArray line = QJsonDocument(json).toJson(QJsonDocument::Compact);
    line += '\n';
    m_socket->write(line);
}
