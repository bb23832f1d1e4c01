#include "kubecredentials.h"

#include "kubelog.h"
#include "kubepem.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>

namespace {

const QString kExecKind = QStringLiteral("ExecCredential");

} // namespace

KubeCredentials::KubeCredentials(Kind kind) : m_kind(kind)
{
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        const QString message =
            QStringLiteral("the credential plugin %1 (%2) gave no answer within %3 s; it was "
                           "stopped")
                .arg(pluginName(), m_exec.origin)
                .arg(m_exec.timeoutMs / 1000.0);
        finishPlugin(KubeCredential{{}, {}, {}, {}, message});
    });
}

std::shared_ptr<KubeCredentials> KubeCredentials::none()
{
    return std::shared_ptr<KubeCredentials>(new KubeCredentials(Kind::None));
}

std::shared_ptr<KubeCredentials> KubeCredentials::token(const QByteArray &token)
{
    std::shared_ptr<KubeCredentials> c(new KubeCredentials(Kind::Token));
    c->m_token = token;
    return c;
}

std::shared_ptr<KubeCredentials> KubeCredentials::tokenFile(const QString &path,
                                                            const QString &origin)
{
    std::shared_ptr<KubeCredentials> c(new KubeCredentials(Kind::TokenFile));
    c->m_path = path;
    c->m_origin = origin;
    return c;
}

std::shared_ptr<KubeCredentials> KubeCredentials::exec(const ExecSpec &spec)
{
    std::shared_ptr<KubeCredentials> c(new KubeCredentials(Kind::Exec));
    c->m_exec = spec;
    c->m_origin = spec.origin;
    return c;
}

QString KubeCredentials::describe() const
{
    switch (m_kind) {
    case Kind::None:
        return QStringLiteral("no credentials");
    case Kind::Token:
        return QStringLiteral("a bearer token");
    case Kind::TokenFile:
        return QStringLiteral("the token file %1").arg(m_path);
    case Kind::Exec:
        return QStringLiteral("the credential plugin %1").arg(pluginName());
    }
    return {};
}

QString KubeCredentials::pluginName() const
{
    return QFileInfo(m_exec.command).fileName();
}

void KubeCredentials::fetch(const Callback &done)
{
    switch (m_kind) {
    case Kind::None:
        done({});
        return;
    case Kind::Token:
        done(KubeCredential{m_token, {}, {}, {}, {}});
        return;
    case Kind::TokenFile:
        done(readTokenFile());
        return;
    case Kind::Exec:
        break;
    }
    if (m_haveCached &&
        (!m_cached.expiry.isValid() || QDateTime::currentDateTimeUtc() < m_cached.expiry)) {
        done(m_cached);
        return;
    }
    m_haveCached = false;
    m_waiting.append(done);
    if (!m_process)
        runPlugin();
}

void KubeCredentials::invalidate()
{
    m_fileStale = true;
    m_haveCached = false;
    m_cached = {};
}

KubeCredential KubeCredentials::readTokenFile()
{
    // A service-account token is a symlink chain that the kubelet swaps on rotation: the
    // canonical path, the time and the size together say whether it changed.
    const QFileInfo info(m_path);
    const QString target = info.canonicalFilePath();
    if (!m_fileStale && !m_token.isEmpty() && info.exists() && target == m_fileTarget &&
        info.lastModified() == m_fileModified && info.size() == m_fileSize)
        return KubeCredential{m_token, {}, {}, {}, {}};

    KubeCredential c;
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly)) {
        c.error = QStringLiteral("cannot read the token file %1 (%2): %3")
                      .arg(m_path, m_origin, file.errorString());
        return c;
    }
    if (file.size() > kMaxTokenFileBytes) {
        c.error = QStringLiteral("the token file %1 (%2) is larger than %3 bytes")
                      .arg(m_path, m_origin)
                      .arg(kMaxTokenFileBytes);
        return c;
    }
    const QByteArray token = file.read(kMaxTokenFileBytes).trimmed();
    if (token.isEmpty()) {
        c.error = QStringLiteral("the token file %1 (%2) is empty").arg(m_path, m_origin);
        return c;
    }
    if (!m_token.isEmpty() && token != m_token)
        qCInfo(lcKube) << "token file" << m_path << "changed: using the new token";
    m_token = token;
    m_fileTarget = target;
    m_fileModified = info.lastModified();
    m_fileSize = info.size();
    m_fileStale = false;
    c.token = token;
    return c;
}

void KubeCredentials::runPlugin()
{
    m_stdout.clear();
    m_stderr.clear();
    if (m_exec.interactiveAlways) {
        failPluginLater(QStringLiteral("the credential plugin %1 (%2) has interactiveMode: Always, "
                                       "but Code Sandbox has no terminal to give it")
                            .arg(pluginName(), m_exec.origin));
        return;
    }
    const QString program = pluginProgram();
    if (program.isEmpty() || !QFileInfo(program).isExecutable()) {
        QString message =
            QStringLiteral("the credential plugin '%1' (%2) was not found%3")
                .arg(m_exec.command, m_exec.origin,
                     m_exec.command.contains(u'/') ? QString() : QStringLiteral(" on PATH"));
        if (!m_exec.installHint.isEmpty())
            message += QStringLiteral(". ") + m_exec.installHint.trimmed();
        failPluginLater(message);
        return;
    }
    startPlugin(program);
}

void KubeCredentials::failPluginLater(const QString &message)
{
    // The caller of fetch hears of it from the event loop, as of any plugin's answer.
    QMetaObject::invokeMethod(
        this,
        [this, message] {
            finishPlugin(KubeCredential{{}, {}, {}, {}, message});
        },
        Qt::QueuedConnection);
}

QString KubeCredentials::pluginProgram() const
{
    if (m_exec.command.contains(u'/'))
        return m_exec.command;
    // Looked up on the PATH the plugin will see, as kubectl's exec does.
    const QStringList path =
        m_exec.baseEnvironment.value(QStringLiteral("PATH")).split(u':', Qt::SkipEmptyParts);
    return QStandardPaths::findExecutable(m_exec.command, path);
}

QProcessEnvironment KubeCredentials::pluginEnvironment() const
{
    QProcessEnvironment env = m_exec.baseEnvironment;
    for (const auto &[name, value] : m_exec.env)
        env.insert(name, value);
    QJsonObject spec{{QStringLiteral("interactive"), false}};
    if (!m_exec.clusterJson.isEmpty())
        spec.insert(QStringLiteral("cluster"),
                    QJsonDocument::fromJson(m_exec.clusterJson).object());
    const QJsonObject info{{QStringLiteral("apiVersion"), m_exec.apiVersion},
                           {QStringLiteral("kind"), kExecKind},
                           {QStringLiteral("spec"), spec}};
    env.insert(QStringLiteral("KUBERNETES_EXEC_INFO"),
               QString::fromUtf8(QJsonDocument(info).toJson(QJsonDocument::Compact)));
    return env;
}

void KubeCredentials::startPlugin(const QString &program)
{
    m_process = new QProcess(this);
    m_process->setProcessEnvironment(pluginEnvironment());
    m_process->setProgram(program);
    m_process->setArguments(m_exec.args);
    m_process->setStandardInputFile(QProcess::nullDevice());
    connect(m_process, &QProcess::readyReadStandardOutput, this, [this] {
        m_stdout += m_process->readAllStandardOutput();
        if (m_stdout.size() > kMaxPluginOutputBytes)
            finishPlugin(KubeCredential{
                {},
                {},
                {},
                {},
                QStringLiteral("the credential plugin %1 (%2) wrote more than %3 bytes; it was "
                               "stopped")
                    .arg(pluginName(), m_exec.origin)
                    .arg(kMaxPluginOutputBytes)});
    });
    connect(m_process, &QProcess::readyReadStandardError, this, [this] {
        // The last words are the useful ones.
        m_stderr += m_process->readAllStandardError();
        if (m_stderr.size() > kMaxPluginErrorBytes)
            m_stderr = m_stderr.right(kMaxPluginErrorBytes);
    });
    connect(m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        pluginFinished(code, status == QProcess::CrashExit);
    });
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            finishPlugin(KubeCredential{
                {},
                {},
                {},
                {},
                QStringLiteral("the credential plugin %1 (%2) could not "
                               "be started: %3")
                    .arg(m_process->program(), m_exec.origin, m_process->errorString())});
    });
    qCDebug(lcKube) << "running credential plugin" << program;
    m_deadline.start(m_exec.timeoutMs);
    m_process->start();
}

QString KubeCredentials::stderrTail() const
{
    const QString text = QString::fromUtf8(m_stderr).trimmed();
    if (text.isEmpty())
        return {};
    constexpr int kShown = 500;
    return QStringLiteral(": ") + (text.size() > kShown ? u'…' + text.right(kShown) : text);
}

void KubeCredentials::pluginFinished(int exitCode, bool crashed)
{
    if (!m_process)
        return;
    m_stdout += m_process->readAllStandardOutput();
    m_stderr += m_process->readAllStandardError();
    if (crashed || exitCode != 0) {
        const QString how =
            crashed ? QStringLiteral("crashed") : QStringLiteral("exited with %1").arg(exitCode);
        finishPlugin(KubeCredential{{},
                                    {},
                                    {},
                                    {},
                                    QStringLiteral("the credential plugin %1 (%2) %3")
                                            .arg(pluginName(), m_exec.origin, how) +
                                        stderrTail()});
        return;
    }
    finishPlugin(parseExecCredential(m_stdout));
}

KubeCredential KubeCredentials::parseExecCredential(const QByteArray &out) const
{
    KubeCredential c;
    const QString who =
        QStringLiteral("the credential plugin %1 (%2)").arg(pluginName(), m_exec.origin);
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(out, &parseError);
    if (!doc.isObject()) {
        // Its output may be a secret gone wrong: say where it broke, not what it said.
        c.error = QStringLiteral("%1 did not write an ExecCredential as JSON (%2 at byte %3)")
                      .arg(who, parseError.errorString())
                      .arg(parseError.offset);
        return c;
    }
    const QJsonObject o = doc.object();
    const QString apiVersion = o.value(u"apiVersion").toString();
    if (apiVersion != m_exec.apiVersion) {
        c.error = QStringLiteral("%1 answered with apiVersion '%2', but the kubeconfig asks for "
                                 "'%3'")
                      .arg(who, apiVersion, m_exec.apiVersion);
        return c;
    }
    if (o.value(u"kind").toString() != kExecKind) {
        c.error = QStringLiteral("%1 answered with kind '%2', not ExecCredential")
                      .arg(who, o.value(u"kind").toString());
        return c;
    }
    const QJsonObject status = o.value(u"status").toObject();
    if (status.isEmpty()) {
        c.error = QStringLiteral("%1 answered without a status").arg(who);
        return c;
    }
    c.token = status.value(u"token").toString().toUtf8();
    const QByteArray certPem = status.value(u"clientCertificateData").toString().toUtf8();
    const QByteArray keyPem = status.value(u"clientKeyData").toString().toUtf8();
    if (certPem.isEmpty() != keyPem.isEmpty()) {
        c.error = QStringLiteral("%1 gave clientCertificateData and clientKeyData, one without "
                                 "the other")
                      .arg(who);
        return c;
    }
    if (!certPem.isEmpty()) {
        c.certificateChain = KubePem::certificates(certPem);
        c.privateKey = KubePem::privateKey(keyPem);
        if (c.certificateChain.isEmpty() || c.privateKey.isNull()) {
            c.error =
                QStringLiteral("%1 gave a client certificate or key that is not PEM").arg(who);
            return c;
        }
    }
    if (c.token.isEmpty() && c.certificateChain.isEmpty()) {
        c.error = QStringLiteral("%1 gave neither status.token nor a client certificate").arg(who);
        return c;
    }
    const QString expiry = status.value(u"expirationTimestamp").toString();
    if (!expiry.isEmpty()) {
        c.expiry = QDateTime::fromString(expiry, Qt::ISODateWithMs);
        if (!c.expiry.isValid()) {
            c.error = QStringLiteral("%1 gave an expirationTimestamp that is not RFC 3339: %2")
                          .arg(who, expiry);
            return c;
        }
    }
    return c;
}

void KubeCredentials::finishPlugin(const KubeCredential &credential)
{
    m_deadline.stop();
    if (m_process) {
        QProcess *p = m_process;
        m_process = nullptr;
        p->disconnect(this);
        if (p->state() != QProcess::NotRunning) {
            // Reaped when it has gone, off the caller's path; no longer ours, so that dropping
            // the credentials does not wait for it.
            p->setParent(nullptr);
            p->kill();
            connect(p, &QProcess::finished, p, &QObject::deleteLater);
        } else {
            p->deleteLater();
        }
    }
    if (credential.ok()) {
        m_cached = credential;
        m_haveCached = true;
        qCDebug(lcKube) << "credential plugin answered"
                        << (credential.expiry.isValid()
                                ? QStringLiteral("(valid until %1)")
                                      .arg(credential.expiry.toString(Qt::ISODate))
                                : QStringLiteral("(no expiry)"));
    } else {
        qCWarning(lcKube).noquote() << credential.error;
    }
    // A callback may fetch again (and start a new run): hand over the current list first.
    const QList<Callback> waiting = std::exchange(m_waiting, {});
    QPointer<KubeCredentials> self(this);
    for (const Callback &done : waiting) {
        done(credential);
        if (!self)
            return;
    }
}
