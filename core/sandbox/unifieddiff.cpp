#include "unifieddiff.h"

#include <QHash>
#include <QList>
#include <QStringDecoder>
#include <vector>

namespace {
// Differences past this many, the middle is replaced whole: the search keeps one row of
// 2d+3 integers per difference d, so its memory grows with the square of this bound (16 MB).
constexpr int kMaxDifferences = 2000;
constexpr qsizetype kTextProbe = 8192;

enum class Op
{
    Equal,
    Delete,
    Insert
};

QList<QByteArrayView> linesOf(const QByteArray &data)
{
    QList<QByteArrayView> lines;
    qsizetype start = 0;
    while (start < data.size()) {
        qsizetype end = data.indexOf('\n', start);
        end = end < 0 ? data.size() : end + 1;
        lines.append(QByteArrayView(data).sliced(start, end - start));
        start = end;
    }
    return lines;
}

// The lines as numbers, equal lines equal numbers, so the search compares integers.
void numberLines(const QList<QByteArrayView> &a, const QList<QByteArrayView> &b,
                 std::vector<int> *na, std::vector<int> *nb)
{
    QHash<QByteArrayView, int> ids;
    const auto idOf = [&ids](QByteArrayView line) {
        const auto it = ids.constFind(line);
        return it != ids.cend() ? *it : *ids.insert(line, int(ids.size()));
    };
    for (QByteArrayView line : a)
        na->push_back(idOf(line));
    for (QByteArrayView line : b)
        nb->push_back(idOf(line));
}

// Myers' O((N+M)D) search over a[lo..] and b[lo..] up to their ends minus `tail`: the edit
// script of that middle, appended to *ops; false when it needs more than kMaxDifferences.
bool myers(const std::vector<int> &a, const std::vector<int> &b, int lo, int aEnd, int bEnd,
           std::vector<Op> *ops)
{
    const int n = aEnd - lo, m = bEnd - lo;
    const int max = std::min(n + m, kMaxDifferences);
    std::vector<int> v(size_t(2 * max + 3), 0);
    const int off = max + 1;
    std::vector<std::vector<int>> trace; // trace[d][k + d + 1]: v before step d
    int found = -1;
    for (int d = 0; d <= max && found < 0; ++d) {
        trace.emplace_back(v.begin() + (off - d - 1), v.begin() + (off + d + 2));
        for (int k = -d; k <= d; k += 2) {
            int x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1]
                                                                             : v[off + k - 1] + 1;
            int y = x - k;
            while (x < n && y < m && a[size_t(lo + x)] == b[size_t(lo + y)]) {
                ++x;
                ++y;
            }
            v[off + k] = x;
            if (x >= n && y >= m) {
                found = d;
                break;
            }
        }
    }
    if (found < 0)
        return false;
    std::vector<Op> reversed;
    int x = n, y = m;
    for (int d = found; d >= 0; --d) {
        const std::vector<int> &row = trace[size_t(d)];
        const auto at = [&](int k) { return row[size_t(k + d + 1)]; };
        const int k = x - y;
        const int prevK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
        const int prevX = d == 0 ? 0 : at(prevK), prevY = d == 0 ? 0 : prevX - prevK;
        for (; x > prevX && y > prevY; --x, --y)
            reversed.push_back(Op::Equal);
        if (d > 0)
            reversed.push_back(x == prevX ? Op::Insert : Op::Delete);
        x = prevX;
        y = prevY;
    }
    ops->insert(ops->end(), reversed.rbegin(), reversed.rend());
    return true;
}

std::vector<Op> editScript(const std::vector<int> &a, const std::vector<int> &b)
{
    const int n = int(a.size()), m = int(b.size());
    int lo = 0;
    while (lo < n && lo < m && a[size_t(lo)] == b[size_t(lo)])
        ++lo;
    int aEnd = n, bEnd = m;
    while (aEnd > lo && bEnd > lo && a[size_t(aEnd - 1)] == b[size_t(bEnd - 1)]) {
        --aEnd;
        --bEnd;
    }
    std::vector<Op> ops(size_t(lo), Op::Equal);
    if (!myers(a, b, lo, aEnd, bEnd, &ops)) {
        ops.insert(ops.end(), size_t(aEnd - lo), Op::Delete);
        ops.insert(ops.end(), size_t(bEnd - lo), Op::Insert);
    }
    ops.insert(ops.end(), size_t(n - aEnd), Op::Equal);
    return ops;
}

QString range(int start, int count)
{
    // As diff -u: the line before an empty range; a count of one left out.
    if (count == 0)
        return QStringLiteral("%1,0").arg(start);
    if (count == 1)
        return QString::number(start + 1);
    return QStringLiteral("%1,%2").arg(start + 1).arg(count);
}

void appendLine(QString *out, QChar mark, QByteArrayView line)
{
    out->append(mark);
    if (line.endsWith('\n')) {
        out->append(QString::fromUtf8(line));
    } else {
        out->append(QString::fromUtf8(line));
        out->append(QStringLiteral("\n\\ No newline at end of file\n"));
    }
}

// Hunks over ops[first, last): their header, then each line with its mark.
void appendHunk(QString *out, const std::vector<Op> &ops, size_t first, size_t last, int aStart,
                int bStart, const QList<QByteArrayView> &a, const QList<QByteArrayView> &b)
{
    int aCount = 0, bCount = 0;
    for (size_t i = first; i < last; ++i) {
        aCount += ops[i] != Op::Insert;
        bCount += ops[i] != Op::Delete;
    }
    out->append(
        QStringLiteral("@@ -%1 +%2 @@\n").arg(range(aStart, aCount), range(bStart, bCount)));
    int ai = aStart, bi = bStart;
    for (size_t i = first; i < last; ++i) {
        if (ops[i] == Op::Equal) {
            appendLine(out, u' ', a.at(ai++));
            ++bi;
        } else if (ops[i] == Op::Delete) {
            appendLine(out, u'-', a.at(ai++));
        } else {
            appendLine(out, u'+', b.at(bi++));
        }
    }
}
} // namespace

QString UnifiedDiff::of(const QByteArray &before, const QByteArray &after, const QString &path,
                        int context, int maxLines)
{
    if (before == after)
        return {};
    const QList<QByteArrayView> a = linesOf(before), b = linesOf(after);
    if (a.size() > maxLines || b.size() > maxLines)
        return QStringLiteral("(no diff: %1 has more than %2 lines)\n").arg(path).arg(maxLines);
    std::vector<int> na, nb;
    numberLines(a, b, &na, &nb);
    const std::vector<Op> ops = editScript(na, nb);
    QString out = QStringLiteral("--- a/%1\n+++ b/%1\n").arg(path);
    // Positions in a and b before each op.
    std::vector<int> aAt(ops.size() + 1, 0), bAt(ops.size() + 1, 0);
    for (size_t i = 0; i < ops.size(); ++i) {
        aAt[i + 1] = aAt[i] + (ops[i] != Op::Insert);
        bAt[i + 1] = bAt[i] + (ops[i] != Op::Delete);
    }
    const size_t ctx = size_t(std::max(context, 0));
    size_t i = 0;
    while (i < ops.size()) {
        while (i < ops.size() && ops[i] == Op::Equal)
            ++i;
        if (i == ops.size())
            break;
        const size_t first = i > ctx ? i - ctx : 0;
        // The hunk runs on while the next change is within two contexts of the last one.
        size_t last = i, equalRun = 0;
        for (size_t j = i; j < ops.size() && equalRun <= 2 * ctx; ++j) {
            equalRun = ops[j] == Op::Equal ? equalRun + 1 : 0;
            if (ops[j] != Op::Equal)
                last = j;
        }
        const size_t end = std::min(ops.size(), last + 1 + ctx);
        appendHunk(&out, ops, first, end, aAt[first], bAt[first], a, b);
        i = end;
    }
    return out;
}

QString UnifiedDiff::ofAdded(const QByteArray &after, const QString &path, int maxLines)
{
    QString diff = of(QByteArray(), after, path, 0, maxLines);
    const QString header = QStringLiteral("--- a/%1\n").arg(path);
    if (diff.startsWith(header))
        diff.replace(0, header.size(), QStringLiteral("--- /dev/null\n"));
    return diff;
}

bool UnifiedDiff::isText(const QByteArray &data)
{
    const QByteArrayView probe = QByteArrayView(data).first(std::min(data.size(), kTextProbe));
    if (probe.contains('\0'))
        return false;
    // Stateless when the probe is the whole file: a cut character at its end is an error then;
    // stateful otherwise, so that one cut by the probe's end waits (and is no error).
    QStringDecoder decoder(QStringDecoder::Utf8, probe.size() == data.size()
                                                     ? QStringDecoder::Flag::Stateless
                                                     : QStringDecoder::Flag::Default);
    const QString text = decoder.decode(probe);
    return !decoder.hasError();
}

void UnifiedDiff::countLines(const QString &diff, int *added, int *removed)
{
    *added = *removed = 0;
    bool header = true; // the "--- a/" and "+++ b/" lines, until the first hunk
    for (QStringView line : QStringView(diff).split(u'\n')) {
        if (line.startsWith(u"@@"))
            header = false;
        else if (!header && line.startsWith(u'+'))
            ++*added;
        else if (!header && line.startsWith(u'-'))
            ++*removed;
    }
}
