#pragma once

#include <QObject>

class QSocketNotifier;

// Turns SIGTERM, SIGINT and SIGHUP into a Qt signal through a self-pipe, so shutdown (removing
// every container) runs on the event loop instead of inside a signal handler.
class SignalWatcher : public QObject
{
    Q_OBJECT
public:
    explicit SignalWatcher(QObject *parent = nullptr);

Q_SIGNALS:
    void terminationRequested(int signal);

private:
    static void handler(int signal);
    static int s_fds[2];
    QSocketNotifier *m_notifier = nullptr;
};
