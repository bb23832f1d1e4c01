#include "containerpool.h"

#include "sandboxcontainer.h"
#include "sandboxlog.h"

ContainerPool::ContainerPool(int sizePerSpec, const Factory &factory, QObject *parent)
    : QObject(parent), m_size(qMax(0, sizePerSpec)), m_maxSize(m_size), m_factory(factory)
{
    m_clock.start();
    m_ageTimer.setInterval(30000);
    connect(&m_ageTimer, &QTimer::timeout, this, &ContainerPool::expireOld);
    m_shrinkTimer.setInterval(30000);
    connect(&m_shrinkTimer, &QTimer::timeout, this, &ContainerPool::shrinkIdle);
    m_deferTimer.setSingleShot(true);
    m_deferTimer.setInterval(2000);
    connect(&m_deferTimer, &QTimer::timeout, this, &ContainerPool::refillDeferred);
    m_quietTimer.setSingleShot(true);
    m_quietTimer.setInterval(kQuietMs);
    connect(&m_quietTimer, &QTimer::timeout, this, &ContainerPool::refillDeferred);
}

void ContainerPool::warm(const SandboxSpec &spec, const QString &label)
{
    if (m_size == 0 || m_cleared)
        return;
    const QString key = spec.key();
    Slot &slot = m_slots[key];
    if (!slot.fillClock.isValid()) {
        slot.spec = spec;
        slot.label = label;
        slot.fillClock.start();
    }
    if (!m_ageTimer.isActive())
        m_ageTimer.start();
    refill(key);
}

SandboxContainer *ContainerPool::take(const SandboxSpec &spec)
{
    if (m_size == 0 || m_cleared)
        return nullptr;
    const QString key = spec.key();
    auto it = m_slots.find(key);
    if (it == m_slots.end())
        return nullptr;
    Slot &slot = *it;
    // Prefer a ready container; otherwise the one furthest along (the oldest).
    int best = -1;
    for (int i = 0; i < slot.entries.size(); ++i) {
        SandboxContainer *c = slot.entries[i].container;
        if (!c)
            continue;
        if (c->state() == SandboxContainer::State::Ready) {
            best = i;
            break;
        }
        if (best < 0)
            best = i;
    }
    SandboxContainer *taken = nullptr;
    if (best >= 0) {
        taken = slot.entries.takeAt(best).container;
        disconnect(taken, nullptr, this, nullptr);
    }
    if (taken && taken->state() == SandboxContainer::State::Ready)
        ++m_warmTakes;
    else
        ++m_coldTakes;
    noteDemand(slot);
    // Someone wants this spec again: after giving up, allow one more (slow) retry.
    slot.failures = qMin(slot.failures, kMaxFailures - 1);
    bool anyReady = false;
    for (const Entry &e : std::as_const(slot.entries))
        anyReady =
            anyReady || (e.container && e.container->state() == SandboxContainer::State::Ready);
    if (m_busy && anyReady) {
        // The next call is covered; refill once the programs have finished.
        slot.refillDeferred = true;
        if (!m_deferTimer.isActive())
            m_deferTimer.start();
    } else {
        refill(key);
    }
    return taken;
}

void ContainerPool::refill(const QString &key, bool retrying)
{
    auto it = m_slots.find(key);
    if (it == m_slots.end() || m_cleared)
        return;
    Slot &slot = *it;
    if (slot.failures > 0 && !retrying) {
        // The engine refused this spec (missing image, engine down): try again later, with a
        // growing delay, instead of hammering it on every failure.
        if (!slot.retryPending && slot.failures < kMaxFailures) {
            slot.retryPending = true;
            const int delay = qMin(m_retryDelayMs << qMin(slot.failures - 1, 5), 120000);
            QTimer::singleShot(delay, this, [this, key] {
                auto s = m_slots.find(key);
                if (s == m_slots.end())
                    return;
                s->retryPending = false;
                refill(key, true);
            });
        }
        return;
    }
    while (slot.entries.size() < targetOf(slot)) {
        SandboxContainer *c = m_factory(slot.spec);
        Entry entry;
        entry.container = c;
        entry.age.start();
        slot.entries.append(entry);
        adopt(key, c);
        c->prepare();
    }
}

void ContainerPool::adopt(const QString &key, SandboxContainer *c)
{
    connect(c, &SandboxContainer::ready, this, [this, key, c] {
        auto it = m_slots.find(key);
        if (it == m_slots.end())
            return;
        if (m_readyHook)
            m_readyHook(c, it->spec);
        it->failures = 0;
        if (it->reportedFull)
            return;
        int ready = 0;
        for (const Entry &e : std::as_const(it->entries))
            ready += e.container && e.container->state() == SandboxContainer::State::Ready;
        if (ready == targetOf(*it)) {
            it->reportedFull = true;
            Q_EMIT warmed(it->label, ready, it->fillClock.elapsed());
        }
    });
    connect(c, &SandboxContainer::failed, this, [this, key, c] {
        auto it = m_slots.find(key);
        if (it != m_slots.end())
            ++it->failures;
        drop(key, c);
        refill(key);
    });
    // A pooled container whose stream ends has died (killed from outside): replace it.
    connect(c, &SandboxContainer::streamEnded, this, [this, key, c] {
        drop(key, c);
        refill(key);
    });
}

void ContainerPool::drop(const QString &key, SandboxContainer *c)
{
    auto it = m_slots.find(key);
    if (it != m_slots.end())
        it->entries.removeIf([c](const Entry &e) { return e.container == c; });
    disconnect(c, nullptr, this, nullptr);
    c->remove();
}

void ContainerPool::expireOld()
{
    for (auto it = m_slots.begin(); it != m_slots.end(); ++it) {
        QList<SandboxContainer *> old;
        for (const Entry &e : std::as_const(it->entries))
            if (e.container && e.age.elapsed() > m_maxAgeMs &&
                e.container->state() == SandboxContainer::State::Ready)
                old.append(e.container);
        for (SandboxContainer *c : old)
            drop(it.key(), c);
        if (!old.isEmpty()) {
            qCDebug(lcSandbox) << "pool: replacing" << old.size() << "aged container(s) of"
                               << it->label;
            refill(it.key());
        }
    }
}

void ContainerPool::noteDemand(Slot &slot)
{
    const qint64 now = m_clock.elapsed();
    slot.takes.append(now);
    while (!slot.takes.isEmpty() && slot.takes.first() < now - kBurstWindowMs)
        slot.takes.removeFirst();
    const int demand = int(slot.takes.size());
    if (demand <= m_size)
        return;
    slot.grown.start();
    const int target = qMin(m_maxSize, demand);
    if (target > targetOf(slot)) {
        qCInfo(lcSandbox).noquote()
            << "pool:" << slot.label << "grows to" << target
            << "(" + QString::number(demand) + " calls within" << kBurstWindowMs / 1000 << "s)";
        slot.target = target;
        slot.reportedFull = false;
        slot.fillClock.start();
        if (!m_shrinkTimer.isActive())
            m_shrinkTimer.start();
    }
}

void ContainerPool::shrinkIdle()
{
    for (auto it = m_slots.begin(); it != m_slots.end(); ++it) {
        Slot &slot = *it;
        if (slot.target <= m_size || !slot.grown.isValid() ||
            slot.grown.elapsed() < m_shrinkAfterMs)
            continue;
        qCInfo(lcSandbox).noquote()
            << "pool:" << slot.label << "back to" << m_size << "after a quiet spell";
        slot.target = 0;
        // The surplus goes, ready ones last (they are what a call would get).
        QList<SandboxContainer *> surplus;
        for (int i = int(slot.entries.size()) - 1;
             i >= 0 && int(slot.entries.size()) - int(surplus.size()) > m_size; --i)
            if (slot.entries[i].container)
                surplus.append(slot.entries[i].container);
        for (SandboxContainer *c : surplus)
            drop(it.key(), c);
    }
}

void ContainerPool::setShrinkAfterMs(qint64 ms)
{
    m_shrinkAfterMs = ms;
    m_shrinkTimer.setInterval(int(qBound(qint64(100), ms / 2, qint64(30000))));
}

int ContainerPool::targetSize(const SandboxSpec &spec) const
{
    const auto it = m_slots.constFind(spec.key());
    return it == m_slots.cend() ? m_size : targetOf(*it);
}

void ContainerPool::setBusy(bool busy)
{
    m_busy = busy;
    if (busy) {
        m_quietTimer.stop();
        return;
    }
    bool waiting = false;
    for (auto it = m_slots.begin(); it != m_slots.end(); ++it) {
        if (!it->refillDeferred)
            continue;
        if (warmCount(it->spec) == 0) {
            it->refillDeferred = false;
            refill(it.key());
        } else {
            waiting = true;
        }
    }
    if (waiting)
        m_quietTimer.start();
}

void ContainerPool::refillDeferred()
{
    m_quietTimer.stop();
    m_deferTimer.stop();
    for (auto it = m_slots.begin(); it != m_slots.end(); ++it) {
        if (it->refillDeferred) {
            it->refillDeferred = false;
            refill(it.key());
        }
    }
}

void ContainerPool::clear()
{
    m_cleared = true;
    m_ageTimer.stop();
    m_shrinkTimer.stop();
    m_quietTimer.stop();
    m_deferTimer.stop();
    for (auto it = m_slots.begin(); it != m_slots.end(); ++it) {
        const auto entries = it->entries;
        it->entries.clear();
        for (const Entry &e : entries) {
            if (!e.container)
                continue;
            disconnect(e.container, nullptr, this, nullptr);
            e.container->remove();
        }
    }
}

int ContainerPool::warmCount(const SandboxSpec &spec) const
{
    const auto it = m_slots.constFind(spec.key());
    if (it == m_slots.cend())
        return 0;
    int n = 0;
    for (const Entry &e : it->entries)
        n += e.container && e.container->state() == SandboxContainer::State::Ready;
    return n;
}

int ContainerPool::totalCount() const
{
    int n = 0;
    for (const Slot &s : m_slots)
        n += int(s.entries.size());
    return n;
}

int ContainerPool::totalTarget() const
{
    int n = 0;
    for (const Slot &s : m_slots)
        n += targetOf(s);
    return n;
}

int ContainerPool::pooledCount(const SandboxSpec &spec) const
{
    const auto it = m_slots.constFind(spec.key());
    return it == m_slots.cend() ? 0 : int(it->entries.size());
}
