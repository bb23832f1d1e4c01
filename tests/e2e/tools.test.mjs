// Tools, resources and argument handling, through the official MCP SDK client.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { progressOnTheWire, startClient, testNoContainersLeft, textOf } from './helpers.mjs';

const RUN_TOOLS = ['run_python_code', 'run_javascript_code', 'execute_code'];
const SESSION_TOOLS = ['create_session', 'list_sessions', 'close_session', 'list_snapshots', 'rewind_session', 'fork_session'];
const ALL_TOOLS = [...RUN_TOOLS, 'get_supported_languages', 'get_language_details', ...SESSION_TOOLS].sort();
const RESULT_FIELDS = ['compile_error', 'duration_ms', 'exit_code', 'files', 'image', 'language', 'out_of_memory', 'stderr', 'stdout', 'timed_out', 'truncated'];
const ALL_LANGUAGES = ['python', 'javascript', 'typescript', 'bash', 'c', 'cpp', 'go', 'java', 'ruby', 'r', 'rust'];

let server;
let client;
let closed = false;

async function close() {
    if (!closed) {
        closed = true;
        await client?.close();
    }
}

before(async () => {
    server = await startClient({
        args: ['--stdio', '--pass-through-env', 'FOO'],
        env: { FOO: 'foo-value', SECRET_HOST_VAR: 'must-not-leak' },
    });
    client = server.client;
});
after(close);

const call = (name, args) => client.callTool({ name, arguments: args });

function assertRunResult(result, { language, exitCode = 0, isError = false } = {}) {
    const sc = result.structuredContent;
    assert.ok(sc, `no structuredContent: ${JSON.stringify(result)}`);
    assert.deepEqual(Object.keys(sc).sort(), RESULT_FIELDS);
    assert.equal(sc.exit_code, exitCode, `exit_code; stderr: ${sc.stderr}`);
    assert.equal(sc.language, language);
    assert.equal(sc.image, `code-sandbox/${language === 'python' ? 'python' : 'node'}:latest`);
    assert.equal(typeof sc.duration_ms, 'number');
    assert.ok(Number.isInteger(sc.duration_ms) && sc.duration_ms >= 0, `duration_ms ${sc.duration_ms}`);
    assert.equal(sc.timed_out, false);
    assert.equal(sc.truncated, false);
    assert.equal(result.isError === true, isError, `isError: ${JSON.stringify(result)}`);
}

test('tools/list returns exactly the eleven tools with schemas', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ALL_TOOLS);
    for (const tool of tools) {
        assert.equal(tool.inputSchema?.type, 'object', `${tool.name} inputSchema`);
        assert.equal(typeof tool.description, 'string');
        assert.ok(tool.description.length > 0, `${tool.name} has no description`);
    }
    for (const name of RUN_TOOLS) {
        const tool = tools.find((t) => t.name === name);
        assert.equal(tool.outputSchema?.type, 'object', `${name} outputSchema`);
        assert.deepEqual([...tool.outputSchema.required].sort(), RESULT_FIELDS, `${name} outputSchema.required`);
        assert.deepEqual(tool.inputSchema.required, ['code'], `${name} requires code`);
        assert.equal(tool.inputSchema.properties.code.type, 'string');
    }
    const exec = tools.find((t) => t.name === 'execute_code');
    assert.equal(exec.inputSchema.properties.language.default, 'python');
    assert.equal(exec.inputSchema.properties.timeout.type, 'integer');
});

test('run_python_code prints 42', { timeout: 60_000 }, async () => {
    const r = await call('run_python_code', { code: 'print(6*7)' });
    assert.equal(textOf(r), '42\n');
    assertRunResult(r, { language: 'python' });
    assert.equal(r.structuredContent.stdout, '42\n');
    assert.equal(r.structuredContent.stderr, '');
});

test('run_javascript_code prints 42', { timeout: 60_000 }, async () => {
    const r = await call('run_javascript_code', { code: 'console.log(6*7)' });
    assert.equal(textOf(r), '42\n');
    assertRunResult(r, { language: 'javascript' });
    assert.equal(r.structuredContent.stdout, '42\n');
});

test('only --pass-through-env variables reach the sandbox', { timeout: 60_000 }, async () => {
    const code = [
        'import json, os',
        'print(json.dumps({"foo": os.environ.get("FOO"), "secret": os.environ.get("SECRET_HOST_VAR"),',
        '                  "names": sorted(os.environ)}))',
    ].join('\n');
    const r = await call('run_python_code', { code });
    assertRunResult(r, { language: 'python' });
    const seen = JSON.parse(r.structuredContent.stdout);
    assert.equal(seen.foo, 'foo-value');
    assert.equal(seen.secret, null, 'SECRET_HOST_VAR leaked into the sandbox');
    assert.ok(seen.names.includes('FOO'));
    const allowed = new Set(['FOO', 'HOME', 'HOSTNAME', 'LANG', 'PATH', 'PWD', 'OUTPUT_DIR']);
    const unexpected = seen.names.filter((n) => !allowed.has(n) && !n.startsWith('PYTHON') && !n.startsWith('MPL'));
    assert.deepEqual(unexpected, [], `unexpected variables in the sandbox: ${unexpected.join(', ')}`);
});

test('an uncaught exception is an error with the traceback on stderr', { timeout: 60_000 }, async () => {
    const r = await call('run_python_code', { code: 'raise ValueError("boom")' });
    assertRunResult(r, { language: 'python', exitCode: 1, isError: true });
    const { stderr, stdout } = r.structuredContent;
    assert.equal(stdout, '');
    assert.match(stderr, /Traceback \(most recent call last\)/);
    assert.match(stderr, /ValueError: boom/);
    assert.equal(textOf(r), `[stderr]\n${stderr}[exit code 1]`);
});

test('sys.exit(3) reports exit code 3', { timeout: 60_000 }, async () => {
    const r = await call('run_python_code', { code: 'import sys\nsys.exit(3)' });
    assertRunResult(r, { language: 'python', exitCode: 3, isError: true });
    assert.equal(textOf(r), '[exit code 3]');
});

test('stdout, stderr and exit code are all in the text', { timeout: 60_000 }, async () => {
    const r = await call('run_javascript_code', { code: 'console.log("out"); console.error("err"); process.exitCode = 4;' });
    assertRunResult(r, { language: 'javascript', exitCode: 4, isError: true });
    assert.equal(textOf(r), 'out\n[stderr]\nerr\n[exit code 4]');
});

for (const language of ['javascript', 'js']) {
    test(`execute_code with language "${language}" runs Node.js`, { timeout: 60_000 }, async () => {
        const r = await call('execute_code', { code: 'console.log(process.release.name, 6*7)', language });
        assertRunResult(r, { language: 'javascript' });
        assert.equal(r.structuredContent.stdout, 'node 42\n');
        assert.deepEqual(JSON.parse(textOf(r)), r.structuredContent, 'execute_code text is the JSON of structuredContent');
    });
}

test('execute_code defaults to python', { timeout: 60_000 }, async () => {
    const r = await call('execute_code', { code: 'import sys\nprint(sys.version_info[0])' });
    assertRunResult(r, { language: 'python' });
    assert.equal(r.structuredContent.stdout, '3\n');
    assert.deepEqual(JSON.parse(textOf(r)), r.structuredContent);
});

test('execute_code timeout stops an endless loop quickly', { timeout: 60_000 }, async () => {
    const started = Date.now();
    const r = await call('execute_code', { code: 'while True: pass', timeout: 2 });
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 10_000, `call took ${elapsed} ms`);
    assert.equal(r.isError, true);
    const sc = r.structuredContent;
    assert.equal(sc.timed_out, true);
    assert.equal(sc.exit_code, null);
    // The program is stopped about 2 s after it started (Qt's default coarse timers may fire up to 5 % early).
    assert.ok(sc.duration_ms >= 1900 && sc.duration_ms < 10_000, `duration_ms ${sc.duration_ms}`);
    assert.deepEqual(JSON.parse(textOf(r)), sc);
});

test('a run tool timeout is reported in the text', { timeout: 60_000 }, async () => {
    const { client: short } = await startClient({ args: ['--stdio', '--timeout', '2'] });
    try {
        const r = await short.callTool({ name: 'run_python_code', arguments: { code: 'print("x", flush=True)\nwhile True: pass' } });
        assert.equal(r.isError, true);
        assert.equal(r.structuredContent.timed_out, true);
        assert.equal(textOf(r), 'x\n[timed out after 2 s: the program was stopped]');
    } finally {
        await short.close();
    }
});

test('empty output gets a hint', { timeout: 60_000 }, async () => {
    const r = await call('run_python_code', { code: 'x = 1' });
    assertRunResult(r, { language: 'python' });
    assert.equal(textOf(r), 'No output — did you forget to print()?');
    assert.equal(r.structuredContent.stdout, '');
});

test('progress names whole lines of output, however the output was cut', { timeout: 60_000 }, async () => {
    // A line written in pieces with pauses between them reaches the server in pieces; a bar
    // redrawn with carriage returns is a line each time.
    const code = 'import sys, time\n'
        + 'for piece in ("hal", "f a li", "ne\\n"):\n'
        + '    sys.stdout.write(piece); sys.stdout.flush(); time.sleep(0.3)\n'
        + 'for p in (10, 20):\n'
        + '    sys.stderr.write(f"\\r{p}%"); sys.stderr.flush(); time.sleep(0.3)\n'
        + 'print("done", flush=True)';
    const { result: r, progress } = await progressOnTheWire(client, () => client.callTool(
        { name: 'run_python_code', arguments: { code } }, undefined, { onprogress: () => {} }));
    assert.equal(r.structuredContent.stdout, 'half a line\ndone\n', textOf(r));
    const output = progress.map((p) => p.message ?? '').filter((m) => /^std(out|err): /.test(m));
    assert.deepEqual(output, ['stdout: half a line', 'stderr: 10%', 'stdout: done'],
        `progress: ${JSON.stringify(progress)}`);
});

test('get_supported_languages lists every language', async () => {
    const r = await call('get_supported_languages', {});
    assert.notEqual(r.isError, true);
    assert.deepEqual(r.structuredContent.languages, ALL_LANGUAGES);
    assert.deepEqual(JSON.parse(textOf(r)), ALL_LANGUAGES);
    // Then the engine, in the structured answer and in words.
    const [engine] = r.structuredContent.engines;
    assert.equal(r.structuredContent.engines.length, 1);
    assert.equal(engine.state, 'up', JSON.stringify(engine));
    assert.ok(engine.address.length > 0);
    assert.match(r.content[1].text, /^Container engine:\n- .+: up, (Docker Engine|Podman) /);
});

test('get_language_details describes python', { timeout: 60_000 }, async () => {
    const r = await call('get_language_details', { language: 'python' });
    assert.notEqual(r.isError, true);
    const d = r.structuredContent;
    assert.equal(d.name, 'python');
    assert.match(d.version, /^Python 3\./);
    assert.equal(d.package_manager, 'pip');
    assert.equal(d.image, 'code-sandbox/python:latest');
    assert.ok(d.preinstalled_libraries.some((l) => /^numpy \d+\./.test(l)), 'numpy with the version in the image');
    assert.deepEqual(JSON.parse(textOf(r)), d);
});

test('an unknown language is an error naming the supported ones', async () => {
    for (const [tool, args] of [
        ['get_language_details', { language: 'cobol' }],
        ['execute_code', { code: 'print(1)', language: 'cobol' }],
    ]) {
        const r = await call(tool, args);
        assert.equal(r.isError, true, tool);
        const text = textOf(r);
        assert.match(text, /cobol/, tool);
        assert.match(text, /python/, tool);
        assert.match(text, /javascript/, tool);
        assert.equal(r.structuredContent, undefined, tool);
    }
});

test('libraries are refused without --allow-network-for-install, saying how to allow them', async () => {
    const r = await call('execute_code', { code: 'import requests', libraries: ['requests'] });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /needs network access/);
    assert.match(textOf(r), /--allow-network-for-install/);
    assert.match(textOf(r), /numpy/, 'names the preinstalled libraries');
});

test('a wrong argument type is an error naming the field', async () => {
    const r = await call('run_python_code', { code: 42 });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /'code'/);
    assert.match(textOf(r), /string/);
});

test('a missing argument is an error naming the field', async () => {
    for (const tool of RUN_TOOLS) {
        const r = await call(tool, {});
        assert.equal(r.isError, true, tool);
        assert.match(textOf(r), /'code'/, tool);
        assert.match(textOf(r), /required/, tool);
    }
});

test('an out-of-range timeout is an error naming the field', async () => {
    const r = await call('execute_code', { code: 'print(1)', timeout: 100000 });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /'timeout'/);
});

test('an unknown tool is a JSON-RPC invalid-params error', async () => {
    await assert.rejects(call('no_such_tool', {}), (err) => {
        assert.ok(err instanceof McpError, `not an McpError: ${err}`);
        assert.equal(err.code, -32602);
        assert.match(err.message, /no_such_tool/);
        return true;
    });
});

test('resources are listed and readable as JSON', { timeout: 60_000 }, async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri).sort();
    assert.deepEqual(uris, ['sandbox://environments', 'sandbox://languages']);

    const languages = await client.readResource({ uri: 'sandbox://languages' });
    assert.equal(languages.contents.length, 1);
    assert.equal(languages.contents[0].uri, 'sandbox://languages');
    assert.equal(languages.contents[0].mimeType, 'application/json');
    const langList = JSON.parse(languages.contents[0].text);
    assert.deepEqual(langList.map((l) => l.name), ALL_LANGUAGES);

    const environments = await client.readResource({ uri: 'sandbox://environments' });
    assert.equal(environments.contents[0].uri, 'sandbox://environments');
    const { engines, ...envs } = JSON.parse(environments.contents[0].text);
    assert.deepEqual(Object.keys(envs).sort(), [...ALL_LANGUAGES].sort());
    assert.equal(envs.python.image, 'code-sandbox/python:latest');
    assert.equal(envs.javascript.image, 'code-sandbox/node:latest');
    // The one engine this server runs on, and that it answers.
    assert.equal(engines.length, 1);
    assert.equal(engines[0].state, 'up', JSON.stringify(engines[0]));
    assert.match(engines[0].product, /^(Docker Engine|Podman)$/);
    assert.match(engines[0].version, /^\d+\./);
    assert.ok(engines[0].capacity >= 1);
});

test('the server still works after all the errors', { timeout: 60_000 }, async () => {
    await client.ping();
    const r = await call('run_python_code', { code: 'print("still alive")' });
    assert.equal(textOf(r), 'still alive\n');
});

testNoContainersLeft(close);
