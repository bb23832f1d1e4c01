#include "executionresult.h"
#include "sandboxtools.h"
#include "schemavalidator.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

namespace {
// Flags of a hand-made result, so rows stay one line each.
enum Flag
{
    None = 0,
    StdoutTruncated = 1,
    StderrTruncated = 2,
    TimedOut = 4,
};

ExecutionResult result(const QByteArray &out, const QByteArray &err, int exitCode, int flags = None,
                       const QString &error = QString())
{
    ExecutionResult r;
    r.stdoutData = out;
    r.stderrData = err;
    r.exitCode = exitCode;
    r.stdoutTruncated = flags & StdoutTruncated;
    r.stderrTruncated = flags & StderrTruncated;
    r.timedOut = flags & TimedOut;
    r.timeoutSec = 5;
    r.durationMs = 1234;
    r.language = QStringLiteral("python");
    r.image = QStringLiteral("code-sandbox/python:latest");
    r.error = error;
    return r;
}
} // namespace

class tst_SandboxTools : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void formatText_data();
    void formatText();
    void toolResult_data();
    void toolResult();
    void outputSchemaRejectsWrongShapes_data();
    void outputSchemaRejectsWrongShapes();
};

void tst_SandboxTools::formatText_data()
{
    QTest::addColumn<ExecutionResult>("result");
    QTest::addColumn<QString>("printHint");
    QTest::addColumn<QString>("text");

    const QString print = QStringLiteral("print()");
    QTest::newRow("plain stdout unchanged")
        << result("hello\nworld\n", "", 0) << print << QStringLiteral("hello\nworld\n");
    QTest::newRow("stdout without newline") << result("42", "", 0) << print << QStringLiteral("42");
    QTest::newRow("utf-8 stdout") << result("π ≈ 3.14\n", "", 0) << print
                                  << QStringLiteral("π ≈ 3.14\n");
    QTest::newRow("stderr labelled") << result("ok\n", "warning: x\n", 0) << print
                                     << QStringLiteral("ok\n[stderr]\nwarning: x\n");
    QTest::newRow("stderr after unterminated stdout")
        << result("ok", "e", 0) << print << QStringLiteral("ok\n[stderr]\ne");
    QTest::newRow("only stderr, with exit code")
        << result("", "Traceback\nZeroDivisionError\n", 1) << print
        << QStringLiteral("[stderr]\nTraceback\nZeroDivisionError\n[exit code 1]");
    QTest::newRow("exit code after unterminated stderr")
        << result("", "boom", 2) << print << QStringLiteral("[stderr]\nboom\n[exit code 2]");
    QTest::newRow("exit code alone")
        << result("", "", 3) << print << QStringLiteral("[exit code 3]");
    QTest::newRow("killed") << result("partial\n", "", 137) << print
                            << QStringLiteral("partial\n[exit code 137: killed (SIGKILL)]");
    ExecutionResult oom = result("partial\n", "", 137);
    oom.outOfMemory = true;
    QTest::newRow("out of memory")
        << oom << print
        << QStringLiteral(
               "partial\n[exit code 137: killed for exceeding the sandbox's memory limit]");
    QTest::newRow("timeout") << result("tick\n", "", -1, TimedOut) << print
                             << QStringLiteral(
                                    "tick\n[timed out after 5 s: the program was stopped]");
    QTest::newRow("timeout without output")
        << result("", "", -1, TimedOut) << print
        << QStringLiteral("[timed out after 5 s: the program was stopped]");
    QTest::newRow("stdout truncated") << result("aaaa", "", 0, StdoutTruncated) << print
                                      << QStringLiteral("aaaa\n[stdout truncated]\n");
    QTest::newRow("stderr truncated") << result("", "e\n", 0, StderrTruncated) << print
                                      << QStringLiteral("[stderr]\ne\n[stderr truncated]\n");
    QTest::newRow("both truncated")
        << result("o", "e", 0, StdoutTruncated | StderrTruncated) << print
        << QStringLiteral("o\n[stdout truncated]\n[stderr]\ne\n[stderr truncated]\n");
    QTest::newRow("empty output, hint")
        << result("", "", 0) << print << QStringLiteral("No output — did you forget to print()?");
    QTest::newRow("empty output, console.log hint")
        << result("", "", 0) << QStringLiteral("console.log()")
        << QStringLiteral("No output — did you forget to console.log()?");
    QTest::newRow("empty output, no hint")
        << result("", "", 0) << QString() << QStringLiteral("No output.");
    QTest::newRow("sandbox error wins")
        << result("x", "y", -1, None, QStringLiteral("image code-sandbox/python:latest not found"))
        << print << QStringLiteral("Sandbox error: image code-sandbox/python:latest not found");
    QTest::newRow("invalid utf-8 replaced")
        << result("\xff\n", "", 0) << print << QStringLiteral("\uFFFD\n");
}

void tst_SandboxTools::formatText()
{
    QFETCH(ExecutionResult, result);
    QFETCH(QString, printHint);
    QFETCH(QString, text);

    QCOMPARE(SandboxTools::formatText(result, printHint), text);
}

void tst_SandboxTools::toolResult_data()
{
    QTest::addColumn<ExecutionResult>("result");
    QTest::addColumn<bool>("jsonText");
    QTest::addColumn<bool>("isError");
    QTest::addColumn<QString>("text"); // empty: the compact JSON of structuredContent
    QTest::addColumn<QJsonValue>("exitCode");

    QTest::newRow("success") << result("hi\n", "", 0) << false << false << QStringLiteral("hi\n")
                             << QJsonValue(0);
    QTest::newRow("success as json")
        << result("hi\n", "", 0) << true << false << QString() << QJsonValue(0);
    QTest::newRow("truncated success")
        << result("aaa", "", 0, StdoutTruncated) << false << false
        << QStringLiteral("aaa\n[stdout truncated]\n") << QJsonValue(0);
    QTest::newRow("nonzero exit") << result("", "err\n", 2) << false << true
                                  << QStringLiteral("[stderr]\nerr\n[exit code 2]")
                                  << QJsonValue(2);
    QTest::newRow("nonzero exit as json")
        << result("", "err\n", 2) << true << true << QString() << QJsonValue(2);
    QTest::newRow("timeout") << result("", "", -1, TimedOut) << false << true
                             << QStringLiteral("[timed out after 5 s: the program was stopped]")
                             << QJsonValue(QJsonValue::Null);
    QTest::newRow("sandbox error")
        << result("", "", -1, None, QStringLiteral("engine unreachable")) << false << true
        << QStringLiteral("Sandbox error: engine unreachable") << QJsonValue(QJsonValue::Null);
    // JSON text is for program results; a sandbox failure is explained in words.
    QTest::newRow("sandbox error as json")
        << result("", "", -1, None, QStringLiteral("engine unreachable")) << true << true
        << QStringLiteral("Sandbox error: engine unreachable") << QJsonValue(QJsonValue::Null);
}

void tst_SandboxTools::toolResult()
{
    QFETCH(ExecutionResult, result);
    QFETCH(bool, jsonText);
    QFETCH(bool, isError);
    QFETCH(QString, text);
    QFETCH(QJsonValue, exitCode);

    const QJsonObject out = SandboxTools::toolResult(result, QStringLiteral("print()"), jsonText);
    const QJsonObject structured = out.value("structuredContent").toObject();

    QCOMPARE(SchemaValidator::validate(SandboxTools::executionOutputSchema(), structured),
             QString());
    QCOMPARE(structured.value("exit_code"), exitCode);
    QCOMPARE(structured.value("stdout"), QJsonValue(QString::fromUtf8(result.stdoutData)));
    QCOMPARE(structured.value("stderr"), QJsonValue(QString::fromUtf8(result.stderrData)));
    QCOMPARE(structured.value("duration_ms"), QJsonValue(1234));
    QCOMPARE(structured.value("timed_out"), QJsonValue(result.timedOut));
    QCOMPARE(structured.value("truncated"), QJsonValue(result.truncated()));
    QCOMPARE(structured.value("language"), QJsonValue("python"));
    QCOMPARE(structured.value("image"), QJsonValue("code-sandbox/python:latest"));

    // isError is left out on success rather than sent as false.
    QCOMPARE(out.contains("isError"), isError);
    if (isError)
        QCOMPARE(out.value("isError"), QJsonValue(true));

    const QJsonArray content = out.value("content").toArray();
    QCOMPARE(content.size(), 1);
    QCOMPARE(content.at(0).toObject().value("type"), QJsonValue("text"));
    const QString actualText = content.at(0).toObject().value("text").toString();
    if (text.isEmpty())
        QCOMPARE(QJsonDocument::fromJson(actualText.toUtf8()).object(), structured);
    else
        QCOMPARE(actualText, text);
}

void tst_SandboxTools::outputSchemaRejectsWrongShapes_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<QJsonValue>("value"); // Undefined: removed
    QTest::addColumn<QString>("message");

    QTest::newRow("stdout missing") << "stdout" << QJsonValue(QJsonValue::Undefined)
                                    << QStringLiteral("argument 'stdout' is required");
    QTest::newRow("exit code as text")
        << "exit_code" << QJsonValue("0")
        << QStringLiteral("argument 'exit_code' must be integer or null, got string");
    QTest::newRow("timed_out as number")
        << "timed_out" << QJsonValue(0)
        << QStringLiteral("argument 'timed_out' must be boolean, got integer");
}

void tst_SandboxTools::outputSchemaRejectsWrongShapes()
{
    QFETCH(QString, key);
    QFETCH(QJsonValue, value);
    QFETCH(QString, message);

    // Shows the conformance check in toolResult() can fail at all.
    QJsonObject structured = result("x", "", 0).toJson();
    if (value.isUndefined())
        structured.remove(key);
    else
        structured.insert(key, value);
    QCOMPARE(SchemaValidator::validate(SandboxTools::executionOutputSchema(), structured), message);
}

QTEST_GUILESS_MAIN(tst_SandboxTools)
#include "tst_sandboxtools.moc"
