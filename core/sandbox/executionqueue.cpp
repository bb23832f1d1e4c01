#include "executionqueue.h"

#include "execution.h"

ExecutionQueue::ExecutionQueue(int maxRunning, int maxWaiting, Launcher launch, QObject *parent)
    : QObject(parent), m_maxRunning(maxRunning), m_maxWaiting(maxWaiting),
      m_launch(std::move(launch))
{}

void ExecutionQueue::submit(const Job &job)
{
    Execution *execution = job.execution;
    if (m_running < m_maxRunning) {
        m_states.insert(execution, State::Running);
        ++m_running;
        m_launch(job);
        return;
    }
    if (m_waiting.size() >= m_maxWaiting) {
        execution->failEarly(QStringLiteral("the server is busy: %1 runs are running and %2 more "
                                            "are waiting, as many as it queues; try again when "
                                            "some have finished")
                                 .arg(m_running)
                                 .arg(m_waiting.size()),
                             job.image);
        return;
    }
    m_states.insert(execution, State::Waiting);
    m_waiting.enqueue(job);
    // Told once the caller had a chance to connect.
    const int position = int(m_waiting.size());
    QMetaObject::invokeMethod(
        execution, [execution, position] { execution->setQueuePosition(position); },
        Qt::QueuedConnection);
}

void ExecutionQueue::setMaxRunning(int maxRunning)
{
    m_maxRunning = qMax(1, maxRunning);
    launchWaiting();
}

void ExecutionQueue::finished(Execution *execution)
{
    const auto it = m_states.constFind(execution);
    if (it == m_states.cend())
        return; // refused, or never submitted (failed before)
    if (*it == State::Waiting)
        m_waiting.removeIf([execution](const Job &j) { return j.execution == execution; });
    else
        --m_running;
    m_states.erase(it);
    launchWaiting();
    if (m_running == 0)
        Q_EMIT idle();
}

void ExecutionQueue::launchWaiting()
{
    bool moved = false;
    while (!m_waiting.isEmpty() && m_running < m_maxRunning && !m_stopped) {
        const Job next = m_waiting.dequeue();
        m_states.insert(next.execution, State::Running);
        ++m_running;
        m_launch(next);
        moved = true;
    }
    if (moved)
        for (int i = 0; i < m_waiting.size(); ++i)
            m_waiting.at(i).execution->setQueuePosition(i + 1);
}
