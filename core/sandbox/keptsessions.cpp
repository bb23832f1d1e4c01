#include "keptsessions.h"

#include "sandboxlog.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

namespace {
const QString kFile = QStringLiteral("session.json");
const QString kClaimed = QStringLiteral("session.json.claimed");
} // namespace

QString KeptSessions::save(const Kept &kept) const
{
    QJsonArray snapshots;
    for (const SessionSnapshot &s : kept.snapshots)
        snapshots.append(s.toJson());
    const QJsonObject o{{QStringLiteral("session_id"), kept.id},
                        {QStringLiteral("blueprint"), kept.blueprint.toJson()},
                        {QStringLiteral("last_snapshot"), kept.lastSnapshot},
                        {QStringLiteral("calls"), kept.calls},
                        {QStringLiteral("snapshots"), snapshots}};
    const QString dir = m_folder + u'/' + kept.id;
    if (!QDir().mkpath(dir))
        return QStringLiteral("cannot make the folder %1").arg(dir);
    QSaveFile file(dir + u'/' + kFile);
    if (!file.open(QIODevice::WriteOnly) || file.write(QJsonDocument(o).toJson()) < 0 ||
        !file.commit())
        return QStringLiteral("cannot write %1: %2").arg(file.fileName(), file.errorString());
    QFile::remove(dir + u'/' + kClaimed);
    return QString();
}

QList<KeptSessions::Kept> KeptSessions::load(const SandboxConfig &config) const
{
    QList<Kept> all;
    const QFileInfoList folders =
        QDir(m_folder).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::NoSymLinks);
    for (const QFileInfo &folder : folders) {
        QFile file(folder.filePath() + u'/' + kFile);
        if (!file.open(QIODevice::ReadOnly))
            continue;
        const QJsonObject o = QJsonDocument::fromJson(file.read(1 << 20)).object();
        Kept k;
        k.id = o.value(u"session_id").toString();
        // The folder is named after the session: a file that says otherwise is not one of ours.
        if (k.id != folder.fileName()) {
            qCWarning(lcSandbox).noquote() << "ignoring" << file.fileName() << ": not the file of"
                                           << "session" << folder.fileName();
            continue;
        }
        k.blueprint = SessionBlueprint::fromJson(o.value(u"blueprint").toObject(), config);
        k.lastSnapshot = o.value(u"last_snapshot").toString();
        k.calls = o.value(u"calls").toInt();
        for (const QJsonValue &v : o.value(u"snapshots").toArray()) {
            const SessionSnapshot s = SessionSnapshot::fromJson(v.toObject());
            if (s.sessionId == k.id && s.number > 0 &&
                QFile::exists(QStringLiteral("%1/%2.csnap").arg(folder.filePath()).arg(s.number)))
                k.snapshots.append(s);
        }
        all.append(k);
    }
    return all;
}

bool KeptSessions::claim(const QString &id) const
{
    const QString dir = m_folder + u'/' + id;
    // rename(2) of one name: exactly one instance gets it.
    return QFile::rename(dir + u'/' + kFile, dir + u'/' + kClaimed);
}

void KeptSessions::drop(const QString &id) const
{
    const QString dir = m_folder + u'/' + id;
    QFile::remove(dir + u'/' + kFile);
    QFile::remove(dir + u'/' + kClaimed);
}

bool KeptSessions::isKept(const QString &sessionFolder)
{
    return QFile::exists(sessionFolder + u'/' + kFile);
}
