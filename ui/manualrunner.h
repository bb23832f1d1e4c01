#pragma once

#include <QObject>
#include <QPointer>

class Execution;
class SandboxService;

// The one run the window starts by hand (the run editor): at most one at a time.
class ManualRunner : public QObject
{
    Q_OBJECT
public:
    explicit ManualRunner(SandboxService *sandbox, QObject *parent = nullptr);

    // Starts a run; returns its id, empty while one is still running.
    QString run(const QString &language, const QString &code, int timeoutSec);
    void stop();
    bool running() const { return !m_manual.isNull(); }

Q_SIGNALS:
    void runningChanged(bool running);

private:
    SandboxService *m_sandbox;
    QPointer<Execution> m_manual;
};
