#pragma once

#include "sessionblueprint.h"
#include "sessionsnapshot.h"

#include <QList>
#include <QString>

struct SandboxConfig;

// The sessions that outlive their server (create_session's keep): each session's folder in the
// snapshot store holds, beside its snapshots, `session.json`: its blueprint, the snapshot it is
// at and the records of its snapshots, written after each snapshot (so a server that was killed
// keeps them too). The next server reads them at start, and brings a session back on the first
// call with its id by the same assistant. Several instances share the folder: the one that
// brings a session back claims it first (a rename), so only one does.
class KeptSessions
{
public:
    struct Kept
    {
        QString id;
        SessionBlueprint blueprint;
        QString lastSnapshot;
        int calls = 0;
        QList<SessionSnapshot> snapshots;
    };

    explicit KeptSessions(const QString &folder) : m_folder(folder) {}

    // Writes the session's session.json (atomically); the error, or empty.
    QString save(const Kept &kept) const;
    // Every session.json of the folder that reads back, with the snapshots whose files exist.
    QList<Kept> load(const SandboxConfig &config) const;
    // Takes the session for this instance; false when another did first (or it is gone).
    bool claim(const QString &id) const;
    // The session is no longer kept (closed, expired): its session.json goes.
    void drop(const QString &id) const;

    static bool isKept(const QString &sessionFolder);

private:
    QString m_folder;
};
