#pragma once

#include "approvalrequest.h"
#include "runapprover.h"

#include <QDialog>
#include <QElapsedTimer>
#include <QTimer>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QVBoxLayout;

// One run waiting for a person: who asks, the whole program (highlighted; what would not show is
// written out), language, limits, libraries and files, all as plain text, and how long until it
// is denied on its own. Allow once, Always allow this assistant (not one that gave no name), or
// Deny with an optional reason that goes back to the assistant. Closing it denies.
class ApprovalDialog : public QDialog
{
    Q_OBJECT
public:
    explicit ApprovalDialog(const ApprovalRequest &request, QWidget *parent = nullptr);

    const ApprovalRequest &request() const { return m_request; }
    // The question went away without this dialog's answer (answered elsewhere, timed out, the
    // assistant cancelled): it closes without answering.
    void withdraw();

    // Programs up to this size are highlighted; all of every program is shown.
    static constexpr qsizetype kMaxHighlightedChars = 1024 * 1024;

    // "Python", "JavaScript": the language as people write it.
    static QString languageTitle(const QString &language);
    // "claude-code (through a --stdio server)": who asks, and through what.
    static QString askerText(const ApprovalRequest &request);
    // "Always allow" needs a name: a rule for no name would be the default for everyone.
    static bool hasName(const ApprovalRequest &request);
    // create_session with libraries: no program, an install in a container with network.
    static bool installsOnly(const ApprovalRequest &request);

Q_SIGNALS:
    void answered(const QString &id, RunApprover::Answer answer, const QString &reason);

protected:
    void reject() override;

private:
    void addHeading(QVBoxLayout *layout);
    void addProgram(QVBoxLayout *layout);
    void addDetails(QVBoxLayout *layout);
    void addButtons(QVBoxLayout *layout);
    void answer(RunApprover::Answer answer);
    void updateCountdown();

    ApprovalRequest m_request;
    QPlainTextEdit *m_code;
    QLineEdit *m_reason;
    QLabel *m_countdown;
    QPushButton *m_allowOnce;
    QPushButton *m_allowAlways;
    QPushButton *m_deny;
    QTimer m_tick;
    QElapsedTimer m_shown;
    bool m_done = false;
};
