#pragma once

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

// One snapshot of a session, as the SnapshotStore keeps it: taken after a call, while the session
// was idle. What it holds is on the server's side only (SnapshotStore::load); this is its record.
struct SessionSnapshot
{
    QString id;        // "<session id>.<number>": unique, and says whose it is
    QString sessionId; // the session it was taken of
    int number = 0;    // 1, 2, …: in the order they were taken in that session
    int afterCall = 0; // the session's call count when it was taken
    QString afterRun;  // the run id of that call (the window's rows)
    // The snapshot the session was at before that call (its last one, or the one it was rewound
    // to, or forked from): the steps of its history as a tree. Empty for the first.
    QString parent;
    QDateTime createdAt;
    qint64 bytes = 0; // the interpreter's state and the files together
    // "python" or "javascript" (the interpreter's state and the files), "files" (the files only:
    // a language without a live interpreter).
    QString kind;
    QString language;
    // What the interpreter could not save: [{name, type, why}].
    QJsonArray notKept;
    QString sha256; // of the content: SnapshotStore::contentHash

    // As list_snapshots gives it.
    QJsonObject toJson() const
    {
        QJsonObject o{{QStringLiteral("snapshot_id"), id},
                      {QStringLiteral("session_id"), sessionId},
                      {QStringLiteral("after_call"), afterCall},
                      {QStringLiteral("after_run"), afterRun},
                      {QStringLiteral("created_at"), createdAt.toString(Qt::ISODateWithMs)},
                      {QStringLiteral("bytes"), bytes},
                      {QStringLiteral("kind"), kind},
                      {QStringLiteral("language"), language},
                      {QStringLiteral("not_kept"), notKept},
                      {QStringLiteral("sha256"), sha256}};
        if (!parent.isEmpty())
            o.insert(QStringLiteral("parent"), parent);
        return o;
    }
    // Names with their types, as a list of {name, type} (not_kept, not_restored) reads to a
    // person or a model: "`conn` (socket), `t` (Thread)"; without backticks for the window.
    static QString namesOf(const QJsonArray &list, bool quoted = true)
    {
        QStringList names;
        for (const QJsonValue &v : list) {
            const QJsonObject o = v.toObject();
            const QString name = quoted ? QStringLiteral("`%1`").arg(o.value(u"name").toString())
                                        : o.value(u"name").toString();
            const QString type = o.value(u"type").toString();
            names.append(type.isEmpty() ? name : QStringLiteral("%1 (%2)").arg(name, type));
        }
        return names.join(QStringLiteral(", "));
    }
    // A record as toJson wrote it (a kept session's session.json); the number is the id's last
    // part.
    static SessionSnapshot fromJson(const QJsonObject &o)
    {
        SessionSnapshot s;
        s.id = o.value(u"snapshot_id").toString();
        s.sessionId = o.value(u"session_id").toString();
        s.number = s.id.section(u'.', -1).toInt();
        s.afterCall = o.value(u"after_call").toInt();
        s.afterRun = o.value(u"after_run").toString();
        s.parent = o.value(u"parent").toString();
        s.createdAt = QDateTime::fromString(o.value(u"created_at").toString(), Qt::ISODateWithMs);
        s.bytes = o.value(u"bytes").toInteger();
        s.kind = o.value(u"kind").toString();
        s.language = o.value(u"language").toString();
        s.notKept = o.value(u"not_kept").toArray();
        s.sha256 = o.value(u"sha256").toString();
        return s;
    }
};
