#pragma once

#include <QByteArray>
#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>
#include <optional>

struct ExecutionResult;

// Which modules a warm sandbox imports while it waits for its program (the loaders' "preload"
// line, see containers/loaders/python-loader.py and node-loader.js), per language: learned from
// what the programs of recent calls imported (Python's imports, Node's require()s), or fixed
// (--preload).
//
// Learning: every one-shot run of the language counts once, the modules its code imported (the
// loader's report) with it; older runs count less and less (a run's weight halves every
// kHalfLifeRuns runs of that language). A module is preloaded while the recent runs that
// imported it weigh at least kMinShare of all of them and more than one run (kMinWeight): the
// most used first, at most kMaxModules. A workload that imports nothing (print(1)) soon
// preloads nothing again, so its warm sandboxes cost what they did.
//
// Only the language's preloadModules (the image's own libraries) and their submodules, two
// levels deep, are learned: a warm sandbox never imports a name that only some program made up
// or brought, and what a program can tell from its sys.modules (require.cache) is which of the
// image's libraries recent calls used. A module that failed to import, or took longer than kSlowMs,
// is never asked for again by this server.
//
// Memory: what each module took in the last sandbox that preloaded it is sent along, so the
// loader skips one that would take the sandbox past its budget (see budget()); it also stops
// once past it (then a sandbox is over it by at most its last module). (The Python loader counts
// the sandbox's memory against the budget, the Node loader what preloading added to it.)
class PreloadPlanner
{
public:
    static constexpr double kHalfLifeRuns = 25;
    static constexpr double kMinShare = 0.15;
    static constexpr double kMinWeight = 1.5;
    static constexpr int kMaxModules = 8;
    static constexpr int kSlowMs = 3000;
    // A warm sandbox's budget is the least of these: the sandbox's own (numpy, pandas and
    // pyplot take about 65 MiB, with seaborn about 115), a quarter of its memory limit (the
    // program keeps three quarters whatever was preloaded), and an equal share of the pool's.
    static constexpr qint64 kSandboxBudget = qint64(192) << 20;
    static constexpr qint64 kPoolBudget = qint64(1) << 30;

    // The top-level modules runs of `language` may have preloaded (Language::preloadModules).
    void setCandidates(const QString &language, const QStringList &modules);
    // A fixed list for `language` instead of learning (--preload); empty: nothing. std::nullopt
    // learns again. A module of it that fails or is slow is dropped all the same. The server
    // gives every language the same list: a language takes from it the names its image has (a
    // top-level module among its candidates: "pandas" is Python's, "lodash" JavaScript's) and
    // those no language's image has (tried, and dropped where they fail).
    void setFixed(const QString &language, const std::optional<QStringList> &modules);
    // One run's report: what its code imported, and how its preloading went.
    void learn(const QString &language, const ExecutionResult &result);
    // What a warm sandbox of `language` imports now, most used first.
    QStringList plan(const QString &language) const;
    // The loader's line for that plan ("preload <budget> <slow ms> name[:bytes]...\n"), or
    // empty when there is nothing to preload.
    QByteArray line(const QString &language, qint64 budgetBytes) const;
    // The budget of one warm sandbox with this memory limit (0: none) among `warmSandboxes`.
    static qint64 budget(qint64 memoryLimit, int warmSandboxes);
    // Whether `language` preloads at all (it has candidates or a fixed list).
    bool preloads(const QString &language) const;
    // A name the loaders report and take: a Python module's ("matplotlib.pyplot") or an npm
    // package's ("js-yaml", "@scope/name"), at most 64 characters. A program decides what its
    // loader reports, so the server takes no other (and the loaders' lines stay bounded).
    static bool isModuleName(QByteArrayView name);

private:
    struct Usage
    {
        double runs = 0;                // the weight of all runs counted
        QHash<QString, double> modules; // the weight of the runs that imported each
    };
    bool learnable(const QString &language, const QString &module) const;
    bool fixedFor(const QString &language, const QString &module) const;

    QHash<QString, Usage> m_usage;
    QHash<QString, QSet<QString>> m_candidates;
    QHash<QString, QStringList> m_fixed;
    QHash<QString, QSet<QString>> m_dropped;
    QHash<QString, QHash<QString, qint64>> m_costs;
};
