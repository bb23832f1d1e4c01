#include "rundetailspane.h"

#include "codehighlighter.h"
#include "envvarsview.h"
#include "imagestrip.h"
#include "networkview.h"
#include "outputview.h"
#include "plaintext.h"
#include "resourcechart.h"
#include "runlistmodel.h"
#include "statusicons.h"
#include "workspacedecisions.h"
#include "workspacepane.h"

#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace {
QString bytesText(qint64 bytes)
{
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

enum Tab
{
    OutputTab,
    CodeTab,
    FilesTab,
    EnvTab,
    DetailsTab,
    NetworkTab,
    WorkspaceTab
};
} // namespace

RunDetailsPane::RunDetailsPane(QWidget *parent)
    : QWidget(parent), m_icon(new QLabel(this)), m_title(new QLabel(this)),
      m_subtitle(new QLabel(this)), m_tabs(new QTabWidget(this)), m_chart(new ResourceChart(this)),
      m_output(new OutputView(this)), m_code(new QPlainTextEdit(this)),
      m_images(new ImageStrip(this)), m_env(new EnvVarsView(this)),
      m_detailsPage(new QWidget(this)), m_details(new QFormLayout(m_detailsPage)),
      m_network(new NetworkView(this)), m_networkPage(new QWidget(this)),
      m_allowHost(new QPushButton(QStringLiteral("Allow for this assistant"), m_networkPage)),
      m_allowOutcome(new QLabel(m_networkPage)), m_workspaces(new WorkspacePane(this))
{
    setObjectName(QStringLiteral("runDetails"));
    m_tabs->setObjectName(QStringLiteral("detailTabs"));
    m_code->setObjectName(QStringLiteral("codeView"));
    m_title->setObjectName(QStringLiteral("runTitle"));
    m_subtitle->setObjectName(QStringLiteral("runSubtitle"));
    // The run's language, source, tool and session are whatever the request said: never HTML.
    m_title->setTextFormat(Qt::PlainText);
    m_subtitle->setTextFormat(Qt::PlainText);
    m_code->setReadOnly(true);
    m_code->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_code->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_highlighter = new CodeHighlighter(m_code->document());

    QFont titleFont = m_title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_subtitle->setForegroundRole(QPalette::PlaceholderText);
    m_subtitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_icon->setFixedSize(28, 28);

    m_details->setLabelAlignment(Qt::AlignRight);
    m_details->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    auto *detailsScroll = new QScrollArea(this);
    detailsScroll->setWidgetResizable(true);
    detailsScroll->setFrameShape(QFrame::NoFrame);
    detailsScroll->setWidget(m_detailsPage);

    m_tabs->insertTab(OutputTab, m_output, QStringLiteral("&Output"));
    m_tabs->insertTab(CodeTab, m_code, QStringLiteral("&Code"));
    m_tabs->insertTab(FilesTab, m_images, QStringLiteral("&Images && files"));
    m_tabs->insertTab(EnvTab, m_env, QStringLiteral("&Environment"));
    m_tabs->insertTab(DetailsTab, detailsScroll, QStringLiteral("De&tails"));
    // Only for runs that tried connections (the allow-list mode).
    auto *networkLayout = new QVBoxLayout(m_networkPage);
    networkLayout->setContentsMargins(0, 0, 0, 0);
    networkLayout->addWidget(m_network, 1);
    auto *allowRow = new QHBoxLayout;
    m_allowHost->setObjectName(QStringLiteral("allowHostButton"));
    m_allowHost->setToolTip(QStringLiteral("Adds the selected refused host to the Hosts of this "
                                           "assistant's policy (Settings → Assistants), for its "
                                           "next runs"));
    m_allowOutcome->setObjectName(QStringLiteral("allowHostOutcome"));
    m_allowOutcome->setTextFormat(Qt::PlainText);
    m_allowOutcome->setWordWrap(true);
    allowRow->addWidget(m_allowHost);
    allowRow->addWidget(m_allowOutcome, 1);
    networkLayout->addLayout(allowRow);
    connect(m_network, &QTreeWidget::itemSelectionChanged, this, &RunDetailsPane::refreshAllowHost);
    connect(m_allowHost, &QPushButton::clicked, this, [this] {
        if (const std::optional<NetworkAttempt> refused = m_network->selectedRefusal())
            Q_EMIT allowHostRequested(m_run.source, NetworkView::patternFor(*refused));
    });
    m_tabs->insertTab(NetworkTab, m_networkPage, QStringLiteral("&Network"));
    m_tabs->setTabVisible(NetworkTab, false);
    // Only for runs that had workspaces.
    m_tabs->insertTab(WorkspaceTab, m_workspaces, QStringLiteral("Wor&kspace"));
    m_tabs->setTabVisible(WorkspaceTab, false);

    auto *head = new QHBoxLayout;
    head->addWidget(m_icon, 0, Qt::AlignTop);
    auto *titles = new QVBoxLayout;
    titles->setSpacing(0);
    titles->addWidget(m_title);
    titles->addWidget(m_subtitle);
    head->addLayout(titles, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(head);
    // Shown once a run has samples (runs shorter than the first reading never do), so that a
    // quick run keeps all the room for its output.
    layout->addWidget(m_chart);
    m_chart->hide();
    layout->addWidget(m_tabs, 1);
    showRun(nullptr);
}

void RunDetailsPane::showRun(const RunRecord *run)
{
    const bool sameRun = run && run->id == m_run.id;
    m_run = run ? *run : RunRecord();
    m_endingShown = false;
    if (!sameRun)
        m_env->conceal();
    m_output->setChunks(m_run.output);
    if (m_run.isFinished() && run)
        showEnding();
    m_code->setPlainText(m_run.code);
    m_highlighter->setLanguage(m_run.language);
    m_env->setVariables(m_run.envNames, m_run.envValues, m_run.secrets);
    refreshSummary();
    refreshDetails();
    refreshChart();
    refreshNetwork();
    refreshWorkspaces();
    setEnabled(run != nullptr);
}

void RunDetailsPane::setWorkspaceDecisions(WorkspaceDecisions *decisions)
{
    m_workspaces->setDecisions(decisions);
    if (decisions)
        connect(decisions, &WorkspaceDecisions::changed, this,
                [this, decisions](const QString &runId, const QString &) {
                    if (runId != m_run.id)
                        return;
                    if (const RunRecord *run = decisions->run(runId))
                        m_run.workspaces = run->workspaces;
                    refreshWorkspaces();
                });
}

void RunDetailsPane::refreshWorkspaces()
{
    m_workspaces->setWorkspaces(m_run.id, RunWorkspace::fromRecord(m_run.workspaces));
    m_tabs->setTabText(WorkspaceTab, m_workspaces->title());
    m_tabs->setTabVisible(WorkspaceTab, !m_run.workspaces.isEmpty());
}

void RunDetailsPane::setModel(RunListModel *model)
{
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    if (m_model)
        connect(m_model, &RunListModel::samplesChanged, this, [this](const QString &id) {
            if (id == m_run.id)
                refreshChart();
        });
    refreshChart();
}

void RunDetailsPane::refreshChart()
{
    const QList<UsageSample> samples =
        m_model && !m_run.id.isEmpty() ? m_model->samples(m_run.id) : QList<UsageSample>();
    if (samples.isEmpty()) {
        m_chart->clear();
        m_chart->hide();
        return;
    }
    m_chart->setLimits(m_run.memoryBytes, m_run.cpus);
    m_chart->setEnd(m_run.isFinished() ? m_run.durationMs : -1);
    m_chart->setSamples(samples);
    m_chart->show();
}

void RunDetailsPane::updateRun(const RunRecord &run)
{
    if (run.id != m_run.id)
        return;
    const bool wasFinished = m_run.isFinished();
    const QList<OutputChunk> shown = m_run.output;
    const QStringList shownNames = m_run.envNames;
    const auto shownValues = m_run.envValues;
    const QList<BoundSecret> shownSecrets = m_run.secrets;
    const int shownFiles = int(m_run.files.size());
    const QJsonArray shownWorkspaces = m_run.workspaces;
    m_run = run;
    // A record the model let go of has no workspaces: the ones shown are still the run's.
    if (!run.complete && run.workspaces.isEmpty())
        m_run.workspaces = shownWorkspaces;
    // A record that arrives whole at the end may carry output this view never saw (the window
    // opened mid-run); otherwise the view already streamed it.
    if (run.isFinished() && !wasFinished) {
        if (RunRecord::packOutput(shown) != RunRecord::packOutput(run.output) &&
            !run.output.isEmpty())
            m_output->setChunks(run.output);
        showEnding();
    }
    // Only when they changed: a revealed value stays revealed while the run goes on.
    if (!run.isFinished() &&
        (run.envNames != shownNames || run.envValues != shownValues || run.secrets != shownSecrets))
        m_env->setVariables(run.envNames, run.envValues, run.secrets);
    // The strip is rebuilt only when the files changed (they arrive with the end of the run):
    // a Save dialog open on it must not lose its file under it.
    refreshSummary(int(run.files.size()) != shownFiles);
    refreshDetails();
    refreshChart();
    refreshNetwork();
    if (m_run.workspaces != shownWorkspaces)
        refreshWorkspaces();
}

void RunDetailsPane::refreshNetwork()
{
    m_network->setConnections(m_run.connections);
    const qsizetype refused = std::count_if(
        m_run.connections.cbegin(), m_run.connections.cend(),
        [](const NetworkAttempt &a) { return a.verdict == NetworkAttempt::Verdict::Refused; });
    m_tabs->setTabText(NetworkTab, refused > 0
                                       ? QStringLiteral("&Network (%1 refused)").arg(refused)
                                       : QStringLiteral("&Network"));
    m_tabs->setTabVisible(NetworkTab, !m_run.connections.isEmpty());
    refreshAllowHost();
}

void RunDetailsPane::refreshAllowHost()
{
    // Manual runs have no assistant, and a client without a name has only the default policy.
    const bool assistant = !m_run.source.isEmpty() && m_run.source != u"manual" &&
                           m_run.source != u"MCP client" && m_run.source != u"unknown";
    m_allowHost->setEnabled(assistant && m_network->selectedRefusal().has_value());
    m_allowHost->setVisible(assistant);
}

void RunDetailsPane::setAllowHostOutcome(const QString &message)
{
    m_allowOutcome->setText(message);
}

void RunDetailsPane::appendOutput(const QString &runId, int stream, const QByteArray &data)
{
    if (runId != m_run.id)
        return;
    m_run.appendOutput(stream, data);
    m_output->appendChunk(stream, data);
}

void RunDetailsPane::showEnding()
{
    if (m_endingShown)
        return;
    m_endingShown = true;
    QStringList lines;
    if (m_run.truncated)
        lines << QStringLiteral("[output truncated at the size cap]");
    if (!m_run.error.isEmpty())
        lines << QStringLiteral("[sandbox error: %1]").arg(m_run.error);
    else if (m_run.status == RunRecord::Status::TimedOut)
        lines << QStringLiteral("[stopped: timed out after %1 s]").arg(m_run.timeoutSec);
    else if (m_run.status == RunRecord::Status::Cancelled)
        lines << QStringLiteral("[stopped: cancelled]");
    else if (m_run.outOfMemory)
        lines << QStringLiteral("[killed: out of memory]");
    else if (m_run.exitCode >= 0)
        lines << QStringLiteral("[exit code %1 after %2]")
                     .arg(m_run.exitCode)
                     .arg(RunListModel::durationText(m_run.durationMs));
    for (const QString &note : m_run.notes)
        lines << QStringLiteral("[%1]").arg(note);
    if (!lines.isEmpty())
        m_output->appendNote(lines.join(QLatin1Char('\n')));
}

void RunDetailsPane::refreshSummary(bool files)
{
    if (m_run.id.isEmpty()) {
        m_icon->clear();
        m_title->setText(QStringLiteral("No run selected"));
        m_subtitle->setText(QStringLiteral("Runs appear here as assistants or you start them."));
        m_tabs->setTabText(FilesTab, QStringLiteral("&Images && files"));
        m_images->setFiles({});
        return;
    }
    m_icon->setPixmap(StatusIcons::icon(m_run.status).pixmap(28, 28));
    QString status = StatusIcons::label(m_run.status);
    if (m_run.compileError)
        status = QStringLiteral("Compile error");
    else if (m_run.outOfMemory)
        status = QStringLiteral("Out of memory");
    m_title->setText(QStringLiteral("%1 · %2").arg(m_run.language, status));
    QStringList sub;
    sub << QStringLiteral("from %1").arg(m_run.source);
    if (!m_run.tool.isEmpty() && m_run.tool != m_run.source)
        sub << m_run.tool;
    if (!m_run.sessionId.isEmpty())
        sub << QStringLiteral("session %1").arg(m_run.sessionId);
    // Named only when the server has several engines.
    if (!m_run.engine.isEmpty())
        sub << QStringLiteral("on %1").arg(m_run.engine);
    sub << m_run.createdAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    if (m_run.isFinished()) {
        sub << RunListModel::durationText(m_run.durationMs);
        if (m_run.exitCode >= 0)
            sub << QStringLiteral("exit %1").arg(m_run.exitCode);
    }
    m_subtitle->setText(sub.join(QStringLiteral("  ·  ")));
    if (files)
        m_images->setFiles(m_run.files);
    m_tabs->setTabText(FilesTab,
                       m_run.files.isEmpty()
                           ? QStringLiteral("&Images && files")
                           : QStringLiteral("&Images && files (%1)").arg(m_run.files.size()));
    // Bound secrets count: they are variables the sandbox had too (with placeholders).
    const qsizetype variables = m_run.envNames.size() + m_run.secrets.size();
    m_tabs->setTabText(EnvTab, variables == 0 ? QStringLiteral("&Environment")
                                              : QStringLiteral("&Environment (%1)").arg(variables));
}

void RunDetailsPane::refreshDetails()
{
    while (m_details->rowCount() > 0)
        m_details->removeRow(0);
    if (m_run.id.isEmpty())
        return;
    const auto add = [this](const QString &label, const QString &value) {
        QLabel *field = PlainText::label(value.isEmpty() ? QStringLiteral("—") : value);
        field->setTextInteractionFlags(Qt::TextSelectableByMouse);
        field->setWordWrap(true);
        m_details->addRow(label, field);
    };
    add(QStringLiteral("Status"), StatusIcons::label(m_run.status));
    add(QStringLiteral("Exit code"),
        m_run.exitCode >= 0 ? QString::number(m_run.exitCode) : QString());
    add(QStringLiteral("Duration"),
        m_run.durationMs >= 0 ? RunListModel::durationText(m_run.durationMs) : QStringLiteral("—"));
    add(QStringLiteral("Image"), m_run.image);
    add(QStringLiteral("Container"), m_run.containerId.left(12));
    if (!m_run.engine.isEmpty())
        add(QStringLiteral("Engine"), m_run.engine);
    if (!m_run.runtime.isEmpty())
        add(QStringLiteral("Runtime"), m_run.runtime);
    // Imported before the program came, so not in its time, but in its peak memory.
    if (!m_run.preloaded.isEmpty())
        add(QStringLiteral("Preloaded"), m_run.preloaded.join(QStringLiteral(", ")));
    add(QStringLiteral("Memory limit"),
        m_run.memoryBytes > 0 ? bytesText(m_run.memoryBytes) : QString());
    add(QStringLiteral("CPUs"), m_run.cpus > 0 ? QString::number(m_run.cpus) : QString());
    add(QStringLiteral("Processes"),
        m_run.pidsLimit > 0 ? QString::number(m_run.pidsLimit) : QString());
    add(QStringLiteral("Timeout"),
        m_run.timeoutSec > 0 ? QStringLiteral("%1 s").arg(m_run.timeoutSec) : QString());
    add(QStringLiteral("Network"), m_run.network ? QStringLiteral("on") : QStringLiteral("none"));
    add(QStringLiteral("Peak memory"), m_run.peakMemoryBytes >= 0 ? bytesText(m_run.peakMemoryBytes)
                                                                  : QStringLiteral("not reported"));
    add(QStringLiteral("CPU time"), m_run.cpuTimeMs >= 0
                                        ? RunListModel::durationText(m_run.cpuTimeMs)
                                        : QStringLiteral("not reported"));
    add(QStringLiteral("Source"), m_run.source);
    if (!m_run.claimedName.isEmpty())
        add(QStringLiteral("Claims to be"), m_run.claimedName);
    if (!m_run.identity.isEmpty())
        add(QStringLiteral("Identified by"), m_run.identity);
    add(QStringLiteral("Tool"), m_run.tool);
    add(QStringLiteral("Session"),
        m_run.sessionId.isEmpty() ? QStringLiteral("none (a fresh sandbox)") : m_run.sessionId);
    add(QStringLiteral("Server"), QStringLiteral("pid %1 · instance %2")
                                      .arg(m_run.instancePid)
                                      .arg(m_run.instanceId.left(8)));
    add(QStringLiteral("Run id"), m_run.id);
    if (!m_run.error.isEmpty())
        add(QStringLiteral("Error"), m_run.error);
    if (!m_run.notes.isEmpty())
        add(QStringLiteral("Notes"), m_run.notes.join(QLatin1Char('\n')));
}
