#include "liveruns.h"

#include "execution.h"
#include "toolcall.h"

#include <QJsonArray>
#include <QUuid>
#include <utility>

namespace {
// The length of `bytes` cut to at most `limit`, not inside a UTF-8 sequence.
qsizetype utf8Cut(const QByteArray &bytes, qsizetype limit)
{
    if (bytes.size() <= limit)
        return bytes.size();
    qsizetype at = limit;
    while (at > 0 && (uchar(bytes.at(at)) & 0xC0) == 0x80)
        --at;
    return at;
}

// The length of `bytes` without a UTF-8 sequence cut off at its end (more may come).
qsizetype completeUtf8(const QByteArray &bytes)
{
    for (qsizetype back = 1; back <= qMin<qsizetype>(4, bytes.size()); ++back) {
        const uchar c = uchar(bytes.at(bytes.size() - back));
        if ((c & 0xC0) == 0x80)
            continue; // a continuation byte: its lead is further back
        const int length = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
        return length > back ? bytes.size() - back : bytes.size();
    }
    return bytes.size();
}
} // namespace

LiveRuns::LiveRuns(QObject *parent) : QObject(parent) {}

QString LiveRuns::stateName(State state)
{
    switch (state) {
    case State::WaitingForApproval:
        return QStringLiteral("waiting_for_approval");
    case State::Queued:
        return QStringLiteral("queued");
    case State::Running:
        return QStringLiteral("running");
    case State::Finished:
        break;
    }
    return QStringLiteral("finished");
}

QString LiveRuns::add(ToolCall *call, const QString &language, const QString &code)
{
    prune();
    Run run;
    run.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    run.seq = ++m_seq;
    run.owner = call->owner();
    run.language = language;
    run.code = code;
    const QString id = run.id;
    m_runs.insert(id, run);
    m_byCall.insert(call, id);
    // However the call ends (a result, a refusal, the client gone), the run is over for the view.
    const auto end = [this, call, id] {
        m_byCall.remove(call);
        auto it = m_runs.find(id);
        if (it != m_runs.end() && it->state != State::Finished) {
            it->state = State::Finished;
            it->finished.start();
        }
    };
    connect(call, &ToolCall::finished, this, end);
    connect(call, &ToolCall::failed, this, end);
    connect(call, &QObject::destroyed, this, end);
    return id;
}

void LiveRuns::waitingForApproval(ToolCall *call)
{
    const auto at = m_byCall.constFind(call);
    if (at != m_byCall.cend())
        m_runs[*at].state = State::WaitingForApproval;
}

void LiveRuns::started(ToolCall *call, Execution *execution)
{
    const auto at = m_byCall.constFind(call);
    if (at == m_byCall.cend())
        return;
    const QString id = *at;
    Run &run = m_runs[id];
    run.execution = execution;
    run.state = State::Queued;
    connect(execution, &Execution::started, this, [this, id] {
        auto it = m_runs.find(id);
        if (it != m_runs.end() && it->state != State::Finished)
            it->state = State::Running;
    });
    connect(execution, &Execution::output, this, [this, id](int stream, const QByteArray &bytes) {
        auto it = m_runs.find(id);
        if (it != m_runs.end())
            append(*it, stream, bytes);
    });
}

void LiveRuns::append(Run &run, int stream, const QByteArray &bytes)
{
    if (run.truncated)
        return;
    QByteArray kept = bytes;
    if (run.size + kept.size() > kMaxOutputBytes) {
        kept.truncate(utf8Cut(kept, kMaxOutputBytes - run.size));
        run.truncated = true;
    }
    if (kept.isEmpty())
        return;
    if (!run.output.isEmpty() && run.output.last().stream == stream)
        run.output.last().bytes.append(kept);
    else
        run.output.append(Chunk{stream, run.size, kept});
    run.size += kept.size();
}

const LiveRuns::Run *LiveRuns::find(const QString &owner, const QJsonObject &arguments,
                                    QString *error) const
{
    const QString id = arguments.value(u"run_id").toString();
    if (!id.isEmpty()) {
        const auto it = m_runs.constFind(id);
        // Another client's run is no more visible than one that does not exist.
        if (it == m_runs.cend() || it->owner != owner) {
            *error = QStringLiteral("No run %1 of this client (it may have ended more than %2 "
                                    "minutes ago).")
                         .arg(id)
                         .arg(kKeepFinishedMs / 60000);
            return nullptr;
        }
        return &*it;
    }
    if (!arguments.contains(u"code")) {
        *error = QStringLiteral("Name the run: run_id, or the language and code of its call.");
        return nullptr;
    }
    // This client's newest run with that code, one still going first: a view is made for a call
    // just made.
    const QString code = arguments.value(u"code").toString();
    const QString language = arguments.value(u"language").toString();
    const Run *newest = nullptr;
    const auto rank = [](const Run &r) { return std::pair(r.state != State::Finished, r.seq); };
    for (const Run &run : m_runs) {
        if (run.owner != owner || run.code != code ||
            (!language.isEmpty() && run.language != language))
            continue;
        if (!newest || rank(run) > rank(*newest))
            newest = &run;
    }
    if (!newest)
        *error = QStringLiteral("No run of this client with that code.");
    return newest;
}

QJsonObject LiveRuns::read(const QString &owner, const QJsonObject &arguments, QString *error)
{
    prune();
    const Run *run = find(owner, arguments, error);
    if (!run)
        return {};
    const qint64 from = qMax<qint64>(0, arguments.value(u"offset").toInteger());
    QJsonArray output;
    qint64 next = qMin(from, run->size);
    qsizetype budget = kMaxReadBytes;
    for (const Chunk &chunk : run->output) {
        const qint64 end = chunk.offset + chunk.bytes.size();
        if (end <= next)
            continue;
        const QByteArray rest = chunk.bytes.mid(next - chunk.offset);
        QByteArray piece = rest.left(utf8Cut(rest, budget));
        // The end of a run's output so far may stop inside a character: the rest comes later.
        if (&chunk == &run->output.constLast() && run->state != State::Finished)
            piece.truncate(completeUtf8(piece));
        if (piece.isEmpty())
            break;
        output.append(
            QJsonObject{{QStringLiteral("stream"),
                         chunk.stream == 2 ? QStringLiteral("stderr") : QStringLiteral("stdout")},
                        {QStringLiteral("text"), QString::fromUtf8(piece)}});
        next += piece.size();
        budget -= piece.size();
        // Cut short (the budget, a character): the next read goes on from here.
        if (piece.size() < rest.size())
            break;
    }
    // Finished only once everything kept has been read: the view shows the end after the output.
    const State state =
        run->state == State::Finished && next < run->size ? State::Running : run->state;
    QJsonObject o{{QStringLiteral("run_id"), run->id},
                  {QStringLiteral("state"), stateName(state)},
                  {QStringLiteral("language"), run->language},
                  {QStringLiteral("output"), output},
                  {QStringLiteral("next_offset"), next}};
    if (run->truncated)
        o.insert(QStringLiteral("truncated"), true);
    return o;
}

bool LiveRuns::stop(const QString &owner, const QString &id, const QString &reason, QString *error)
{
    const Run *run = find(owner, QJsonObject{{QStringLiteral("run_id"), id}}, error);
    if (!run)
        return false;
    if (run->state == State::Finished) {
        *error = QStringLiteral("The run has ended already.");
        return false;
    }
    if (run->state == State::WaitingForApproval || !run->execution) {
        *error = QStringLiteral("The run is waiting for approval in the Code Sandbox window: "
                                "answer it there.");
        return false;
    }
    run->execution->cancel(reason);
    return true;
}

void LiveRuns::prune()
{
    for (auto it = m_runs.begin(); it != m_runs.end();) {
        if (it->state == State::Finished && it->finished.isValid() &&
            it->finished.elapsed() > kKeepFinishedMs)
            it = m_runs.erase(it);
        else
            ++it;
    }
    // Many runs ended within the window: the oldest finished ones go.
    while (m_runs.size() > kMaxKept) {
        auto oldest = m_runs.end();
        for (auto it = m_runs.begin(); it != m_runs.end(); ++it)
            if (it->state == State::Finished && (oldest == m_runs.end() || it->seq < oldest->seq))
                oldest = it;
        if (oldest == m_runs.end())
            break; // all still going: each is bounded by its call
        m_runs.erase(oldest);
    }
}
