#include "workspaceaskdialog.h"

#include "plaintext.h"
#include "runrecord.h"
#include "workspacechangesview.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QVBoxLayout>

namespace {
QString who(const RunRecord &run)
{
    const bool named =
        !run.source.isEmpty() && run.source != u"unknown" && run.source != u"MCP client";
    return named ? PlainText::shortName(PlainText::visible(run.source), 80)
                 : QStringLiteral("An assistant");
}
} // namespace

QString WorkspaceAskDialog::heading(const RunRecord &run, qsizetype workspaces)
{
    return workspaces == 1 ? tr("%1's run changed a workspace").arg(who(run))
                           : tr("%1's run changed %2 workspaces").arg(who(run)).arg(workspaces);
}

WorkspaceAskDialog::WorkspaceAskDialog(const RunRecord &run, const QList<RunWorkspace> &asking,
                                       WorkspaceDecisions *decisions, QWidget *parent)
    : QDialog(parent), m_runId(run.id)
{
    setObjectName(QStringLiteral("workspaceAskDialog"));
    setWindowTitle(tr("Apply the run's changes? — Code Sandbox"));
    setModal(false);
    setAttribute(Qt::WA_DeleteOnClose);
    auto *title = PlainText::label(heading(run, asking.size()), this);
    QFont bold = title->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    title->setFont(bold);
    QStringList names;
    for (const RunWorkspace &w : asking)
        names << PlainText::visible(w.name);
    auto *intro = PlainText::label(
        tr("Its %1 run (%2, run %3, ended %4) changed its copy of %5. Nothing reaches the folder "
           "on this computer until you apply it; a file that changed there since the run started "
           "is left alone.")
            .arg(PlainText::visible(run.language), PlainText::visible(run.tool), run.id.left(8),
                 run.finishedAt.toLocalTime().toString(QStringLiteral("HH:mm:ss")),
                 (names.size() == 1 ? tr("the workspace %1") : tr("the workspaces %1"))
                     .arg(names.join(QStringLiteral(", ")))),
        this);
    intro->setWordWrap(true);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(title);
    layout->addWidget(intro);
    QTabWidget *tabs = asking.size() > 1 ? new QTabWidget(this) : nullptr;
    for (const RunWorkspace &w : asking) {
        auto *view = new WorkspaceChangesView(this);
        view->setDecisions(decisions);
        view->showWorkspace(run.id, w);
        m_views.append(view);
        if (tabs)
            tabs->addTab(view, PlainText::visible(w.name));
        else
            layout->addWidget(view, 1);
    }
    if (tabs)
        layout->addWidget(tabs, 1);
    auto *buttons = new QDialogButtonBox(this);
    QPushButton *later = buttons->addButton(tr("Decide &later"), QDialogButtonBox::RejectRole);
    later->setObjectName(QStringLiteral("decideLaterButton"));
    later->setToolTip(tr("Closes this; the run's Workspace tab has Apply and Discard"));
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(920, 620);
}
