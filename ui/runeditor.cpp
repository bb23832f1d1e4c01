#include "runeditor.h"

#include "codehighlighter.h"
#include "languageregistry.h"
#include "plaintext.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QShortcut>
#include <QSpinBox>
#include <QStyle>
#include <QVBoxLayout>

RunEditor::RunEditor(QWidget *parent)
    : QWidget(parent), m_language(new QComboBox(this)), m_editor(new QPlainTextEdit(this)),
      m_timeout(new QSpinBox(this)), m_run(new QPushButton(QStringLiteral("Run"), this)),
      m_stop(new QPushButton(QStringLiteral("Stop"), this)), m_imageNote(new QLabel(this))
{
    m_language->setObjectName(QStringLiteral("languageCombo"));
    m_editor->setObjectName(QStringLiteral("codeEditor"));
    m_timeout->setObjectName(QStringLiteral("timeoutSpin"));
    m_run->setObjectName(QStringLiteral("runButton"));
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_imageNote->setObjectName(QStringLiteral("imageNote"));
    m_imageNote->setVisible(false);

    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    m_editor->setFont(mono);
    m_editor->setTabStopDistance(QFontMetricsF(mono).horizontalAdvance(QLatin1Char(' ')) * 4);
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_editor->setPlaceholderText(QStringLiteral("Code to run in a fresh sandbox"));
    m_highlighter = new CodeHighlighter(m_editor->document());

    m_timeout->setRange(1, 3600);
    m_timeout->setValue(30);
    m_timeout->setSuffix(QStringLiteral(" s"));
    m_timeout->setToolTip(QStringLiteral("The run is stopped after this long"));
    m_run->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
    m_run->setToolTip(QStringLiteral("Run in a fresh sandbox (Ctrl+Return)"));
    m_run->setDefault(true);
    m_stop->setIcon(style()->standardIcon(QStyle::SP_MediaStop));
    m_stop->setEnabled(false);

    auto *title = new QLabel(QStringLiteral("<b>Run code</b>"), this);
    auto *bar = new QHBoxLayout;
    bar->addWidget(title);
    bar->addSpacing(12);
    bar->addWidget(m_language);
    bar->addWidget(m_imageNote);
    bar->addStretch(1);
    bar->addWidget(new QLabel(QStringLiteral("Timeout"), this));
    bar->addWidget(m_timeout);
    bar->addWidget(m_run);
    bar->addWidget(m_stop);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_editor, 1);

    connect(m_language, &QComboBox::currentTextChanged, this, &RunEditor::onLanguageChanged);
    connect(m_run, &QPushButton::clicked, this, &RunEditor::requestRun);
    connect(m_stop, &QPushButton::clicked, this, &RunEditor::stopRequested);
    auto *shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
    shortcut->setContext(Qt::WindowShortcut);
    connect(shortcut, &QShortcut::activated, this, &RunEditor::requestRun);
    auto *enter = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Enter), this);
    enter->setContext(Qt::WindowShortcut);
    connect(enter, &QShortcut::activated, this, &RunEditor::requestRun);
}

void RunEditor::setLanguages(const QStringList &languages)
{
    const QString keep = language();
    {
        const QSignalBlocker block(m_language);
        m_language->clear();
        m_language->addItems(languages);
    }
    const QString wanted = languages.contains(keep)                       ? keep
                           : languages.contains(QStringLiteral("python")) ? QStringLiteral("python")
                                                                          : languages.value(0);
    m_language->setCurrentText(wanted);
    onLanguageChanged();
    setImageNotes(m_imageNotes);
}

void RunEditor::setImageNotes(const QHash<QString, QString> &notes)
{
    m_imageNotes = notes;
    for (int i = 0; i < m_language->count(); ++i) {
        const QString note = notes.value(m_language->itemText(i));
        m_language->setItemIcon(
            i, note.isEmpty() ? QIcon() : style()->standardIcon(QStyle::SP_MessageBoxWarning));
        m_language->setItemData(i, note.isEmpty() ? QVariant() : QVariant(PlainText::toolTip(note)),
                                Qt::ToolTipRole);
    }
    showImageNote();
}

QString RunEditor::imageNote() const
{
    return m_imageNotes.value(language());
}

void RunEditor::showImageNote()
{
    const QString note = imageNote();
    // The note can be long (a log path): elided here, whole in the tooltip.
    m_imageNote->setText(
        note.isEmpty()
            ? QString()
            : QStringLiteral("<i>%1</i>")
                  .arg(fontMetrics().elidedText(note, Qt::ElideRight, 420).toHtmlEscaped()));
    m_imageNote->setToolTip(PlainText::toolTip(note));
    m_imageNote->setVisible(!note.isEmpty());
}

void RunEditor::setLanguage(const QString &language)
{
    m_language->setCurrentText(language);
}

QString RunEditor::language() const
{
    return m_language->currentText();
}

void RunEditor::setCode(const QString &code)
{
    m_editor->setPlainText(code);
}

QString RunEditor::code() const
{
    return m_editor->toPlainText();
}

void RunEditor::setTimeoutSec(int seconds)
{
    m_timeout->setValue(seconds);
}

int RunEditor::timeoutSec() const
{
    return m_timeout->value();
}

void RunEditor::setRunning(bool running)
{
    m_run->setEnabled(!running);
    m_stop->setEnabled(running);
}

void RunEditor::focusEditor()
{
    m_editor->setFocus();
}

void RunEditor::onLanguageChanged()
{
    const QString next = m_language->currentText();
    if (next == m_current)
        return;
    if (!m_current.isEmpty())
        m_drafts.insert(m_current, m_editor->toPlainText());
    m_current = next;
    m_highlighter->setLanguage(next);
    m_editor->setPlainText(m_drafts.value(next, example(next)));
    showImageNote();
}

void RunEditor::requestRun()
{
    if (!m_run->isEnabled() || language().isEmpty())
        return;
    Q_EMIT runRequested(language(), code(), timeoutSec());
}

QString RunEditor::example(const QString &language)
{
    // The examples are the language table's (resources/languages.json, "editor_example").
    static const LanguageRegistry languages = LanguageRegistry::builtIn();
    const Language *known = languages.find(language);
    return known ? known->editorExample : QString();
}
