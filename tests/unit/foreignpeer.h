#pragma once

// Another user at the other end of a monitor socket: a forked child that becomes `nobody` and
// either listens on a path (where a window would) or connects to one (as an instance would). It
// reports over a pipe, one line per step: "listening", "accepted", "connected", and "closed N"
// when a connection ended after N bytes had come in. Needs root (to change user); the child makes
// only system calls, as a forked copy of a threaded process must.

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QStringList>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

class ForeignPeer
{
public:
    enum class Role
    {
        Listener,
        Client
    };

    // `greeting` is written first on every connection (a listener's forged "stop", say).
    ForeignPeer(Role role, const QString &path, const QByteArray &greeting = {})
    {
        const passwd *pw = ::getpwnam("nobody");
        if (!pw || ::geteuid() != 0 || ::pipe2(m_pipe, O_CLOEXEC) != 0)
            return;
        m_uid = pw->pw_uid;
        const gid_t gid = pw->pw_gid;
        const QByteArray name = QFile::encodeName(path);
        m_pid = ::fork();
        if (m_pid == 0)
            child(role, name, greeting, m_uid, gid, m_pipe[1]);
        ::close(m_pipe[1]);
        ::fcntl(m_pipe[0], F_SETFL, O_NONBLOCK);
    }
    ~ForeignPeer()
    {
        if (m_pid > 0) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, nullptr, 0);
        }
        if (m_pipe[0] >= 0)
            ::close(m_pipe[0]);
    }
    ForeignPeer(const ForeignPeer &) = delete;
    ForeignPeer &operator=(const ForeignPeer &) = delete;

    bool started() const { return m_pid > 0; }
    uid_t uid() const { return m_uid; }
    // Every line reported so far.
    QStringList reports()
    {
        char buffer[256];
        ssize_t n;
        while ((n = ::read(m_pipe[0], buffer, sizeof buffer)) > 0)
            m_reports.append(buffer, n);
        return QString::fromLatin1(m_reports).split(u'\n', Qt::SkipEmptyParts);
    }
    int count(const QString &prefix)
    {
        int n = 0;
        for (const QString &line : reports())
            n += line.startsWith(prefix) ? 1 : 0;
        return n;
    }
    // The bytes that came in over every connection that ended.
    qint64 bytesReceived()
    {
        qint64 total = 0;
        for (const QString &line : reports())
            if (line.startsWith(u"closed "))
                total += line.mid(7).toLongLong();
        return total;
    }

private:
    static void say(int fd, const char *text, long number = -1)
    {
        char line[64];
        size_t len = std::strlen(text);
        std::memcpy(line, text, len);
        if (number >= 0) {
            char digits[24];
            int d = 0;
            do {
                digits[d++] = char('0' + number % 10);
                number /= 10;
            } while (number > 0);
            line[len++] = ' ';
            while (d > 0)
                line[len++] = digits[--d];
        }
        line[len++] = '\n';
        (void)!::write(fd, line, len);
    }
    // Reads until the other end goes; says how much came.
    static void drain(int conn, int report)
    {
        long total = 0;
        char buffer[4096];
        ssize_t n;
        while ((n = ::read(conn, buffer, sizeof buffer)) > 0)
            total += n;
        say(report, "closed", total);
        ::close(conn);
    }
    [[noreturn]] static void child(Role role, const QByteArray &name, const QByteArray &greeting,
                                   uid_t uid, gid_t gid, int report)
    {
        // Nothing of the test's own sockets stays open here (an end kept open is no end).
        for (int other = 3; other < 1024; ++other)
            if (other != report)
                ::close(other);
        if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) {
            say(report, "setuid failed");
            ::_exit(2);
        }
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, name.constData(),
                    std::min(size_t(name.size()), sizeof(addr.sun_path) - 1));
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const auto *sa = reinterpret_cast<const sockaddr *>(&addr);
        if (role == Role::Client) {
            if (::connect(fd, sa, sizeof(addr)) != 0) {
                say(report, "refused");
                ::_exit(1);
            }
            say(report, "connected");
            (void)!::write(fd, greeting.constData(), size_t(greeting.size()));
            drain(fd, report);
            ::_exit(0);
        }
        if (::bind(fd, sa, sizeof(addr)) != 0 || ::listen(fd, 8) != 0) {
            say(report, "cannot listen");
            ::_exit(1);
        }
        say(report, "listening");
        for (;;) {
            const int conn = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
            if (conn < 0)
                continue;
            say(report, "accepted");
            (void)!::write(conn, greeting.constData(), size_t(greeting.size()));
            drain(conn, report);
        }
    }

    pid_t m_pid = -1;
    uid_t m_uid = 0;
    int m_pipe[2] = {-1, -1};
    QByteArray m_reports;
};
