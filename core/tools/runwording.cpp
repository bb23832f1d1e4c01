#include "runwording.h"

#include "executionresult.h"
#include "runnetwork.h"
#include "sandboxconfig.h"
#include "toolcall.h"
#include "toolschemas.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QStringDecoder>
#include <QUrl>

QString RunWording::describeNetwork(const SandboxConfig &c)
{
    // The program must know to use the proxy: the variables are what HTTP libraries read.
    const RunNetwork server = RunNetwork::decide(c);
    const QStringList hosts = server.reachableHosts();
    if (!hosts.isEmpty()) {
        QString text = QStringLiteral("network only to %1 (over HTTP/HTTPS through the proxy "
                                      "that HTTPS_PROXY and HTTP_PROXY name; names resolve only "
                                      "there; other hosts are refused)")
                           .arg(hosts.join(QStringLiteral(", ")));
        // The model writes the code: it must know that these variables are to be used as keys,
        // and that printing one shows only a placeholder.
        if (server.bindsSecrets()) {
            QStringList bound;
            for (const SandboxSpec::Secret &s : server.secrets)
                bound.append(
                    QStringLiteral("%1 (for %2)").arg(s.name, s.hosts.join(QStringLiteral(", "))));
            text += QStringLiteral(", and keys bound to hosts: the environment variables %1 hold "
                                   "placeholders that the proxy replaces with the real keys in "
                                   "requests to those hosts only (in headers or the URL), so use "
                                   "them as the keys there")
                        .arg(bound.join(QStringLiteral(", ")));
        }
        return text;
    }
    return c.network ? QStringLiteral("no network (network enabled by the operator)")
                     : QStringLiteral("no network");
}

QJsonObject RunWording::executionOutputSchema()
{
    return ToolSchemas::fragment(QStringLiteral("execution_output"));
}

QString RunWording::formatText(const ExecutionResult &r, const QString &printHint)
{
    if (!r.error.isEmpty())
        return QStringLiteral("Sandbox error: %1").arg(r.error);
    QString text = QString::fromUtf8(r.stdoutData);
    const auto section = [&text](const QString &s) {
        if (!text.isEmpty() && !text.endsWith(u'\n'))
            text += u'\n';
        text += s;
    };
    if (r.stdoutTruncated)
        section(QStringLiteral("[stdout truncated]\n"));
    if (!r.stderrData.isEmpty()) {
        section(QStringLiteral("[stderr]\n") + QString::fromUtf8(r.stderrData));
        if (r.stderrTruncated)
            section(QStringLiteral("[stderr truncated]\n"));
    }
    if (r.cancelled && !r.cancelReason.isEmpty())
        section(QStringLiteral("[cancelled: %1]").arg(r.cancelReason));
    else if (r.cancelled)
        section(QStringLiteral("[cancelled: the program was stopped]"));
    else if (r.compileError)
        section(QStringLiteral("[compilation failed (exit code %1): the program did not run]")
                    .arg(r.exitCode));
    else if (r.timedOut)
        section(
            QStringLiteral("[timed out after %1 s: the program was stopped]").arg(r.timeoutSec));
    else if (r.outOfMemory)
        section(QStringLiteral("[exit code %1: killed for exceeding the sandbox's memory limit]")
                    .arg(r.exitCode));
    else if (r.exitCode == 137)
        section(QStringLiteral("[exit code 137: killed (SIGKILL)]"));
    else if (r.exitCode != 0)
        section(QStringLiteral("[exit code %1]").arg(r.exitCode));
    QStringList returned;
    for (const OutputFile &f : r.files)
        if (f.included)
            returned.append(f.kind == OutputFile::Kind::Plot
                                ? QStringLiteral("figure %1").arg(f.name)
                                : f.name);
    if (!returned.isEmpty())
        section(QStringLiteral("[returned: %1]").arg(returned.join(QStringLiteral(", "))));
    for (const QString &note : r.notes)
        section(QStringLiteral("[note: %1]").arg(note));
    for (const WorkspaceRun &w : r.workspaces)
        if (const QString line = w.summary(); !line.isEmpty())
            section(QStringLiteral("[%1]").arg(line));
    // Each refused (and each unreachable) host once, with why, so the assistant can tell the
    // user what to allow or what failed.
    for (const NetworkAttempt::Verdict verdict :
         {NetworkAttempt::Verdict::Refused, NetworkAttempt::Verdict::Failed}) {
        const QStringList hosts = r.connectionsWith(verdict);
        if (!hosts.isEmpty())
            section(
                QStringLiteral("[network %1: %2]")
                    .arg(ExecutionResult::verdictName(verdict), hosts.join(QStringLiteral(", "))));
    }
    if (text.isEmpty())
        text = printHint.isEmpty()
                   ? QStringLiteral("No output.")
                   : QStringLiteral("No output — did you forget to %1?").arg(printHint);
    return text;
}

QJsonObject RunWording::toolResult(const ExecutionResult &r, const QString &printHint,
                                   bool jsonText)
{
    const QJsonObject structured = r.toJson();
    const QString text =
        jsonText && r.error.isEmpty()
            ? QString::fromUtf8(QJsonDocument(structured).toJson(QJsonDocument::Compact))
            : formatText(r, printHint);
    QJsonArray content{ToolCall::textContent(text)};
    for (const OutputFile &f : r.files) {
        if (!f.included)
            continue;
        const bool image =
            f.kind == OutputFile::Kind::Plot ||
            (f.mimeType.startsWith(QStringLiteral("image/")) && f.mimeType != u"image/svg+xml");
        if (image) {
            content.append(QJsonObject{
                {QStringLiteral("type"), QStringLiteral("image")},
                {QStringLiteral("data"), QString::fromLatin1(f.data.toBase64())},
                {QStringLiteral("mimeType"),
                 f.kind == OutputFile::Kind::Plot ? QStringLiteral("image/png") : f.mimeType}});
            continue;
        }
        // Text when it decodes as UTF-8 without NULs; everything else as a base64 blob.
        // Stateless: a character cut off at the end is an error, not held back for more input.
        QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
        const QString decoded = utf8.decode(f.data);
        QJsonObject resource{
            {QStringLiteral("uri"), QStringLiteral("sandbox://outputs/") +
                                        QString::fromLatin1(QUrl::toPercentEncoding(f.name, "/"))},
            {QStringLiteral("mimeType"), f.mimeType}};
        if (!utf8.hasError() && !f.data.contains('\0'))
            resource.insert(QStringLiteral("text"), decoded);
        else
            resource.insert(QStringLiteral("blob"), QString::fromLatin1(f.data.toBase64()));
        content.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("resource")},
                                   {QStringLiteral("resource"), resource}});
    }
    QJsonObject out{{QStringLiteral("content"), content},
                    {QStringLiteral("structuredContent"), structured}};
    if (!r.succeeded())
        out.insert(QStringLiteral("isError"), true);
    return out;
}

QString RunWording::describeLimits(const SandboxConfig &c)
{
    return QStringLiteral("Each run gets a fresh container: %1, %2 MiB memory, %3 CPU, "
                          "read-only system files (write under /sandbox or /tmp), default timeout "
                          "%4 s.")
        .arg(describeNetwork(c))
        .arg(c.memoryBytes / (1024 * 1024))
        .arg(c.cpus)
        .arg(c.defaultTimeoutSec);
}

QJsonValue RunWording::workspacesFragment(const SandboxConfig &config)
{
    // A server without workspaces does not offer the argument at all.
    if (config.workspaces.isEmpty())
        return QJsonValue(QJsonValue::Undefined);
    QStringList listed;
    for (const Workspace &w : config.workspaces)
        listed.append(QStringLiteral("%1 (%2)").arg(w.name, Workspace::modeName(w.mode)));
    return ToolSchemas::fragment(
        QStringLiteral("workspaces"),
        {{QStringLiteral("workspace_list"), listed.join(QStringLiteral(", "))}});
}

QJsonObject RunWording::networkFragment(const SandboxConfig &config)
{
    const QStringList reachable = RunNetwork::decide(config).reachableHosts();
    const QString without =
        !reachable.isEmpty()
            ? QStringLiteral("this server's allow-list, %1; ask only for hosts within it")
                  .arg(reachable.join(QStringLiteral(", ")))
        : config.network
            ? QStringLiteral("the open network (this server gives runs network access)")
            : QStringLiteral("no network (this server allows no hosts: a call that asks for one "
                             "is refused)");
    return ToolSchemas::fragment(QStringLiteral("network"),
                                 {{QStringLiteral("network_default"), without}});
}
