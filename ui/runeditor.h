#pragma once

#include <QHash>
#include <QWidget>

class CodeHighlighter;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

// Running code by hand: a language, the code, a timeout, Run (Ctrl+Return) and Stop. The run
// itself shows in the list like any other.
class RunEditor : public QWidget
{
    Q_OBJECT
public:
    explicit RunEditor(QWidget *parent = nullptr);

    void setLanguages(const QStringList &languages);
    void setLanguage(const QString &language);
    QString language() const;
    void setCode(const QString &code);
    QString code() const;
    void setTimeoutSec(int seconds);
    int timeoutSec() const;
    // While a manual run is going: Run is off, Stop is on.
    void setRunning(bool running);
    // Per language, what keeps its image from being ready ("being built, about 40 s left");
    // languages without a note are ready. Shown on their items and beside the language.
    void setImageNotes(const QHash<QString, QString> &notes);
    QString imageNote() const;
    void focusEditor();

    // A short program that shows what the sandbox does, for a first run.
    static QString example(const QString &language);

Q_SIGNALS:
    void runRequested(const QString &language, const QString &code, int timeoutSec);
    void stopRequested();

private:
    void onLanguageChanged();
    void showImageNote();
    void requestRun();

    QComboBox *m_language;
    QPlainTextEdit *m_editor;
    CodeHighlighter *m_highlighter;
    QSpinBox *m_timeout;
    QPushButton *m_run;
    QPushButton *m_stop;
    QLabel *m_imageNote;
    QHash<QString, QString> m_imageNotes;
    QString m_current;
    QHash<QString, QString> m_drafts; // per language, so switching does not lose code
};
