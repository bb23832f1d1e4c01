#include "languageregistry.h"

#include "embeddedscripts.h"
#include "imagescripts.h"
#include "sandboxlog.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace {
// The table itself is resources/languages.json, compiled in; containers/build-images.sh reads the
// same file for the images' packages and aliases.
const char kTablePath[] = ":/code-sandbox/languages.json";

QStringList strings(const QJsonValue &value)
{
    QStringList out;
    for (const QJsonValue item : value.toArray())
        out.append(item.toString());
    return out;
}

// The loaders are files of their own (containers/loaders), compiled in by CMake; the table
// names them by placeholder so that their text is not copied into it.
QString expand(const QString &word)
{
    if (word == u"@python-loader@")
        return QString::fromUtf8(kPythonLoader);
    if (word == u"@python-boot@") {
        // The name of the loader the image compiled (containers/build-images.sh), as
        // ImageScripts names it.
        return QString::fromUtf8(kPythonBoot)
            .replace(QLatin1String("CS_LOADER_HASH"),
                     ImageScripts::hashOf(QByteArray(kPythonLoader)));
    }
    if (word == u"@node-loader@")
        return QString::fromUtf8(kNodeLoader);
    return word;
}

Language fromJson(const QJsonObject &o)
{
    Language l;
    l.name = o.value(u"name").toString();
    l.title = o.value(u"title").toString();
    l.aliases = strings(o.value(u"aliases"));
    l.buildName = o.value(u"image").toString();
    l.image = QStringLiteral("code-sandbox/%1:latest").arg(l.buildName);
    l.fileName = o.value(u"file").toString();
    l.command = strings(o.value(u"command"));
    for (const QString &word : strings(o.value(u"preload")))
        l.preloadCommand.append(expand(word));
    l.env = strings(o.value(u"env"));
    l.compileCommand = o.value(u"compile").toString();
    l.installCommand = o.value(u"install").toString();
    l.indexHosts = strings(o.value(u"index_hosts"));
    l.libraryEnv = strings(o.value(u"library_env"));
    l.packageManager = o.value(u"package_manager").toString();
    l.preinstalled = strings(o.value(u"preinstalled"));
    l.preloadModules = strings(o.value(u"preload_modules"));
    // "@preinstalled@" stands for the names of the preinstalled libraries, one argument each, so
    // that a version command can print each one's version without a list of its own.
    for (const QString &word : strings(o.value(u"version_command"))) {
        if (word == u"@preinstalled@")
            l.versionCommand.append(l.preinstalled);
        else
            l.versionCommand.append(word);
    }
    l.useCases = strings(o.value(u"use_cases"));
    l.example = o.value(u"example").toString();
    l.editorExample = o.value(u"editor_example").toString();
    l.printHint = o.value(u"print_hint").toString();
    l.visualization = o.value(u"visualization").toBool(false);
    l.liveSession = o.value(u"live_session").toBool(false);
    l.interruptible = o.value(u"interruptible").toBool(true);
    return l;
}

LanguageRegistry load()
{
    LanguageRegistry r;
    QFile file(QString::fromLatin1(kTablePath));
    if (!file.open(QIODevice::ReadOnly)) {
        qCCritical(lcSandbox) << "the language table" << kTablePath << "is missing from the build";
        return r;
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError)
        qCCritical(lcSandbox) << "the language table is not valid JSON:" << error.errorString();
    for (const QJsonValue entry : doc.object().value(u"languages").toArray())
        r.add(fromJson(entry.toObject()));
    return r;
}
} // namespace

LanguageRegistry LanguageRegistry::builtIn()
{
    // Parsed once; every caller gets its own copy (setImage changes only that copy).
    static const LanguageRegistry table = load();
    return table;
}

const Language *LanguageRegistry::find(const QString &nameOrAlias) const
{
    const QString key = nameOrAlias.trimmed().toLower();
    for (const Language &l : m_languages)
        if (l.name == key || l.aliases.contains(key))
            return &l;
    return nullptr;
}

QStringList LanguageRegistry::names() const
{
    QStringList out;
    for (const Language &l : m_languages)
        out.append(l.name);
    return out;
}

bool LanguageRegistry::setImage(const QString &nameOrAlias, const QString &image)
{
    // By name, not by address: the list is shared with the table until it is written to, and
    // writing detaches it, so an address found before would no longer be in it.
    const Language *found = find(nameOrAlias);
    if (!found)
        return false;
    const QString name = found->name;
    for (Language &l : m_languages) {
        if (l.name == name) {
            l.image = image;
            return true;
        }
    }
    return false;
}
