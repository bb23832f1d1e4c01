#include "executionrequest.h"
#include "executionresult.h"
#include "runwording.h"
#include "sandboxconfig.h"
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
    CompileError = 8,
};

using Files = QList<OutputFile>;

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
    r.compileError = flags & CompileError;
    r.timeoutSec = 5;
    r.durationMs = 1234;
    r.language = QStringLiteral("python");
    r.image = QStringLiteral("code-sandbox/python:latest");
    r.error = error;
    return r;
}

ExecutionResult withFiles(ExecutionResult r, const Files &files,
                          const QStringList &notes = QStringList())
{
    r.files = files;
    r.notes = notes;
    return r;
}

OutputFile plot(const QString &name, const QByteArray &data)
{
    OutputFile f;
    f.kind = OutputFile::Kind::Plot;
    f.name = name;
    f.data = data;
    f.size = data.size();
    f.mimeType = QStringLiteral("image/png");
    return f;
}

OutputFile output(const QString &name, const QString &mimeType, const QByteArray &data)
{
    OutputFile f;
    f.name = name;
    f.data = data;
    f.size = data.size();
    f.mimeType = mimeType;
    return f;
}

// Over the size caps: listed, but its bytes were not fetched.
OutputFile leftOut(const QString &name, const QString &mimeType, qint64 size)
{
    OutputFile f = output(name, mimeType, QByteArray());
    f.size = size;
    f.included = false;
    return f;
}

QJsonObject imageItem(const QString &mimeType, const QByteArray &data)
{
    return {{"type", "image"}, {"mimeType", mimeType}, {"data", QString(data.toBase64())}};
}

QJsonObject textResource(const QString &name, const QString &mimeType, const QString &text)
{
    return {{"type", "resource"},
            {"resource", QJsonObject{{"uri", "sandbox://outputs/" + name},
                                     {"mimeType", mimeType},
                                     {"text", text}}}};
}

QJsonObject blobResource(const QString &name, const QString &mimeType, const QByteArray &data)
{
    return {{"type", "resource"},
            {"resource", QJsonObject{{"uri", "sandbox://outputs/" + name},
                                     {"mimeType", mimeType},
                                     {"blob", QString(data.toBase64())}}}};
}

QJsonObject inputFile(const QString &path, const QString &content,
                      const QString &encoding = QString())
{
    QJsonObject f{{"path", path}, {"content", content}};
    if (!encoding.isEmpty())
        f.insert("encoding", encoding);
    return f;
}

QByteArray everyByte()
{
    QByteArray b;
    for (int i = 0; i < 256; ++i)
        b.append(char(i));
    return b;
}

const QByteArray kPng("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
const QByteArray kJpeg("\xff\xd8\xff\xe0\0\x10JFIF\0", 11);
} // namespace

Q_DECLARE_METATYPE(OutputFile)

class tst_SandboxTools : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void formatText_data();
    void formatText();
    void toolResult_data();
    void toolResult();
    void toolResultWithFiles_data();
    void toolResultWithFiles();
    void parseFiles_data();
    void parseFiles();
    void outputSchemaRejectsWrongShapes_data();
    void outputSchemaRejectsWrongShapes();
    void networkAttempts();
    void parseNetwork_data();
    void parseNetwork();
    void describesTheBoundSecrets();
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
    QTest::newRow("compile error")
        << result("", "main.c:1:1: error: x\n", 1, CompileError) << print
        << QStringLiteral(
               "[stderr]\nmain.c:1:1: error: x\n[compilation failed (exit code 1): the program "
               "did not run]");
    QTest::newRow("compile error without stderr")
        << result("", "", 2, CompileError) << print
        << QStringLiteral("[compilation failed (exit code 2): the program did not run]");

    const OutputFile fig = plot(QStringLiteral("figure-0001.png"), kPng);
    const OutputFile csv = output(QStringLiteral("results/table.csv"), "text/csv", "x\n");
    const OutputFile huge =
        leftOut(QStringLiteral("huge.bin"), "application/octet-stream", 100000000);
    QTest::newRow("files without stdout, not 'no output'")
        << withFiles(result("", "", 0), {fig}) << print
        << QStringLiteral("[returned: figure figure-0001.png]");
    QTest::newRow("figures and output files")
        << withFiles(result("", "", 0), {fig, plot(QStringLiteral("figure-0002.png"), kPng), csv})
        << print
        << QStringLiteral(
               "[returned: figure figure-0001.png, figure figure-0002.png, results/table.csv]");
    QTest::newRow("files after unterminated stdout")
        << withFiles(result("done", "", 0), {csv}) << print
        << QStringLiteral("done\n[returned: results/table.csv]");
    QTest::newRow("files after exit code")
        << withFiles(result("", "boom\n", 1), {csv}) << print
        << QStringLiteral("[stderr]\nboom\n[exit code 1]\n[returned: results/table.csv]");
    QTest::newRow("left-out file not listed") << withFiles(result("", "", 0), {huge, csv}) << print
                                              << QStringLiteral("[returned: results/table.csv]");
    QTest::newRow("only a left-out file")
        << withFiles(result("", "", 0), {huge}) << print
        << QStringLiteral("No output — did you forget to print()?");
    QTest::newRow("note without output")
        << withFiles(result("", "", 0), {huge}, {QStringLiteral("huge.bin was not returned")})
        << print << QStringLiteral("[note: huge.bin was not returned]");
    QTest::newRow("notes after files")
        << withFiles(result("hi\n", "", 0), {csv},
                     {QStringLiteral("first"), QStringLiteral("second")})
        << print
        << QStringLiteral("hi\n[returned: results/table.csv]\n[note: first]\n[note: second]");
    QTest::newRow("sandbox error hides files and notes")
        << withFiles(result("", "", -1, None, QStringLiteral("engine unreachable")), {csv},
                     {QStringLiteral("n")})
        << print << QStringLiteral("Sandbox error: engine unreachable");
}

void tst_SandboxTools::formatText()
{
    QFETCH(ExecutionResult, result);
    QFETCH(QString, printHint);
    QFETCH(QString, text);

    const QString actual = RunWording::formatText(result, printHint);
    QCOMPARE(actual, text);
    if (actual.contains(QStringLiteral("[returned: ")))
        QVERIFY(!actual.contains(QStringLiteral("No output")));
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

    const QJsonObject out = RunWording::toolResult(result, QStringLiteral("print()"), jsonText);
    const QJsonObject structured = out.value("structuredContent").toObject();

    QCOMPARE(SchemaValidator::validate(RunWording::executionOutputSchema(), structured), QString());
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

void tst_SandboxTools::toolResultWithFiles_data()
{
    QTest::addColumn<ExecutionResult>("result");
    QTest::addColumn<bool>("isError");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QJsonArray>("items"); // the content after the text

    const ExecutionResult ok = result("", "", 0);
    QTest::newRow("plot") << withFiles(ok, {plot("figure-0001.png", kPng)}) << false
                          << QStringLiteral("[returned: figure figure-0001.png]")
                          << QJsonArray{imageItem("image/png", kPng)};
    OutputFile untyped = plot("figure-0001.png", kPng);
    untyped.mimeType.clear();
    QTest::newRow("plot without a mime type")
        << withFiles(ok, {untyped}) << false << QStringLiteral("[returned: figure figure-0001.png]")
        << QJsonArray{imageItem("image/png", kPng)};
    QTest::newRow("jpeg output") << withFiles(ok, {output("photo.jpg", "image/jpeg", kJpeg)})
                                 << false << QStringLiteral("[returned: photo.jpg]")
                                 << QJsonArray{imageItem("image/jpeg", kJpeg)};
    QTest::newRow("png output") << withFiles(ok, {output("img/chart.png", "image/png", kPng)})
                                << false << QStringLiteral("[returned: img/chart.png]")
                                << QJsonArray{imageItem("image/png", kPng)};
    const QByteArray svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n";
    QTest::newRow("svg output as a resource")
        << withFiles(ok, {output("chart.svg", "image/svg+xml", svg)}) << false
        << QStringLiteral("[returned: chart.svg]")
        << QJsonArray{textResource("chart.svg", "image/svg+xml", QString::fromUtf8(svg))};
    QTest::newRow("csv output")
        << withFiles(ok, {output("results/table.csv", "text/csv", "x,y\n1,2\n")}) << false
        << QStringLiteral("[returned: results/table.csv]")
        << QJsonArray{textResource("results/table.csv", "text/csv", "x,y\n1,2\n")};
    QTest::newRow("utf-8 text") << withFiles(ok,
                                             {output("notes.md", "text/markdown", "π ≈ 3.14 😀\n")})
                                << false << QStringLiteral("[returned: notes.md]")
                                << QJsonArray{textResource("notes.md", "text/markdown",
                                                           QStringLiteral("π ≈ 3.14 😀\n"))};
    QTest::newRow("json output") << withFiles(ok,
                                              {output("out.json", "application/json", "{\"a\":1}")})
                                 << false << QStringLiteral("[returned: out.json]")
                                 << QJsonArray{
                                        textResource("out.json", "application/json", "{\"a\":1}")};
    QTest::newRow("empty file") << withFiles(ok, {output("empty.txt", "text/plain", "")}) << false
                                << QStringLiteral("[returned: empty.txt]")
                                << QJsonArray{textResource("empty.txt", "text/plain", "")};
    const QByteArray nul("ab\0cd", 5);
    QTest::newRow("nul byte as a blob")
        << withFiles(ok, {output("data.bin", "application/octet-stream", nul)}) << false
        << QStringLiteral("[returned: data.bin]")
        << QJsonArray{blobResource("data.bin", "application/octet-stream", nul)};
    QTest::newRow("nul in a text file as a blob")
        << withFiles(ok, {output("odd.txt", "text/plain", nul)}) << false
        << QStringLiteral("[returned: odd.txt]")
        << QJsonArray{blobResource("odd.txt", "text/plain", nul)};
    QTest::newRow("invalid utf-8 as a blob")
        << withFiles(ok, {output("latin1.txt", "text/plain", "caf\xe9\n")}) << false
        << QStringLiteral("[returned: latin1.txt]")
        << QJsonArray{blobResource("latin1.txt", "text/plain", "caf\xe9\n")};
    QTest::newRow("utf-8 cut short at the end as a blob")
        << withFiles(ok, {output("cut.txt", "text/plain", "abc\xe2\x82")}) << false
        << QStringLiteral("[returned: cut.txt]")
        << QJsonArray{blobResource("cut.txt", "text/plain", "abc\xe2\x82")};
    QTest::newRow("every byte as a blob")
        << withFiles(ok, {output("all.bin", "application/octet-stream", everyByte())}) << false
        << QStringLiteral("[returned: all.bin]")
        << QJsonArray{blobResource("all.bin", "application/octet-stream", everyByte())};
    QTest::newRow("left-out file has no content")
        << withFiles(ok, {leftOut("huge.bin", "application/octet-stream", 100000000)},
                     {QStringLiteral("huge.bin (100000000 bytes) was not returned")})
        << false << QStringLiteral("[note: huge.bin (100000000 bytes) was not returned]")
        << QJsonArray();
    QTest::newRow("left-out plot has no content")
        << withFiles(ok, {[] {
                         OutputFile f = plot("figure-0001.png", QByteArray());
                         f.size = 99999999;
                         f.included = false;
                         return f;
                     }()})
        << false << QStringLiteral("No output — did you forget to print()?") << QJsonArray();
    QTest::newRow("mixed, in order")
        << withFiles(result("done\n", "", 0),
                     {plot("figure-0001.png", kPng), plot("figure-0002.png", kJpeg),
                      output("a.csv", "text/csv", "1\n"),
                      leftOut("b.bin", "application/octet-stream", 1 << 30),
                      output("c.bin", "application/octet-stream", nul),
                      output("d.jpg", "image/jpeg", kJpeg)},
                     {QStringLiteral("b.bin was not returned")})
        << false
        << QStringLiteral("done\n[returned: figure figure-0001.png, figure figure-0002.png, "
                          "a.csv, c.bin, d.jpg]\n[note: b.bin was not returned]")
        << QJsonArray{imageItem("image/png", kPng), imageItem("image/png", kJpeg),
                      textResource("a.csv", "text/csv", "1\n"),
                      blobResource("c.bin", "application/octet-stream", nul),
                      imageItem("image/jpeg", kJpeg)};
    QTest::newRow("failed run still returns files")
        << withFiles(result("", "boom\n", 1), {output("partial.csv", "text/csv", "x\n")}) << true
        << QStringLiteral("[stderr]\nboom\n[exit code 1]\n[returned: partial.csv]")
        << QJsonArray{textResource("partial.csv", "text/csv", "x\n")};
    QTest::newRow("notes without files")
        << withFiles(result("hi\n", "", 0), {},
                     {QStringLiteral("numpy is preinstalled"), QStringLiteral("second")})
        << false << QStringLiteral("hi\n[note: numpy is preinstalled]\n[note: second]")
        << QJsonArray();
    QTest::newRow("compile error")
        << result("", "main.c:1:1: error: x\n", 1, CompileError) << true
        << QStringLiteral("[stderr]\nmain.c:1:1: error: x\n[compilation failed (exit code 1): "
                          "the program did not run]")
        << QJsonArray();
}

void tst_SandboxTools::toolResultWithFiles()
{
    QFETCH(ExecutionResult, result);
    QFETCH(bool, isError);
    QFETCH(QString, text);
    QFETCH(QJsonArray, items);

    for (const bool jsonText : {false, true}) {
        const QJsonObject out = RunWording::toolResult(result, QStringLiteral("print()"), jsonText);
        const QJsonObject structured = out.value("structuredContent").toObject();
        QCOMPARE(SchemaValidator::validate(RunWording::executionOutputSchema(), structured),
                 QString());

        const QJsonArray content = out.value("content").toArray();
        QVERIFY(!content.isEmpty());
        QCOMPARE(content.at(0).toObject().value("type"), QJsonValue("text"));
        const QString actualText = content.at(0).toObject().value("text").toString();
        if (jsonText)
            QCOMPARE(QJsonDocument::fromJson(actualText.toUtf8()).object(), structured);
        else
            QCOMPARE(actualText, text);
        QJsonArray actualItems = content;
        actualItems.removeFirst();
        QCOMPARE(actualItems, items);

        // Every file is listed, returned or not.
        const QJsonArray files = structured.value("files").toArray();
        QCOMPARE(files.size(), result.files.size());
        for (qsizetype i = 0; i < files.size(); ++i) {
            const OutputFile &f = result.files.at(i);
            const QJsonObject listed = files.at(i).toObject();
            QCOMPARE(listed.value("name"), QJsonValue(f.name));
            QCOMPARE(listed.value("kind"),
                     QJsonValue(f.kind == OutputFile::Kind::Plot ? "plot" : "output"));
            QCOMPARE(listed.value("size"), QJsonValue(f.size));
            QCOMPARE(listed.value("mime_type"), QJsonValue(f.mimeType));
            QCOMPARE(listed.value("included"), QJsonValue(f.included));
        }
        // Notes only when there are some.
        QCOMPARE(structured.contains("notes"), !result.notes.isEmpty());
        if (!result.notes.isEmpty())
            QCOMPARE(structured.value("notes"),
                     QJsonValue(QJsonArray::fromStringList(result.notes)));
        QCOMPARE(structured.value("compile_error"), QJsonValue(result.compileError));

        QCOMPARE(out.contains("isError"), isError);
        if (isError)
            QCOMPARE(out.value("isError"), QJsonValue(true));
    }
}

void tst_SandboxTools::parseFiles_data()
{
    QTest::addColumn<QJsonArray>("files");
    QTest::addColumn<QString>("programFile");
    QTest::addColumn<QStringList>("paths");
    QTest::addColumn<QByteArrayList>("contents");
    QTest::addColumn<QString>("error"); // a part of the message; empty: accepted

    const QString py = QStringLiteral("main.py");
    QTest::newRow("no files") << QJsonArray() << py << QStringList() << QByteArrayList()
                              << QString();
    QTest::newRow("utf-8 by default")
        << QJsonArray{inputFile("a.txt", QStringLiteral("héllo ✓\n"))} << py << QStringList{"a.txt"}
        << QByteArrayList{"h\xc3\xa9llo \xe2\x9c\x93\n"} << QString();
    QTest::newRow("utf-8 named") << QJsonArray{inputFile("a.txt", "x", "utf-8")} << py
                                 << QStringList{"a.txt"} << QByteArrayList{"x"} << QString();
    QTest::newRow("base64-looking text kept as text")
        << QJsonArray{inputFile("a.txt", "AAH/")} << py << QStringList{"a.txt"}
        << QByteArrayList{"AAH/"} << QString();
    QTest::newRow("base64") << QJsonArray{inputFile("b.bin", "AAH/gA==", "base64")} << py
                            << QStringList{"b.bin"}
                            << QByteArrayList{QByteArray("\0\x01\xff\x80", 4)} << QString();
    QTest::newRow("base64 without padding")
        << QJsonArray{inputFile("b.bin", "AAE", "base64")} << py << QStringList{"b.bin"}
        << QByteArrayList{QByteArray("\0\x01", 2)} << QString();
    QTest::newRow("base64 wrapped in lines, as base64 tools print it")
        << QJsonArray{inputFile("w.bin", "AAH/\ngA==\r\n", "base64")} << py << QStringList{"w.bin"}
        << QByteArrayList{QByteArray("\0\x01\xff\x80", 4)} << QString();
    QTest::newRow("one base64 character is not a byte")
        << QJsonArray{inputFile("b.bin", "A", "base64")} << py << QStringList() << QByteArrayList()
        << QStringLiteral("not valid base64");
    QTest::newRow("base64 of every byte")
        << QJsonArray{inputFile("all.bin", QString(everyByte().toBase64()), "base64")} << py
        << QStringList{"all.bin"} << QByteArrayList{everyByte()} << QString();
    QTest::newRow("empty base64") << QJsonArray{inputFile("e", "", "base64")} << py
                                  << QStringList{"e"} << QByteArrayList{QByteArray()} << QString();
    QTest::newRow("content missing")
        << QJsonArray{QJsonObject{{"path", "e"}}} << py << QStringList{"e"}
        << QByteArrayList{QByteArray()} << QString();
    QTest::newRow("invalid base64")
        << QJsonArray{inputFile("b.bin", "not base64!", "base64")} << py << QStringList()
        << QByteArrayList() << QStringLiteral("file 'b.bin': content is not valid base64");
    QTest::newRow("base64 with a non-latin-1 character")
        << QJsonArray{inputFile("b.bin", QStringLiteral("AAH/✓"), "base64")} << py << QStringList()
        << QByteArrayList() << QStringLiteral("not valid base64");
    QTest::newRow("base64url alphabet")
        << QJsonArray{inputFile("b.bin", "-_8=", "base64")} << py << QStringList()
        << QByteArrayList() << QStringLiteral("not valid base64");
    QTest::newRow("data after base64 padding")
        << QJsonArray{inputFile("b.bin", "AA==AA==", "base64")} << py << QStringList()
        << QByteArrayList() << QStringLiteral("not valid base64");
    QTest::newRow("paths normalised")
        << QJsonArray{inputFile("./data/in.csv", "1"), inputFile("/sandbox/b.txt", "2"),
                      inputFile("x/../c.txt", "3"), inputFile("d//e", "4")}
        << py << QStringList{"data/in.csv", "b.txt", "c.txt", "d/e"}
        << QByteArrayList{"1", "2", "3", "4"} << QString();
    QTest::newRow("same path twice")
        << QJsonArray{inputFile("a", "1"), inputFile("a", "2")} << py << QStringList()
        << QByteArrayList() << QStringLiteral("file path 'a' is given twice");
    QTest::newRow("same path after normalisation")
        << QJsonArray{inputFile("a", "1"), inputFile("./a", "2")} << py << QStringList()
        << QByteArrayList() << QStringLiteral("file path 'a' is given twice");
    QTest::newRow("absolute and relative spelling")
        << QJsonArray{inputFile("/sandbox/d/x", "1"), inputFile("d/x", "2")} << py << QStringList()
        << QByteArrayList() << QStringLiteral("file path 'd/x' is given twice");
    QTest::newRow("program file") << QJsonArray{inputFile("main.py", "print(1)")} << py
                                  << QStringList() << QByteArrayList()
                                  << QStringLiteral("file path 'main.py' is where the program "
                                                    "itself is written");
    QTest::newRow("program file spelled differently")
        << QJsonArray{inputFile("/sandbox/./main.py", "x")} << py << QStringList()
        << QByteArrayList() << QStringLiteral("where the program itself is written");
    QTest::newRow("java program file")
        << QJsonArray{inputFile("Main.java", "x")} << QStringLiteral("Main.java") << QStringList()
        << QByteArrayList() << QStringLiteral("where the program itself is written");
    QTest::newRow("another language's program file")
        << QJsonArray{inputFile("main.js", "x"), inputFile("src/main.py", "y")} << py
        << QStringList{"main.js", "src/main.py"} << QByteArrayList{"x", "y"} << QString();
    QTest::newRow("program file name differs in case")
        << QJsonArray{inputFile("main.java", "x")} << QStringLiteral("Main.java")
        << QStringList{"main.java"} << QByteArrayList{"x"} << QString();
    QTest::newRow("escaping path") << QJsonArray{inputFile("../x", "1")} << py << QStringList()
                                   << QByteArrayList() << QStringLiteral("escapes");
    QTest::newRow("escaping after a good file")
        << QJsonArray{inputFile("ok.txt", "1"), inputFile("a/../../x", "2")} << py << QStringList()
        << QByteArrayList() << QStringLiteral("file path 'a/../../x' escapes");
    QTest::newRow("absolute outside")
        << QJsonArray{inputFile("/etc/passwd", "x")} << py << QStringList() << QByteArrayList()
        << QStringLiteral("outside");
    QTest::newRow("empty path") << QJsonArray{inputFile("", "x")} << py << QStringList()
                                << QByteArrayList() << QStringLiteral("is empty");
    QTest::newRow("path missing") << QJsonArray{QJsonObject{{"content", "x"}}} << py
                                  << QStringList() << QByteArrayList()
                                  << QStringLiteral("is empty");
    QTest::newRow("the workdir") << QJsonArray{inputFile(".", "x")} << py << QStringList()
                                 << QByteArrayList() << QStringLiteral("itself");
}

void tst_SandboxTools::parseFiles()
{
    QFETCH(QJsonArray, files);
    QFETCH(QString, programFile);
    QFETCH(QStringList, paths);
    QFETCH(QByteArrayList, contents);
    QFETCH(QString, error);

    ExecutionRequest request;
    QString actualError;
    const bool ok = SandboxTools::parseFiles(files, programFile, &request, &actualError);
    if (!error.isEmpty()) {
        QVERIFY2(!ok, "must be refused");
        QVERIFY2(actualError.contains(error), qPrintable(actualError));
        return;
    }
    QVERIFY2(ok, qPrintable(actualError));
    QCOMPARE(actualError, QString());
    QCOMPARE(request.files.size(), paths.size());
    for (qsizetype i = 0; i < paths.size(); ++i) {
        QCOMPARE(request.files.at(i).path, paths.at(i));
        QCOMPARE(request.files.at(i).content, contents.at(i));
    }
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
    QCOMPARE(SchemaValidator::validate(RunWording::executionOutputSchema(), structured), message);
}

void tst_SandboxTools::networkAttempts()
{
    // The allow-list mode's connections: in structuredContent (valid against the output schema)
    // and, for the refused ones, once each in the text, with why.
    ExecutionResult r = result("", "", 0);
    NetworkAttempt allowed;
    allowed.host = QStringLiteral("pypi.org");
    allowed.port = 443;
    allowed.verdict = NetworkAttempt::Verdict::Allowed;
    allowed.rule = QStringLiteral("pypi.org");
    allowed.bytesUp = 517;
    allowed.bytesDown = 4096;
    allowed.ms = 80;
    NetworkAttempt refused;
    refused.host = QStringLiteral("evil.example");
    refused.port = 443;
    refused.rule = QStringLiteral("not on the allow-list");
    r.network = {allowed, refused, refused};

    const QJsonObject out = RunWording::toolResult(r, QStringLiteral("print()"), false);
    const QJsonObject structured = out.value("structuredContent").toObject();
    QCOMPARE(SchemaValidator::validate(RunWording::executionOutputSchema(), structured), QString());
    const QJsonArray network = structured.value("network").toArray();
    QCOMPARE(network.size(), 3);
    QCOMPARE(network.at(0).toObject(), (QJsonObject{{"host", "pypi.org"},
                                                    {"port", 443},
                                                    {"verdict", "allowed"},
                                                    {"rule", "pypi.org"},
                                                    {"bytes_sent", 517},
                                                    {"bytes_received", 4096},
                                                    {"duration_ms", 80}}));
    QCOMPARE(network.at(1).toObject(), (QJsonObject{{"host", "evil.example"},
                                                    {"port", 443},
                                                    {"verdict", "refused"},
                                                    {"rule", "not on the allow-list"}}));
    QCOMPARE(out.value("content").toArray().at(0).toObject().value("text").toString(),
             QStringLiteral("[network refused: evil.example:443 (not on the allow-list)]"));
    // Without attempts there is no key at all (the other modes' answers are unchanged).
    QVERIFY(!RunWording::toolResult(result("", "", 0), QStringLiteral("print()"), false)
                 .value("structuredContent")
                 .toObject()
                 .contains("network"));
}

void tst_SandboxTools::parseNetwork_data()
{
    // A call's `network` on three servers: --egress (an allow-list), --network (open), neither.
    QTest::addColumn<QJsonObject>("args");
    QTest::addColumn<QString>("server");  // "egress", "open", "none"
    QTest::addColumn<QString>("refusal"); // a part of it; empty: none
    QTest::addColumn<QVariant>("egress"); // what the run asks for; nothing: not said
    const QJsonObject unsaid{{"code", "print(1)"}};
    const auto asking = [](const QJsonArray &hosts) {
        return QJsonObject{{"code", "print(1)"}, {"network", hosts}};
    };
    QTest::newRow("unsaid") << unsaid << "egress" << QString() << QVariant();
    QTest::newRow("unsaid, no network") << unsaid << "none" << QString() << QVariant();
    QTest::newRow("within, normalised") << asking({"API.github.com."}) << "egress" << QString()
                                        << QVariant(QStringList{"api.github.com"});
    QTest::newRow("beyond the server's")
        << asking({"api.github.com", "evil.test"}) << "egress"
        << "runs may reach only the hosts of its allow-list (--egress: *.github.com, pypi.org), "
           "and evil.test is not among them"
        << QVariant();
    QTest::newRow("narrowing the open network")
        << asking({"evil.test"}) << "open" << QString() << QVariant(QStringList{"evil.test"});
    QTest::newRow("a server without network")
        << asking({"pypi.org"}) << "none"
        << "its runs have no network (it was started without --egress), so pypi.org cannot be "
           "reached"
        << QVariant();
    QTest::newRow("none asked, anywhere")
        << asking({}) << "none" << QString() << QVariant(QStringList());
    QTest::newRow("not a pattern") << asking({"https://pypi.org/simple"}) << "egress"
                                   << "Invalid network: not a host pattern" << QVariant();
    // Bound secrets only (--secret, no --egress): their hosts are the allow-list.
    QTest::newRow("a secret's host") << asking({"api.example.com"}) << "secrets" << QString()
                                     << QVariant(QStringList{"api.example.com"});
    QTest::newRow("beyond the secrets' hosts")
        << asking({"pypi.org"}) << "secrets"
        << "(--secret: api.example.com), and pypi.org is not among them" << QVariant();
}

void tst_SandboxTools::describesTheBoundSecrets()
{
    SandboxConfig config;
    config.secrets = {{QStringLiteral("OPENAI_API_KEY"), {QStringLiteral("api.openai.com")}, "v"}};
    const QString text = RunWording::describeLimits(config);
    QVERIFY2(text.contains(QStringLiteral("network only to api.openai.com")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("OPENAI_API_KEY (for api.openai.com) hold placeholders")),
             qPrintable(text));
    QVERIFY(!text.contains(u"\"v\""));
    // Without secrets, nothing of them.
    QVERIFY(!RunWording::describeLimits(SandboxConfig()).contains(QStringLiteral("placeholder")));
}

void tst_SandboxTools::parseNetwork()
{
    QFETCH(QJsonObject, args);
    QFETCH(QString, server);
    QFETCH(QString, refusal);
    QFETCH(QVariant, egress);
    SandboxConfig config;
    if (server == u"egress")
        config.egress = {QStringLiteral("*.github.com"), QStringLiteral("pypi.org")};
    if (server == u"secrets")
        config.secrets = {{QStringLiteral("API_KEY"), {QStringLiteral("api.example.com")}, "v"}};
    config.network = server == u"open";
    std::optional<QStringList> got;
    const QString why = SandboxTools::parseNetwork(args, config, &got);
    if (refusal.isEmpty()) {
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(got.has_value(), egress.isValid());
        if (egress.isValid())
            QCOMPARE(*got, egress.toStringList());
    } else {
        QVERIFY2(why.contains(refusal), qPrintable(why));
    }
    // The tools' schema says what a call gets without it, on this very server.
    const QString described = RunWording::networkFragment(config).value("description").toString();
    QVERIFY2(described.contains(server == u"egress" ? QStringLiteral("*.github.com, pypi.org")
                                : server == u"secrets"
                                    ? QStringLiteral("allow-list, api.example.com")
                                : server == u"open" ? QStringLiteral("the open network")
                                                    : QStringLiteral("no network")),
             qPrintable(described));
}

QTEST_GUILESS_MAIN(tst_SandboxTools)
#include "tst_sandboxtools.moc"
