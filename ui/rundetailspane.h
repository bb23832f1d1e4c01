#pragma once

#include "runrecord.h"

#include <QWidget>

class CodeHighlighter;
class EnvVarsView;
class ImageStrip;
class NetworkView;
class OutputView;
class QFormLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class ResourceChart;
class RunListModel;
class WorkspaceDecisions;
class WorkspacePane;

// Everything about the selected run: output (live), code, images and files, the pass-through
// variables, the container's details, the connections it tried and its workspaces.
class RunDetailsPane : public QWidget
{
    Q_OBJECT
public:
    explicit RunDetailsPane(QWidget *parent = nullptr);

    // Shows this run (null: nothing selected). The record is copied.
    void showRun(const RunRecord *run);
    QString runId() const { return m_run.id; }
    // The shown run changed (status, end): refresh all but the output, which streams.
    void updateRun(const RunRecord &run);
    void appendOutput(const QString &runId, int stream, const QByteArray &data);
    // Where the shown run's usage samples come from: the chart follows them live, and shows
    // those of a finished run while the model keeps them (not owned).
    void setModel(RunListModel *model);
    // Where the Workspace tab's Apply and Discard go (not owned).
    void setWorkspaceDecisions(WorkspaceDecisions *decisions);

    OutputView *outputView() const { return m_output; }
    ImageStrip *imageStrip() const { return m_images; }
    EnvVarsView *envView() const { return m_env; }
    QTabWidget *tabs() const { return m_tabs; }
    ResourceChart *resourceChart() const { return m_chart; }
    NetworkView *networkView() const { return m_network; }
    QWidget *networkPage() const { return m_networkPage; }
    WorkspacePane *workspacePane() const { return m_workspaces; }

Q_SIGNALS:
    // "Allow for this assistant" on a connection refused for not being on the run's list: add
    // `pattern` to the Hosts of `client`'s policy.
    void allowHostRequested(const QString &client, const QString &pattern);

public:
    // How that went, for the person who asked (the window says it in its status bar).
    void setAllowHostOutcome(const QString &message);

private:
    void refreshSummary(bool files = true);
    void refreshDetails();
    void showEnding();
    void refreshChart();
    void refreshNetwork();
    void refreshAllowHost();
    void refreshWorkspaces();

    RunRecord m_run;
    QLabel *m_icon;
    QLabel *m_title;
    QLabel *m_subtitle;
    QTabWidget *m_tabs;
    ResourceChart *m_chart;
    RunListModel *m_model = nullptr;
    OutputView *m_output;
    QPlainTextEdit *m_code;
    CodeHighlighter *m_highlighter;
    ImageStrip *m_images;
    EnvVarsView *m_env;
    QWidget *m_detailsPage;
    QFormLayout *m_details;
    NetworkView *m_network;
    QWidget *m_networkPage;
    QPushButton *m_allowHost;
    QLabel *m_allowOutcome;
    WorkspacePane *m_workspaces;
    bool m_endingShown = false;
};
