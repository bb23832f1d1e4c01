#include "monitorapprover.h"

#include "journallog.h"
#include "monitorpublisher.h"

MonitorApprover::MonitorApprover(MonitorPublisher *publisher, QObject *parent)
    : RunApprover(parent), m_publisher(publisher)
{
    connect(publisher, &MonitorPublisher::approvalAnswered, this,
            [this](const QString &id, const QString &name, const QString &reason) {
                Answer answer;
                // Only questions this instance asked are answered, each once.
                if (!m_open.contains(id) || !answerFromName(name, &answer)) {
                    qCDebug(lcJournal) << "monitor: ignored an answer to no open approval";
                    return;
                }
                m_open.remove(id);
                Q_EMIT answered(id, answer, reason);
            });
    connect(publisher, &MonitorPublisher::connectedChanged, this, [this](bool connected) {
        if (connected || m_open.isEmpty())
            return;
        m_open.clear();
        Q_EMIT lost();
    });
}

bool MonitorApprover::isAvailable() const
{
    return m_publisher->isConnected();
}

void MonitorApprover::ask(const ApprovalRequest &request)
{
    m_open.insert(request.id);
    if (!m_publisher->sendControl(MonitorProtocol::Approve{request})) {
        // The window went between the question whether it is there and this one.
        m_open.remove(request.id);
        Q_EMIT lost();
    }
}

void MonitorApprover::withdraw(const QString &id, const QString &why)
{
    if (!m_open.remove(id))
        return;
    m_publisher->sendControl(MonitorProtocol::Withdraw{id, why});
}
