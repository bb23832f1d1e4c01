#include "preloadplanner.h"

#include "executionresult.h"
#include "sandboxlog.h"

#include <QSet>
#include <algorithm>
#include <cctype>
#include <cmath>

void PreloadPlanner::setCandidates(const QString &language, const QStringList &modules)
{
    m_candidates[language] = QSet<QString>(modules.cbegin(), modules.cend());
}

void PreloadPlanner::setFixed(const QString &language, const std::optional<QStringList> &modules)
{
    if (modules)
        m_fixed[language] = *modules;
    else
        m_fixed.remove(language);
}

bool PreloadPlanner::preloads(const QString &language) const
{
    return m_fixed.contains(language) || !m_candidates.value(language).isEmpty();
}

bool PreloadPlanner::isModuleName(QByteArrayView name)
{
    if (name.isEmpty() || name.size() > 64)
        return false;
    // "@scope/" first, for a scoped npm package; then one name of these characters, which a
    // letter, digit or underscore begins (no "..", no path).
    qsizetype at = 0;
    if (name.front() == '@') {
        const qsizetype slash = name.indexOf('/');
        if (slash < 2 || !isModuleName(name.sliced(1, slash - 1)))
            return false;
        at = slash + 1;
    }
    const QByteArrayView rest = name.sliced(at);
    if (rest.isEmpty() ||
        !(std::isalnum(static_cast<unsigned char>(rest.front())) || rest.front() == '_'))
        return false;
    for (const char c : rest)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
            return false;
    return true;
}

bool PreloadPlanner::learnable(const QString &language, const QString &module) const
{
    const QStringList parts = module.split(u'.');
    return parts.size() <= 2 && m_candidates.value(language).contains(parts.first()) &&
           !m_dropped.value(language).contains(module);
}

void PreloadPlanner::learn(const QString &language, const ExecutionResult &result)
{
    for (const QString &module : result.preloadDropped) {
        QSet<QString> &dropped = m_dropped[language];
        if (!dropped.contains(module)) {
            dropped.insert(module);
            qCInfo(lcSandbox).noquote() << "preload:" << language + ':' << module
                                        << "failed or was slow to import; no longer preloaded";
        }
    }
    for (qsizetype i = 0; i < result.preloaded.size(); ++i)
        if (result.preloadCosts.value(i) > 0)
            m_costs[language][result.preloaded.at(i)] = result.preloadCosts.at(i);
    if (m_candidates.value(language).isEmpty())
        return;
    // Every earlier run's weight shrinks by the same factor, so weights stay comparable.
    static const double decay = std::pow(0.5, 1.0 / kHalfLifeRuns);
    Usage &usage = m_usage[language];
    usage.runs = usage.runs * decay + 1;
    for (auto it = usage.modules.begin(); it != usage.modules.end();) {
        it.value() *= decay;
        // (Nothing that small could count again before it has grown anew.)
        if (it.value() < 0.01)
            it = usage.modules.erase(it);
        else
            ++it;
    }
    QSet<QString> counted;
    for (const QString &module : result.imports) {
        if (counted.contains(module) || !learnable(language, module))
            continue;
        counted.insert(module);
        usage.modules[module] += 1;
    }
}

bool PreloadPlanner::fixedFor(const QString &language, const QString &module) const
{
    // The top-level module: Python's before the first dot, an npm package's before its path.
    const QString top =
        module.section(u'.', 0, 0).section(u'/', 0, module.startsWith(u'@') ? 1 : 0);
    if (m_candidates.value(language).contains(top))
        return true;
    for (auto it = m_candidates.cbegin(); it != m_candidates.cend(); ++it)
        if (it.value().contains(top))
            return false;
    return true;
}

QStringList PreloadPlanner::plan(const QString &language) const
{
    if (const auto fixed = m_fixed.constFind(language); fixed != m_fixed.cend()) {
        QStringList modules = *fixed;
        const QSet<QString> dropped = m_dropped.value(language);
        modules.removeIf([this, &language, &dropped](const QString &m) {
            return dropped.contains(m) || !fixedFor(language, m);
        });
        return modules;
    }
    const Usage usage = m_usage.value(language);
    QList<QPair<double, QString>> chosen;
    for (auto it = usage.modules.cbegin(); it != usage.modules.cend(); ++it)
        if (it.value() >= kMinWeight && it.value() >= kMinShare * usage.runs &&
            learnable(language, it.key()))
            chosen.append({it.value(), it.key()});
    std::sort(chosen.begin(), chosen.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    QStringList modules;
    for (const auto &c : std::as_const(chosen))
        if (modules.size() < kMaxModules)
            modules.append(c.second);
    return modules;
}

QByteArray PreloadPlanner::line(const QString &language, qint64 budgetBytes) const
{
    const QStringList modules = plan(language);
    if (modules.isEmpty() || budgetBytes <= 0)
        return {};
    QByteArray line =
        "preload " + QByteArray::number(budgetBytes) + ' ' + QByteArray::number(kSlowMs);
    const QHash<QString, qint64> costs = m_costs.value(language);
    for (const QString &module : modules) {
        line += ' ' + module.toLatin1();
        if (const qint64 cost = costs.value(module); cost > 0)
            line += ':' + QByteArray::number(cost);
    }
    return line + '\n';
}

qint64 PreloadPlanner::budget(qint64 memoryLimit, int warmSandboxes)
{
    qint64 budget = qMin(kSandboxBudget, kPoolBudget / qMax(1, warmSandboxes));
    if (memoryLimit > 0)
        budget = qMin(budget, memoryLimit / 4);
    return budget;
}
