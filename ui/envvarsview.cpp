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
                               const QList<QPair<QString, QString>> &values,
                               const QList<BoundSecret> &secrets)
{
    m_names = names;
    m_values = values;
    m_secrets = secrets;
    conceal();
    refresh();
}

QString EnvVarsView::boundText(const BoundSecret &secret)
{
    return secret.hosts.isEmpty() ? QStringLiteral("bound secret — no host to add it for")
                                  : QStringLiteral("bound secret — added by the gateway for %1")
                                        .arg(secret.hosts.join(QLatin1String(", ")));
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
    QStringList hint;
    if (!m_names.isEmpty())
        hint << QStringLiteral("Host variables this sandbox received. Values are never stored in "
                               "the history.");
    if (!m_secrets.isEmpty())
        hint << QStringLiteral("Bound secrets: the sandbox held a placeholder; the egress gateway "
                               "put the value only in requests to their hosts. Their values are "
                               "never shown or stored.");
    if (hint.isEmpty())
        hint << QStringLiteral("No host variables entered this sandbox (see --pass-through-env or "
                               "Settings → Environment).");
    m_hint->setText(hint.join(u' '));
    const int rows = int(m_names.size() + m_secrets.size());
    m_table->setVisible(rows > 0);
    // Only pass-through values can be revealed: a bound secret has none here.
    m_reveal->setVisible(!m_names.isEmpty() && !m_values.isEmpty());
    m_table->setRowCount(rows);
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
    for (int i = 0; i < m_secrets.size(); ++i) {
        const BoundSecret &secret = m_secrets.at(i);
        const int row = int(m_names.size()) + i;
        // Plain text items: a name or host cannot pass for markup.
        const QString tip =
            QStringLiteral("%1 held a placeholder inside the sandbox. The egress gateway put the "
                           "real value in place of it only in requests to: %2. The value is never "
                           "shown, logged or stored.")
                .arg(secret.name, secret.hosts.isEmpty() ? QStringLiteral("(no host)")
                                                         : secret.hosts.join(QLatin1String(", ")));
        auto *name = new QTableWidgetItem(secret.name);
        name->setToolTip(tip);
        m_table->setItem(row, 0, name);
        auto *item = new QTableWidgetItem(boundText(secret));
        item->setToolTip(tip);
        item->setForeground(palette().color(QPalette::PlaceholderText));
        m_table->setItem(row, 1, item);
    }
    m_table->resizeColumnToContents(0);
}
