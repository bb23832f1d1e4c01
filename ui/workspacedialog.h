#pragma once

#include "workspace.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;

// Adds or edits one workspace (Settings → Workspaces): its name, folder and mode, what happens to
// a copy-on-write run's changes, and the patterns beyond the defaults, which it shows beside them
// so that the user sees what stays out.
class WorkspaceDialog : public QDialog
{
    Q_OBJECT
public:
    // `takenNames`: the other workspaces' names, which this one cannot have.
    WorkspaceDialog(const Workspace &workspace, const QStringList &takenNames,
                    QWidget *parent = nullptr);

    // What the fields hold: the folder made absolute (canonical when it exists), patterns one a
    // line, trimmed, blanks and repeats dropped.
    Workspace workspace() const;
    // Why the fields are not a workspace (shown under them, OK disabled); empty when they are.
    QString problem() const;

    // A valid name from a folder's base name ("My Project!" → "My-Project"), not among `taken`
    // ("data-2" when "data" is).
    static QString nameFor(const QString &folder, const QStringList &taken);
    // Why `name` cannot be a workspace's, among `taken`; empty when it can.
    static QString nameProblem(const QString &name, const QStringList &taken);

private:
    QWidget *createRulesGroup();
    void browse();
    void updateState();
    QString folderPath() const;

    QStringList m_taken;
    QString m_initialPath; // a folder that is gone may stay, so that its rules can be edited
    QLineEdit *m_name;
    QLineEdit *m_folder;
    QComboBox *m_mode;
    QComboBox *m_apply;
    QPlainTextEdit *m_exclude;
    QPlainTextEdit *m_include;
    QLabel *m_error;
    QLabel *m_warning;
    QDialogButtonBox *m_buttons;
};
