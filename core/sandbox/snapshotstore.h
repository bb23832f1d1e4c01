#pragma once

#include "sessionsnapshot.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>

// Where sessions' snapshots are kept: on the server's side, never in a sandbox, one file each
// (`<folder>/<session id>/<number>.csnap`) beside the history. Capped per session and in all;
// past a cap the oldest go first, and a snapshot larger than a session's cap is refused. The
// server never unpickles or runs what a snapshot holds: it keeps bytes, checks their hash and
// hands them back to a sandbox.
//
// A .csnap file is a tar archive of three entries: `manifest.json` (the record, as
// SessionSnapshot::toJson, with "format": "code-sandbox-snapshot" and "version": 1), `state`
// (what the interpreter saved; empty for kind "files") and `files.tar` (the session's /sandbox,
// as the engine's archive endpoint gives it: entries under `sandbox/`).
class SnapshotStore
{
public:
    struct Limits
    {
        // Defaults: a session's workdir holds 64 MiB and its interpreter at most its memory
        // (512 MiB); a step of real work (pandas with a few million rows) saves well under
        // 256 MiB, so a session keeps several steps, and eight sessions' worth stay under 1 GiB
        // of the user's disk.
        qint64 perSessionBytes = 256LL * 1024 * 1024;
        qint64 totalBytes = 1024LL * 1024 * 1024;
    };

    // `folder` is made when the first snapshot is kept. Snapshots left there by an instance that
    // is gone are removed by sweepStale().
    SnapshotStore(const QString &folder, const Limits &limits);

    const Limits &limits() const { return m_limits; }
    QString folder() const { return m_folder; }

    // Keeps a snapshot: `snapshot` has everything but id, number, bytes and sha256, which this
    // sets. Returns the error instead when it is larger than a session's cap, or cannot be
    // written; then nothing is kept. Older ones go as the caps say.
    QString add(SessionSnapshot *snapshot, const QByteArray &state, const QByteArray &files);
    // A snapshot kept by an earlier server (a kept session's, KeptSessions): its file is in
    // place; it counts toward the caps from now on.
    void adopt(const SessionSnapshot &snapshot);
    // A session's snapshots, oldest first.
    QList<SessionSnapshot> of(const QString &sessionId) const;
    const SessionSnapshot *find(const QString &id) const;
    // The one taken after the run `runId` (a session's call), or null.
    const SessionSnapshot *afterRun(const QString &runId) const;
    // What a snapshot holds, read back and checked against its hash.
    QString load(const QString &id, QByteArray *state, QByteArray *files) const;
    // Copies a snapshot's .csnap file to `path` (an export); the error, or empty.
    QString exportTo(const QString &id, const QString &path) const;
    // Removes one, or all of a session's.
    void remove(const QString &id);
    void removeSession(const QString &sessionId);
    // How many are kept now, all sessions together.
    qsizetype count() const { return m_snapshots.size(); }
    // Every snapshot kept now, all sessions together.
    qint64 totalBytes() const { return m_total; }
    // Removes the session folders in `folder` that none of this instance's sessions own and
    // that were not touched for `olderThanSec` (an instance that stopped without cleaning up).
    void sweepStale(qint64 olderThanSec);

    // SHA-256 of a snapshot's content: of the state's SHA-256 and the files' SHA-256, in hex.
    static QString contentHash(const QByteArray &state, const QByteArray &files);
    // The three entries of a .csnap (see above), or the error.
    static QByteArray pack(const SessionSnapshot &snapshot, const QByteArray &state,
                           const QByteArray &files, QString *error);
    static QString unpack(const QByteArray &csnap, qint64 maxBytes, SessionSnapshot *snapshot,
                          QByteArray *state, QByteArray *files);

private:
    QString pathOf(const SessionSnapshot &snapshot) const;
    // Drops the oldest until the session's snapshots and all of them are within the caps.
    void enforceCaps(const QString &sessionId);

    QString m_folder;
    Limits m_limits;
    QList<SessionSnapshot> m_snapshots; // oldest first
    QHash<QString, int> m_numbers;      // session → last number given
    qint64 m_total = 0;
};
