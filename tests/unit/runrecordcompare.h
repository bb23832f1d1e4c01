#pragma once

// Shared by the run record and history tests: every field of two records compared.

#include "runrecord.h"

#include <QTest>

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
    QCOMPARE(actual.memoryBytes, expected.memoryBytes);
    QCOMPARE(actual.cpus, expected.cpus);
    QCOMPARE(actual.pidsLimit, expected.pidsLimit);
    QCOMPARE(actual.network, expected.network);
    QCOMPARE(actual.peakMemoryBytes, expected.peakMemoryBytes);
    QCOMPARE(actual.cpuTimeMs, expected.cpuTimeMs);
    QCOMPARE(actual.envNames, expected.envNames);
    QCOMPARE(actual.envValues, expected.envValues);
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
