#pragma once

#include "workspace.h"
#include "workspaceapplier.h"
#include "workspacechangeset.h"
#include "workspacescanner.h"

#include <QJsonObject>
#include <QString>
#include <memory>
#include <optional>

// What one run did with one workspace: what went into its sandbox and, for a copy-on-write one,
// what came back and whether it was applied. Kept with the run's result, so a change set can be
// applied later against the scan the run started from (a conflict is a host file changed since).
struct WorkspaceRun
{
    Workspace workspace;
    // What was sent (shared: a scan of a big folder is large, and results are copied).
    std::shared_ptr<const WorkspaceScan> scan;
    std::optional<WorkspaceChangeSet> changes; // copy-on-write, once fetched
    std::optional<WorkspaceApplyResult> applied;
    QString error; // why it could not be sent, or its changes not fetched or applied
    // The bytes of archive sent to the engine for it by this run: 0 when the engine held its
    // content already (a cached volume, WorkspaceCache; a session's unchanged version).
    qint64 sentBytes = 0;
    // The engine's volume that held it, mounted read-only (WorkspaceCache); empty when copied.
    QString volume;

    // As structuredContent has it: {name, mode, path, files, bytes, excluded, skipped,
    // sent_bytes, changes, applied, error}; never the host path.
    QJsonObject toJson() const;
    // A line for the text a model reads: what came back and what happens to it.
    QString summary() const;

    // For the run's record (the history, the monitor socket, the window): toJson() and what a
    // person's Apply needs later, in this process or another: the folder and its rules, the
    // change set with its content (when that is at most kMaxRecordedContent; else without it,
    // and "content_kept": false), and the scan's entries of the files it changes or deletes
    // (what the conflict check compares the folder with). Holds the host path: never for a model.
    QJsonObject recordJson() const;
    static constexpr qint64 kMaxRecordedContent = 16LL * 1024 * 1024;
    // The inverse, everything checked again (it comes from disk or from another process):
    // nullopt and *error when it is not one. A record whose content was not kept comes back
    // without `changes`, its error saying why it cannot be applied.
    static std::optional<WorkspaceRun> fromRecordJson(const QJsonObject &json, QString *error);
};
