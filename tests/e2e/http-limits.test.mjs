// The Streamable HTTP endpoint under exhaustion attempts, against the real binary:
// 200 connections dripping half a request head do not keep a client with the
// token from running code and are each closed by the head deadline; a request
// without the token is refused before its body is read; a repeated request id
// does not take over the first request's answer; MCP sessions are capped per
// client with a clear refusal.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { sleep, textOf } from './helpers.mjs';
import { PROTOCOL_VERSION, startHttpServer, testServerLeftNoContainers } from './httpserver.mjs';

// Short, so that the test is quick; the default is 10 s.
const HEAD_TIMEOUT_S = 3;
const FLOOD = 200;

let server;

before(async () => {
    server = await startHttpServer({ args: ['--http-head-timeout', String(HEAD_TIMEOUT_S)] });
});
after(() => server?.stop());

/**
 * A raw connection that records what comes back and when it is closed.
 * Resolves once connected.
 */
function rawConnection(port) {
    return new Promise((resolve, reject) => {
        const c = { received: '', closedAt: null, openedAt: Date.now() };
        c.socket = net.connect({ host: '127.0.0.1', port }, () => resolve(c));
        c.socket.setEncoding('latin1');
        c.socket.on('data', (d) => { c.received += d; });
        c.socket.on('close', () => { c.closedAt = Date.now(); });
        c.socket.on('error', (e) => { if (!c.closedAt && c.socket.connecting) reject(e); });
        c.closed = new Promise((r) => c.socket.on('close', r));
    });
}

async function sdkClient(name) {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: 'Bearer ' + server.token } },
    });
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(transport);
    return client;
}

test(`${FLOOD} connections dripping half a head: a client with the token still runs code, and each is closed by the head deadline`, { timeout: 120_000 }, async () => {
    const flood = [];
    for (let i = 0; i < FLOOD; ++i) {
        const c = await rawConnection(server.port);
        c.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Ty`);
        flood.push(c);
    }
    // One byte a second each: every byte would restart an idle timer.
    const drip = setInterval(() => {
        for (const c of flood) if (!c.closedAt) c.socket.write('p');
    }, 1000);
    try {
        const client = await sdkClient('limits-e2e');
        const result = await client.callTool({ name: 'run_python_code', arguments: { code: 'print(6 * 7)' } });
        assert.equal(textOf(result).trim(), '42', JSON.stringify(result));
        await client.close();
        // The client got in beside them, not by pushing them out: most are still open
        // (only the head deadline closes them, and it is not over for those opened last).
        const open = flood.filter((c) => !c.closedAt).length;
        assert.ok(open > 0 || Date.now() - flood[FLOOD - 1].openedAt >= HEAD_TIMEOUT_S * 1000,
            `${FLOOD - open} of ${FLOOD} dripping connections were closed early`);

        await Promise.all(flood.map((c) => c.closed));
    } finally {
        clearInterval(drip);
        for (const c of flood) c.socket.destroy();
    }
    for (const [i, c] of flood.entries()) {
        assert.match(c.received, /^HTTP\/1\.1 408 /, `connection ${i} got ${JSON.stringify(c.received.slice(0, 200))}`);
        // Qt's coarse timers may fire up to 5 % early.
        assert.ok(c.closedAt - c.openedAt >= HEAD_TIMEOUT_S * 1000 * 0.95 - 50,
            `connection ${i} closed after ${c.closedAt - c.openedAt} ms, before the head deadline`);
    }
});

/** Sends a head that announces a body of 4 MiB and sends none of it. */
async function headWithoutBody(extraHeaders) {
    const c = await rawConnection(server.port);
    c.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${4 * 1024 * 1024}\r\n${extraHeaders}\r\n`);
    const outcome = await Promise.race([c.closed.then(() => 'closed'), sleep(10_000).then(() => 'waiting')]);
    c.socket.destroy();
    return { outcome, received: c.received };
}

test('no token: 401 without the announced body being sent or waited for', { timeout: 30_000 }, async () => {
    const r = await headWithoutBody('');
    assert.equal(r.outcome, 'closed', `the server waited for the body; got ${JSON.stringify(r.received)}`);
    assert.match(r.received, /^HTTP\/1\.1 401 /, r.received);
    assert.match(r.received, /WWW-Authenticate: Bearer/i, r.received);
});

test('no token with Expect: 100-continue: 401 and no 100 Continue', { timeout: 30_000 }, async () => {
    const r = await headWithoutBody('Expect: 100-continue\r\n');
    assert.equal(r.outcome, 'closed', `the server waited for the body; got ${JSON.stringify(r.received)}`);
    assert.match(r.received, /^HTTP\/1\.1 401 /, r.received);
    assert.doesNotMatch(r.received, /100 Continue/, r.received);
});

test('with the token and Expect: 100-continue: 100 Continue, then the request is served', { timeout: 30_000 }, async () => {
    const body = JSON.stringify({
        jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'continue-e2e', version: '1' } },
    });
    const c = await rawConnection(server.port);
    c.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${server.token}\r\n` +
        `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
        `Expect: 100-continue\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
    const deadline = Date.now() + 10_000;
    while (!c.received.includes('\r\n\r\n') && Date.now() < deadline) await sleep(20);
    assert.match(c.received, /^HTTP\/1\.1 100 Continue\r\n\r\n/, c.received);
    c.socket.write(body);
    while (!/"serverInfo"/.test(c.received) && Date.now() < deadline) await sleep(20);
    assert.match(c.received, /HTTP\/1\.1 200 OK/, c.received);
    const sessionId = /mcp-session-id: (\w+)/i.exec(c.received)?.[1];
    c.socket.destroy();
    if (sessionId) {
        await fetch(server.url, { method: 'DELETE', headers: { Authorization: 'Bearer ' + server.token, 'Mcp-Session-Id': sessionId } });
    }
});

/** POST of one JSON-RPC message; resolves with { status, text, headers }. */
async function post(sessionId, message, accept = 'application/json, text/event-stream') {
    const headers = {
        Authorization: 'Bearer ' + server.token, 'Content-Type': 'application/json', Accept: accept,
        'MCP-Protocol-Version': PROTOCOL_VERSION,
    };
    if (sessionId) headers['Mcp-Session-Id'] = sessionId;
    const res = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify(message) });
    return { status: res.status, headers: res.headers, text: await res.text() };
}

async function initialize(name) {
    const r = await post(null, {
        jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name, version: '1' } },
    });
    const sessionId = r.headers.get('mcp-session-id');
    if (sessionId) {
        await post(sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' });
    }
    return { ...r, sessionId };
}

test('a repeated request id while the first is in flight is refused; the first gets its own answer', { timeout: 60_000 }, async () => {
    const { sessionId, status } = await initialize('dup-id-e2e');
    assert.equal(status, 200);
    const call = (code, meta) => ({
        jsonrpc: '2.0', id: 5, method: 'tools/call',
        params: { name: 'run_python_code', arguments: { code }, ...(meta ? { _meta: meta } : {}) },
    });
    // The first asks for progress and takes its answer as a stream, so that the test sees the
    // server working on it (its first progress notification) before the second is sent.
    const res = await fetch(server.url, {
        method: 'POST',
        headers: {
            Authorization: 'Bearer ' + server.token, 'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': PROTOCOL_VERSION,
            'Mcp-Session-Id': sessionId,
        },
        body: JSON.stringify(call('import time\ntime.sleep(2)\nprint("first")', { progressToken: 'dup' })),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    let stream = '';
    const readUntil = async (pattern) => {
        while (!pattern.test(stream)) {
            const { value, done } = await reader.read();
            if (done) break;
            stream += decoder.decode(value, { stream: true });
        }
        return pattern.test(stream);
    };
    assert.ok(await readUntil(/notifications\/progress/), `no progress for the first call: ${stream}`);

    const second = await post(sessionId, call('print("second")'), 'application/json');
    assert.equal(second.status, 409, second.text);
    const error = JSON.parse(second.text);
    assert.equal(error.id, 5, second.text);
    assert.equal(error.error?.code, -32600, second.text);
    assert.match(error.error?.message ?? '', /request id 5 is already in use/, second.text);

    assert.ok(await readUntil(/data: [^\n]*"result"[^\n]*\n/), `the first call's stream ended without its result: ${stream}`);
    const result = stream.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)))
        .find((m) => 'result' in m);
    assert.equal(result.id, 5, stream);
    assert.match(result.result?.content?.[0]?.text ?? '', /first/, stream);
    await reader.cancel().catch(() => {});
    await fetch(server.url, { method: 'DELETE', headers: { Authorization: 'Bearer ' + server.token, 'Mcp-Session-Id': sessionId } });
});

test('MCP sessions per client: at 16 busy ones the next initialize is refused with 429; an idle one makes room', { timeout: 60_000 }, async () => {
    const name = 'session-cap-e2e';
    const sessions = [];
    const streams = [];
    for (let i = 0; i < 16; ++i) {
        const r = await initialize(name);
        assert.equal(r.status, 200, `session ${i}: ${r.text}`);
        // An open GET stream marks a session as in use: it is not reclaimed.
        const controller = new AbortController();
        const res = await fetch(server.url, {
            method: 'GET', signal: controller.signal,
            headers: { Authorization: 'Bearer ' + server.token, Accept: 'text/event-stream', 'Mcp-Session-Id': r.sessionId, 'MCP-Protocol-Version': PROTOCOL_VERSION },
        });
        assert.equal(res.status, 200);
        sessions.push(r.sessionId);
        streams.push({ controller, res });
    }
    const refused = await initialize(name);
    assert.equal(refused.status, 429, refused.text);
    const body = JSON.parse(refused.text);
    assert.equal(body.error?.code, -32600, refused.text);
    assert.match(body.error?.message ?? '', /Too many MCP sessions for this client \(16/, refused.text);
    assert.equal(refused.sessionId, null);

    // Another client name is another client.
    const other = await initialize('another-client-e2e');
    assert.equal(other.status, 200, other.text);

    // The first session's stream ends: that session is idle and makes room.
    // The server learns that when it sees the connection close, which takes a moment on a busy
    // machine: until then the cap still refuses, so ask again until it admits (or 20 s pass).
    streams[0].controller.abort();
    let admitted = await initialize(name);
    for (const deadline = Date.now() + 20_000; admitted.status === 429 && Date.now() < deadline;) {
        await sleep(100);
        admitted = await initialize(name);
    }
    assert.equal(admitted.status, 200, admitted.text);
    const gone = await post(sessions[0], { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    assert.equal(gone.status, 404, `the reclaimed session: ${gone.text}`);

    for (const s of streams) s.controller.abort();
    for (const id of [...sessions, other.sessionId, admitted.sessionId]) {
        await fetch(server.url, { method: 'DELETE', headers: { Authorization: 'Bearer ' + server.token, 'Mcp-Session-Id': id } }).catch(() => {});
    }
});

testServerLeftNoContainers(() => server, async () => {
    const exit = await server.stop();
    assert.equal(exit.signal, null, `server died from a signal; stderr:\n${server.stderr()}`);
});
