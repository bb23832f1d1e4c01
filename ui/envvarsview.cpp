#include "envvarsview.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

EnvVarsView::EnvVarsView(QWidget *parent)
    : QWidget(parent), m_table(new QTableWidget(0, 2, this)),
      m_reveal(new QCheckBox(QStringLiteral("Reveal values"), this)), m_hint(new QLabel(this))
{
    m_table->setObjectName(QStringLiteral("envTable"));
    m_reveal->setObjectName(QStringLiteral("revealCheck"));
    m_table->setHorizontalHeaderLabels({QStringLiteral("Variable"), QStringLiteral("Value")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_hint->setWordWrap(true);
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_hint);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_reveal);
    connect(m_reveal, &QCheckBox::toggled, this, &EnvVarsView::refresh);
    refresh();
}

void EnvVarsView::setVariables(const QStringList &names,
                               const QList<QPair<QString, QString>> &values)
{
    m_names = names;
    m_values = values;
    conceal();
    refresh();
}

bool EnvVarsView::isRevealed() const
{
    return m_reveal->isChecked();
}

void EnvVarsView::conceal()
{
    m_reveal->setChecked(false);
}

void EnvVarsView::refresh()
{
    m_hint->setText(m_names.isEmpty()
                        ? QStringLiteral("No host variables entered this sandbox (see "
                                         "--pass-through-env or Settings → Environment).")
                        : QStringLiteral("Host variables this sandbox received. Values are never "
                                         "stored in the history."));
    m_table->setVisible(!m_names.isEmpty());
    m_reveal->setVisible(!m_names.isEmpty() && !m_values.isEmpty());
    m_table->setRowCount(int(m_names.size()));
    for (int row = 0; row < m_names.size(); ++row) {
        const QString &name = m_names.at(row);
        QString value;
        bool known = false;
        for (const auto &[n, v] : m_values) {
            if (n == name) {
                value = v;
                known = true;
            }
        }
        QString shown = !known                  ? QStringLiteral("(not kept after the run)")
                        : m_reveal->isChecked() ? value
                                                : mask();
        m_table->setItem(row, 0, new QTableWidgetItem(name));
        auto *item = new QTableWidgetItem(shown);
        if (!known)
            item->setForeground(palette().color(QPalette::PlaceholderText));
        m_table->setItem(row, 1, item);
    }
    m_table->resizeColumnToContents(0);
}
