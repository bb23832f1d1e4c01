#pragma once

#include "egressendpoint.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

struct SandboxSpec;

// A SandboxSpec as the body of `POST /api/v1/namespaces/{ns}/pods`: the pod counterpart of
// ContainerSpec, so a pod runs exactly what a Docker container runs (the stdin-fed supervisor)
// as the same user with the same variables and labels; the limits and the hardening are
// restated in the pod's terms.
//
// What a pod cannot say that the Docker body does: a process limit (PidsLimit; on Kubernetes
// it is the kubelet's podPidsLimit), the open-files ulimit (the runtime's default), an init
// process (Init: true) and the absence of a network interface (a pod always has one: network
// isolation is the NetworkPolicy in packaging/kubernetes/, which the backend must find). Nor
// does it render the spec's mounts (library volumes are not supported on Kubernetes yet: the
// backend refuses such specs).
class PodSpec
{
public:
    // What a Kubernetes engine adds to the spec: where the cluster pulls from and where pods go.
    struct Options
    {
        // Pushed images: "registry.example.com/team" makes code-sandbox/python:latest into
        // registry.example.com/team/code-sandbox/python:latest.
        QString imagePrefix;
        QMap<QString, QString> nodeSelector;
        // The pod's lifetime on the node, counted from its start: a backstop for pods whose
        // instance died without deleting them. 0: defaultDeadlineSeconds().
        qint64 activeDeadlineSeconds = 0;
    };

    // Longest a warm pod may wait for its program; the backend replaces older warm pods before
    // activeDeadlineSeconds ends them.
    static constexpr qint64 kWarmWaitSec = 3600;
    // After the program's timeout: fetching output files (30 s) and deletion.
    static constexpr qint64 kDeadlineMarginSec = 60;
    // A session's pod: it lives while it is used, so its deadline is only the backstop.
    static constexpr qint64 kSessionDeadlineSec = 24 * 3600;

    // Label on pods that have network: "on" (--network), which the deny policy leaves out, or
    // "allowlist", whose own policy lets them reach only the egress gateway.
    static constexpr const char *kLabelNetwork = "code-sandbox.network";
    static constexpr const char *kNetworkAllowlist = "allowlist";
    static constexpr const char *kContainerName = "sandbox";
    // Annotation keeping the sandbox's own name when the pod name had to differ from it.
    static constexpr const char *kAnnotationName = "code-sandbox.name";

    static QJsonObject render(const SandboxSpec &spec, const Options &options);
    static QJsonObject render(const SandboxSpec &spec); // with no Options

    // `pod` (render() of an allow-list spec) with the proxy variables for `egress` last in its
    // container's environment (they replace passed-through ones of the same name). The pod
    // already has no name server of the cluster's: names are the gateway's to resolve.
    static QJsonObject joinEgress(const QJsonObject &pod, const EgressEndpoint &egress);

    // kWarmWaitSec + the largest timeout a call may ask + kDeadlineMarginSec, or
    // kSessionDeadlineSec for a session.
    static qint64 defaultDeadlineSeconds(const SandboxSpec &spec);

    static QString prefixedImage(const QString &imagePrefix, const QString &image);

    // A container's securityContext as every pod we send has it: non-root as `uid`:`gid`,
    // read-only root, no privilege escalation, no capabilities, RuntimeDefault seccomp.
    static QJsonObject containerSecurity(qint64 uid, qint64 gid);

    // A valid pod name (DNS-1123 subdomain) for a sandbox name.
    static QString podName(const QString &name);

    // A Kubernetes label value (at most 63 characters of [A-Za-z0-9._-], alphanumeric at both
    // ends) for one of our label values: unchanged when it is one already, otherwise the
    // characters outside the set become '_' and a value too long keeps its start and a hash of
    // the whole. Deterministic, so a label selector built from the same value matches.
    static QString labelValue(const QString &value);

    // What `pod` lacks of the hardening render() gives every pod, one entry per missing or wrong
    // field, named by its path ("spec.containers[0].securityContext.readOnlyRootFilesystem");
    // empty when it has all of it. The backend refuses to send a pod with any.
    static QStringList hardeningViolations(const QJsonObject &pod);

    // Whether `policy` (a networking.k8s.io/v1 NetworkPolicy as JSON) denies all egress to
    // every pod render() makes without network: it selects all of them whatever their instance,
    // host or language, lists Egress among its policyTypes and allows no egress rule.
    static bool deniesSandboxEgress(const QJsonObject &policy);
    // The same question for all the policies of a namespace (the items of a NetworkPolicyList):
    // one denies, and none that might select such a pod allows any egress (policies add up, so
    // one allowing rule would open what the other closes). Empty when isolated, else why not.
    static QString sandboxEgressProblem(const QJsonArray &policies);
    // The same two for ingress: nothing on the network may connect to a sandbox either (attach
    // and exec come through the kubelet, not the pod network).
    static bool deniesSandboxIngress(const QJsonObject &policy);
    static QString sandboxIngressProblem(const QJsonArray &policies);
    // Both: what the namespace lacks to isolate pods without network, each missing or opening
    // policy named; empty when both egress and ingress are denied.
    static QString sandboxIsolationProblem(const QJsonArray &policies);
    // For allow-list pods (kNetworkAllowlist): one policy selects all of them, lists Egress and
    // allows only connections to the gateway's pods (podSelector with code-sandbox.role:
    // gateway, in the namespace); and none that might select such a pod allows anything else.
    // Empty when confined, else why not.
    static QString allowlistEgressProblem(const QJsonArray &policies);

private:
    static QJsonArray envJson(const SandboxSpec &spec);
    static QJsonObject metadataJson(const SandboxSpec &spec);
    static QJsonObject containerJson(const SandboxSpec &spec, const QString &image);
    // /tmp, the workdir, and each of the spec's own mounts (extraVolumes).
    static QJsonArray volumeMountsJson(const SandboxSpec &spec);
    // The spec's own mounts as a pod has them, the volumes and their mounts: the backend's
    // volume is a claim ("claim-<index in mounts>", read-only as the mount is), a scratch space
    // a memory-backed emptyDir of its size ("scratch-<index>", a run's or a session's
    // workspaces); a file of the engine's machine is none.
    static void extraVolumes(const SandboxSpec &spec, QJsonArray *volumes, QJsonArray *mounts);
};
