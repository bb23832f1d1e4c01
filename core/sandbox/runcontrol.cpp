#include "runcontrol.h"

#include "execution.h"
#include "sandboxlog.h"
#include "sandboxservice.h"

RunControl::RunControl(SandboxService *sandbox, QObject *parent) : QObject(parent)
{
    connect(sandbox, &SandboxService::executionCreated, this, [this](Execution *execution) {
        const QString id = execution->runId();
        m_runs.insert(id, execution);
        connect(execution, &Execution::finished, this, [this, id] { m_runs.remove(id); });
        connect(execution, &QObject::destroyed, this, [this, id] { m_runs.remove(id); });
    });
}

bool RunControl::stop(const QString &runId, const QString &reason)
{
    const QPointer<Execution> execution = m_runs.value(runId);
    if (!execution || execution->isFinished())
        return false;
    qCInfo(lcSandbox).noquote() << "run" << runId.left(8) << "stopped:" << reason;
    execution->cancel(reason);
    return true;
}
