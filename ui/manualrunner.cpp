#include "manualrunner.h"

#include "execution.h"
#include "sandboxservice.h"

ManualRunner::ManualRunner(SandboxService *sandbox, QObject *parent)
    : QObject(parent), m_sandbox(sandbox)
{}

QString ManualRunner::run(const QString &language, const QString &code, int timeoutSec)
{
    if (m_manual)
        return QString();
    ExecutionRequest request(language, code, timeoutSec);
    request.source = QStringLiteral("manual");
    request.tool = QStringLiteral("manual");
    Execution *execution = m_sandbox->execute(request);
    m_manual = execution;
    connect(execution, &Execution::finished, this, [this] {
        m_manual.clear();
        Q_EMIT runningChanged(false);
    });
    Q_EMIT runningChanged(true);
    return execution->runId();
}

void ManualRunner::stop()
{
    if (m_manual)
        m_manual->cancel();
}
