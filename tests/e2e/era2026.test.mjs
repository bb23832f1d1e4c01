// Revision 2026-07-28 beside 2025-11-25: the official v2 TypeScript SDK client
// (@modelcontextprotocol/client 2.x) opted into 2026-07-28 over stdio and HTTP, the same client
// with default settings (the 2025 era), a 1.32 client on the same HTTP endpoint at the same time,
// the revision's errors, cancellation by closing a request's stream, and tasks.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { BIN, DOCKER, MINIMAL_PATH, sleep, textOf } from './helpers.mjs';
import { containersOf, startHttpServer } from './httpserver.mjs';

const MODERN = '2026-07-28';
const execFileP = promisify(execFile);
const pinned = { versionNegotiation: { mode: { pin: MODERN } } };

function stdioTransport() {
    return new StdioClientTransport({ command: BIN, args: ['--stdio'], env: { PATH: MINIMAL_PATH }, stderr: 'pipe' });
}

function httpTransport(server) {
    return new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: 'Bearer ' + server.token } },
    });
}

async function runs(client, tool, code, expected) {
    const r = await client.callTool({ name: tool, arguments: { code } });
    assert.ok(!r.isError, `${tool} failed: ${JSON.stringify(r)}`);
    assert.match(textOf(r), expected, JSON.stringify(r));
}

// What every era-2026 client must be able to do, on either transport.
async function exerciseModern(client, label) {
    assert.equal(client.getProtocolEra(), 'modern', `${label}: the client negotiated the 2026 era`);
    const discover = client.getDiscoverResult();
    assert.ok(discover?.supportedVersions?.includes(MODERN), `${label}: discover lists ${MODERN}: ${JSON.stringify(discover)}`);
    assert.ok(discover.supportedVersions.includes('2025-11-25'), `${label}: and the 2025 revision`);
    assert.ok(discover.capabilities?.tools, `${label}: tools announced`);

    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ['run_python_code', 'run_javascript_code', 'execute_code', 'create_session'])
        assert.ok(names.includes(n), `${label}: ${n} listed: ${names}`);

    await runs(client, 'run_python_code', 'print(6 * 7)', /42/);
    await runs(client, 'run_javascript_code', 'console.log([1, 2, 3].map((x) => x * 2).join(","))', /2,4,6/);

    // Progress and output of a running call come on its own request stream.
    const progress = [];
    const r = await client.callTool(
        { name: 'execute_code', arguments: { language: 'python', code: 'import time\nfor i in range(3):\n    print("tick", i, flush=True)\n    time.sleep(0.3)' } },
        { onprogress: (p) => progress.push(p) });
    assert.match(textOf(r), /tick 2/);
    assert.ok(progress.length > 0, `${label}: progress notifications arrived`);

    // A session handle used across calls.
    const created = await client.callTool({ name: 'create_session', arguments: { language: 'python' } });
    const sessionId = created.structuredContent?.session_id;
    assert.ok(sessionId, `${label}: create_session gave a handle: ${JSON.stringify(created)}`);
    await client.callTool({ name: 'run_python_code', arguments: { code: 'x = 41', session_id: sessionId } });
    const again = await client.callTool({ name: 'run_python_code', arguments: { code: 'print(x + 1)', session_id: sessionId } });
    assert.match(textOf(again), /42/, `${label}: the session kept x`);
    const closed = await client.callTool({ name: 'close_session', arguments: { session_id: sessionId } });
    assert.ok(!closed.isError, JSON.stringify(closed));
}

/** The container with this id (or id prefix), if it still exists. */
async function containerExists(id) {
    const { stdout } = await execFileP(DOCKER, ['ps', '-a', '-q', '--no-trunc', '--filter', `id=${id}`]);
    return stdout.trim() !== '';
}

async function goneWithin(hostname, ms) {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
        if (!(await containerExists(hostname))) return true;
        await sleep(200);
    }
    return false;
}

const HOSTNAME_THEN_SLEEP = 'import socket, time\nprint("host=" + socket.gethostname(), flush=True)\ntime.sleep(60)';

// Aborting a call cancels it (over HTTP in 2026-07-28: the request's stream closes; over stdio:
// notifications/cancelled); the call's own container (its hostname) goes within 10 s.
async function cancelRemovesContainer(client, label) {
    const controller = new AbortController();
    let found;
    const gotHostname = new Promise((resolve) => { found = resolve; });
    const call = client.callTool(
        { name: 'execute_code', arguments: { language: 'python', code: HOSTNAME_THEN_SLEEP, timeout: 120 } },
        {
            signal: controller.signal,
            onprogress: (p) => {
                const m = /host=(\w+)/.exec(p.message ?? '');
                if (m) found(m[1]);
            },
        });
    call.catch(() => {});
    const hostname = await Promise.race([gotHostname, sleep(30_000).then(() => null)]);
    assert.ok(hostname, `${label}: the program's first line arrived as progress`);
    assert.ok(await containerExists(hostname), `${label}: container ${hostname} runs before the abort`);
    controller.abort('test abort');
    await assert.rejects(call);
    assert.ok(await goneWithin(hostname, 10_000), `${label}: container ${hostname} is gone 10 s after the abort`);
}

test('stdio: a v2 client pinned to 2026-07-28 works from the first message', async () => {
    const client = new Client({ name: 'era2026-e2e', version: '1.0.0' }, pinned);
    await client.connect(stdioTransport());
    try {
        await exerciseModern(client, 'stdio');
        await cancelRemovesContainer(client, 'stdio');
    } finally {
        await client.close();
    }
});

test('stdio: the same v2 client with default settings speaks 2025-11-25', async () => {
    const client = new Client({ name: 'era2025-e2e', version: '1.0.0' });
    await client.connect(stdioTransport());
    try {
        assert.equal(client.getProtocolEra(), 'legacy');
        await runs(client, 'run_python_code', 'print("legacy", 1 + 1)', /legacy 2/);
    } finally {
        await client.close();
    }
});

test('stdio: a v2 client in auto mode finds the 2026 era', async () => {
    const client = new Client({ name: 'era-auto-e2e', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(stdioTransport());
    try {
        assert.equal(client.getProtocolEra(), 'modern');
        await runs(client, 'run_python_code', 'print("auto")', /auto/);
    } finally {
        await client.close();
    }
});

let server;
before(async () => { server = await startHttpServer(); });
after(async () => { await server?.stop(); });

test('HTTP: a v2 client pinned to 2026-07-28', async () => {
    const client = new Client({ name: 'era2026-http-e2e', version: '1.0.0' }, pinned);
    await client.connect(httpTransport(server));
    try {
        await exerciseModern(client, 'http');
        await cancelRemovesContainer(client, 'http');
    } finally {
        await client.close();
    }
});

test('HTTP: the v2 client with default settings still speaks 2025-11-25', async () => {
    const client = new Client({ name: 'era2025-http-e2e', version: '1.0.0' });
    await client.connect(httpTransport(server));
    try {
        assert.equal(client.getProtocolEra(), 'legacy');
        await runs(client, 'run_python_code', 'print("legacy http")', /legacy http/);
    } finally {
        await client.close();
    }
});

test('HTTP: a 2026 v2 client and a 1.32 client share the endpoint at the same time', async () => {
    const modern = new Client({ name: 'era2026-shared', version: '1.0.0' }, pinned);
    await modern.connect(httpTransport(server));
    const legacy = new LegacyClient({ name: 'era2025-shared', version: '1.0.0' });
    await legacy.connect(new LegacyHttpTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: 'Bearer ' + server.token } },
    }));
    try {
        const code = (who) => `import time\ntime.sleep(1)\nprint("${who}", sum(range(10)))`;
        const [a, b] = await Promise.all([
            modern.callTool({ name: 'run_python_code', arguments: { code: code('modern') } }),
            legacy.callTool({ name: 'run_python_code', arguments: { code: code('legacy') } }),
        ]);
        assert.match(textOf(a), /modern 45/);
        assert.match(textOf(b), /legacy 45/);
    } finally {
        await modern.close();
        await legacy.close();
    }
});

// Raw requests of revision 2026-07-28, as the revision writes them.
function modernHeaders(method, name, extra = {}, target = server) {
    const h = {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: 'Bearer ' + target.token,
        'MCP-Protocol-Version': MODERN,
        'Mcp-Method': method,
        ...extra,
    };
    if (name !== undefined) h['Mcp-Name'] = name;
    return h;
}

function envelope(capabilities = {}) {
    return {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': capabilities,
        'io.modelcontextprotocol/clientInfo': { name: 'era2026-raw', version: '1.0.0' },
    };
}

let nextId = 1;
async function post(method, params, { name, headers = {}, timeoutMs = 60_000, target = server } = {}) {
    const id = nextId++;
    const res = await fetch(target.url, {
        method: 'POST',
        headers: modernHeaders(method, name, headers, target),
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        signal: AbortSignal.timeout(timeoutMs), // what MCP clients commonly allow a request
    });
    const text = await res.text();
    let body;
    if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
        const events = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
        body = events.find((e) => e.id === id);
    } else {
        body = text ? JSON.parse(text) : undefined;
    }
    return { status: res.status, body };
}

test('HTTP: the revision\'s errors: unsupported version, header mismatch, removed methods', async () => {
    const bad = await post('tools/list', { _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '1999-01-01' } },
        { headers: { 'MCP-Protocol-Version': '1999-01-01' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, -32022);
    assert.deepEqual(bad.body.error.data.supported.slice(0, 2), [MODERN, '2025-11-25']);

    const mismatch = await post('tools/call', { name: 'get_supported_languages', arguments: {}, _meta: envelope() }, { name: 'other_tool' });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.error.code, -32020);

    const ping = await post('ping', { _meta: envelope() });
    assert.equal(ping.status, 404);
    assert.equal(ping.body.error.code, -32601);

    const list = await post('tools/list', { _meta: envelope() });
    assert.equal(list.status, 200);
    assert.equal(list.body.result.resultType, 'complete');
    assert.ok(Number.isInteger(list.body.result.ttlMs) && list.body.result.cacheScope, JSON.stringify(list.body.result).slice(0, 200));

    const missing = await post('resources/read', { uri: 'sandbox://nothing', _meta: envelope() }, { name: 'sandbox://nothing' });
    assert.equal(missing.body.error.code, -32602, 'an unknown resource is Invalid Params in 2026-07-28');
});

test('HTTP: a session handle this instance does not hold is an isError result naming the handle', async () => {
    const r = await post('tools/call', { name: 'run_python_code', arguments: { code: 'print(1)', session_id: 's-0123456789ab' }, _meta: envelope() },
        { name: 'run_python_code' });
    assert.equal(r.body.result.isError, true);
    assert.match(r.body.result.content[0].text, /no session 's-0123456789ab' here/i);
    // A handle made by another instance names that instance, and the answer says so.
    const other = await post('tools/call', { name: 'run_python_code', arguments: { code: 'print(1)', session_id: 's-elsewhere-0123456789ab' }, _meta: envelope() },
        { name: 'run_python_code' });
    assert.equal(other.body.result.isError, true);
    assert.match(other.body.result.content[0].text,
        /session 's-elsewhere-0123456789ab' belongs to another instance of this server \(elsewhere; this is [0-9a-z]{1,8}\)/i);
});

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

async function pollTask(taskId, untilMs, target = server) {
    for (;;) {
        const r = await post('tasks/get', { taskId, _meta: envelope(TASKS) }, { target });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const task = r.body.result;
        if (['completed', 'failed', 'cancelled'].includes(task.status)) return task;
        assert.ok(Date.now() < untilMs, `task ${taskId} still ${task.status}`);
        await sleep(Math.max(task.pollIntervalMs ?? 1000, 1000) * 2);
    }
}

test('HTTP tasks: cancelling a task removes its container', async () => {
    // Without a warm pool, the only sandbox of this server while the task runs is the task's.
    const own = await startHttpServer({ args: ['--pool', '0'] });
    try {
        const created = await post('tools/call', {
            name: 'execute_code', arguments: { language: 'python', code: 'import time\nprint("started", flush=True)\ntime.sleep(60)', timeout: 120 }, _meta: envelope(TASKS),
        }, { name: 'execute_code', target: own });
        assert.equal(created.body.result.resultType, 'task', JSON.stringify(created.body));
        const taskId = created.body.result.taskId;
        let running = [];
        for (let i = 0; i < 150; i++) {
            await sleep(200);
            const r = await post('tasks/get', { taskId, _meta: envelope(TASKS) }, { target: own });
            // Output has begun (the status message follows the run's output): the program runs.
            if (/^stdout/.test(r.body.result.statusMessage ?? '')) {
                running = await containersOf(own.child.pid);
                break;
            }
        }
        assert.equal(running.length, 1, `the task runs in one container: ${running}`);
        const cancel = await post('tasks/cancel', { taskId, _meta: envelope(TASKS) }, { target: own });
        assert.equal(cancel.body.result.resultType, 'complete');
        const task = await pollTask(taskId, Date.now() + 30_000, own);
        assert.equal(task.status, 'cancelled');
        assert.ok(await goneWithin(running[0], 10_000), `container ${running[0]} is gone 10 s after tasks/cancel`);
    } finally {
        await own.stop();
    }
});

// Longer than the 60 s a request may take (the SDK's default), and no longer than it must be.
test('HTTP tasks: a run longer than a request may take (70 s, each request 60 s at most) completes through a task', { timeout: 240_000 }, async () => {
    const started = Date.now();
    const created = await post('tools/call', {
        name: 'execute_code',
        arguments: { language: 'python', code: 'import time\nprint("begin", flush=True)\ntime.sleep(70)\nprint("70 s later")', timeout: 120 },
        _meta: envelope(TASKS),
    }, { name: 'execute_code' });
    assert.equal(created.status, 200);
    const handle = created.body.result;
    assert.equal(handle.resultType, 'task', JSON.stringify(handle));
    assert.equal(handle.status, 'working');
    assert.ok(Number.isInteger(handle.ttlMs) && handle.ttlMs >= 600_000, 'results are kept at least 10 minutes');
    assert.ok(Date.now() - started < 60_000, 'the handle came at once, within one request timeout');

    const task = await pollTask(handle.taskId, started + 200_000);
    assert.equal(task.status, 'completed', JSON.stringify(task));
    assert.ok(Date.now() - started >= 70_000, 'the run really took 70 s, more than one request may');
    assert.equal(task.result.structuredContent?.stdout, 'begin\n70 s later\n', JSON.stringify(task.result));
    assert.equal(task.result.isError ?? false, false);
});

// Tasks belong to the client that started them: to another client (its own MCP session) a
// foreign task id answers exactly as an id never issued, tasks/list leaves it out, and its
// tasks/cancel stops nothing. A 2026-07-28 request is yet another owner (its credential).
test('HTTP tasks: another client can neither see, poll, fetch nor cancel a client\'s task', { timeout: 120_000 }, async () => {
    const connect = async (name) => {
        const client = new LegacyClient({ name, version: '1.0.0' });
        await client.connect(new LegacyHttpTransport(new URL(server.url), {
            requestInit: { headers: { Authorization: 'Bearer ' + server.token } },
        }));
        return client;
    };
    const owner = await connect('tasks-owner');
    const stranger = await connect('tasks-stranger');
    try {
        const created = await owner.request({
            method: 'tools/call',
            params: {
                name: 'execute_code',
                arguments: { language: 'python', code: 'import time\ntime.sleep(5)\nprint("mine")', timeout: 60 },
                task: { ttl: 60_000 },
            },
        }, CreateTaskResultSchema);
        const taskId = created.task.taskId;
        const neverIssued = 'task-' + '0'.repeat(32);
        const answer = (promise, id) => promise.then(
            (result) => ({ answered: result }),
            (e) => ({ code: e.code, message: String(e.message).replaceAll(id, '<id>') }));
        const asks = {
            'tasks/get': (id) => stranger.experimental.tasks.getTask(id),
            'tasks/result': (id) => stranger.experimental.tasks.getTaskResult(id, CallToolResultSchema),
            'tasks/cancel': (id) => stranger.experimental.tasks.cancelTask(id),
        };
        for (const [method, ask] of Object.entries(asks)) {
            const unknown = await answer(ask(neverIssued), neverIssued);
            assert.equal(unknown.code, -32602, `${method} of an unknown id: ${JSON.stringify(unknown)}`);
            assert.deepEqual(await answer(ask(taskId), taskId), unknown, `${method} of another client's task`);
        }
        assert.deepEqual((await stranger.experimental.tasks.listTasks()).tasks, []);
        const modern = await post('tasks/get', { taskId, _meta: envelope(TASKS) });
        assert.equal(modern.body.error?.code, -32602, JSON.stringify(modern.body));

        // The owner lists it, and it was not cancelled: it ends with its own output.
        const listed = (await owner.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
        assert.deepEqual(listed, [taskId]);
        const result = await owner.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        assert.match(textOf(result), /mine/, JSON.stringify(result));
        assert.equal((await owner.experimental.tasks.getTask(taskId)).status, 'completed');
    } finally {
        await owner.close();
        await stranger.close();
    }
});

// Nobody but its session may reach a 2025 session's task, so the task ends with the session:
// a DELETE of the session cancels it and its container goes.
test('HTTP tasks: ending a 2025 session cancels its tasks and removes their containers', { timeout: 120_000 }, async () => {
    // Without a warm pool, the only sandbox of this server while the task runs is the task's.
    const own = await startHttpServer({ args: ['--pool', '0'] });
    const transport = new LegacyHttpTransport(new URL(own.url), {
        requestInit: { headers: { Authorization: 'Bearer ' + own.token } },
    });
    const client = new LegacyClient({ name: 'tasks-session-end', version: '1.0.0' });
    try {
        await client.connect(transport);
        const created = await client.request({
            method: 'tools/call',
            // Longer than the test may take: only a cancellation ends it in time.
            params: { name: 'execute_code', arguments: { language: 'python', code: 'import time\nprint("started", flush=True)\ntime.sleep(290)', timeout: 300 }, task: { ttl: 60_000 } },
        }, CreateTaskResultSchema);
        // Output has begun (the status message follows the run's output): the program runs.
        for (;;) {
            const task = await client.experimental.tasks.getTask(created.task.taskId);
            assert.equal(task.status, 'working', JSON.stringify(task));
            if (/^stdout/.test(task.statusMessage ?? '')) break;
            await sleep(200);
        }
        const running = await containersOf(own.child.pid);
        assert.equal(running.length, 1, `the task runs in one container: ${running}`);
        await transport.terminateSession();
        // Until it is gone, or the test's timeout.
        while ((await containersOf(own.child.pid)).length > 0) await sleep(200);
    } finally {
        await client.close();
        await own.stop();
    }
});
