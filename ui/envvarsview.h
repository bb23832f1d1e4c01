#pragma once

#include "runrecord.h"

#include <QList>
#include <QPair>
#include <QStringList>
#include <QWidget>

class QCheckBox;
class QLabel;
class QTableWidget;

// The pass-through variables a run received: names shown, values masked until the person asks
// to see them. Values exist only for live runs; the history never stores them. Below them, the
// secrets bound to hosts: a name and the hosts the gateway adds its value for, never a value (the
// sandbox held a placeholder, and no record has the value to show).
class EnvVarsView : public QWidget
{
    Q_OBJECT
public:
    explicit EnvVarsView(QWidget *parent = nullptr);

    void setVariables(const QStringList &names, const QList<QPair<QString, QString>> &values,
                      const QList<BoundSecret> &secrets = {});
    bool isRevealed() const;
    // Masks the values again (a new run was selected).
    void conceal();

    static QString mask() { return QStringLiteral("••••••••"); }
    // What a bound secret's row shows in place of a value.
    static QString boundText(const BoundSecret &secret);

private:
    void refresh();

    QStringList m_names;
    QList<QPair<QString, QString>> m_values;
    QList<BoundSecret> m_secrets;
    QTableWidget *m_table;
    QCheckBox *m_reveal;
    QLabel *m_hint;
};
