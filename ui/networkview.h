#pragma once

#include "executionresult.h"

#include <QTreeWidget>

// The connections a run tried in the allow-list mode, one row each: host and port, the verdict
// (allowed, refused, failed) with the rule or reason, and bytes each way and duration once the
// connection ended. Hosts and reasons come from the program and the gateway: plain text.
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
        ColumnCount
    };

    explicit NetworkView(QWidget *parent = nullptr);

    void setConnections(const QList<NetworkAttempt> &connections);
};
