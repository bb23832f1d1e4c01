#pragma once

#include <QByteArray>
#include <QList>

// Watches one output stream for the supervisor's end line "<nonce> <status>[ flags]\n". Bytes
// before the nonce are program output and are passed on as soon as they cannot be the start of the
// nonce; bytes after the end line are dropped. Input may be split anywhere.
class ExitMarkerScanner
{
public:
    explicit ExitMarkerScanner(const QByteArray &nonce) : m_nonce(nonce) {}
    // The longest status line waited for (after the nonce, without the newline): the loaders'
    // lists of preloaded and imported modules (at most 14 and 16 names) make it the longest,
    // well under this (cs-run passes at most 3500 bytes of the Node loader's); every other flag
    // together is under 100 bytes.
    static constexpr qsizetype kMaxStatusLine = 4096;

    // Returns the program output contained in `bytes` that is safe to pass on now.
    QByteArray feed(const QByteArray &bytes);
    // The stream ended: returns anything held back.
    QByteArray flush();

    bool found() const { return m_state == State::Done; }
    int status() const { return m_status; }
    // The line said the kernel killed something in the container for want of memory.
    bool outOfMemory() const { return hasFlag("oom"); }
    // The words after the status: "oom", "compile" (the build step failed), "out" (files in the
    // output folder), "plots" (saved figures).
    bool hasFlag(const QByteArray &flag) const { return m_flags.contains(flag); }
    // A "name=number" word ("mem" peak bytes, "cpu" milliseconds); -1 when absent.
    qint64 value(const QByteArray &name) const;
    // A "name=a,b,c" word's items; empty when absent.
    QList<QByteArray> list(const QByteArray &name) const;

private:
    enum class State
    {
        Output,
        Status,
        Done
    };
    QByteArray m_nonce;
    QByteArray m_held;
    State m_state = State::Output;
    int m_status = -1;
    QList<QByteArray> m_flags;
};
