// Raw JSON-RPC over stdio, without the SDK: malformed input gets the right
// error and does not break the connection; end of input ends the process.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { rawInitialize, spawnRaw, testNoContainersLeft } from './helpers.mjs';

let server;

before(() => {
    server = spawnRaw();
});
after(() => server?.kill());

function assertError(msg, { code, id }) {
    assert.equal(msg.jsonrpc, '2.0', JSON.stringify(msg));
    assert.equal(msg.result, undefined, JSON.stringify(msg));
    assert.equal(typeof msg.error?.message, 'string', JSON.stringify(msg));
    assert.equal(msg.error.code, code, JSON.stringify(msg));
    assert.ok('id' in msg, `error without id: ${JSON.stringify(msg)}`);
    assert.equal(msg.id, id, JSON.stringify(msg));
}

test('malformed JSON gets a parse error with id null', async () => {
    server.send('{oops');
    assertError(await server.next(), { code: -32700, id: null });
});

test('a batch gets an invalid-request error', async () => {
    server.send('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
    assertError(await server.next(), { code: -32600, id: null });
});

test('a request without "jsonrpc" gets an invalid-request error with its id', async () => {
    server.send('{"id":2,"method":"ping"}');
    assertError(await server.next(), { code: -32600, id: 2 });
});

test('initialize and ping still work after the garbage', async () => {
    const init = await rawInitialize(server, 3);
    assert.equal(init.jsonrpc, '2.0');
    assert.equal(init.id, 3);
    assert.equal(init.error, undefined, JSON.stringify(init));
    assert.equal(init.result.protocolVersion, '2025-06-18');
    assert.equal(init.result.serverInfo.name, 'code-sandbox');
    assert.ok(init.result.capabilities.tools, 'tools capability');
    assert.ok(init.result.capabilities.resources, 'resources capability');

    // The initialized notification must not be answered: the next line is the ping's reply.
    server.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
    assert.deepEqual(await server.next(), { jsonrpc: '2.0', id: 4, result: {} });
});

test('an unknown method gets method-not-found', async () => {
    server.send({ jsonrpc: '2.0', id: 5, method: 'no/such/method' });
    assertError(await server.next(), { code: -32601, id: 5 });
});

test('closing stdin makes the server exit with code 0 within 10 s', { timeout: 20_000 }, async () => {
    const closedAt = Date.now();
    server.child.stdin.end();
    const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 10_000).unref());
    const exit = await Promise.race([server.exited, timeout]);
    assert.ok(exit, `still running 10 s after stdin closed; stderr:\n${server.stderr()}`);
    assert.equal(exit.signal, null);
    assert.equal(exit.code, 0, `exit code; stderr:\n${server.stderr()}`);
    assert.ok(exit.at - closedAt < 10_000);
    assert.deepEqual(server.pending(), [], 'unexpected extra output');
});

testNoContainersLeft(async () => server?.kill());
