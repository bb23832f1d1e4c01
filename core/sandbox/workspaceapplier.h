#pragma once

#include "workspace.h"
#include "workspacechangeset.h"
#include "workspacescanner.h"

#include <QStringList>

struct WorkspaceApplyResult
{
    QStringList applied;   // paths
    QStringList conflicts; // "path: the folder's file changed since the run started"
    QStringList failed;    // "path: why"
};

// Writes a change set into its workspace's folder, the only code that writes there.
//
// Each file is checked against the scan the run started from: a host file whose size,
// modification time or content differs from it (or one that appeared since, where a file is
// added) is a conflict and left alone. Each is written atomically (a temporary file in the same
// directory, fsync, rename; an added file never replaces one that appeared meanwhile) with the
// change's permission bits (never set-uid, set-gid or sticky). Nothing is written outside the
// folder whatever the names say: every name is checked again, every directory on the way is
// opened from its parent with O_NOFOLLOW (a symbolic link there fails the change), missing ones
// are made one by one with mkdirat, and a name the workspace's rules exclude (.env,
// .ssh/authorized_keys) is never written. Only regular files the scan knew are deleted, and a
// change whose old digest is not the scan's (a change set of another run) is refused.
class WorkspaceApplier
{
public:
    static WorkspaceApplyResult apply(const Workspace &ws, const WorkspaceScan &before,
                                      const WorkspaceChangeSet &changes);
};
