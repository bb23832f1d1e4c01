// Sessions over Streamable HTTP: a session belongs to the MCP session (client) that created it;
// another client can neither use nor list it; ending the MCP session ends its sandbox sessions
// and removes their containers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { sleep, textOf } from './helpers.mjs';
import { containersOf, startHttpServer, testServerLeftNoContainers } from './httpserver.mjs';

let server;
const clients = [];

async function connect(name) {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: 'Bearer ' + server.token } },
    });
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
}

before(async () => {
    server = await startHttpServer({ args: ['--pool', '0'] });
});

let closed = false;
async function closeAll() {
    if (closed) return;
    closed = true;
    for (const c of clients) await c.close().catch(() => {});
    if (server) await server.stop();
}
after(closeAll);

test('a session is usable only by the client that created it, and ends with it', { timeout: 90_000 }, async () => {
    const a = await connect('client-a');
    const b = await connect('client-b');
    const created = await a.client.callTool({ name: 'create_session', arguments: { language: 'python' } });
    assert.notEqual(created.isError, true, textOf(created));
    const id = created.structuredContent.session_id;
    assert.ok((await containersOf(server.child.pid)).length >= 1, 'the session has a container');

    await a.client.callTool({ name: 'run_python_code', arguments: { code: 'secret = 41', session_id: id } });
    const mine = await a.client.callTool({ name: 'run_python_code', arguments: { code: 'print(secret + 1)', session_id: id } });
    assert.equal(textOf(mine), '42\n');

    const theirs = await b.client.callTool({ name: 'run_python_code', arguments: { code: 'print(secret)', session_id: id } });
    assert.equal(theirs.isError, true);
    assert.match(textOf(theirs), /no session/i);
    const closeTheirs = await b.client.callTool({ name: 'close_session', arguments: { session_id: id } });
    assert.equal(closeTheirs.isError, true);
    const listB = await b.client.callTool({ name: 'list_sessions', arguments: {} });
    assert.deepEqual(listB.structuredContent.sessions, []);
    const listA = await a.client.callTool({ name: 'list_sessions', arguments: {} });
    assert.deepEqual(listA.structuredContent.sessions.map((s) => s.session_id), [id]);

    // Ending client A's MCP session ends its sandbox session and removes the container.
    await a.transport.terminateSession();
    const deadline = Date.now() + 15_000;
    let left = [];
    for (;;) {
        left = await containersOf(server.child.pid);
        if (left.length === 0 || Date.now() >= deadline) break;
        await sleep(250);
    }
    assert.deepEqual(left, [], `containers left after the client's MCP session ended; stderr:\n${server.stderr()}`);
});

testServerLeftNoContainers(() => server, closeAll);
