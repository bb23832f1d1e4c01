#include "workspacedecisions.h"

#include "historystore.h"
#include "runlistmodel.h"
#include "uilog.h"
#include "workspacerun.h"

#include <QFutureWatcher>
#include <QPromise>
#include <QThreadPool>
#include <QTimer>
#include <memory>

namespace {
constexpr int kMaxAsked = 500;
constexpr int kHistoryRetryMs = 1000;

int indexOf(const QJsonArray &workspaces, const QString &name)
{
    for (qsizetype i = 0; i < workspaces.size(); ++i) {
        if (workspaces.at(i).toObject().value(u"name").toString() == name)
            return int(i);
    }
    return -1;
}
} // namespace

WorkspaceDecisions::WorkspaceDecisions(RunListModel *model, HistoryStore *history, QObject *parent)
    : QObject(parent), m_model(model), m_history(history)
{
    connect(m_model, &RunListModel::runFinished, this, &WorkspaceDecisions::onRunFinished);
    if (m_history)
        connect(m_history, &HistoryStore::workspacesUpdated, this,
                &WorkspaceDecisions::onHistoryUpdated);
}

QString WorkspaceDecisions::key(const QString &runId, const QString &name)
{
    return runId + u'\n' + name;
}

const RunRecord *WorkspaceDecisions::run(const QString &runId)
{
    return m_model->complete(runId);
}

QList<RunWorkspace> WorkspaceDecisions::workspaces(const QString &runId)
{
    const RunRecord *r = run(runId);
    return r ? RunWorkspace::fromRecord(r->workspaces) : QList<RunWorkspace>();
}

std::optional<RunWorkspace> WorkspaceDecisions::workspace(const QString &runId, const QString &name)
{
    for (const RunWorkspace &w : workspaces(runId)) {
        if (w.name == name)
            return w;
    }
    return std::nullopt;
}

bool WorkspaceDecisions::isBusy(const QString &runId, const QString &name) const
{
    return m_busy.contains(key(runId, name));
}

QString WorkspaceDecisions::message(const QString &runId, const QString &name) const
{
    return m_messages.value(key(runId, name));
}

void WorkspaceDecisions::setMessage(const QString &runId, const QString &name,
                                    const QString &message)
{
    if (message.isEmpty())
        m_messages.remove(key(runId, name));
    else
        m_messages.insert(key(runId, name), message);
    Q_EMIT changed(runId, name);
}

bool WorkspaceDecisions::needsAsking(const RunRecord &run)
{
    for (const RunWorkspace &w : RunWorkspace::fromRecord(run.workspaces)) {
        if (w.apply == u"ask" && w.needsDecision())
            return true;
    }
    return false;
}

void WorkspaceDecisions::onRunFinished(const QString &runId)
{
    const RunRecord *run = m_model->run(runId);
    if (!run || m_asked.contains(runId) || !needsAsking(*run))
        return;
    m_asked.append(runId);
    while (m_asked.size() > kMaxAsked)
        m_asked.removeFirst();
    Q_EMIT askRequested(runId);
}

bool WorkspaceDecisions::apply(const QString &runId, const QString &name)
{
    if (isBusy(runId, name))
        return false;
    const std::optional<RunWorkspace> w = workspace(runId, name);
    if (!w || !w->needsDecision()) {
        setMessage(runId, name, QStringLiteral("There is nothing left to apply here."));
        return false;
    }
    if (const QString why = w->whyNotApplicable(); !why.isEmpty()) {
        setMessage(runId, name, why);
        return false;
    }
    const QJsonArray before = m_model->run(runId)->workspaces;
    m_busy.insert(key(runId, name));
    setMessage(runId, name, QString());
    qCInfo(lcUi).noquote() << "applying workspace" << name << "of run" << runId.left(8) << "to"
                           << w->folder;

    // Off the window's thread: decoding and checking up to 32 MiB, then a write, an fsync and a
    // rename per file.
    auto promise = std::make_shared<QPromise<Outcome>>();
    auto *watcher = new QFutureWatcher<Outcome>(this);
    connect(watcher, &QFutureWatcher<Outcome>::finished, this,
            [this, watcher, runId, name, before] {
                const Outcome outcome = watcher->future().resultCount() > 0
                                            ? watcher->result()
                                            : Outcome{{}, QStringLiteral("the apply was lost")};
                watcher->deleteLater();
                finishApply(runId, name, outcome, before);
            });
    watcher->setFuture(promise->future());
    const QJsonObject json = w->json;
    QThreadPool::globalInstance()->start([promise, json] {
        promise->start();
        Outcome outcome;
        QString error;
        const std::optional<WorkspaceRun> run = WorkspaceRun::fromRecordJson(json, &error);
        if (!run)
            outcome.error = error;
        else if (!run->changes || !run->scan)
            outcome.error =
                run->error.isEmpty() ? QStringLiteral("the record has no change set") : run->error;
        else
            outcome.result = WorkspaceApplier::apply(run->workspace, *run->scan, *run->changes);
        promise->addResult(outcome);
        promise->finish();
    });
    Q_EMIT changed(runId, name);
    return true;
}

void WorkspaceDecisions::finishApply(const QString &runId, const QString &name,
                                     const Outcome &outcome, const QJsonArray &before)
{
    m_busy.remove(key(runId, name));
    if (!outcome.error.isEmpty()) {
        qCWarning(lcUi).noquote() << "cannot apply workspace" << name << "of run" << runId.left(8)
                                  << ":" << outcome.error;
        setMessage(runId, name, QStringLiteral("Cannot apply: %1.").arg(outcome.error));
        return;
    }
    const WorkspaceApplyResult &r = outcome.result;
    qCInfo(lcUi).noquote() << "workspace" << name << "of run" << runId.left(8)
                           << "applied:" << r.applied.size() << "written," << r.conflicts.size()
                           << "left alone," << r.failed.size() << "failed";
    const int index = indexOf(before, name);
    if (index < 0)
        return;
    record(runId, name,
           RunWorkspace::decided(before.at(index).toObject(), QStringLiteral("applied"), r,
                                 QDateTime::currentDateTimeUtc()),
           before);
}

bool WorkspaceDecisions::discard(const QString &runId, const QString &name)
{
    const std::optional<RunWorkspace> w = workspace(runId, name);
    if (isBusy(runId, name) || !w || !w->needsDecision())
        return false;
    qCInfo(lcUi).noquote() << "workspace" << name << "of run" << runId.left(8) << "discarded";
    record(runId, name,
           RunWorkspace::decided(w->json, QStringLiteral("discarded"), {},
                                 QDateTime::currentDateTimeUtc()),
           m_model->run(runId)->workspaces);
    return true;
}

void WorkspaceDecisions::record(const QString &runId, const QString &name,
                                const QJsonObject &decided, const QJsonArray &fallback)
{
    // The model's record as it is now (it may have been reloaded meanwhile); the one the apply
    // started from when the model no longer has the run.
    const RunRecord *run = m_model->complete(runId);
    QJsonArray workspaces = run && !run->workspaces.isEmpty() ? run->workspaces : fallback;
    const int index = indexOf(workspaces, name);
    if (index < 0)
        return;
    workspaces[index] = decided;
    m_model->setWorkspaces(runId, workspaces);
    m_messages.remove(key(runId, name));
    m_historyTries.remove(runId);
    saveToHistory(runId, workspaces);
    Q_EMIT changed(runId, name);
}

void WorkspaceDecisions::saveToHistory(const QString &runId, const QJsonArray &workspaces)
{
    if (!m_history || !m_history->isOpen())
        return;
    m_unsaved.insert(runId, workspaces);
    m_history->updateWorkspaces(runId, workspaces);
}

void WorkspaceDecisions::onHistoryUpdated(const QString &runId, bool ok)
{
    auto it = m_unsaved.find(runId);
    if (it == m_unsaved.end())
        return;
    if (ok) {
        m_unsaved.erase(it);
        m_historyTries.remove(runId);
        return;
    }
    const int tries = ++m_historyTries[runId];
    if (tries < kHistoryTries) {
        QTimer::singleShot(kHistoryRetryMs, this, [this, runId] {
            if (m_unsaved.contains(runId) && m_history)
                m_history->updateWorkspaces(runId, m_unsaved.value(runId));
        });
        return;
    }
    const QJsonArray workspaces = it.value();
    m_unsaved.erase(it);
    m_historyTries.remove(runId);
    qCWarning(lcUi).noquote() << "the history has no run" << runId.left(8)
                              << "; its workspaces' decision holds in this window only";
    for (const QJsonValue v : workspaces) {
        const QString name = v.toObject().value(u"name").toString();
        if (!v.toObject().value(u"decision").toString().isEmpty())
            setMessage(runId, name,
                       QStringLiteral("The history does not hold this run (its server keeps "
                                      "none): the decision is remembered until the window "
                                      "closes."));
    }
}
