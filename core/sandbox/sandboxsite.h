#pragma once

#include "sandboxbackend.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>
#include <QTimer>

class ContainerPool;
class Janitor;
class LibraryCache;

// One backend the service places sandboxes on (one engine), with what belongs to it alone: its
// warm pool, its janitor, its library volumes, the runs placed there, and whether it answers.
//
// When the service has several sites it watches each: a cheap health question every couple of
// seconds. One that fails, or gets no answer within a few seconds, is Down: the service fails
// the runs placed there (naming the engine) and places new ones elsewhere. A Down site is asked
// again with back-off and is Up again with the first answer.
class SandboxSite : public QObject
{
    Q_OBJECT
public:
    enum class State
    {
        Unknown, // not asked yet: usable (the first call says what is wrong, as with one engine)
        Up,
        Down
    };

    // A health question without an answer for this long marks the site Down: no new runs go
    // there. The runs it has go on: a busy machine makes a healthy engine slow to answer, and
    // failing them for that lost work that was about to finish.
    static constexpr int kAnswerTimeoutMs = 3000;
    // A question still unanswered after this long means the engine hangs or its link is cut:
    // the runs placed there fail (a refused or reset connection fails them at once).
    static constexpr int kGiveUpMs = 15000;
    // How often an Up site is asked; a Down one is asked after 1, 2, 4 … up to kMaxBackoffMs.
    static constexpr int kCheckIntervalMs = 2000;
    static constexpr int kMaxBackoffMs = 15000;

    SandboxSite(SandboxBackend *backend, int index, QObject *parent = nullptr);
    ~SandboxSite() override;

    SandboxBackend *backend() const { return m_backend; }
    // Its position in the service's list (0: the first engine named).
    int index() const { return m_index; }
    QString endpoint() const { return m_backend->endpoint(); }
    State state() const { return m_state; }
    bool isUsable() const { return m_state != State::Down; }
    static QString stateName(State state);
    // Why it is Down ("" otherwise).
    QString error() const { return m_error; }
    // The last full answer (product, version, CPUs), once it was Up.
    const SandboxBackend::Health &health() const { return m_health; }
    // How many sandboxes it runs well at once (the backend's figure).
    int capacity() const { return m_backend->capacity(); }

    // Runs placed here that have not finished.
    int running() const { return m_running; }
    void addRunning(int delta) { m_running += delta; }
    // How many runs were ever placed here.
    quint64 placed() const { return m_placed; }
    void countPlaced() { ++m_placed; }
    // Running sandboxes against capacity: what placement compares.
    double load() const { return double(m_running) / double(qMax(1, capacity())); }

    ContainerPool *pool() const { return m_pool; }
    void setPool(ContainerPool *pool) { m_pool = pool; }
    Janitor *janitor() const { return m_janitor; }
    void setJanitor(Janitor *janitor) { m_janitor = janitor; }
    LibraryCache *libraries() const { return m_libraries; }
    void setLibraries(LibraryCache *libraries) { m_libraries = libraries; }
    // Languages whose warm pool was started here.
    QSet<QString> &warming() { return m_warming; }

    // Removal of used containers that have stopped waits while runs are placed here or queued,
    // so that the engine's time goes to the calls; at most this many wait, none longer than
    // kMaxRemovalDelayMs.
    static constexpr int kMaxDeferredRemovals = 16;
    static constexpr int kMaxRemovalDelayMs = 10000;
    void deferRemoval(SandboxContainer *container);
    // Removes what waits (at shutdown).
    void flushRemovals();
    // Nothing runs or waits: what waits is removed unless a run comes within kQuietMs (the next
    // of a quick run of back-to-back calls comes within a few ms). Longer only leaves the engine
    // idle at the end of a run of calls, with its work still to do: after the pool's refills.
    static constexpr int kQuietMs = 150;
    void quiet();
    void busy() { m_quietTimer.stop(); }
    int deferredRemovals() const { return int(m_deferred.size()); }

    // Starts the health questions (the service does so when it has more than one site).
    void watch();
    void stopWatching();
    // Asks once now, whatever the schedule (e.g. after a call failed there).
    void checkNow();
    // A sandbox there found the backend not answering: Down at once (so that no more runs are
    // placed there in the seconds a health question takes), and asked again right away.
    void reportLost(const QString &error);

Q_SIGNALS:
    // Up → Down or Down → Up (Unknown → Up is not reported: nothing changes for callers).
    void stateChanged(SandboxSite *site, SandboxSite::State previous);
    // Its own health question failed (not just a sandbox's request): whatever runs there cannot
    // be reached. Once per time it goes down.
    void unreachable(SandboxSite *site);
    // The full answer arrived (version, CPUs): capacity may have changed.
    void described(SandboxSite *site);

private:
    void check();
    void answered(const SandboxBackend::Health &health);
    // `confirmed`: by a health question of its own, not a sandbox's failure.
    void markDown(const QString &error, bool confirmed);
    void describe();
    void schedule(int delayMs);

    SandboxBackend *m_backend;
    int m_index;
    State m_state = State::Unknown;
    QString m_error;
    SandboxBackend::Health m_health;
    int m_running = 0;
    quint64 m_placed = 0;
    ContainerPool *m_pool = nullptr;
    Janitor *m_janitor = nullptr;
    LibraryCache *m_libraries = nullptr;
    QSet<QString> m_warming;
    QList<QPointer<SandboxContainer>> m_deferred;
    QTimer m_removalDeadline;
    QTimer m_quietTimer;
    QTimer m_next;
    QTimer m_deadline;
    bool m_watching = false;
    bool m_asking = false;   // a health question is out
    QElapsedTimer m_askedAt; // when it went out
    int m_failures = 0;
    bool m_described = false;
    bool m_confirmed = false; // Down, and its health question said so
};
