// Byte-for-byte answers: a fixed set of requests, in both protocol eras, over stdio and over
// Streamable HTTP, against the real binary; every answer (tools/list, each tool result, the
// errors) is compared with the golden file under golden/ that was captured from an earlier
// build. Only what differs from one run to the next is normalised (durations, handles, task
// ids, timestamps, the HTTP session id). A change in any other byte fails, so a refactoring
// that should change nothing a client sees proves it here.
//
// After an intended change of an answer, capture the files again and review their diff:
//   CS_GOLDEN_UPDATE=1 CODE_SANDBOX_BIN=…/build/bin/code-sandbox node --test golden.test.mjs
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';

import { BIN, MINIMAL_PATH, sleep } from './helpers.mjs';
import { startHttpServer, testServerLeftNoContainers } from './httpserver.mjs';

const UPDATE = process.env.CS_GOLDEN_UPDATE === '1';
const GOLDEN_DIR = new URL('./golden/', import.meta.url);
const MODERN = '2026-07-28';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

/** What varies between runs of the same build, and nothing else. */
export function normalise(text) {
    return text
        // Run durations, as a field and inside execute_code's JSON text ("\"duration_ms\":…").
        .replace(/(\\*"duration_ms\\*":)\d+/g, '$10')
        // Sandbox session handles: s-<instance>-<12 hex>; the instance alone in messages.
        .replace(/\bs-([0-9a-z]{1,8})-[0-9a-f]{12}\b/g, 's-<instance>-<handle>')
        .replace(/(this is )[0-9a-z]{1,8}\)/g, '$1<instance>)')
        // Task ids and times.
        .replace(/\btask-[0-9a-f]{32}\b/g, 'task-<id>')
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?/g, '<time>')
        // Seconds a session has left before it expires.
        .replace(/(\\*"expires_in_sec\\*":)\d+/g, '$1<s>')
        // A task's status message follows its output as it arrived (one chunk or several).
        .replace(/("statusMessage":)"(?:[^"\\]|\\.)*"/g, '$1"<progress>"')
        // The machine's size: the engine's CPUs and memory, and the runs at once they allow.
        .replace(/(\\*"(?:cpus|memory_bytes|capacity)\\*":)\d+/g, '$1<n>')
        .replace(/(\d+ of )\d+( running)/g, '$1<n>$2')
        // The runtimes the engine has registered: its configuration, not ours.
        .replace(/("runtimes":)\[[^\]]*\]/g, '$1["<runtimes>"]');
}

function check(name, entries) {
    const actual = entries.join('\n') + '\n';
    const file = new URL(`${name}.txt`, GOLDEN_DIR);
    if (UPDATE) {
        mkdirSync(GOLDEN_DIR, { recursive: true });
        writeFileSync(file, actual);
        return;
    }
    const expected = readFileSync(file, 'utf8');
    if (actual === expected) return;
    const a = actual.split('\n');
    const e = expected.split('\n');
    let i = 0;
    while (i < a.length && i < e.length && a[i] === e[i]) i++;
    let label = '';
    for (let j = i; j >= 0; j--) {
        if ((e[j] ?? '').startsWith('>>> ')) { label = e[j]; break; }
    }
    assert.fail(`golden/${name}.txt differs first at line ${i + 1} (${label}):\n` +
        `expected: ${e[i]}\nactual:   ${a[i]}`);
}

// The tool calls every channel makes, in this order: [label, name, arguments].
const TOOL_CALLS = [
    ['python prints 42', 'run_python_code', { code: 'print(6*7)' }],
    ['javascript prints 42', 'run_javascript_code', { code: 'console.log(6*7)' }],
    ['python exception', 'run_python_code', { code: 'raise ValueError("boom")' }],
    ['python exit 3', 'run_python_code', { code: 'import sys\nsys.exit(3)' }],
    ['javascript out, err, exit 4', 'run_javascript_code', { code: 'console.log("out"); console.error("err"); process.exitCode = 4;' }],
    ['execute_code js', 'execute_code', { code: 'console.log(process.release.name, 6*7)', language: 'js' }],
    ['execute_code default python', 'execute_code', { code: 'import sys\nprint(sys.version_info[0])' }],
    ['execute_code timeout', 'execute_code', { code: 'print("x", flush=True)\nwhile True: pass', timeout: 2 }],
    ['empty output', 'run_python_code', { code: 'x = 1' }],
    ['unicode and escapes', 'run_python_code', { code: 'print("tab\\there, quote \\" and é ✓ 🙂\\n\\\\")' }],
    ['an output file', 'run_python_code', { code: 'import os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "a.txt"), "w").write("hello file\\n")\nprint("wrote")' }],
    ['get_supported_languages', 'get_supported_languages', {}],
    ['get_language_details python', 'get_language_details', { language: 'python' }],
    ['get_language_details cobol', 'get_language_details', { language: 'cobol' }],
    ['execute_code cobol', 'execute_code', { code: 'print(1)', language: 'cobol' }],
    ['libraries without network', 'execute_code', { code: 'import requests', libraries: ['requests'] }],
    ['wrong argument type', 'run_python_code', { code: 42 }],
    ['missing argument', 'run_javascript_code', {}],
    ['timeout out of range', 'execute_code', { code: 'print(1)', timeout: 100000 }],
    ['unknown tool', 'no_such_tool', {}],
    ['unknown session handle', 'run_python_code', { code: 'print(1)', session_id: 's-0123456789ab' }],
    ['foreign session handle', 'run_python_code', { code: 'print(1)', session_id: 's-elsewhere-0123456789ab' }],
];

// Requests other than tool calls: [label, method, params].
const LEGACY_REQUESTS = [
    ['tools/list', 'tools/list', {}],
    ['resources/list', 'resources/list', {}],
    ['resources/templates/list', 'resources/templates/list', {}],
    ['resources/read languages', 'resources/read', { uri: 'sandbox://languages' }],
    ['resources/read unknown', 'resources/read', { uri: 'sandbox://nothing' }],
    ['prompts/list', 'prompts/list', {}],
    ['prompts/get', 'prompts/get', { name: 'x' }],
    ['completion/complete', 'completion/complete', { ref: { type: 'ref/prompt', name: 'x' }, argument: { name: 'a', value: '' } }],
    ['ping', 'ping', {}],
    ['logging/setLevel bad', 'logging/setLevel', { level: 'loud' }],
    ['unknown method', 'no/such/method', {}],
    ['tools/call without a name', 'tools/call', { arguments: {} }],
];

const MODERN_REQUESTS = [
    ['server/discover', 'server/discover', {}],
    ['tools/list', 'tools/list', {}],
    ['resources/list', 'resources/list', {}],
    ['resources/templates/list', 'resources/templates/list', {}],
    ['resources/read languages', 'resources/read', { uri: 'sandbox://languages' }],
    ['resources/read unknown', 'resources/read', { uri: 'sandbox://nothing' }],
    ['prompts/list', 'prompts/list', {}],
    ['prompts/get', 'prompts/get', { name: 'x' }],
    ['ping (not in the revision)', 'ping', {}],
    ['logging/setLevel (not in the revision)', 'logging/setLevel', { level: 'info' }],
    ['tasks/get without the extension', 'tasks/get', { taskId: 'task-' + '0'.repeat(32) }],
    ['tasks/get of an unknown task', 'tasks/get', { taskId: 'task-' + '0'.repeat(32) }, TASKS],
];

const SESSION_STEPS = [
    ['create_session', 'create_session', () => ({ language: 'python' })],
    ['run in the session', 'run_python_code', (s) => ({ code: 'x = 41', session_id: s })],
    ['the session kept x', 'run_python_code', (s) => ({ code: 'print(x + 1)', session_id: s })],
    ['execute_code shows the value', 'execute_code', (s) => ({ code: 'x * 2', session_id: s })],
    ['list_sessions', 'list_sessions', () => ({})],
    ['close_session', 'close_session', (s) => ({ session_id: s })],
    ['run in the closed session', 'run_python_code', (s) => ({ code: 'print(x)', session_id: s })],
    ['list_sessions after', 'list_sessions', () => ({})],
];

function envelope(capabilities = {}) {
    return {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': capabilities,
        'io.modelcontextprotocol/clientInfo': { name: 'golden', version: '1.0.0' },
    };
}

const withMeta = (params, meta) => ({ ...params, _meta: { ...(params._meta ?? {}), ...meta } });

/**
 * The server over stdio, raw: `request` writes one line and resolves with the raw line of the
 * response carrying the same id (notifications in between are not compared: their number
 * follows the run's timing).
 */
function startStdio() {
    const child = spawn(BIN, ['--stdio'], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: MINIMAL_PATH } });
    let log = '';
    child.stderr.on('data', (c) => { log += c.toString(); });
    const waiting = new Map();
    createInterface({ input: child.stdout }).on('line', (line) => {
        let msg;
        try {
            msg = JSON.parse(line);
        } catch {
            msg = {};
        }
        if (!('result' in msg) && !('error' in msg)) return;
        const key = JSON.stringify(msg.id ?? null);
        const w = waiting.get(key);
        if (w) {
            waiting.delete(key);
            w(line);
        }
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    let nextId = 1;
    return {
        exited,
        /** Writes a line verbatim; resolves with the answer to `answerId`. */
        raw(line, answerId, timeoutMs = 60_000) {
            const key = JSON.stringify(answerId);
            const answer = new Promise((resolve, reject) => {
                const t = setTimeout(() => reject(new Error(`no answer to ${key}; stderr:\n${log}`)), timeoutMs);
                waiting.set(key, (l) => { clearTimeout(t); resolve(l); });
            });
            child.stdin.write(line + '\n');
            return answer;
        },
        request(method, params, id = nextId++) {
            return this.raw(JSON.stringify({ jsonrpc: '2.0', id, method, params }), id);
        },
        notify(method, params) {
            child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
        },
        async close() {
            child.stdin.end();
            const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
            await exited;
            clearTimeout(timer);
        },
    };
}

// One transcript: '>>> label' then the normalised raw answer.
class Transcript {
    constructor() { this.entries = []; }
    add(label, raw) { this.entries.push(`>>> ${label}`, normalise(raw)); }
}

/** Runs the session steps; `call(name, args)` resolves with the raw answer. */
async function sessionSteps(t, call, parseResult) {
    let handle;
    for (const [label, name, args] of SESSION_STEPS) {
        const raw = await call(name, args(handle));
        if (name === 'create_session') handle = parseResult(raw).structuredContent.session_id;
        t.add(`session: ${label}`, raw);
    }
}

/**
 * Polls a task (`poll()` resolves with its state) until it ended, then resolves with `final()`:
 * how often it was polled depends on timing, so the polls use ids of their own and only the
 * answer after the end is compared.
 */
async function afterTaskEnded(poll, final) {
    for (let i = 0; i < 300; i++) {
        const task = await poll();
        if (['completed', 'failed', 'cancelled'].includes(task.status)) return final();
        await sleep(200);
    }
    throw new Error('the task did not end within 60 s');
}

const resultOf = (line) => JSON.parse(line).result;

/**
 * One stdio transcript: a server of its own, `body(s, t)` to talk to it and record the answers,
 * the server closed whatever happened, then the transcript compared with golden/<name>.txt.
 */
async function stdioTranscript(name, body) {
    const s = startStdio();
    const t = new Transcript();
    try {
        await body(s, t);
    } finally {
        await s.close();
    }
    check(name, t.entries);
}

test('stdio, 2025-11-25: every answer as before', { timeout: 300_000 }, async () => stdioTranscript('stdio-2025', async (s, t) => {
    t.add('parse error', await s.raw('{oops', null));
    t.add('batch', await s.raw('[{"jsonrpc":"2.0","id":90,"method":"ping"}]', null));
    t.add('no jsonrpc', await s.raw('{"id":91,"method":"ping"}', 91));
    t.add('before initialize', await s.request('tools/list', {}));
    t.add('initialize', await s.request('initialize', {
        protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'golden', version: '1.0.0' },
    }));
    s.notify('notifications/initialized');
    for (const [label, method, params] of LEGACY_REQUESTS) t.add(label, await s.request(method, params));
    for (const [label, name, args] of TOOL_CALLS) {
        t.add(`tools/call ${label}`, await s.request('tools/call', { name, arguments: args }));
    }
    t.add('tools/call with a progress token', await s.request('tools/call', {
        name: 'run_python_code', arguments: { code: 'print("with progress")' }, _meta: { progressToken: 'p1' },
    }));
    await sessionSteps(t, (name, args) => s.request('tools/call', { name, arguments: args }), resultOf);
    // A task (params.task): its handle, then tasks/get, tasks/result and tasks/list once it ended.
    const created = await s.request('tools/call', {
        name: 'execute_code', arguments: { code: 'print("as a task")' }, task: { ttl: 60_000 },
    });
    t.add('task: created', created);
    const taskId = resultOf(created).task.taskId;
    let polls = 0;
    t.add('task: tasks/get ended', await afterTaskEnded(
        async () => resultOf(await s.request('tasks/get', { taskId }, `poll-${++polls}`)),
        () => s.request('tasks/get', { taskId })));
    t.add('task: tasks/result', await s.request('tasks/result', { taskId }));
    t.add('task: tasks/list', await s.request('tasks/list', {}));
    t.add('task: tasks/get unknown', await s.request('tasks/get', { taskId: 'task-' + '0'.repeat(32) }));
}));

test('stdio, 2025-03-26: the older vocabulary as before', { timeout: 120_000 }, async () => stdioTranscript('stdio-2025-03-26', async (s, t) => {
    t.add('initialize', await s.request('initialize', {
        protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'golden-old', version: '1.0.0' },
    }));
    s.notify('notifications/initialized');
    t.add('tools/list', await s.request('tools/list', {}));
    t.add('tools/call python prints 42', await s.request('tools/call', { name: 'run_python_code', arguments: { code: 'print(6*7)' } }));
}));

test('stdio, 2026-07-28: every answer as before', { timeout: 300_000 }, async () => stdioTranscript('stdio-2026', async (s, t) => {
    const modern = (method, params, caps = {}, id = undefined) => s.request(method, withMeta(params, envelope(caps)), id);
    for (const [label, method, params, caps] of MODERN_REQUESTS) t.add(label, await modern(method, params, caps));
    t.add('unsupported version', await s.request('tools/list', {
        _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '1999-01-01' },
    }));
    t.add('server/discover without _meta', await s.request('server/discover', {}));
    t.add('no client capabilities', await s.request('tools/list', {
        _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN },
    }));
    for (const [label, name, args] of TOOL_CALLS) {
        t.add(`tools/call ${label}`, await modern('tools/call', { name, arguments: args }));
    }
    await sessionSteps(t, (name, args) => modern('tools/call', { name, arguments: args }), resultOf);
    const created = await modern('tools/call', { name: 'execute_code', arguments: { code: 'print("as a task")' } }, TASKS);
    t.add('task: created', created);
    const { taskId } = resultOf(created);
    let polls = 0;
    t.add('task: tasks/get ended', await afterTaskEnded(
        async () => resultOf(await modern('tasks/get', { taskId }, TASKS, `poll-${++polls}`)),
        () => modern('tasks/get', { taskId }, TASKS)));
}));

// HTTP: status, content type and the raw body of each answer.
let http;
after(() => http?.stop());

async function post(body, headers) {
    const res = await fetch(http.url, {
        method: 'POST',
        headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            Authorization: 'Bearer ' + http.token,
            ...headers,
        },
        body,
        signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { res, text, entry: `${res.status} ${res.headers.get('content-type') ?? '-'}\n${text}` };
}

/** The JSON-RPC answer in a body, JSON or an event stream. */
function answerOf(text) {
    const data = text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6).map((l) => JSON.parse(l.slice(6)));
    return data.length > 0 ? data.find((m) => 'result' in m || 'error' in m) : JSON.parse(text);
}

test('HTTP, 2025-11-25: every answer as before', { timeout: 300_000 }, async () => {
    http = await startHttpServer();
    const t = new Transcript();
    let nextId = 1;
    let session;
    const legacy = async (method, params) => {
        const headers = { 'MCP-Protocol-Version': '2025-11-25', ...(session ? { 'Mcp-Session-Id': session } : {}) };
        return post(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), headers);
    };
    const init = await post(JSON.stringify({
        jsonrpc: '2.0', id: nextId++, method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'golden', version: '1.0.0' } },
    }), {});
    session = init.res.headers.get('mcp-session-id');
    assert.match(session ?? '', /^[0-9a-f]{32}$/);
    t.add('initialize', init.entry);
    t.add('notifications/initialized', (await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        { 'MCP-Protocol-Version': '2025-11-25', 'Mcp-Session-Id': session })).entry);
    t.add('parse error', (await post('{oops', { 'Mcp-Session-Id': session })).entry);
    t.add('no session', (await post(JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }), {})).entry);
    for (const [label, method, params] of LEGACY_REQUESTS) t.add(label, (await legacy(method, params)).entry);
    for (const [label, name, args] of TOOL_CALLS) {
        t.add(`tools/call ${label}`, (await legacy('tools/call', { name, arguments: args })).entry);
    }
    await sessionSteps(t, async (name, args) => (await legacy('tools/call', { name, arguments: args })).entry,
        (entry) => answerOf(entry.slice(entry.indexOf('\n') + 1)).result);
    t.add('DELETE', await (async () => {
        const res = await fetch(http.url, { method: 'DELETE', headers: { Authorization: 'Bearer ' + http.token, 'Mcp-Session-Id': session } });
        return `${res.status} ${res.headers.get('content-type') ?? '-'}\n${await res.text()}`;
    })());
    check('http-2025', t.entries);
});

test('HTTP, 2026-07-28: every answer as before', { timeout: 300_000 }, async () => {
    http ??= await startHttpServer();
    const t = new Transcript();
    let nextId = 1;
    const modern = async (method, params, caps = {}, extra = {}, id = nextId++) => {
        const headers = { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...extra };
        const name = method === 'resources/read' ? params.uri : params.name ?? params.taskId;
        if (name !== undefined && !('Mcp-Name' in extra)) headers['Mcp-Name'] = name;
        return post(JSON.stringify({ jsonrpc: '2.0', id, method, params: withMeta(params, envelope(caps)) }), headers);
    };
    for (const [label, method, params, caps] of MODERN_REQUESTS) t.add(label, (await modern(method, params, caps)).entry);
    t.add('unsupported version', (await post(JSON.stringify({
        jsonrpc: '2.0', id: nextId++, method: 'tools/list',
        params: { _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '1999-01-01' } },
    }), { 'MCP-Protocol-Version': '1999-01-01', 'Mcp-Method': 'tools/list' })).entry);
    t.add('header mismatch: Mcp-Name', (await modern('tools/call', { name: 'get_supported_languages', arguments: {} }, {}, { 'Mcp-Name': 'other_tool' })).entry);
    t.add('header mismatch: Mcp-Method', (await modern('tools/list', {}, {}, { 'Mcp-Method': 'resources/list' })).entry);
    t.add('a notification', (await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
        { 'MCP-Protocol-Version': MODERN })).entry);
    for (const [label, name, args] of TOOL_CALLS) {
        t.add(`tools/call ${label}`, (await modern('tools/call', { name, arguments: args })).entry);
    }
    await sessionSteps(t, async (name, args) => (await modern('tools/call', { name, arguments: args })).entry,
        (entry) => answerOf(entry.slice(entry.indexOf('\n') + 1)).result);
    const created = await modern('tools/call', { name: 'execute_code', arguments: { code: 'print("as a task")' } }, TASKS);
    t.add('task: created', created.entry);
    const { taskId } = answerOf(created.text).result;
    let polls = 0;
    t.add('task: tasks/get ended', await afterTaskEnded(
        async () => answerOf((await modern('tasks/get', { taskId }, TASKS, {}, `poll-${++polls}`)).text).result,
        async () => (await modern('tasks/get', { taskId }, TASKS)).entry));
    check('http-2026', t.entries);
});

testServerLeftNoContainers(() => http, async () => { await http?.stop(); });
