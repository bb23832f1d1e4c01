#include "snapshotactions.h"

#include "runlistmodel.h"
#include "sessionsnapshots.h"
#include "sessiontreemodel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>

namespace {
const QString kFilter = QStringLiteral("Session snapshots (*.csnap);;All files (*)");
} // namespace

SnapshotActions::SnapshotActions(SessionSnapshots *snapshots, SessionTreeModel *tree,
                                 QMainWindow *window)
    : QObject(window), m_snapshots(snapshots), m_tree(tree), m_window(window)
{
    m_import = new QAction(QStringLiteral("&Import snapshot…"), this);
    m_import->setObjectName(QStringLiteral("importSnapshotAction"));
    m_import->setToolTip(QStringLiteral("Keep a session's snapshot (a .csnap file) here, so that "
                                        "any assistant of this window can start a session from "
                                        "it"));
    connect(m_import, &QAction::triggered, this, &SnapshotActions::importSnapshot);

    // The tree's steps as the sessions keep them.
    // ("": any session's may have gone, to the caps.)
    connect(snapshots, &SessionSnapshots::snapshotsChanged, this, [this](const QString &sessionId) {
        const QStringList ids =
            sessionId.isEmpty() ? m_tree->sessionsWithSteps() : QStringList{sessionId};
        for (const QString &id : ids)
            m_tree->setSnapshots(id, m_snapshots->of(id));
    });
    connect(snapshots, &SessionSnapshots::currentChanged, tree,
            &SessionTreeModel::setCurrentSnapshot);
    connect(snapshots, &SessionSnapshots::forked, this,
            [this](const QString &sessionId, const QString &language, const QString &origin) {
                m_tree->addFork(sessionId, language, origin);
                Q_EMIT forkListed(sessionId);
            });
    connect(snapshots, &SessionSnapshots::progress, this,
            [this](const QString &message) { showMessage(message); });
    connect(snapshots, &SessionSnapshots::finished, this,
            [this](const QString &message) { showMessage(message, 15000); });
    connect(snapshots, &SessionSnapshots::failed, this, [this](const QString &error) {
        m_window->statusBar()->clearMessage();
        showError(QStringLiteral("Session snapshot"), error);
    });
}

void SnapshotActions::addTo(QMenu *menu, const QString &runId)
{
    menu->setToolTipsVisible(true);
    const auto add = [this, menu, &runId](const QString &text, const QString &name,
                                          const QString &tip, const QString &why,
                                          void (SnapshotActions::*slot)(const QString &)) {
        QAction *action = menu->addAction(text);
        action->setObjectName(name);
        action->setEnabled(why.isEmpty());
        action->setToolTip(why.isEmpty() ? tip : why);
        connect(action, &QAction::triggered, this, [this, slot, runId] { (this->*slot)(runId); });
    };
    const QString unavailable = m_snapshots->unavailable(runId);
    add(QStringLiteral("&Rewind here"), QStringLiteral("rewindAction"),
        QStringLiteral("Bring the session back to the state after this call, in a fresh sandbox: "
                       "its assistant's next call starts from there"),
        m_snapshots->cannotRewind(runId), &SnapshotActions::rewindHere);
    add(QStringLiteral("&Fork from here"), QStringLiteral("forkAction"),
        QStringLiteral("Start a new session of the same assistant with the state after this "
                       "call; this session goes on as it is"),
        m_snapshots->cannotFork(runId), &SnapshotActions::forkFromHere);
    add(QStringLiteral("&Export snapshot…"), QStringLiteral("exportSnapshotAction"),
        QStringLiteral("Save the snapshot as a .csnap file"), unavailable,
        &SnapshotActions::exportSnapshot);
    add(QStringLiteral("&Delete snapshot"), QStringLiteral("deleteSnapshotAction"),
        QStringLiteral("Remove the snapshot: the session can no longer come back to this step"),
        unavailable, &SnapshotActions::deleteSnapshot);
}

void SnapshotActions::rewindHere(const QString &runId)
{
    // As the server keeps it now (the tree's may be older).
    const SessionSnapshot *snapshot = m_snapshots->afterRun(runId);
    if (!snapshot) {
        showError(QStringLiteral("Rewind the session"), m_snapshots->cannotRewind(runId));
        return;
    }
    const QString sessionId = snapshot->sessionId;
    const QString snapshotId = snapshot->id;
    if (!confirm(QStringLiteral("Rewind the session"),
                 QStringLiteral("Rewind session %1 to %2?")
                     .arg(sessionId, m_tree->stepLabel(snapshotId, sessionId)),
                 QStringLiteral("Its variables and files become what they were after that call "
                                "(snapshot %1), in a fresh sandbox; its assistant's next call "
                                "starts from there. The later steps stay, as a branch you can "
                                "still fork from.")
                     .arg(snapshotId),
                 QStringLiteral("Rewind")))
        return;
    m_snapshots->rewind(runId);
}

void SnapshotActions::forkFromHere(const QString &runId)
{
    m_snapshots->fork(runId);
}

void SnapshotActions::exportSnapshot(const QString &runId)
{
    const SessionSnapshot *snapshot = m_snapshots->afterRun(runId);
    if (!snapshot) {
        showError(QStringLiteral("Export snapshot"), m_snapshots->unavailable(runId));
        return;
    }
    const QString id = snapshot->id;
    const QString path =
        QFileDialog::getSaveFileName(m_window, QStringLiteral("Export snapshot %1").arg(id),
                                     QDir::home().filePath(id + QStringLiteral(".csnap")), kFilter);
    if (path.isEmpty())
        return;
    const QString error = m_snapshots->exportTo(runId, path);
    if (!error.isEmpty()) {
        showError(QStringLiteral("Export snapshot"),
                  QStringLiteral("Snapshot %1 was not exported: %2").arg(id, error));
        return;
    }
    showMessage(QStringLiteral("Snapshot %1 exported to %2 (%3)")
                    .arg(id, QDir::toNativeSeparators(path),
                         QLocale().formattedDataSize(QFileInfo(path).size())),
                15000);
}

void SnapshotActions::deleteSnapshot(const QString &runId)
{
    const SessionSnapshot *snapshot = m_snapshots->afterRun(runId);
    if (!snapshot) {
        showError(QStringLiteral("Delete snapshot"), m_snapshots->unavailable(runId));
        return;
    }
    const QString snapshotId = snapshot->id;
    if (!confirm(QStringLiteral("Delete the snapshot"),
                 QStringLiteral("Delete snapshot %1?").arg(snapshotId),
                 QStringLiteral("Neither you nor the assistant can bring the session back to this "
                                "step afterwards, nor fork from it. The run itself stays in the "
                                "list."),
                 QStringLiteral("Delete")))
        return;
    const QString error = m_snapshots->remove(runId);
    if (!error.isEmpty()) {
        showError(QStringLiteral("Delete snapshot"), error);
        return;
    }
    showMessage(QStringLiteral("Snapshot %1 deleted").arg(snapshotId), 10000);
}

void SnapshotActions::importSnapshot()
{
    const QString path = QFileDialog::getOpenFileName(m_window, QStringLiteral("Import snapshot"),
                                                      QDir::homePath(), kFilter);
    if (path.isEmpty())
        return;
    QString id;
    const QString error = m_snapshots->importFrom(path, &id);
    if (!error.isEmpty()) {
        showError(
            QStringLiteral("Import snapshot"),
            QStringLiteral("%1 was not imported: %2").arg(QDir::toNativeSeparators(path), error));
        return;
    }
    QApplication::clipboard()->setText(id);
    showMessage(QStringLiteral("Snapshot imported as %1 (copied)").arg(id), 15000);
    QMessageBox box(QMessageBox::Information, QStringLiteral("Snapshot imported"),
                    QStringLiteral("Imported as %1 (copied to the clipboard).").arg(id),
                    QMessageBox::Ok, m_window);
    box.setObjectName(QStringLiteral("snapshotImported"));
    box.setTextFormat(Qt::PlainText);
    box.setInformativeText(
        QStringLiteral("Any assistant connected to this window can start a session from it: "
                       "create_session with {\"from_snapshot\": \"%1\"}.")
            .arg(id));
    box.exec();
}

bool SnapshotActions::confirm(const QString &title, const QString &text, const QString &details,
                              const QString &action)
{
    QMessageBox box(QMessageBox::Question, title, text, QMessageBox::Cancel, m_window);
    box.setObjectName(QStringLiteral("snapshotQuestion"));
    box.setTextFormat(Qt::PlainText);
    box.setInformativeText(details);
    QPushButton *yes = box.addButton(action, QMessageBox::AcceptRole);
    box.setDefaultButton(yes);
    box.exec();
    return box.clickedButton() == yes;
}

void SnapshotActions::showError(const QString &title, const QString &text)
{
    QMessageBox box(QMessageBox::Warning, title, text, QMessageBox::Ok, m_window);
    box.setObjectName(QStringLiteral("snapshotError"));
    box.setTextFormat(Qt::PlainText);
    box.exec();
}

void SnapshotActions::showMessage(const QString &text, int timeoutMs)
{
    m_window->statusBar()->showMessage(text, timeoutMs);
}
