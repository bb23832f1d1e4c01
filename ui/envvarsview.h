#pragma once

#include <QList>
#include <QPair>
#include <QStringList>
#include <QWidget>

class QCheckBox;
class QLabel;
class QTableWidget;

// The pass-through variables a run received: names shown, values masked until the person asks
// to see them. Values exist only for live runs; the history never stores them.
class EnvVarsView : public QWidget
{
    Q_OBJECT
public:
    explicit EnvVarsView(QWidget *parent = nullptr);

    void setVariables(const QStringList &names, const QList<QPair<QString, QString>> &values);
    bool isRevealed() const;
    // Masks the values again (a new run was selected).
    void conceal();

    static QString mask() { return QStringLiteral("••••••••"); }

private:
    void refresh();

    QStringList m_names;
    QList<QPair<QString, QString>> m_values;
    QTableWidget *m_table;
    QCheckBox *m_reveal;
    QLabel *m_hint;
};
