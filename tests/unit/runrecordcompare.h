#pragma once

// Shared by the run record and history tests: a record with every field set, and every field
// of two records compared.

#include "runrecord.h"

#include <QJsonArray>
#include <QTest>

inline QByteArray everyByte()
{
    QByteArray b;
    for (int i = 0; i < 256; ++i)
        b.append(char(i));
    return b;
}

inline QByteArray pngish()
{
    return QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) + everyByte();
}

// Every field set to something other than its default.
inline RunRecord everyFieldSet()
{
    RunRecord r;
    r.id = QStringLiteral("8f7b2c1e-0000-4000-8000-000000000001");
    r.instanceId = QStringLiteral("instance-ü-1");
    r.instancePid = 4242424242LL;
    r.source = QStringLiteral("Claude Desktop");
    r.tool = QStringLiteral("run_code");
    r.sessionId = QStringLiteral("s-0123456789ab");
    r.language = QStringLiteral("python");
    r.code = QStringLiteral("print('héllo 😀')\n\tx = \"\\n\"\n");
    r.status = RunRecord::Status::TimedOut;
    r.createdAt = QDateTime(QDate(2024, 2, 29), QTime(23, 59, 58, 123), Qt::UTC);
    r.finishedAt = QDateTime(QDate(2024, 3, 1), QTime(0, 0, 1, 7), Qt::UTC);
    r.durationMs = 2884;
    r.exitCode = 137;
    r.timeoutSec = 30;
    r.outOfMemory = true;
    r.compileError = true;
    r.truncated = true;
    r.error = QStringLiteral("engine went away");
    r.notes = QStringList{QStringLiteral("numpy 1.26"), QString(), QStringLiteral("ß")};
    r.image = QStringLiteral("code-sandbox/python:3.12");
    r.containerId = QStringLiteral("0123456789abcdef");
    r.engine = QStringLiteral("ssh://builder@gpu-box:2222");
    r.runtime = QStringLiteral("runsc");
    r.preloaded = QStringList{QStringLiteral("pandas"), QStringLiteral("matplotlib.pyplot")};
    r.memoryBytes = 512LL * 1024 * 1024 * 1024;
    r.cpus = 1.5;
    r.pidsLimit = 64;
    r.network = true;
    r.peakMemoryBytes = 123456789;
    r.cpuTimeMs = 2500;
    r.envNames = QStringList{QStringLiteral("API_KEY"), QStringLiteral("HOME")};
    r.envValues = {{QStringLiteral("API_KEY"), QStringLiteral("s3cr3t")},
                   {QStringLiteral("HOME"), QString()}};
    r.secrets = {{QStringLiteral("API_KEY"),
                  {QStringLiteral("api.example.com"), QStringLiteral("*.example.org")}},
                 {QStringLiteral("NO_HOSTS"), {}}};
    // Ids stay 0: the gateway's ids are not part of a record's JSON (NetworkAttempt::toJson).
    NetworkAttempt withSecret;
    withSecret.host = QStringLiteral("api.example.com");
    withSecret.port = 443;
    withSecret.verdict = NetworkAttempt::Verdict::Allowed;
    withSecret.rule = QStringLiteral("api.example.com");
    withSecret.bytesUp = 517;
    withSecret.bytesDown = 2048;
    withSecret.ms = 80;
    withSecret.secrets = {QStringLiteral("API_KEY")};
    NetworkAttempt refused;
    refused.host = QStringLiteral("evil.example");
    refused.port = 80;
    refused.rule = QStringLiteral("not on the allow-list");
    r.connections = {withSecret, refused};
    r.output = QList<OutputChunk>{{1, QByteArray("out\0put\n", 8)}, {2, everyByte()}, {1, "more"}};
    OutputFile plot;
    plot.kind = OutputFile::Kind::Plot;
    plot.name = QStringLiteral("figure-0001.png");
    plot.data = pngish();
    plot.size = plot.data.size();
    plot.mimeType = QStringLiteral("image/png");
    OutputFile skipped;
    skipped.name = QStringLiteral("data/big file.bin");
    skipped.size = 99999999999LL;
    skipped.mimeType = QStringLiteral("application/octet-stream");
    skipped.included = false;
    r.files = {plot, skipped};
    // As WorkspaceRun::recordJson writes them, and a decision the window added.
    r.workspaces = QJsonArray{
        QJsonObject{
            {QStringLiteral("name"), QStringLiteral("data")},
            {QStringLiteral("mode"), QStringLiteral("read-only")},
            {QStringLiteral("path"), QStringLiteral("/workspace/data")},
            {QStringLiteral("folder"), QStringLiteral("/home/ü/data")},
            {QStringLiteral("files"), 3},
            {QStringLiteral("bytes"), 4096},
            {QStringLiteral("excluded"), 1},
            {QStringLiteral("skipped"), QJsonArray{QStringLiteral("link: leaves the folder")}}},
        QJsonObject{{QStringLiteral("name"), QStringLiteral("repo")},
                    {QStringLiteral("mode"), QStringLiteral("copy-on-write")},
                    {QStringLiteral("folder"), QStringLiteral("/home/ü/repo")},
                    {QStringLiteral("apply"), QStringLiteral("ask")},
                    {QStringLiteral("content_kept"), true},
                    {QStringLiteral("changes"),
                     QJsonObject{{QStringLiteral("workspace"), QStringLiteral("repo")},
                                 {QStringLiteral("bytes"), 3},
                                 {QStringLiteral("added"),
                                  QJsonArray{QJsonObject{
                                      {QStringLiteral("path"), QStringLiteral("a.txt")},
                                      {QStringLiteral("content"), QStringLiteral("aGkK")}}}}}},
                    {QStringLiteral("decision"), QStringLiteral("discarded")},
                    {QStringLiteral("decided_at"), QStringLiteral("2024-03-01T00:00:02.000Z")}}};
    return r;
}

// QCOMPARE of every field; the caller checks QTest::currentTestFailed().
inline void compareRecords(const RunRecord &actual, const RunRecord &expected)
{
    QCOMPARE(actual.id, expected.id);
    QCOMPARE(actual.instanceId, expected.instanceId);
    QCOMPARE(actual.instancePid, expected.instancePid);
    QCOMPARE(actual.source, expected.source);
    QCOMPARE(actual.tool, expected.tool);
    QCOMPARE(actual.sessionId, expected.sessionId);
    QCOMPARE(actual.language, expected.language);
    QCOMPARE(actual.code, expected.code);
    QCOMPARE(actual.status, expected.status);
    QCOMPARE(actual.createdAt, expected.createdAt);
    QCOMPARE(actual.createdAt.timeSpec(), expected.createdAt.timeSpec());
    QCOMPARE(actual.finishedAt, expected.finishedAt);
    QCOMPARE(actual.durationMs, expected.durationMs);
    QCOMPARE(actual.exitCode, expected.exitCode);
    QCOMPARE(actual.timeoutSec, expected.timeoutSec);
    QCOMPARE(actual.outOfMemory, expected.outOfMemory);
    QCOMPARE(actual.compileError, expected.compileError);
    QCOMPARE(actual.truncated, expected.truncated);
    QCOMPARE(actual.error, expected.error);
    QCOMPARE(actual.notes, expected.notes);
    QCOMPARE(actual.image, expected.image);
    QCOMPARE(actual.containerId, expected.containerId);
    QCOMPARE(actual.engine, expected.engine);
    QCOMPARE(actual.runtime, expected.runtime);
    QCOMPARE(actual.preloaded, expected.preloaded);
    QCOMPARE(actual.memoryBytes, expected.memoryBytes);
    QCOMPARE(actual.cpus, expected.cpus);
    QCOMPARE(actual.pidsLimit, expected.pidsLimit);
    QCOMPARE(actual.network, expected.network);
    QCOMPARE(actual.peakMemoryBytes, expected.peakMemoryBytes);
    QCOMPARE(actual.cpuTimeMs, expected.cpuTimeMs);
    QCOMPARE(actual.envNames, expected.envNames);
    QCOMPARE(actual.envValues, expected.envValues);
    QCOMPARE(actual.secrets, expected.secrets);
    QCOMPARE(actual.connections, expected.connections);
    QCOMPARE(actual.workspaces, expected.workspaces);
    QCOMPARE(actual.output.size(), expected.output.size());
    for (int i = 0; i < actual.output.size(); ++i) {
        QCOMPARE(actual.output.at(i).stream, expected.output.at(i).stream);
        QCOMPARE(actual.output.at(i).data, expected.output.at(i).data);
    }
    QCOMPARE(actual.files.size(), expected.files.size());
    for (int i = 0; i < actual.files.size(); ++i) {
        QCOMPARE(actual.files.at(i).kind, expected.files.at(i).kind);
        QCOMPARE(actual.files.at(i).name, expected.files.at(i).name);
        QCOMPARE(actual.files.at(i).data, expected.files.at(i).data);
        QCOMPARE(actual.files.at(i).size, expected.files.at(i).size);
        QCOMPARE(actual.files.at(i).mimeType, expected.files.at(i).mimeType);
        QCOMPARE(actual.files.at(i).included, expected.files.at(i).included);
    }
    QCOMPARE(actual.complete, expected.complete);
}
