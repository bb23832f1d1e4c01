#include "signalwatcher.h"

#include <QSocketNotifier>
#include <csignal>
#include <sys/socket.h>
#include <unistd.h>

int SignalWatcher::s_fds[2] = {-1, -1};

SignalWatcher::SignalWatcher(QObject *parent) : QObject(parent)
{
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s_fds) != 0)
        return;
    m_notifier = new QSocketNotifier(s_fds[1], QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, [this] {
        unsigned char sig = 0;
        if (::read(s_fds[1], &sig, 1) == 1)
            Q_EMIT terminationRequested(int(sig));
    });
    struct sigaction sa = {};
    sa.sa_handler = &SignalWatcher::handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int s : {SIGTERM, SIGINT, SIGHUP})
        sigaction(s, &sa, nullptr);
    // A client that vanishes must not kill us with SIGPIPE before containers are removed.
    std::signal(SIGPIPE, SIG_IGN);
}

void SignalWatcher::handler(int signal)
{
    const unsigned char sig = static_cast<unsigned char>(signal);
    [[maybe_unused]] const auto n = ::write(s_fds[0], &sig, 1);
}
