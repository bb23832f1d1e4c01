#include "sandboxcontainer.h"

#include <QTimer>

SandboxContainer::SandboxContainer(const QString &name, const QString &image, QObject *parent)
    : QObject(parent), m_name(name), m_image(image)
{}

void SandboxContainer::remove()
{
    if (m_state == State::Removing || m_state == State::Removed || m_removeWhenCreated)
        return;
    if (m_state == State::Creating) {
        // The id is not known yet (or the create not even sent): remove once it has answered.
        m_removeWhenCreated = true;
        return;
    }
    // Marked first: closing ends the stream synchronously, and what that end sets off must find
    // the removal under way rather than start another.
    const bool created = !m_id.isEmpty();
    m_state = created ? State::Removing : State::Removed;
    closeStream();
    if (!created) {
        m_state = State::Removed;
        Q_EMIT removed();
        return;
    }
    sendRemove();
}

bool SandboxContainer::removeIfAsked()
{
    if (!m_removeWhenCreated)
        return false;
    m_removeWhenCreated = false;
    m_state = State::Failed;
    remove();
    return true;
}

void SandboxContainer::confirmRemoved()
{
    m_state = State::Removed;
    Q_EMIT removed();
}

bool SandboxContainer::retryRemove()
{
    const int delayMs = qMin(60000, 500 << qMin(m_removeAttempts, 7));
    QTimer::singleShot(delayMs, this, [this] { sendRemove(); });
    return m_removeAttempts++ == 0;
}
