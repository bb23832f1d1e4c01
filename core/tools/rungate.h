#pragma once

#include "assistantpolicies.h"
#include "executionrequest.h"
#include "runapprover.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <functional>

class CredentialStore;
class Execution;
class QTimer;
class ToolCall;
struct SandboxConfig;

// Every run tool call, and every session that installs libraries, passes here before anything
// starts: the caller's policy (policyFor: by its credential, else by the name it claims) says
// whether it runs, waits for a
// person in the window, or is refused, and what it may use. While it waits, the call reports
// progress; no answer within the policies' approval time denies it; a client that cancels
// withdraws the question.
class RunGate : public QObject
{
    Q_OBJECT
public:
    explicit RunGate(const SandboxConfig &config, QObject *parent = nullptr);
    ~RunGate() override;

    void setPolicies(const AssistantPolicies &policies);
    const AssistantPolicies &policies() const { return m_policies; }
    // The HTTP credentials: a name one of them holds is not given to a caller that merely
    // claims it. Null: names are taken as claimed.
    void setCredentials(CredentialStore *credentials) { m_credentials = credentials; }
    // The policy the call runs under (AssistantPolicies::forCaller); `demoted` says why it is
    // the default one when its name points elsewhere.
    const AssistantPolicy &policyFor(const ToolCall *call, QString *demoted = nullptr) const;
    // Null: nobody to ask (then "ask" falls back to policies().runWhenNoWindow).
    void setApprover(RunApprover *approver);
    // How this server serves ("window", "stdio", "http"), for the window to show.
    void setMode(const QString &mode) { m_mode = mode; }
    int waiting() const { return int(m_waiting.size()); }

    // Progress is repeated this often while a call waits, so that clients that reset their
    // request timeout on progress keep waiting.
    static constexpr int kProgressEveryMs = 10000;

    // `admitted` is called once, unless the call is cancelled or gone first: with the request to
    // run (its timeout may be capped by the policy) or with a refusal, the text of an isError
    // result that names the policy.
    // The request goes on with its network decided (ExecutionRequest::network, from the server's
    // settings, the caller's policy and `askedHosts`, the call's `network` as
    // SandboxTools::parseNetwork read it), unless it has one (a session's run: its session's).
    using Admitted = std::function<void(const ExecutionRequest &request, const QString &refusal)>;
    void admit(ToolCall *call, const ExecutionRequest &request,
               const std::optional<QStringList> &askedHosts, const Admitted &admitted);

    // For what starts no program itself (create_session without libraries: its runs pass
    // admit() each): the policy's rules and a refusing policy, without asking anyone. Empty when
    // it may go ahead. A session's libraries are installed at once, so they pass admit().
    // `egress` as in AssistantPolicy::check: the session's network as asked, set to what it
    // gets under the policy (then networkFor()). `workspaces`: the session's, by name, within
    // the policy's (AssistantPolicy::checkWorkspaces).
    QString screen(const ToolCall *call, const QString &language, int timeoutSec,
                   const QStringList &libraries, std::optional<QStringList> *egress = nullptr,
                   const QStringList &workspaces = {}) const;
    // The network of what `client` starts with `askedHosts` (as screen() left them): decided
    // under its policy (RunNetwork::decide), for a session without libraries to install.
    RunNetwork networkFor(const ToolCall *call, const std::optional<QStringList> &askedHosts) const;

    // A connection of a running program to a host beyond its list, held by the egress gateway
    // because the caller's policy asks for other hosts (RunNetwork::askOtherHosts): the
    // window is asked, as for a run, with the same deadline (one question for the run's
    // connections to one host and port held at once). `verdict` is called once: allowed (with
    // the pattern the run may reach from now on, for "always") or not — at once when no window
    // is open, when nobody answers in time, or when the run or the call ends first.
    using HostVerdict = std::function<void(bool allow, const QString &widenTo)>;
    void askHost(ToolCall *call, Execution *execution, const QString &host, int port,
                 const HostVerdict &verdict);

Q_SIGNALS:
    // A person chose "Always allow this assistant": policies() changed.
    void policiesChanged(const AssistantPolicies &policies);
    void waitingChanged(int waiting);
    // A call's run waits for a person's answer now (the run view says so).
    void asking(ToolCall *call);

private:
    struct Waiting;
    void ask(ToolCall *call, const ExecutionRequest &request, const Admitted &admitted);
    // The question's fields that describe the call and its run.
    ApprovalRequest question(ToolCall *call, const ExecutionRequest &request) const;
    // Waits for the answer to `question`: its deadline, progress and the call's end.
    Waiting *wait(ToolCall *call, const ApprovalRequest &question, const QString &waitingText);
    static QString refusedText(const AssistantPolicy &policy);
    void onAnswered(const QString &id, RunApprover::Answer answer, const QString &reason);
    void onLost();
    // Ends a wait: the question is withdrawn (unless answered) and `refusal` (empty: run) given.
    void settle(const QString &id, const QString &refusal, const QString &withdrawWhy);

    const SandboxConfig &m_config;
    AssistantPolicies m_policies;
    QPointer<RunApprover> m_approver;
    CredentialStore *m_credentials = nullptr;
    QString m_mode = QStringLiteral("stdio");
    QHash<QString, Waiting *> m_waiting;
};
