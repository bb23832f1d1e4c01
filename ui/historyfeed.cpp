#include "historyfeed.h"

#include "historystore.h"
#include "journal.h"
#include "monitorserver.h"
#include "runlistmodel.h"
#include "uilog.h"

HistoryFeed::HistoryFeed(RunListModel *model, Journal *journal, HistoryStore *history,
                         MonitorServer *monitor, const QString &instanceId, QObject *parent)
    : QObject(parent), m_model(model), m_history(history), m_instanceId(instanceId)
{
    connect(journal, &Journal::recorded, this, &HistoryFeed::apply);
    // A finished run's details come from the history once the model has let them go.
    if (m_history) {
        m_model->setLoader(
            [this](const QString &id) -> std::optional<RunRecord> { return m_history->load(id); },
            [this](const QString &id) { return m_history->contains(id); });
    }
    if (monitor)
        connect(monitor, &MonitorServer::eventReceived, this, &HistoryFeed::apply);
}

void HistoryFeed::load(int limit)
{
    if (!m_history)
        return;
    const QString path = m_history->path();
    m_history->recent(limit, QString(), this, [this, path](const QList<RunRecord> &runs) {
        qCInfo(lcUi).noquote() << "history:" << runs.size() << "runs loaded from" << path;
        m_model->addHistory(runs);
        Q_EMIT loaded(int(runs.size()));
    });
}

void HistoryFeed::search(const QString &text, int limit)
{
    const QString wanted = text.trimmed();
    if (!m_history || wanted.isEmpty())
        return;
    const quint64 search = ++m_search;
    m_history->recent(limit, wanted, this, [this, search, wanted](const QList<RunRecord> &runs) {
        // Typing makes searches faster than a big history answers them: only the last counts.
        if (search != m_search)
            return;
        m_model->addHistory(runs, true);
        Q_EMIT searched(wanted, int(runs.size()));
    });
}

void HistoryFeed::prune(int retentionDays)
{
    if (!m_history)
        return;
    m_history->setRetentionDays(qMax(0, retentionDays));
    qCInfo(lcUi) << "history: keeping runs for"
                 << (retentionDays > 0 ? QString::number(retentionDays) + QStringLiteral(" days")
                                       : QStringLiteral("ever"))
                 << "and" << m_history->retention().maxBytes / (1024 * 1024) << "MiB at most";
}

void HistoryFeed::apply(const JournalEvent &event)
{
    const bool remote = event.run.instanceId != m_instanceId;
    // A headless instance's Started carries the id alone: its record says whose it is.
    if (event.type == JournalEvent::Type::Started) {
        const RunRecord *known = m_model->run(event.run.id);
        if (known && known->instanceId != m_instanceId)
            qCInfo(lcUi).noquote() << "run" << event.run.id.left(8) << "of instance pid"
                                   << known->instancePid << "(" << known->source << ")"
                                   << "started";
    }
    if (remote && event.type == JournalEvent::Type::Finished)
        qCInfo(lcUi).noquote() << "run" << event.run.id.left(8) << "of instance pid"
                               << event.run.instancePid << "(" << event.run.source << ")"
                               << RunRecord::statusName(event.run.status);
    m_model->apply(event);
}
