#pragma once

#include <QObject>
#include <QPointer>

class QAction;
class QMainWindow;
class QMenu;
class SessionSnapshots;
class SessionTreeModel;

// What a person does with sessions' snapshots in the window: the runs list's context menu on a
// session's run (Rewind here, Fork from here, Export snapshot…, Delete snapshot) and File →
// Import snapshot…. Keeps the session tree's steps as SessionSnapshots reports them. Rewind and
// Delete ask first (a rewind changes the state an assistant's next call finds); progress and
// results go to the status bar, errors to a message box.
class SnapshotActions : public QObject
{
    Q_OBJECT
public:
    SnapshotActions(SessionSnapshots *snapshots, SessionTreeModel *tree, QMainWindow *window);

    QAction *importAction() const { return m_import; }
    // Adds the items for the snapshot after `runId` (a session's run) to a row's menu: enabled,
    // or disabled with why not as their tooltip (a headless instance's session, no snapshot).
    void addTo(QMenu *menu, const QString &runId);

    // What the items do.
    void rewindHere(const QString &runId);
    void forkFromHere(const QString &runId);
    void exportSnapshot(const QString &runId);
    void deleteSnapshot(const QString &runId);
    void importSnapshot();

Q_SIGNALS:
    // A fork the window made is in the tree: the window selects it.
    void forkListed(const QString &sessionId);

private:
    // A yes/no question with `action` as the yes; true when it was chosen.
    bool confirm(const QString &title, const QString &text, const QString &details,
                 const QString &action);
    void showError(const QString &title, const QString &text);
    void showMessage(const QString &text, int timeoutMs = 0);

    QPointer<SessionSnapshots> m_snapshots;
    SessionTreeModel *m_tree;
    QMainWindow *m_window;
    QAction *m_import;
};
