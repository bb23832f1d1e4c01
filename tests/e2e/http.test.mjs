// The Streamable HTTP endpoint driven by the official SDK client: tools, streamed
// progress and log notifications, parallel calls, several sessions, session
// termination and cancellation.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { DOCKER, sleep, textOf } from './helpers.mjs';
import { PROTOCOL_VERSION, containersOf, startHttpServer, testServerLeftNoContainers } from './httpserver.mjs';

const execFileP = promisify(execFile);

let server;
const clients = [];

async function connect() {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: 'Bearer ' + server.token } },
    });
    const client = new Client({ name: 'code-sandbox-e2e-http', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
}

let closed = false;
async function closeAll() {
    if (closed) return;
    closed = true;
    for (const c of clients) await c.close().catch(() => {});
    if (server) {
        const exit = await server.stop();
        assert.equal(exit.signal, null, `server died from a signal; stderr:\n${server.stderr()}`);
        assert.equal(exit.code, 0, `server exit code; stderr:\n${server.stderr()}`);
    }
}

let main;

before(async () => {
    server = await startHttpServer();
    main = await connect();
});
after(closeAll);

const THREE_LINES = 'import time\nfor i in range(3):\n print(i, flush=True); time.sleep(0.4)';

test('listTools shows the eleven tools', { timeout: 30_000 }, async () => {
    const { tools } = await main.client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['close_session', 'create_session', 'execute_code', 'fork_session', 'get_language_details',
        'get_supported_languages', 'list_sessions', 'list_snapshots', 'rewind_session', 'run_javascript_code',
        'run_python_code']);
    assert.ok(main.transport.sessionId, 'the transport got no Mcp-Session-Id');
});

test('run_python_code print(6*7) returns "42\\n"', { timeout: 60_000 }, async () => {
    const r = await main.client.callTool({ name: 'run_python_code', arguments: { code: 'print(6*7)' } });
    assert.equal(textOf(r), '42\n', JSON.stringify(r));
    assert.equal(r.structuredContent?.stdout, '42\n', JSON.stringify(r));
    assert.notEqual(r.isError, true, JSON.stringify(r));
});

test('output lines arrive as progress notifications before the result', { timeout: 60_000 }, async () => {
    const progress = [];
    const started = Date.now();
    const r = await main.client.callTool(
        { name: 'run_python_code', arguments: { code: THREE_LINES } },
        undefined,
        { onprogress: (p) => progress.push({ ...p, at: Date.now() - started }) });
    const resultAt = Date.now() - started;
    const seen = JSON.stringify(progress);
    assert.equal(textOf(r), '0\n1\n2\n', JSON.stringify(r));
    assert.ok(progress.length >= 2, `expected >= 2 progress notifications before the result, got ${seen}`);
    for (let i = 1; i < progress.length; i++) {
        assert.ok(progress[i].progress > progress[i - 1].progress, `progress must increase: ${seen}`);
    }
    // Streamed, not delivered in one batch with the result: the first line is
    // printed about 0.8 s before the program ends.
    assert.ok(resultAt - progress[0].at >= 400,
        `first progress at ${progress[0].at} ms, result at ${resultAt} ms: not streamed; ${seen}`);
});

test('with setLoggingLevel the output arrives as notifications/message from logger stdout',
    { timeout: 60_000 }, async () => {
        const { client } = await connect();
        const messages = [];
        client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
            messages.push({ ...n.params, at: Date.now() });
        });
        await client.setLoggingLevel('info');
        const r = await client.callTool({ name: 'run_python_code', arguments: { code: THREE_LINES } });
        const resultAt = Date.now();
        assert.equal(textOf(r), '0\n1\n2\n', JSON.stringify(r));
        const stdout = messages.filter((m) => m.logger === 'stdout');
        const seen = JSON.stringify(messages);
        assert.ok(stdout.length >= 1, `no notifications/message with logger stdout: ${seen}`);
        assert.equal(stdout.map((m) => String(m.data)).join(''), '0\n1\n2\n', `stdout log data: ${seen}`);
        assert.ok(stdout.every((m) => m.at <= resultAt), `log message after the result: ${seen}`);
    });

test('four parallel calls on one client each get their own output', { timeout: 90_000 }, async () => {
    const code = (i) => `import time\ntime.sleep(0.5)\nprint("call-${i}", ${i} * 11)`;
    const results = await Promise.all([0, 1, 2, 3].map((i) =>
        main.client.callTool({ name: 'run_python_code', arguments: { code: code(i) } })));
    results.forEach((r, i) => {
        assert.equal(textOf(r), `call-${i} ${i * 11}\n`, `call ${i}: ${JSON.stringify(r)}`);
    });
});

test('two clients at once have independent sessions', { timeout: 90_000 }, async () => {
    const a = await connect();
    const b = await connect();
    assert.ok(a.transport.sessionId && b.transport.sessionId, 'missing session ids');
    assert.notEqual(a.transport.sessionId, b.transport.sessionId, 'two clients share one session');

    const [ra, rb] = await Promise.all([
        a.client.callTool({ name: 'run_python_code', arguments: { code: 'import time\ntime.sleep(0.5)\nprint("from-a")' } }),
        b.client.callTool({ name: 'run_javascript_code', arguments: { code: 'setTimeout(() => console.log("from-b"), 500)' } }),
    ]);
    assert.equal(textOf(ra), 'from-a\n', JSON.stringify(ra));
    assert.equal(textOf(rb), 'from-b\n', JSON.stringify(rb));

    // Ending one session leaves the other working.
    await a.transport.terminateSession();
    const again = await b.client.callTool({ name: 'run_python_code', arguments: { code: 'print("b-still-here")' } });
    assert.equal(textOf(again), 'b-still-here\n', JSON.stringify(again));
});

test('terminateSession ends the session: its id then gets 404', { timeout: 30_000 }, async () => {
    const { client, transport } = await connect();
    await client.listTools();
    const sessionId = transport.sessionId;
    assert.ok(sessionId, 'no session id');
    await transport.terminateSession();
    assert.equal(transport.sessionId, undefined, 'the SDK keeps the session id after terminating');

    const res = await fetch(server.url, {
        method: 'POST',
        headers: {
            Authorization: 'Bearer ' + server.token,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'Mcp-Session-Id': sessionId,
            'MCP-Protocol-Version': PROTOCOL_VERSION,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
    });
    const body = await res.text();
    assert.equal(res.status, 404, `tools/list on the terminated session: ${res.status} ${body}`);
});

/** The container with this id (or id prefix), if it still exists. */
async function containerExists(id) {
    const { stdout } = await execFileP(DOCKER, ['ps', '-a', '-q', '--no-trunc', '--filter', `id=${id}`]);
    return stdout.trim() !== '';
}

test('aborting a call kills its container within 10 s', { timeout: 60_000 }, async () => {
    const controller = new AbortController();
    let hostnameLine;
    const gotHostname = new Promise((resolve) => { hostnameLine = resolve; });
    const code = 'import socket, time\nprint("host=" + socket.gethostname(), flush=True)\ntime.sleep(60)';
    const call = main.client.callTool(
        { name: 'run_python_code', arguments: { code } },
        undefined,
        {
            signal: controller.signal,
            onprogress: (p) => {
                const m = /host=(\w+)/.exec(p.message ?? '');
                if (m) hostnameLine(m[1]);
            },
        });
    call.catch(() => {}); // observed below

    const timeout = sleep(30_000).then(() => null);
    const hostname = await Promise.race([gotHostname, timeout]);
    assert.ok(hostname, `the program's first line never arrived as progress; stderr:\n${server.stderr()}`);
    // A container's hostname is its short id.
    const labelled = await containersOf(server.child.pid);
    assert.ok(labelled.some((id) => id.startsWith(hostname) || hostname.startsWith(id)),
        `hostname ${hostname} is not one of the labelled containers ${labelled.join(' ')}`);
    assert.ok(await containerExists(hostname), `container ${hostname} not found before the abort`);

    const abortedAt = Date.now();
    controller.abort('test abort');
    await assert.rejects(call, 'the aborted call should reject');

    let gone = false;
    while (Date.now() - abortedAt < 10_000) {
        if (!(await containerExists(hostname))) { gone = true; break; }
        await sleep(200);
    }
    assert.ok(gone, `container ${hostname} still exists 10 s after the abort; stderr:\n${server.stderr()}`);

    // The session survives a cancelled call.
    const r = await main.client.callTool({ name: 'run_python_code', arguments: { code: 'print("after-abort")' } });
    assert.equal(textOf(r), 'after-abort\n', JSON.stringify(r));
});

testServerLeftNoContainers(() => server, closeAll);
