#include "appsettings.h"

#include "egresslist.h"
#include "tokenstore.h"
#include "uilog.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSettings>
#include <QVariant>
#include <algorithm>

namespace {

// Keys are spelled once, here, so load() and save() cannot drift apart.
// The first engine stays under the key of versions with one, so they keep finding it.
const QString kEngineSocket = QStringLiteral("engine/socket");
const QString kMoreEngines = QStringLiteral("engine/more");
const QString kImagesGroup = QStringLiteral("images");
const QString kTimeout = QStringLiteral("limits/timeoutSec");
const QString kMemory = QStringLiteral("limits/memoryMiB");
const QString kCpus = QStringLiteral("limits/cpus");
const QString kPids = QStringLiteral("limits/pidsLimit");
const QString kPassThrough = QStringLiteral("environment/passThrough");
const QString kSecrets = QStringLiteral("environment/secrets");
const QString kHttpEnabled = QStringLiteral("server/httpEnabled");
const QString kHttpPort = QStringLiteral("server/httpPort");
// Only read, to move a token of older versions into the token file.
const QString kLegacyHttpToken = QStringLiteral("server/token");
const QString kRetention = QStringLiteral("history/retentionDays");
const QString kKeepRunning = QStringLiteral("window/keepRunningInBackground");
const QString kPolicies = QStringLiteral("assistants/policies");
const QString kWorkspaceFolders = QStringLiteral("workspaces/folders");

// QVariant's own conversions accept "12abc" as 0 in places and never say so; parse the text
// strictly instead, since INI files hold everything as strings.
int intIn(const QSettings &s, const QString &key, int fallback, int min, int max)
{
    const QVariant v = s.value(key);
    if (!v.isValid())
        return fallback;
    bool ok = false;
    const int value = v.toString().trimmed().toInt(&ok);
    return ok && value >= min && value <= max ? value : fallback;
}

double doubleIn(const QSettings &s, const QString &key, double fallback, double min, double max)
{
    const QVariant v = s.value(key);
    if (!v.isValid())
        return fallback;
    bool ok = false;
    const double value = v.toString().trimmed().toDouble(&ok);
    // NaN fails both comparisons, so it falls back too.
    return ok && value >= min && value <= max ? value : fallback;
}

bool boolIn(const QSettings &s, const QString &key, bool fallback)
{
    const QVariant v = s.value(key);
    if (!v.isValid())
        return fallback;
    const QString text = v.toString().trimmed().toLower();
    if (text == u"true" || text == u"1" || text == u"yes" || text == u"on")
        return true;
    if (text == u"false" || text == u"0" || text == u"no" || text == u"off")
        return false;
    return fallback;
}

// A workspace's patterns: trimmed, blanks and repeats dropped. Anything but a list of strings
// is an error: an exclusion a hand edit broke must not quietly let a credential in.
bool patternsIn(const QJsonObject &o, const QString &key, QStringList *patterns, QString *error)
{
    const QJsonValue v = o.value(key);
    if (v.isUndefined())
        return true;
    if (!v.isArray()) {
        *error = QStringLiteral("'%1' is not a list of patterns").arg(key);
        return false;
    }
    for (const QJsonValue &entry : v.toArray()) {
        if (!entry.isString()) {
            *error = QStringLiteral("'%1' holds something that is not a pattern").arg(key);
            return false;
        }
        const QString pattern = entry.toString().trimmed();
        if (!pattern.isEmpty() && !patterns->contains(pattern))
            patterns->append(pattern);
    }
    return true;
}

// The settings' workspaces: a bad entry is skipped and a folder that is gone kept, each said in
// the log, so that a hand edit or an unplugged drive never keeps the app from starting.
QList<Workspace> workspacesIn(const QSettings &s)
{
    QList<Workspace> workspaces;
    const QString text = s.value(kWorkspaceFolders).toString();
    if (text.trimmed().isEmpty())
        return workspaces;
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &parseError);
    if (!doc.isArray()) {
        qCWarning(lcUi).noquote() << "settings: the workspaces are not a JSON list ("
                                  << parseError.errorString() << "); none are used";
        return workspaces;
    }
    for (const QJsonValue &entry : doc.array()) {
        QString error;
        const std::optional<Workspace> w = AppSettings::workspaceFromJson(entry, &error);
        if (!w) {
            qCWarning(lcUi).noquote() << "settings: ignoring a workspace:" << error;
            continue;
        }
        if (std::any_of(workspaces.cbegin(), workspaces.cend(),
                        [&](const Workspace &listed) { return listed.name == w->name; })) {
            qCWarning(lcUi).noquote() << "settings: ignoring a second workspace named" << w->name;
            continue;
        }
        if (!QFileInfo(w->path).isDir())
            qCWarning(lcUi).noquote()
                << QStringLiteral("settings: the folder of workspace %1, %2, is not there; runs "
                                  "cannot have it until it is back")
                       .arg(w->name, w->path);
        workspaces.append(*w);
    }
    return workspaces;
}

} // namespace

AppSettings AppSettings::load()
{
    QSettings settings(QStringLiteral("code-sandbox"), QStringLiteral("code-sandbox"));
    return load(settings);
}

void AppSettings::save() const
{
    QSettings settings(QStringLiteral("code-sandbox"), QStringLiteral("code-sandbox"));
    save(settings);
}

AppSettings AppSettings::load(QSettings &s)
{
    const AppSettings d;
    AppSettings a;
    // Engine addresses are kept as written: the locator reports a wrong one by name, which
    // beats silently falling back to another engine. Only blanks and repeats are dropped.
    QStringList engines{s.value(kEngineSocket).toString()};
    engines += s.value(kMoreEngines).toStringList();
    for (const QString &engine : std::as_const(engines)) {
        const QString trimmed = engine.trimmed();
        if (!trimmed.isEmpty() && !a.engines.contains(trimmed))
            a.engines.append(trimmed);
    }
    a.engineSocket = a.engines.value(0);

    s.beginGroup(kImagesGroup);
    for (const QString &language : s.childKeys()) {
        const QString image = s.value(language).toString().trimmed();
        // An image reference never contains whitespace; anything else would only fail later.
        if (!image.isEmpty() && !image.contains(QRegularExpression(QStringLiteral("\\s"))))
            a.images.insert(language.toLower(), image);
    }
    s.endGroup();

    a.defaultTimeoutSec = intIn(s, kTimeout, d.defaultTimeoutSec, kMinTimeoutSec, kMaxTimeoutSec);
    a.memoryMiB = intIn(s, kMemory, d.memoryMiB, kMinMemoryMiB, kMaxMemoryMiB);
    a.cpus = doubleIn(s, kCpus, d.cpus, kMinCpus, kMaxCpus);
    a.pidsLimit = intIn(s, kPids, d.pidsLimit, kMinPidsLimit, kMaxPidsLimit);

    for (const QString &name : s.value(kPassThrough).toStringList()) {
        const QString trimmed = name.trimmed();
        if (isValidEnvName(trimmed) && !a.passThroughEnv.contains(trimmed))
            a.passThroughEnv.append(trimmed);
    }
    // Like the names above, a bad entry is dropped rather than stopping the app; said in the
    // log, since a secret that silently went missing would only show as a failing request.
    for (const QString &text : s.value(kSecrets).toStringList()) {
        if (text.trimmed().isEmpty())
            continue;
        QString error;
        const std::optional<SecretBinding> secret = SecretBinding::parse(text, &error);
        if (!secret)
            qCWarning(lcUi).noquote() << "settings: ignoring a bound secret:" << error;
        else if (std::any_of(a.secrets.cbegin(), a.secrets.cend(),
                             [&](const SecretBinding &b) { return b.name == secret->name; }))
            qCWarning(lcUi).noquote()
                << "settings: ignoring a second bound secret named" << secret->name;
        else
            a.secrets.append(*secret);
    }
    a.workspaces = workspacesIn(s);

    a.httpEnabled = boolIn(s, kHttpEnabled, d.httpEnabled);
    a.httpPort = quint16(intIn(s, kHttpPort, d.httpPort, kMinHttpPort, kMaxHttpPort));
    const QString path = tokenPath(s);
    const QString legacy = s.value(kLegacyHttpToken).toString().trimmed();
    if (s.contains(kLegacyHttpToken)) {
        // Once: the token leaves the settings file (world-readable by default) for the 0600
        // file. Kept where it was if it cannot be moved, so that it is not lost.
        QString error;
        if (legacy.isEmpty() || TokenStore::write(path, legacy, &error)) {
            s.remove(kLegacyHttpToken);
            s.sync();
            if (!legacy.isEmpty())
                qCInfo(lcUi).noquote() << "the HTTP token moved from the settings file to" << path;
        } else {
            qCWarning(lcUi).noquote() << error;
        }
    }
    a.httpToken = TokenStore::read(path);
    if (a.httpToken.isEmpty())
        a.httpToken = legacy;

    a.historyRetentionDays = intIn(s, kRetention, d.historyRetentionDays, 0, kMaxRetentionDays);
    a.keepRunningInBackground = boolIn(s, kKeepRunning, d.keepRunningInBackground);
    a.policies = loadPolicies(s);
    return a;
}

void AppSettings::savePolicies(const AssistantPolicies &policies)
{
    QSettings settings(QStringLiteral("code-sandbox"), QStringLiteral("code-sandbox"));
    savePolicies(settings, policies);
    settings.sync();
}

void AppSettings::savePolicies(QSettings &s, const AssistantPolicies &policies)
{
    // The defaults are not written: a file without the key means them, and stays short.
    if (policies == AssistantPolicies())
        s.remove(kPolicies);
    else
        s.setValue(kPolicies, QString::fromUtf8(
                                  QJsonDocument(policies.toJson()).toJson(QJsonDocument::Compact)));
}

QString AppSettings::filePath()
{
    return QSettings(QStringLiteral("code-sandbox"), QStringLiteral("code-sandbox")).fileName();
}

AssistantPolicies AppSettings::loadPolicies()
{
    QSettings settings(QStringLiteral("code-sandbox"), QStringLiteral("code-sandbox"));
    return loadPolicies(settings);
}

AssistantPolicies AppSettings::loadPolicies(QSettings &s)
{
    const QString text = s.value(kPolicies).toString();
    if (text.trimmed().isEmpty())
        return {};
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (!doc.isObject()) {
        // Every assistant then runs as the default says (run): say so loudly.
        qCWarning(lcUi).noquote() << "settings: the assistants' policies are not valid JSON ("
                                  << error.errorString() << "); the defaults apply";
        return {};
    }
    QStringList warnings;
    const AssistantPolicies policies = AssistantPolicies::fromJson(doc.object(), &warnings);
    for (const QString &w : std::as_const(warnings))
        qCWarning(lcUi).noquote() << "settings: assistants' policies:" << w;
    return policies;
}

void AppSettings::save(QSettings &s) const
{
    const QStringList engines = engineList();
    s.setValue(kEngineSocket, engines.value(0));
    if (engines.size() > 1)
        s.setValue(kMoreEngines, engines.mid(1));
    else
        s.remove(kMoreEngines);

    // Rewritten as a whole so an override the user cleared does not survive in the file.
    s.remove(kImagesGroup);
    s.beginGroup(kImagesGroup);
    for (auto it = images.cbegin(); it != images.cend(); ++it) {
        if (!it.value().trimmed().isEmpty())
            s.setValue(it.key(), it.value().trimmed());
    }
    s.endGroup();

    s.setValue(kTimeout, defaultTimeoutSec);
    s.setValue(kMemory, memoryMiB);
    s.setValue(kCpus, cpus);
    s.setValue(kPids, pidsLimit);
    s.setValue(kPassThrough, passThroughEnv);
    if (secrets.isEmpty()) {
        s.remove(kSecrets);
    } else {
        QStringList texts;
        for (const SecretBinding &secret : secrets)
            texts.append(secret.toString());
        s.setValue(kSecrets, texts);
    }
    if (workspaces.isEmpty()) {
        s.remove(kWorkspaceFolders);
    } else {
        QJsonArray list;
        for (const Workspace &w : workspaces)
            list.append(workspaceToJson(w));
        s.setValue(kWorkspaceFolders,
                   QString::fromUtf8(QJsonDocument(list).toJson(QJsonDocument::Compact)));
    }
    s.setValue(kHttpEnabled, httpEnabled);
    s.setValue(kHttpPort, int(httpPort));
    s.remove(kLegacyHttpToken);
    const QString path = tokenPath(s);
    const QString token = httpToken.trimmed();
    QString error;
    if (token.isEmpty())
        TokenStore::remove(path);
    else if (token != TokenStore::read(path) && !TokenStore::write(path, token, &error))
        qCWarning(lcUi).noquote() << error;
    s.setValue(kRetention, historyRetentionDays);
    s.setValue(kKeepRunning, keepRunningInBackground);
    if (policies.isOpen() &&
        policies.approvalTimeoutSec == AssistantPolicies().approvalTimeoutSec &&
        !policies.runWhenNoWindow)
        s.remove(kPolicies);
    else
        s.setValue(kPolicies, QString::fromUtf8(
                                  QJsonDocument(policies.toJson()).toJson(QJsonDocument::Compact)));
    s.sync();
}

QString AppSettings::tokenPath(const QSettings &settings)
{
    return QFileInfo(settings.fileName()).absolutePath() + QStringLiteral("/http-token");
}

bool AppSettings::isValidEnvName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    return re.match(name).hasMatch();
}

QString AppSettings::SecretBinding::toString() const
{
    return name + u'=' + hostVar + u'@' + hosts.join(u',');
}

std::optional<AppSettings::SecretBinding> AppSettings::SecretBinding::parse(const QString &text,
                                                                            QString *error)
{
    // Split as --secret splits: the first '=', then the first '@' after it.
    const qsizetype eq = text.indexOf(u'=');
    const qsizetype at = eq < 0 ? -1 : text.indexOf(u'@', eq + 1);
    if (eq <= 0 || at < 0) {
        if (error)
            *error = QStringLiteral("'%1' is not NAME=HOSTVAR@HOST[,HOST...]").arg(text.trimmed());
        return std::nullopt;
    }
    return make(text.left(eq), text.mid(eq + 1, at - eq - 1), text.mid(at + 1).split(u','), error);
}

std::optional<AppSettings::SecretBinding> AppSettings::SecretBinding::make(const QString &name,
                                                                           const QString &hostVar,
                                                                           const QStringList &hosts,
                                                                           QString *error)
{
    const auto fail = [error](const QString &why) {
        if (error)
            *error = why;
        return std::nullopt;
    };
    SecretBinding b{name.trimmed(), hostVar.trimmed(), {}};
    if (!isValidEnvName(b.name))
        return fail(QStringLiteral("'%1' is not a variable name").arg(b.name));
    if (!isValidEnvName(b.hostVar))
        return fail(
            QStringLiteral("%1: '%2' is not a host variable's name").arg(b.name, b.hostVar));
    QStringList entries;
    for (const QString &host : hosts)
        if (!host.trimmed().isEmpty())
            entries.append(host.trimmed());
    // The gateway's own check, so that a host it would refuse is refused here already.
    QString why;
    b.hosts = EgressList::parse(entries, &why);
    if (!why.isEmpty())
        return fail(QStringLiteral("%1: %2").arg(b.name, why));
    if (b.hosts.isEmpty())
        return fail(QStringLiteral("%1: it names no host").arg(b.name));
    return b;
}

QJsonObject AppSettings::workspaceToJson(const Workspace &w)
{
    QJsonObject o{{QStringLiteral("name"), w.name},
                  {QStringLiteral("path"), w.path},
                  {QStringLiteral("mode"), Workspace::modeName(w.mode)},
                  {QStringLiteral("apply"), Workspace::applyName(w.apply)}};
    if (!w.exclude.isEmpty())
        o.insert(QStringLiteral("exclude"), QJsonArray::fromStringList(w.exclude));
    if (!w.include.isEmpty())
        o.insert(QStringLiteral("include"), QJsonArray::fromStringList(w.include));
    return o;
}

std::optional<Workspace> AppSettings::workspaceFromJson(const QJsonValue &json, QString *error)
{
    const auto fail = [error](const QString &why) {
        if (error)
            *error = why;
        return std::nullopt;
    };
    if (!json.isObject())
        return fail(QStringLiteral("an entry is not an object"));
    const QJsonObject o = json.toObject();
    Workspace w;
    w.name = o.value(u"name").toString();
    if (!Workspace::isValidName(w.name))
        return fail(QStringLiteral("'%1' is not a workspace name").arg(w.name.left(100)));
    const QString path = o.value(u"path").toString().trimmed();
    if (path.isEmpty() || !QDir::isAbsolutePath(path))
        return fail(QStringLiteral("%1: '%2' is not an absolute path").arg(w.name, path));
    w.path = QDir::cleanPath(path);
    if (QDir(w.path).isRoot())
        return fail(QStringLiteral("%1: the file system's root cannot be a workspace").arg(w.name));
    // Missing: the defaults (read-only, never applied); misspelt: not guessed.
    const QJsonValue mode = o.value(u"mode");
    if (mode.toString() == Workspace::modeName(Workspace::Mode::CopyOnWrite))
        w.mode = Workspace::Mode::CopyOnWrite;
    else if (!mode.isUndefined() &&
             mode.toString() != Workspace::modeName(Workspace::Mode::ReadOnly))
        return fail(QStringLiteral("%1: the mode is not read-only or copy-on-write").arg(w.name));
    const QJsonValue apply = o.value(u"apply");
    const std::optional<Workspace::Apply> parsed = Workspace::parseApply(apply.toString());
    if (!apply.isUndefined() && (!apply.isString() || !parsed))
        return fail(QStringLiteral("%1: apply is not never, ask or always").arg(w.name));
    w.apply = parsed.value_or(Workspace::Apply::Never);
    QString why;
    if (!patternsIn(o, QStringLiteral("exclude"), &w.exclude, &why) ||
        !patternsIn(o, QStringLiteral("include"), &w.include, &why))
        return fail(QStringLiteral("%1: %2").arg(w.name, why));
    return w;
}

bool AppSettings::sameWorkspace(const Workspace &a, const Workspace &b)
{
    return a.name == b.name && a.path == b.path && a.mode == b.mode && a.apply == b.apply &&
           a.exclude == b.exclude && a.include == b.include;
}

QStringList AppSettings::engineList() const
{
    if (!engines.isEmpty() || engineSocket.trimmed().isEmpty())
        return engines;
    return {engineSocket.trimmed()};
}

bool AppSettings::operator==(const AppSettings &o) const
{
    return engineList() == o.engineList() && images == o.images &&
           defaultTimeoutSec == o.defaultTimeoutSec && memoryMiB == o.memoryMiB &&
           qFuzzyCompare(cpus, o.cpus) && pidsLimit == o.pidsLimit &&
           passThroughEnv == o.passThroughEnv && secrets == o.secrets &&
           std::equal(workspaces.cbegin(), workspaces.cend(), o.workspaces.cbegin(),
                      o.workspaces.cend(), &AppSettings::sameWorkspace) &&
           httpEnabled == o.httpEnabled && httpPort == o.httpPort && httpToken == o.httpToken &&
           historyRetentionDays == o.historyRetentionDays &&
           keepRunningInBackground == o.keepRunningInBackground && policies == o.policies;
}
