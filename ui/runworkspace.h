#pragma once

#include "workspaceapplier.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

// One workspace of a run as the window shows it, read from the run's record
// (RunRecord::workspaces: WorkspaceRun::recordJson() and the window's decision). Reading is
// lenient: the record may come from another process or an older version, and what is shown need
// not be whole; Apply reads it again strictly (WorkspaceRun::fromRecordJson).
struct RunWorkspace
{
    enum class State
    {
        ReadOnly,  // nothing came back
        Failed,    // it could not be sent, or its changes not fetched
        NoChanges, // copy-on-write, nothing changed
        Pending,   // changes nobody decided on yet
        Applied,   // by the server (apply: always) or from the window
        Discarded
    };

    struct Change
    {
        QString kind; // "added", "modified", "deleted", "renamed"
        QString path;
        QString from; // renamed: the old path
        qint64 size = -1;
        qint64 oldSize = -1;
        QString sha256;
        bool binary = false;
        QString diff;
        int linesAdded = -1;
        int linesRemoved = -1;
    };

    QString name;
    QString mode;   // "read-only", "copy-on-write"
    QString folder; // the host folder
    QString apply;  // "never", "ask", "always"
    int files = 0;
    qint64 bytes = 0;
    int excluded = 0;
    QStringList skipped;
    QString error;
    bool hasChangeSet = false; // a copy-on-write workspace whose changes came back
    QList<Change> changes;
    QStringList refused;
    int refusedCount = 0;
    bool contentKept = false;
    QString decision; // "applied", "discarded" or empty
    QDateTime decidedAt;
    bool wasApplied = false; // `applied` is there: by the server or the window
    WorkspaceApplyResult applied;
    QJsonObject json; // the record itself

    bool isCopyOnWrite() const { return mode == u"copy-on-write"; }
    State state() const;
    // A change set that waits for a person: Pending.
    bool needsDecision() const { return state() == State::Pending; }
    // Why Apply cannot be offered for a pending change set ("" when it can).
    QString whyNotApplicable() const;
    // One line on where it stands: "Not applied: ...", "Applied 3 files on ...".
    QString stateText() const;
    // "2 added, 1 modified, 1 deleted".
    QString countsText() const;

    static RunWorkspace fromJson(const QJsonObject &json);
    static QList<RunWorkspace> fromRecord(const QJsonArray &workspaces);
    // The record of `workspace` with a decision: "applied" with the applier's result, or
    // "discarded" (result ignored), at `when`.
    static QJsonObject decided(QJsonObject workspace, const QString &decision,
                               const WorkspaceApplyResult &result, const QDateTime &when);
};
