#include "runlistmodel.h"

#include "plaintext.h"
#include "statusicons.h"

#include <QFont>
#include <QLocale>
#include <QSet>
#include <algorithm>

RunListModel::RunListModel(QObject *parent) : QAbstractTableModel(parent) {}

int RunListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_runs.size());
}

int RunListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString RunListModel::sourceText(const RunRecord &run)
{
    // Both, when the client claims a name its credential is not.
    return run.claimedName.isEmpty() ? run.source
                                     : tr("%1 (claims “%2”)").arg(run.source, run.claimedName);
}

QVariant RunListModel::data(const QModelIndex &index, int role) const
{
    const RunRecord *r = runAt(index.row());
    if (!r || index.column() < 0 || index.column() >= ColumnCount)
        return QVariant();
    switch (role) {
    case RunIdRole:
        return r->id;
    case StatusRole:
        return int(r->status);
    case LanguageRole:
        return r->language;
    case CreatedRole:
        return r->createdAt;
    case SearchRole:
        return QStringList{r->code,
                           r->source,
                           r->claimedName,
                           r->sessionId,
                           r->language,
                           r->tool,
                           r->engine,
                           QString::fromUtf8(r->stdoutText()),
                           QString::fromUtf8(r->stderrText()),
                           r->error}
            .join(QLatin1Char('\n'));
    case Qt::DecorationRole:
        if (index.column() == StatusColumn)
            return StatusIcons::icon(r->status);
        return QVariant();
    case Qt::ToolTipRole:
        // Tooltips read HTML when the text looks like it; these are the run's own words.
        if (index.column() == SessionColumn && !r->sessionId.isEmpty())
            return PlainText::toolTip(QStringLiteral("session %1").arg(r->sessionId));
        if (!r->error.isEmpty())
            return PlainText::toolTip(r->error);
        return QVariant();
    case Qt::TextAlignmentRole:
        if (index.column() == DurationColumn || index.column() == ExitCodeColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return QVariant();
    case Qt::DisplayRole:
        break;
    default:
        return QVariant();
    }
    switch (Column(index.column())) {
    case TimeColumn: {
        const QDateTime local = r->createdAt.toLocalTime();
        const bool today = local.date() == QDate::currentDate();
        return local.toString(today ? QStringLiteral("HH:mm:ss")
                                    : QStringLiteral("yyyy-MM-dd HH:mm"));
    }
    case SourceColumn:
        return sourceText(*r);
    case SessionColumn: {
        // Short: the list has little room; the whole id is in the tooltip and the details.
        const QString shortId = r->sessionId.left(8);
        const QString state = m_sessionStates.value(r->sessionId);
        return state.isEmpty() || r->sessionId.isEmpty()
                   ? shortId
                   : QStringLiteral("%1 · %2").arg(shortId, state);
    }
    case LanguageColumn:
        return r->language;
    case StatusColumn:
        if (r->status == RunRecord::Status::Error && r->compileError)
            return QStringLiteral("Compile error");
        if (r->status == RunRecord::Status::Error && r->outOfMemory)
            return QStringLiteral("Out of memory");
        return StatusIcons::label(r->status);
    case DurationColumn:
        return durationText(r->durationMs);
    case ExitCodeColumn:
        return r->isFinished() && r->exitCode >= 0 ? QVariant(r->exitCode) : QVariant();
    case ColumnCount:
        break;
    }
    return QVariant();
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case TimeColumn:
        return QStringLiteral("Time");
    case SourceColumn:
        return QStringLiteral("Source");
    case SessionColumn:
        return QStringLiteral("Session");
    case LanguageColumn:
        return QStringLiteral("Language");
    case StatusColumn:
        return QStringLiteral("Status");
    case DurationColumn:
        return QStringLiteral("Duration");
    case ExitCodeColumn:
        return QStringLiteral("Exit");
    case ColumnCount:
        break;
    }
    return QVariant();
}

void RunListModel::apply(const JournalEvent &event)
{
    if (event.type == JournalEvent::Type::Session) {
        applySession(event);
        return;
    }
    const QString &id = event.run.id;
    if (event.type == JournalEvent::Type::Sample) {
        addSample(id, event.sample);
        return;
    }
    auto it = m_index.constFind(id);
    if (it == m_index.constEnd()) {
        // Output or an end for a run whose start we missed cannot be shown meaningfully, except
        // the end, which carries the whole record.
        if (event.type != JournalEvent::Type::Created && event.type != JournalEvent::Type::Finished)
            return;
        addRun(event.run);
        if (event.type == JournalEvent::Type::Finished && m_index.contains(id))
            Q_EMIT runFinished(id);
        return;
    }
    const int index = *it;
    RunRecord &run = m_runs[index];
    switch (event.type) {
    case JournalEvent::Type::Created: {
        // Sent again by an instance that reconnected: keep the output seen so far if the record
        // has less.
        RunRecord fresh = event.run;
        if (fresh.output.isEmpty())
            fresh.output = run.output;
        run = fresh;
        break;
    }
    case JournalEvent::Type::Started:
        if (!run.isFinished())
            run.status = RunRecord::Status::Running;
        if (!event.run.engine.isEmpty())
            run.engine = event.run.engine;
        if (!event.run.runtime.isEmpty())
            run.runtime = event.run.runtime;
        break;
    case JournalEvent::Type::Output:
        appendOutput(run, event);
        // The row itself changes only for the search role; views need no repaint per chunk.
        return;
    case JournalEvent::Type::Connection: {
        // Again with its bytes once it ended: the same gateway id.
        auto same =
            std::find_if(run.connections.begin(), run.connections.end(),
                         [&event](const NetworkAttempt &a) { return a.id == event.connection.id; });
        if (same != run.connections.end())
            *same = event.connection;
        else if (run.connections.size() < ExecutionResult::kMaxNetwork)
            run.connections.append(event.connection);
        break;
    }
    case JournalEvent::Type::Session:
    case JournalEvent::Type::Sample:
        return; // handled above
    case JournalEvent::Type::Finished: {
        m_outputBytes.remove(id);
        // Values of variables come only with live events: keep them.
        QList<QPair<QString, QString>> values = run.envValues;
        run = event.run;
        if (run.envValues.isEmpty())
            run.envValues = values;
        break;
    }
    }
    changed(index);
    if (event.type == JournalEvent::Type::Finished) {
        trim();
        if (m_index.contains(id))
            Q_EMIT runFinished(id);
    }
}

void RunListModel::applySession(const JournalEvent &event)
{
    m_sessionStates.insert(event.run.sessionId, event.sessionState);
    for (int i = 0; i < m_runs.size(); ++i) {
        if (m_runs.at(i).sessionId == event.run.sessionId) {
            const QModelIndex cell = index(rowForIndex(i), SessionColumn);
            Q_EMIT dataChanged(cell, cell);
        }
    }
}

void RunListModel::addRun(const RunRecord &run)
{
    // New runs are the newest (row 0).
    beginInsertRows(QModelIndex(), 0, 0);
    m_runs.append(run);
    m_index.insert(run.id, int(m_runs.size()) - 1);
    endInsertRows();
    trim();
    Q_EMIT runChanged(run.id);
}

void RunListModel::appendOutput(RunRecord &run, const JournalEvent &event)
{
    qint64 &received = m_outputBytes[run.id];
    if (received + event.data.size() > kMaxRunOutput) {
        run.truncated = true;
        return;
    }
    received += event.data.size();
    run.appendOutput(event.stream, event.data);
    Q_EMIT outputAppended(run.id, event.stream, event.data);
}

void RunListModel::addSample(const QString &id, const UsageSample &sample)
{
    // Only for a run that is going on here: a late or stray sample (another instance's, one
    // for a run already ended) would draw where nothing ran.
    const RunRecord *r = run(id);
    if (!r || r->isFinished() || sample.elapsedMs < 0 || sample.memoryBytes < 0 ||
        sample.cpuTimeMs < 0)
        return;
    auto it = m_samples.find(id);
    if (it == m_samples.end()) {
        it = m_samples.insert(id, {});
        m_sampledRuns.append(id);
        while (m_sampledRuns.size() > kMaxSampledRuns)
            m_samples.remove(m_sampledRuns.takeFirst());
    }
    QList<UsageSample> &list = *it;
    // In time order only: the chart's rates come from differences.
    if (!list.isEmpty() && sample.elapsedMs <= list.last().elapsedMs)
        return;
    list.append(sample);
    if (list.size() > kMaxSamplesPerRun) {
        // Every other one goes, the first and the newest stay. CPU time only grows, so the
        // rate between two kept samples is still the true average over that span.
        QList<UsageSample> kept;
        kept.reserve(list.size() / 2 + 1);
        for (int i = 0; i < list.size(); i += 2)
            kept.append(list.at(i));
        if ((list.size() - 1) % 2 != 0)
            kept.append(list.last());
        list = kept;
    }
    Q_EMIT samplesChanged(id);
}

void RunListModel::addHistory(const QList<RunRecord> &runs, bool searchResults)
{
    if (searchResults) {
        m_searchResults.clear();
        for (const RunRecord &r : runs)
            m_searchResults.insert(r.id);
    }
    QList<RunRecord> fresh;
    for (const RunRecord &r : runs) {
        if (!m_index.contains(r.id) && !r.id.isEmpty())
            fresh.append(r);
    }
    if (fresh.isEmpty())
        return;
    beginResetModel();
    m_runs.append(fresh);
    std::stable_sort(m_runs.begin(), m_runs.end(), [](const RunRecord &a, const RunRecord &b) {
        return a.createdAt < b.createdAt;
    });
    reindex();
    endResetModel();
    trim();
}

void RunListModel::markInstanceGone(const QString &instanceId)
{
    for (int i = 0; i < m_runs.size(); ++i) {
        RunRecord &run = m_runs[i];
        if (run.instanceId != instanceId || run.isFinished())
            continue;
        run.status = RunRecord::Status::Error;
        run.error = QStringLiteral("the server instance that ran this ended before the run did");
        changed(i);
    }
}

bool RunListModel::setWorkspaces(const QString &id, const QJsonArray &workspaces)
{
    auto it = m_index.constFind(id);
    if (it == m_index.constEnd())
        return false;
    m_runs[*it].workspaces = workspaces;
    changed(*it);
    return true;
}

const RunRecord *RunListModel::run(const QString &id) const
{
    auto it = m_index.constFind(id);
    return it == m_index.constEnd() ? nullptr : &m_runs.at(*it);
}

const RunRecord *RunListModel::runAt(int row) const
{
    const int index = indexForRow(row);
    return index >= 0 && index < m_runs.size() ? &m_runs.at(index) : nullptr;
}

int RunListModel::rowOf(const QString &id) const
{
    auto it = m_index.constFind(id);
    return it == m_index.constEnd() ? -1 : rowForIndex(*it);
}

const RunRecord *RunListModel::complete(const QString &id)
{
    auto it = m_index.constFind(id);
    if (it == m_index.constEnd())
        return nullptr;
    RunRecord &run = m_runs[*it];
    if (!run.complete && m_loader) {
        if (std::optional<RunRecord> loaded = m_loader(id)) {
            const QList<QPair<QString, QString>> values = run.envValues;
            run = *loaded;
            run.envValues = values;
            run.complete = true;
        }
    }
    return &run;
}

void RunListModel::setLimits(int maxRuns, int maxCompleteRuns)
{
    m_maxRuns = qMax(1, maxRuns);
    m_maxComplete = qMax(1, maxCompleteRuns);
    trim();
}

QStringList RunListModel::languages() const
{
    QSet<QString> names;
    for (const RunRecord &r : m_runs)
        names.insert(r.language);
    QStringList list(names.begin(), names.end());
    list.sort();
    return list;
}

void RunListModel::reindex()
{
    m_index.clear();
    for (int i = 0; i < m_runs.size(); ++i)
        m_index.insert(m_runs.at(i).id, i);
}

void RunListModel::changed(int index)
{
    const int row = rowForIndex(index);
    Q_EMIT dataChanged(this->index(row, 0), this->index(row, ColumnCount - 1));
    Q_EMIT runChanged(m_runs.at(index).id);
}

void RunListModel::trim()
{
    if (m_runs.size() > m_maxRuns) {
        // The oldest go (they are the last rows), but for the results of the last search, which
        // were just asked for. Without any, that is one block.
        int excess = int(m_runs.size()) - m_maxRuns;
        // Results that fill the list by themselves are not kept: new runs would have no room.
        const bool keepResults = m_searchResults.size() < m_maxRuns;
        int i = 0;
        while (excess > 0 && i < m_runs.size()) {
            if (keepResults && m_searchResults.contains(m_runs.at(i).id)) {
                ++i;
                continue;
            }
            int end = i;
            while (end < m_runs.size() && end - i < excess &&
                   !(keepResults && m_searchResults.contains(m_runs.at(end).id)))
                ++end;
            beginRemoveRows(QModelIndex(), rowForIndex(end - 1), rowForIndex(i));
            for (int gone = i; gone < end; ++gone) {
                if (m_samples.remove(m_runs.at(gone).id))
                    m_sampledRuns.removeOne(m_runs.at(gone).id);
            }
            m_runs.remove(i, end - i);
            reindex();
            endRemoveRows();
            excess -= end - i;
        }
    }
    if (!m_loader || !m_isStored)
        return; // nothing could bring the output back
    int complete = 0;
    for (int i = int(m_runs.size()) - 1; i >= 0; --i) {
        RunRecord &run = m_runs[i];
        if (!run.complete || !run.isFinished())
            continue;
        if (++complete > m_maxComplete && m_isStored(run.id)) {
            run.output.clear();
            run.files.clear();
            run.workspaces = QJsonArray(); // their change sets' content can be megabytes
            run.complete = false;
        }
    }
}

QString RunListModel::durationText(qint64 ms)
{
    // (empty for an unknown duration)
    if (ms < 0)
        return QString();
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(ms);
    if (ms < 60000)
        return QStringLiteral("%1 s").arg(ms / 1000.0, 0, 'f', ms < 10000 ? 2 : 1);
    return QStringLiteral("%1 min %2 s").arg(ms / 60000).arg((ms % 60000) / 1000);
}
