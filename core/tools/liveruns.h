#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

class Execution;
class ToolCall;

// The runs of clients that render the run view (MCP Apps), as the view follows them: from the
// call's arrival (an approval may hold it) through its output to its end. A view can read and
// stop only runs of its own client (the MCP session that made the call), found first by the
// call's language and code (all a view knows of its call while it runs), then by the id that
// answer gave. Finished runs are kept a while for a view that asks late.
class LiveRuns : public QObject
{
    Q_OBJECT
public:
    enum class State
    {
        WaitingForApproval,
        Queued,
        Running,
        Finished
    };

    explicit LiveRuns(QObject *parent = nullptr);

    // A call that will run `code`: followed until its ToolCall ends. Returns the run's id.
    QString add(ToolCall *call, const QString &language, const QString &code);
    // The id of the call's run; empty when it is not followed (no view).
    QString idOf(const ToolCall *call) const { return m_byCall.value(call); }
    // The call waits for a person's approval (RunGate::asking).
    void waitingForApproval(ToolCall *call);
    // The call's program has its execution now (admitted, or not asked at all).
    void started(ToolCall *call, Execution *execution);

    // read_run_output's answer (structuredContent), or an empty object with `error` set.
    QJsonObject read(const QString &owner, const QJsonObject &arguments, QString *error);
    // Stops the run `id` of `owner` with `reason`; false with `error` when it cannot.
    bool stop(const QString &owner, const QString &id, const QString &reason, QString *error);

    static QString stateName(State state);
    // What one run keeps of its output for the view; beyond it the view is told it was cut.
    static constexpr qsizetype kMaxOutputBytes = 1024 * 1024;
    // What one read returns at most (the view asks again for the rest).
    static constexpr qsizetype kMaxReadBytes = 256 * 1024;
    // How long a finished run stays readable, and how many are kept at most (the oldest finished
    // ones go first).
    static constexpr int kKeepFinishedMs = 10 * 60 * 1000;
    static constexpr int kMaxKept = 200;

private:
    struct Chunk
    {
        int stream;
        qint64 offset; // of its first byte in the run's output
        QByteArray bytes;
    };
    struct Run
    {
        QString id;
        quint64 seq = 0; // order of arrival
        QString owner;
        QString language;
        QString code;
        State state = State::Queued;
        QPointer<Execution> execution;
        QList<Chunk> output;
        qint64 size = 0; // bytes of output kept
        bool truncated = false;
        QElapsedTimer finished;
    };

    const Run *find(const QString &owner, const QJsonObject &arguments, QString *error) const;
    void append(Run &run, int stream, const QByteArray &bytes);
    void prune();

    QHash<QString, Run> m_runs;                // by id
    QHash<const ToolCall *, QString> m_byCall; // calls still open
    quint64 m_seq = 0;
};
