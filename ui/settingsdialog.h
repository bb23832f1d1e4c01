#pragma once

#include "appsettings.h"

#include <QDialog>

class QCheckBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class CredentialsView;
class PolicyEditor;
class WorkspacesEditor;
class QPushButton;
class QSpinBox;
class QTableWidget;

// Edits an AppSettings; the caller saves settings() when the dialog is accepted. Settings not
// shown here (there are none today) pass through unchanged.
class SettingsDialog : public QDialog
{
    Q_OBJECT
public:
    // `languages`: the rows of the image table, in this order; saved overrides for languages not
    // listed are kept and shown after them.
    SettingsDialog(const AppSettings &current, const QStringList &languages,
                   QWidget *parent = nullptr);

    AppSettings settings() const;
    PolicyEditor *policyEditor() const { return m_policyEditor; }
    CredentialsView *credentialsView() const { return m_credentialsView; }
    WorkspacesEditor *workspacesEditor() const { return m_workspacesEditor; }

    // What the Add button does; false, with nothing added, for an invalid or listed name.
    bool addPassThroughName(const QString &name);
    // Likewise for an engine address (as --engine takes it).
    bool addEngine(const QString &address);
    // What the bound secrets' Add button does: `hosts` comma-separated, as --secret takes them.
    // False, with nothing added, for an invalid binding or a name bound already.
    bool addSecret(const QString &name, const QString &hostVar, const QString &hosts);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QWidget *createEngineTab();
    void connectEngineControls(QPushButton *browse);
    QWidget *createImagesTab(const QStringList &languages);
    QWidget *createLimitsTab();
    QWidget *createEnvironmentTab();
    QWidget *createSecretsGroup(QWidget *page);
    QWidget *createServerTab();
    QWidget *createHistoryTab();
    void browseForSocket();
    void updateEngineState();
    void updateEnvButtons();
    void updateSecretState();
    bool secretListed(const QString &name) const;
    void addSecretFromFields();

    AppSettings m_initial;

    QListWidget *m_engineList = nullptr;
    QLineEdit *m_engineEdit = nullptr;
    QLabel *m_engineError = nullptr;
    QPushButton *m_addEngineButton = nullptr;
    QPushButton *m_removeEngineButton = nullptr;
    QPushButton *m_firstEngineButton = nullptr;
    QTableWidget *m_imagesTable = nullptr;
    QSpinBox *m_timeoutSpin = nullptr;
    QSpinBox *m_memorySpin = nullptr;
    QDoubleSpinBox *m_cpusSpin = nullptr;
    QSpinBox *m_pidsSpin = nullptr;
    QListWidget *m_passThroughList = nullptr;
    QLineEdit *m_envNameEdit = nullptr;
    QPushButton *m_addEnvButton = nullptr;
    QPushButton *m_removeEnvButton = nullptr;
    QListWidget *m_secretList = nullptr;
    QLineEdit *m_secretNameEdit = nullptr;
    QLineEdit *m_secretHostVarEdit = nullptr;
    QLineEdit *m_secretHostsEdit = nullptr;
    QLabel *m_secretError = nullptr;
    QPushButton *m_addSecretButton = nullptr;
    QPushButton *m_removeSecretButton = nullptr;
    QCheckBox *m_httpEnabledCheck = nullptr;
    QSpinBox *m_portSpin = nullptr;
    QLineEdit *m_tokenEdit = nullptr;
    QCheckBox *m_showTokenCheck = nullptr;
    QSpinBox *m_retentionSpin = nullptr;
    QCheckBox *m_keepRunningCheck = nullptr;
    PolicyEditor *m_policyEditor = nullptr;
    CredentialsView *m_credentialsView = nullptr;
    WorkspacesEditor *m_workspacesEditor = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
};
