#pragma once

#include "executionresult.h"

#include <QTreeWidget>

// The connections a run tried in the allow-list mode, one row each: host and port, the verdict
// (allowed, refused, failed, or asking while the window asks about it) with the rule or reason, and
// bytes each way and duration once the connection ended, and the names of the bound secrets the
// gateway added to its request (the column shows only for a run where it added one). Hosts and
// reasons come from the program and the gateway: plain text.
class NetworkView : public QTreeWidget
{
    Q_OBJECT
public:
    enum Column
    {
        HostColumn,
        VerdictColumn,
        RuleColumn,
        SentColumn,
        ReceivedColumn,
        TimeColumn,
        SecretsColumn,
        ColumnCount
    };

    explicit NetworkView(QWidget *parent = nullptr);

    void setConnections(const QList<NetworkAttempt> &connections);
    // The selected connection, when it was refused for not being on the run's list: the one a
    // person may allow (a refusal for other reasons, such as a name that leads inward, is not
    // a list's to lift).
    std::optional<NetworkAttempt> selectedRefusal() const;
    // What to add to a list for it: the host (both 80 and 443) or host:port.
    static QString patternFor(const NetworkAttempt &attempt);
    // What the Secrets column shows for an attempt: "" when the gateway added none.
    static QString secretsText(const NetworkAttempt &attempt);

private:
    QList<NetworkAttempt> m_connections;
};
