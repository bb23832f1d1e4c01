#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
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
class ContainerPool : public QObject
{
    Q_OBJECT
public:
    using Factory =
        std::function<SandboxContainer *(const QJsonObject &spec, const QString &image)>;

    ContainerPool(int sizePerSpec, const Factory &factory, QObject *parent = nullptr);

    int size() const { return m_size; }
    void setMaxAgeMs(qint64 ms) { m_maxAgeMs = ms; }
    void setRetryDelayMs(int ms) { m_retryDelayMs = ms; }

    // Fills the pool for this spec up to its size in the background.
    void warm(const QJsonObject &spec, const QString &image, const QString &label);
    // A pooled container for this spec (ready if one is; else the one closest to ready), and a
    // refill starts behind it. nullptr when the pool has none: the caller makes a fresh one.
    SandboxContainer *take(const QJsonObject &spec);
    // Removes every pooled container and stops refilling.
    void clear();
    // Preparing a container costs the engine (and the CPU) as much as a short program: while
    // programs run, refills wait unless a pool ran dry. The owner says when nothing runs.
    void setBusy(bool busy);

    int warmCount(const QJsonObject &spec) const;   // ready to run
    int pooledCount(const QJsonObject &spec) const; // ready or being prepared
    int totalCount() const;

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
        QJsonObject spec;
        QString image;
        QString label;
        QList<Entry> entries;
        QElapsedTimer fillClock;
        bool reportedFull = false;
        int failures = 0;
        bool retryPending = false;
        bool refillDeferred = false;
    };

    static QString keyOf(const QJsonObject &spec);
    void refill(const QString &key, bool retrying = false);
    void adopt(const QString &key, SandboxContainer *container);
    void drop(const QString &key, SandboxContainer *container);
    void expireOld();

    static constexpr int kMaxFailures = 6;

    int m_size;
    Factory m_factory;
    QHash<QString, Slot> m_slots;
    QTimer m_ageTimer;
    qint64 m_maxAgeMs = 10 * 60 * 1000;
    int m_retryDelayMs = 5000;
    bool m_cleared = false;
    bool m_busy = false;
    QTimer m_deferTimer; // bounds how long a refill may wait for quiet
};
