#include "assistantpolicy.h"

#include "egresslist.h"
#include "runnetwork.h"
#include "sandboxconfig.h"

#include <QJsonArray>

QString AssistantPolicy::describe() const
{
    return isDefault() ? QStringLiteral("the default policy (assistants not listed)")
                       : QStringLiteral("the policy for assistant '%1'").arg(client);
}

QString AssistantPolicy::check(const QString &language, int *timeoutSec,
                               const QStringList &libraries, const SandboxConfig &config,
                               std::optional<QStringList> *egress) const
{
    // Every refusal names the policy and the rule, so that the assistant (and the person reading
    // its transcript) knows it is a choice of the user's, not a fault.
    const QString where = QStringLiteral("Refused by %1 in Code Sandbox: ").arg(describe());
    const QString change = QStringLiteral(". A person can change this in Code Sandbox's Settings "
                                          "→ Assistants.");
    if (!languages.isEmpty() && !languages.contains(language, Qt::CaseInsensitive))
        return where +
               QStringLiteral("%1 is not among the languages it allows: %2")
                   .arg(language, languages.join(QStringLiteral(", "))) +
               change;
    if (!network && config.network)
        return where +
               QStringLiteral("network access is not allowed for it, and this server gives "
                              "every sandbox network access (--network)") +
               change;
    if (egress) {
        const QString broken = checkEgress(egress, config);
        if (!broken.isEmpty())
            return where + broken + change;
    }
    if (!libraries.isEmpty() && !this->libraries)
        return where + QStringLiteral("installing libraries is not allowed for it") + change;
    if (!libraries.isEmpty() && !network)
        return where +
               QStringLiteral("installing libraries needs network access, which is not allowed "
                              "for it") +
               change;
    const qint64 mib = 1024 * 1024;
    if (maxMemoryMiB > 0 && config.memoryBytes > qint64(maxMemoryMiB) * mib)
        return where +
               QStringLiteral("sandboxes on this server get %1 MiB of memory, above its largest, "
                              "%2 MiB")
                   .arg(config.memoryBytes / mib)
                   .arg(maxMemoryMiB) +
               change;
    if (maxTimeoutSec > 0) {
        if (*timeoutSec > maxTimeoutSec)
            return where +
                   QStringLiteral("a timeout of %1 s is above its largest, %2 s")
                       .arg(*timeoutSec)
                       .arg(maxTimeoutSec) +
                   change;
        // No timeout asked: the server's default, within the policy's largest.
        if (*timeoutSec <= 0 && config.defaultTimeoutSec > maxTimeoutSec)
            *timeoutSec = maxTimeoutSec;
    }
    return QString();
}

QString AssistantPolicy::checkWorkspaces(const QStringList &asked) const
{
    if (!workspaces || action == Action::Ask)
        return QString();
    QStringList beyond;
    for (const QString &name : asked)
        if (!workspaces->contains(name))
            beyond.append(name);
    if (beyond.isEmpty())
        return QString();
    return QStringLiteral("Refused by %1 in Code Sandbox: the workspace%2 %3 %4 not among those "
                          "it may use (%5). A person can change this in Code Sandbox's Settings "
                          "→ Assistants.")
        .arg(describe(), beyond.size() > 1 ? QStringLiteral("s") : QString(),
             beyond.join(QStringLiteral(", ")),
             beyond.size() > 1 ? QStringLiteral("are") : QStringLiteral("is"),
             workspaces->isEmpty() ? QStringLiteral("none")
                                   : workspaces->join(QStringLiteral(", ")));
}

QString AssistantPolicy::checkEgress(std::optional<QStringList> *egress,
                                     const SandboxConfig &config) const
{
    const bool asked = egress->has_value() && !(*egress)->isEmpty();
    if (!network) {
        if (asked)
            return QStringLiteral("network access is not allowed for it, and the call asks for %1")
                .arg((*egress)->join(QStringLiteral(", ")));
        // An allow-list server can give its runs no network instead (an open one is refused
        // above: every sandbox there has network); so can one whose runs reach only the hosts
        // of its bound secrets, and then they get no secret either.
        if (RunNetwork::decide(config).mode == SandboxSpec::Network::Allowlist)
            *egress = QStringList();
        return QString();
    }
    if (this->egress.isEmpty())
        return QString();
    if (asked) {
        const QString beyond = EgressList::uncovered(**egress, this->egress);
        if (!beyond.isEmpty() && otherHosts == OtherHosts::Ask) {
            // The listed ones it gets; the others are asked about if the program reaches them.
            // With none listed, what a call that did not say gets (an empty list would be no
            // network, with nobody to ask).
            const QStringList listed = EgressList::within(**egress, this->egress);
            if (!listed.isEmpty()) {
                *egress = listed;
                return QString();
            }
            egress->reset();
        } else if (!beyond.isEmpty()) {
            return QStringLiteral("the call asks for %1, which is not on its allow-list (%2)")
                .arg(beyond, this->egress.join(QStringLiteral(", ")));
        } else {
            return QString();
        }
    }
    if (egress->has_value())
        return QString(); // the call asked for no network
    // The call did not say: the policy's list, as far as the server's allows.
    if (!config.egress.isEmpty())
        *egress = EgressList::within(this->egress, config.egress);
    else if (config.network)
        *egress = this->egress;
    return QString();
}

QString AssistantPolicy::actionName(Action action)
{
    switch (action) {
    case Action::Run:
        return QStringLiteral("run");
    case Action::Ask:
        return QStringLiteral("ask");
    case Action::Refuse:
        return QStringLiteral("refuse");
    }
    return QStringLiteral("run");
}

std::optional<AssistantPolicy::Action> AssistantPolicy::actionFromName(const QString &name)
{
    for (Action a : {Action::Run, Action::Ask, Action::Refuse}) {
        if (name.compare(actionName(a), Qt::CaseInsensitive) == 0)
            return a;
    }
    return std::nullopt;
}

QJsonObject AssistantPolicy::toJson() const
{
    QJsonObject o{{QStringLiteral("action"), actionName(action)},
                  {QStringLiteral("network"), network},
                  {QStringLiteral("libraries"), libraries}};
    if (!client.isEmpty())
        o.insert(QStringLiteral("client"), client);
    if (!languages.isEmpty())
        o.insert(QStringLiteral("languages"), QJsonArray::fromStringList(languages));
    if (!egress.isEmpty())
        o.insert(QStringLiteral("egress"), QJsonArray::fromStringList(egress));
    if (otherHosts == OtherHosts::Ask)
        o.insert(QStringLiteral("otherHosts"), QStringLiteral("ask"));
    if (keepSessions)
        o.insert(QStringLiteral("keepSessions"), true);
    if (!launcher.isEmpty())
        o.insert(QStringLiteral("launcher"), launcher);
    if (maxTimeoutSec > 0)
        o.insert(QStringLiteral("maxTimeoutSec"), maxTimeoutSec);
    if (maxMemoryMiB > 0)
        o.insert(QStringLiteral("maxMemoryMiB"), maxMemoryMiB);
    if (!isolation.isEmpty())
        o.insert(QStringLiteral("isolation"), isolation);
    if (secrets)
        o.insert(QStringLiteral("secrets"), QJsonArray::fromStringList(*secrets));
    if (workspaces)
        o.insert(QStringLiteral("workspaces"), QJsonArray::fromStringList(*workspaces));
    return o;
}

std::optional<AssistantPolicy> AssistantPolicy::fromJson(const QJsonObject &json, QString *error)
{
    const auto fail = [error](const QString &why) -> std::optional<AssistantPolicy> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    AssistantPolicy p;
    const QJsonValue client = json.value(u"client");
    if (!client.isUndefined() && !client.isString())
        return fail(QStringLiteral("'client' is not a string"));
    p.client = client.toString().trimmed();
    const std::optional<Action> action = actionFromName(json.value(u"action").toString());
    if (!action)
        return fail(QStringLiteral("'action' is not run, ask or refuse"));
    p.action = *action;
    for (const QJsonValue &v : json.value(u"languages").toArray()) {
        if (v.isString() && !v.toString().trimmed().isEmpty())
            p.languages.append(v.toString().trimmed().toLower());
    }
    p.network = json.value(u"network").toBool(true);
    // Each entry on its own: one a hand edit broke is left out (a shorter list only narrows),
    // and a list left with none means no network, never the server's whole list.
    QStringList entries, rejected;
    for (const QJsonValue &v : json.value(u"egress").toArray())
        entries.append(v.toString());
    p.egress = EgressList::parseEach(entries, &rejected);
    if (!entries.isEmpty() && p.egress.isEmpty())
        p.network = false;
    // Anything but "ask" refuses: a hand edit that broke the word asks nobody.
    p.otherHosts = json.value(u"otherHosts").toString().compare(u"ask", Qt::CaseInsensitive) == 0
                       ? OtherHosts::Ask
                       : OtherHosts::Refuse;
    p.libraries = json.value(u"libraries").toBool(true);
    p.keepSessions = json.value(u"keepSessions").toBool(false);
    p.launcher = json.value(u"launcher").toString().trimmed();
    const int timeout = json.value(u"maxTimeoutSec").toInt(0);
    p.maxTimeoutSec = timeout > 0 && timeout <= kMaxTimeoutSec ? timeout : 0;
    const int memory = json.value(u"maxMemoryMiB").toInt(0);
    p.maxMemoryMiB = memory > 0 && memory <= kMaxMemoryMiB ? memory : 0;
    // Kept as written, even when no engine could have it: a requirement a hand edit broke
    // refuses the runs (no engine has that runtime), never lets them run anywhere.
    p.isolation = json.value(u"isolation").toString().trimmed();
    if (p.isolation.compare(QLatin1String(kIsolationContainer), Qt::CaseInsensitive) == 0)
        p.isolation.clear();
    // A list of names; anything else there reads as no list (all the server's secrets) rather
    // than as none, which a hand-edited file could not mean by a typo.
    if (json.value(u"secrets").isArray()) {
        QStringList names;
        for (const QJsonValue &v : json.value(u"secrets").toArray())
            if (v.isString() && !v.toString().trimmed().isEmpty() &&
                !names.contains(v.toString().trimmed()))
                names.append(v.toString().trimmed());
        p.secrets = names;
    }
    // The same for workspaces: a list of names, or all the server's.
    if (json.value(u"workspaces").isArray()) {
        QStringList names;
        for (const QJsonValue &v : json.value(u"workspaces").toArray())
            if (v.isString() && Workspace::isValidName(v.toString().trimmed()) &&
                !names.contains(v.toString().trimmed()))
                names.append(v.toString().trimmed());
        p.workspaces = names;
    }
    return p;
}

bool AssistantPolicy::operator==(const AssistantPolicy &o) const
{
    return client == o.client && action == o.action && languages == o.languages &&
           network == o.network && egress == o.egress && otherHosts == o.otherHosts &&
           libraries == o.libraries && keepSessions == o.keepSessions && launcher == o.launcher &&
           maxTimeoutSec == o.maxTimeoutSec && maxMemoryMiB == o.maxMemoryMiB &&
           isolation == o.isolation && secrets == o.secrets && workspaces == o.workspaces;
}
