#pragma once

#include "workspace.h"

#include <QList>
#include <QWidget>
#include <functional>

class QLabel;
class QPushButton;
class QTableWidget;

// Settings → Workspaces: the folders runs may ask for by name, one row each (name, folder, mode,
// apply); Add… (a folder, then its name and rules), Edit…, Remove. Under the table, what every
// workspace keeps out and what the selected one adds to it.
class WorkspacesEditor : public QWidget
{
    Q_OBJECT
public:
    enum Column
    {
        NameColumn,
        FolderColumn,
        ModeColumn,
        ApplyColumn,
        ColumnCount
    };

    explicit WorkspacesEditor(const QList<Workspace> &workspaces, QWidget *parent = nullptr);

    QList<Workspace> workspaces() const { return m_workspaces; }
    QStringList names() const;
    QTableWidget *table() const { return m_table; }

    // What Add… does once a folder is chosen: the workspace dialog, its name the folder's base
    // name made valid. True when the dialog was accepted.
    bool addFolder(const QString &folder);
    // Adds `workspace` as that dialog would; false, with `error` set, for a name that is not one
    // or is listed.
    bool addWorkspace(const Workspace &workspace, QString *error = nullptr);
    // Where Add… gets the folder (a file dialog); the tests give their own.
    void setFolderChooser(std::function<QString(QWidget *)> chooser);

Q_SIGNALS:
    // A workspace was added, edited or removed (the policy editor offers the names).
    void changed();

private:
    void add();
    void editRow(int row);
    void removeCurrent();
    void setRow(int row, const Workspace &workspace);
    QStringList namesBut(int row) const;
    void updateSelection();

    QList<Workspace> m_workspaces; // in the table's order
    std::function<QString(QWidget *)> m_chooseFolder;
    QTableWidget *m_table;
    QPushButton *m_edit;
    QPushButton *m_remove;
    QLabel *m_rules;
};
