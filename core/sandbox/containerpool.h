#pragma once

#include "sandboxspec.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <functional>

class SandboxContainer;

// Containers created, attached and started ahead of time, so a call only has to hand over its
// program. Each container still serves exactly one execution and is then removed: the pool moves
// work earlier, it never reuses a container. Containers are kept per creation spec (image,
// limits, environment), so a call only ever gets one made exactly for what it asks.
//
// How many it keeps per spec follows demand: it starts at the base size; when more calls take
// containers within a few seconds than it holds (a burst of parallel calls, a quick run of
// back-to-back ones), it grows to that many, up to its cap, so that the next such burst finds
// them all warm; after a quiet spell without such a burst it shrinks back to the base.
class ContainerPool : public QObject
{
    Q_OBJECT
public:
    using Factory = std::function<SandboxContainer *(const SandboxSpec &spec)>;

    // Calls taken within this window count as one burst.
    static constexpr int kBurstWindowMs = 3000;
    // A grown pool goes back to its base after this long without a burst beyond the base.
    static constexpr qint64 kShrinkAfterMs = 10 * 60 * 1000;

    ContainerPool(int sizePerSpec, const Factory &factory, QObject *parent = nullptr);

    // The base size per spec.
    int size() const { return m_size; }
    // The most it grows to per spec (at least the base).
    void setMaxSize(int maxSize) { m_maxSize = qMax(m_size, maxSize); }
    int maxSize() const { return m_maxSize; }
    void setShrinkAfterMs(qint64 ms);
    // What it keeps for this spec now (base, or what demand grew it to).
    int targetSize(const SandboxSpec &spec) const;
    // Containers handed out ready (the call only handed over its program), and the others.
    int warmTakes() const { return m_warmTakes; }
    int coldTakes() const { return m_coldTakes; }
    void setMaxAgeMs(qint64 ms) { m_maxAgeMs = ms; }
    void setRetryDelayMs(int ms) { m_retryDelayMs = ms; }
    // Called once for each pooled container when it is ready, before anyone can take it: what
    // the sandbox may do while it waits (the preload line, see PreloadPlanner).
    using ReadyHook = std::function<void(SandboxContainer *container, const SandboxSpec &spec)>;
    void setReadyHook(ReadyHook hook) { m_readyHook = std::move(hook); }

    // Fills the pool for this spec up to its size in the background.
    void warm(const SandboxSpec &spec, const QString &label);
    // A pooled container for this spec (ready if one is; else the one closest to ready), and a
    // refill starts behind it. nullptr when the pool has none: the caller makes a fresh one.
    SandboxContainer *take(const SandboxSpec &spec);
    // Removes every pooled container and stops refilling.
    void clear();
    // Preparing a container costs the engine (and the CPU) as much as a short program: while
    // programs run, refills wait unless a pool ran dry. The owner says when nothing runs.
    void setBusy(bool busy);

    int warmCount(const SandboxSpec &spec) const;   // ready to run
    int pooledCount(const SandboxSpec &spec) const; // ready or being prepared
    int totalCount() const;
    // What it keeps in all, every spec at its present target.
    int totalTarget() const;

Q_SIGNALS:
    // A spec's pool became full, e.g. at start-up: for the log and the window's status.
    void warmed(const QString &label, int count, qint64 elapsedMs);

private:
    struct Entry
    {
        QPointer<SandboxContainer> container;
        QElapsedTimer age;
    };
    struct Slot
    {
        SandboxSpec spec;
        QString label;
        QList<Entry> entries;
        int target = 0;      // 0: the base
        QList<qint64> takes; // when containers were taken, within the burst window
        QElapsedTimer grown; // since demand last went beyond the base
        QElapsedTimer fillClock;
        bool reportedFull = false;
        int failures = 0;
        bool retryPending = false;
        bool refillDeferred = false;
    };

    void refill(const QString &key, bool retrying = false);
    void adopt(const QString &key, SandboxContainer *container);
    void drop(const QString &key, SandboxContainer *container);
    void expireOld();
    void noteDemand(Slot &slot);
    void shrinkIdle();
    int targetOf(const Slot &slot) const { return slot.target > 0 ? slot.target : m_size; }

    static constexpr int kMaxFailures = 6;

    int m_size;
    int m_maxSize;
    qint64 m_shrinkAfterMs = kShrinkAfterMs;
    int m_warmTakes = 0;
    int m_coldTakes = 0;
    QElapsedTimer m_clock;
    Factory m_factory;
    ReadyHook m_readyHook;
    QHash<QString, Slot> m_slots;
    QTimer m_ageTimer;
    qint64 m_maxAgeMs = 10 * 60 * 1000;
    int m_retryDelayMs = 5000;
    bool m_cleared = false;
    bool m_busy = false;
    QTimer m_deferTimer; // bounds how long a refill may wait for quiet
    QTimer m_shrinkTimer;
    // Nothing runs: deferred refills start once that has lasted kQuietMs (not in the few ms
    // between two calls of a quick run), or at once for a spec with nothing ready left. Longer
    // only leaves the engine idle at the end of a run of calls (300 ms is 5 % of the benchmark's
    // 6 s sustained row).
    static constexpr int kQuietMs = 100;
    QTimer m_quietTimer;
    void refillDeferred();
};
