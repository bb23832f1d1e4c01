// The Streamable HTTP endpoint probed with raw requests: authentication, the
// Host/Origin checks, size limits, session and protocol-version rules, error
// bodies, methods, paths and the loopback-only listener.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { after, before, test } from 'node:test';

import { PROTOCOL_VERSION, startHttpServer, testServerLeftNoContainers } from './httpserver.mjs';

let server;
let sessionId;

async function stop() {
    if (!server) return;
    const exit = await server.stop();
    assert.equal(exit.signal, null, `server died from a signal; stderr:\n${server.stderr()}`);
    assert.equal(exit.code, 0, `server exit code; stderr:\n${server.stderr()}`);
}

/** Headers of a well-formed request; `overrides` values of undefined drop a header. */
function headers(overrides = {}) {
    const h = {
        Authorization: 'Bearer ' + server.token,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': PROTOCOL_VERSION,
    };
    if (sessionId) h['Mcp-Session-Id'] = sessionId;
    for (const [k, v] of Object.entries(overrides)) {
        if (v === undefined) delete h[k]; else h[k] = v;
    }
    return h;
}

/** fetch() against the endpoint; resolves with { status, headers, text }. */
async function request({ method = 'POST', path = '/mcp', body, headers: h = headers() } = {}) {
    const url = new URL(path, server.url);
    const res = await fetch(url, {
        method,
        headers: h,
        body: body === undefined ? undefined : (typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
}

const describe = (r) => `${r.status} ${r.headers.get('content-type')} ${r.text.slice(0, 500)}`;

function parseJson(r) {
    try {
        return JSON.parse(r.text);
    } catch {
        assert.fail(`body is not JSON: ${describe(r)}`);
    }
}

const toolsList = (id) => ({ jsonrpc: '2.0', id, method: 'tools/list' });

before(async () => {
    server = await startHttpServer();
    const init = await request({
        body: {
            jsonrpc: '2.0', id: 1, method: 'initialize',
            params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'http-probes', version: '1.0.0' } },
        },
        headers: headers({ 'MCP-Protocol-Version': undefined }),
    });
    assert.equal(init.status, 200, `initialize: ${describe(init)}`);
    assert.ok(parseJson(init).result?.serverInfo, `initialize: ${describe(init)}`);
    sessionId = init.headers.get('mcp-session-id');
    assert.ok(sessionId, `initialize answered without Mcp-Session-Id: ${describe(init)}`);
    const initialized = await request({ body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    assert.equal(initialized.status, 202, `notifications/initialized: ${describe(initialized)}`);
});
after(() => server?.stop());

test('the session works: tools/list with the session id is answered', async () => {
    const r = await request({ body: toolsList(2) });
    assert.equal(r.status, 200, describe(r));
    assert.equal(parseJson(r).result?.tools?.length, 11, describe(r));
});

test('no token: 401 with WWW-Authenticate: Bearer', async () => {
    const r = await request({ body: toolsList(3), headers: headers({ Authorization: undefined }) });
    assert.equal(r.status, 401, describe(r));
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer\b/, `WWW-Authenticate: ${r.headers.get('www-authenticate')}`);
});

test('wrong token: 401 with WWW-Authenticate: Bearer', async () => {
    const wrong = randomBytes(24).toString('hex');
    const r = await request({ body: toolsList(4), headers: headers({ Authorization: 'Bearer ' + wrong }) });
    assert.equal(r.status, 401, describe(r));
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer\b/, `WWW-Authenticate: ${r.headers.get('www-authenticate')}`);
    // The right token with something appended is wrong too.
    const longer = await request({ body: toolsList(5), headers: headers({ Authorization: 'Bearer ' + server.token + 'x' }) });
    assert.equal(longer.status, 401, describe(longer));
});

test('Origin: http://evil.example.com is refused with 403', async () => {
    const r = await request({ body: toolsList(6), headers: headers({ Origin: 'http://evil.example.com' }) });
    assert.equal(r.status, 403, describe(r));
});

/** A request through node:http, which lets the Host header be set. */
function rawHttp({ method = 'POST', path = '/mcp', headers: h, body }) {
    return new Promise((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: server.port, method, path, headers: h }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c) => { text += c; });
            res.on('end', () => resolve({ status: res.statusCode, headers: new Headers(res.headers), text }));
            res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
    });
}

test('Host: evil.example.com is refused with 403', async () => {
    const body = JSON.stringify(toolsList(7));
    const r = await rawHttp({ headers: { ...headers(), Host: 'evil.example.com', 'Content-Length': Buffer.byteLength(body) }, body });
    assert.equal(r.status, 403, describe(r));
    // The same request with a local Host passes.
    const ok = await rawHttp({ headers: { ...headers(), Host: `localhost:${server.port}`, 'Content-Length': Buffer.byteLength(body) }, body });
    assert.equal(ok.status, 200, describe(ok));
});

test('a 64 MiB body is refused with 413 and the server still answers afterwards', { timeout: 60_000 }, async () => {
    const big = Buffer.alloc(64 * 1024 * 1024, 'a');
    const r = await request({ body: big });
    assert.equal(r.status, 413, describe(r));
    const next = await request({ body: toolsList(8) });
    assert.equal(next.status, 200, `request after the 413: ${describe(next)}`);
    assert.equal(parseJson(next).result?.tools?.length, 11, describe(next));
});

test('POST without Mcp-Session-Id after initialize: 400', async () => {
    const r = await request({ body: toolsList(9), headers: headers({ 'Mcp-Session-Id': undefined }) });
    assert.equal(r.status, 400, describe(r));
});

test('unknown Mcp-Session-Id: 404', async () => {
    const r = await request({ body: toolsList(10), headers: headers({ 'Mcp-Session-Id': randomBytes(16).toString('hex') }) });
    assert.equal(r.status, 404, describe(r));
});

test('MCP-Protocol-Version: 1999-01-01 is refused with 400', async () => {
    const r = await request({ body: toolsList(11), headers: headers({ 'MCP-Protocol-Version': '1999-01-01' }) });
    assert.equal(r.status, 400, describe(r));
});

test('malformed JSON: 400 with a JSON-RPC -32700 error body', async () => {
    const r = await request({ body: '{"jsonrpc": "2.0", "id": 12, "method": ' });
    assert.equal(r.status, 400, describe(r));
    const body = parseJson(r);
    assert.equal(body.jsonrpc, '2.0', describe(r));
    assert.equal(body.error?.code, -32700, describe(r));
    assert.ok('id' in body && body.id === null, `a parse error has id null: ${describe(r)}`);
});

test('a notification is accepted with 202 and an empty body', async () => {
    const r = await request({ body: { jsonrpc: '2.0', method: 'notifications/roots/list_changed' } });
    assert.equal(r.status, 202, describe(r));
    assert.equal(r.text, '', describe(r));
});

test('PUT: 405', async () => {
    const r = await request({ method: 'PUT', body: toolsList(13) });
    assert.equal(r.status, 405, describe(r));
});

test('GET /other: 404', async () => {
    const r = await request({ method: 'GET', path: '/other', headers: headers({ 'Content-Type': undefined }) });
    assert.equal(r.status, 404, describe(r));
});

/** Resolves with 'connected' or the connection error code. */
function tryConnect(host, port) {
    return new Promise((resolve) => {
        const socket = net.connect({ host, port });
        socket.setTimeout(5_000, () => { socket.destroy(); resolve('timeout'); });
        socket.once('connect', () => { socket.destroy(); resolve('connected'); });
        socket.once('error', (e) => resolve(e.code ?? String(e)));
    });
}

test('the listener is on loopback only', async (t) => {
    assert.equal(new URL(server.url).hostname, '127.0.0.1', `endpoint URL ${server.url}`);
    assert.equal(await tryConnect('127.0.0.1', server.port), 'connected');
    const external = Object.values(os.networkInterfaces()).flat()
        .find((a) => a && !a.internal && a.family === 'IPv4')
        ?? Object.values(os.networkInterfaces()).flat()
            .find((a) => a && !a.internal && a.family === 'IPv6' && !a.address.startsWith('fe80'));
    if (!external) {
        // Reported as a skip, not a pass: the refusal was not checked.
        t.skip('no non-loopback address on this machine: the refusal from outside is not checked');
        return;
    }
    const outcome = await tryConnect(external.address, server.port);
    assert.equal(outcome, 'ECONNREFUSED', `connecting to ${external.address}:${server.port}`);
});

testServerLeftNoContainers(() => server, stop);
