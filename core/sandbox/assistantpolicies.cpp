#include "assistantpolicies.h"

#include "egresslist.h"

#include <QFileInfo>
#include <QJsonArray>

const AssistantPolicy &AssistantPolicies::forClient(const QString &client) const
{
    const QString name = client.trimmed();
    if (!name.isEmpty()) {
        for (const AssistantPolicy &p : assistants) {
            if (p.client.compare(name, Qt::CaseInsensitive) == 0)
                return p;
        }
    }
    return fallback;
}

const AssistantPolicy &AssistantPolicies::forCaller(const Caller &caller, QString *demoted) const
{
    const AssistantPolicy &named = forClient(caller.name);
    if (named.isDefault() || caller.credential)
        return named;
    QString why;
    if (!named.launcher.isEmpty()) {
        // A launcher requirement is met by the launcher alone: a policy made for stdio
        // instances of one program, whatever name the program gives.
        const QString wanted = QFileInfo(named.launcher).canonicalFilePath();
        const bool same =
            !caller.launcher.isEmpty() &&
            (caller.launcher == named.launcher ||
             (!wanted.isEmpty() && QFileInfo(caller.launcher).canonicalFilePath() == wanted));
        if (!same)
            why = caller.launcher.isEmpty()
                      ? QStringLiteral("claims '%1', whose policy needs the launcher %2, and "
                                       "was not launched by it")
                            .arg(caller.name, named.launcher)
                      : QStringLiteral("claims '%1', whose policy needs the launcher %2; it "
                                       "was launched by %3")
                            .arg(caller.name, named.launcher, caller.launcher);
    } else if (caller.nameHeld) {
        why = QStringLiteral("claims '%1', a name a credential holds, without that credential")
                  .arg(caller.name);
    }
    if (why.isEmpty())
        return named;
    if (demoted)
        *demoted = why;
    return fallback;
}

bool AssistantPolicies::allowAlways(const QString &client)
{
    const QString name = client.trimmed();
    // A client that gave no name is matched by the default policy only, which is everyone's.
    if (name.isEmpty())
        return false;
    for (AssistantPolicy &p : assistants) {
        if (p.client.compare(name, Qt::CaseInsensitive) == 0) {
            p.action = AssistantPolicy::Action::Run;
            return true;
        }
    }
    AssistantPolicy own = fallback;
    own.client = name;
    own.action = AssistantPolicy::Action::Run;
    assistants.append(own);
    return true;
}

AssistantPolicies::HostAdded
AssistantPolicies::allowHost(const QString &client, const QString &pattern, const QStringList &seed)
{
    const QString name = client.trimmed();
    if (name.isEmpty())
        return HostAdded::NoName;
    QString error;
    const QStringList parsed = EgressList::parse({pattern}, &error);
    if (parsed.isEmpty())
        return HostAdded::NotAPattern;
    // An empty list means "what the server allows": one entry would narrow it to that host.
    const AssistantPolicy &current = forClient(name);
    if (!current.network)
        return HostAdded::ServerDecides;
    QStringList list = current.egress;
    if (list.isEmpty()) {
        list = EgressList::parse(seed, &error);
        if (list.isEmpty())
            return HostAdded::ServerDecides;
    }
    const bool covered = EgressList::uncovered(parsed, list).isEmpty();
    if (covered && !current.egress.isEmpty())
        return HostAdded::AlreadyListed;
    if (!covered)
        list.append(parsed.first());
    for (AssistantPolicy &p : assistants) {
        if (p.client.compare(name, Qt::CaseInsensitive) == 0) {
            p.egress = list;
            return HostAdded::Added;
        }
    }
    AssistantPolicy own = fallback;
    own.client = name;
    own.egress = list;
    assistants.append(own);
    return HostAdded::Added;
}

bool AssistantPolicies::isOpen() const
{
    return assistants.isEmpty() && fallback == AssistantPolicy();
}

QJsonObject AssistantPolicies::toJson() const
{
    QJsonArray list;
    for (const AssistantPolicy &p : assistants)
        list.append(p.toJson());
    return {{QStringLiteral("default"), fallback.toJson()},
            {QStringLiteral("assistants"), list},
            {QStringLiteral("approvalTimeoutSec"), approvalTimeoutSec},
            {QStringLiteral("whenNoWindow"),
             runWhenNoWindow ? QStringLiteral("run") : QStringLiteral("refuse")}};
}

AssistantPolicies AssistantPolicies::fromJson(const QJsonObject &json, QStringList *warnings)
{
    AssistantPolicies set;
    const auto warn = [warnings](const QString &what) {
        if (warnings)
            warnings->append(what);
    };
    QString error;
    if (json.contains(u"default")) {
        if (auto p = AssistantPolicy::fromJson(json.value(u"default").toObject(), &error)) {
            set.fallback = *p;
            set.fallback.client.clear();
        } else {
            warn(QStringLiteral("the default policy: %1").arg(error));
        }
    }
    const QJsonArray list = json.value(u"assistants").toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        const std::optional<AssistantPolicy> p =
            AssistantPolicy::fromJson(list.at(i).toObject(), &error);
        if (!p || p->client.isEmpty()) {
            warn(QStringLiteral("assistant %1: %2")
                     .arg(i + 1)
                     .arg(p ? QStringLiteral("no client name") : error));
            continue;
        }
        if (set.assistants.size() >= kMaxAssistants) {
            warn(QStringLiteral("more than %1 assistants; the rest are ignored")
                     .arg(kMaxAssistants));
            break;
        }
        // The first policy of a name wins, as forClient() would find it.
        if (&set.forClient(p->client) != &set.fallback) {
            warn(QStringLiteral("assistant '%1' is listed twice").arg(p->client));
            continue;
        }
        set.assistants.append(*p);
    }
    const int timeout = json.value(u"approvalTimeoutSec").toInt(set.approvalTimeoutSec);
    if (timeout >= kMinApprovalTimeoutSec && timeout <= kMaxApprovalTimeoutSec)
        set.approvalTimeoutSec = timeout;
    else
        warn(QStringLiteral("approvalTimeoutSec must be %1–%2")
                 .arg(kMinApprovalTimeoutSec)
                 .arg(kMaxApprovalTimeoutSec));
    set.runWhenNoWindow = json.value(u"whenNoWindow").toString() == u"run";
    return set;
}

bool AssistantPolicies::operator==(const AssistantPolicies &o) const
{
    return fallback == o.fallback && assistants == o.assistants &&
           approvalTimeoutSec == o.approvalTimeoutSec && runWhenNoWindow == o.runWhenNoWindow;
}
