// The run view (MCP Apps, io.modelcontextprotocol/ui) through the official SDK clients: offered
// only to clients that declare the extension, in both eras; the view's resource (MIME type, CSP,
// one self-contained page); the app-only tools that follow and stop a run, and that refuse a run
// that is not their client's. What a client without the extension sees is checked byte for byte
// by e2e_golden (tests/e2e/golden), which this change left as it was.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';

import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { BIN, MINIMAL_PATH, sleep, startClient, textOf, waitForNoContainers } from './helpers.mjs';
import { startHttpServer } from './httpserver.mjs';

const VIEW = 'ui://code-sandbox/run.html';
const MIME = 'text/html;profile=mcp-app';
const UI = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [MIME] } } };
const RUN_TOOLS = ['run_python_code', 'run_javascript_code', 'execute_code'];
const VIEW_TOOLS = ['read_run_output', 'stop_run'];

async function startUiClient() {
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const transport = new StdioClientTransport({ command: BIN, args: ['--stdio'], env: { PATH: MINIMAL_PATH }, stderr: 'pipe' });
    const client = new Client({ name: 'view-host-e2e', version: '1.0.0' }, { capabilities: UI });
    await client.connect(transport);
    return client;
}

// What a host with views must be told, whichever the era.
async function checkOffered(client, label) {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of RUN_TOOLS) {
        assert.equal(byName.get(name)?._meta?.ui?.resourceUri, VIEW, `${label}: ${name} links the view`);
        assert.equal(byName.get(name)._meta['ui/resourceUri'], VIEW, `${label}: and the key older hosts read`);
    }
    for (const name of VIEW_TOOLS)
        assert.deepEqual(byName.get(name)?._meta?.ui?.visibility, ['app'], `${label}: ${name} is for the view only`);
    assert.equal(byName.get('get_supported_languages')._meta, undefined, `${label}: other tools unchanged`);

    const { resources } = await client.listResources();
    const listed = resources.find((r) => r.uri === VIEW);
    assert.equal(listed?.mimeType, MIME, `${label}: the view is listed: ${JSON.stringify(resources)}`);
    const { contents } = await client.readResource({ uri: VIEW });
    assert.equal(contents.length, 1);
    const [page] = contents;
    assert.equal(page.mimeType, MIME);
    // The strictest policy a host applies: no origin at all to connect to or load from.
    assert.deepEqual(page._meta.ui.csp, { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
    assert.equal(page._meta.ui.prefersBorder, true);
    assert.match(page.text, /^<!DOCTYPE html>/);
    // One self-contained page: nothing it would fetch from elsewhere.
    assert.doesNotMatch(page.text, /\b(src|href)\s*=\s*["']?(https?:)?\/\//i);
    assert.doesNotMatch(page.text, /@import|url\(\s*["']?https?:/i);
    assert.match(page.text, /ui\/initialize/);
}

describe('a client without views', () => {
    let server;
    after(async () => { await server?.client.close(); });

    test('sees no view, no view tools, and cannot call them', async () => {
        server = await startClient();
        const { client } = server;
        const { tools } = await client.listTools();
        for (const t of tools) assert.equal(t._meta, undefined, `${t.name} has no _meta`);
        assert.ok(!tools.some((t) => VIEW_TOOLS.includes(t.name)));
        const { resources } = await client.listResources();
        assert.ok(!resources.some((r) => r.uri.startsWith('ui://')));
        await assert.rejects(client.readResource({ uri: VIEW }), /not found/i);
        await assert.rejects(client.callTool({ name: 'read_run_output', arguments: { run_id: 'x' } }), /Unknown tool: read_run_output/);
        // Its results carry nothing for a view.
        const r = await client.callTool({ name: 'run_python_code', arguments: { code: 'print(1)' } });
        assert.equal(r._meta, undefined);
    });
});

describe('a host with views (2025-11-25)', () => {
    let client;
    after(async () => { await client?.close(); await waitForNoContainers(); });

    test('is offered the view and its tools', async () => {
        client = await startUiClient();
        await checkOffered(client, '2025-11-25');
    });

    test('the view follows a run as it prints, and stops it', { timeout: 120_000 }, async () => {
        const code = 'import time\nfor i in range(600):\n    print("line", i, flush=True)\n    time.sleep(0.1)';
        const call = client.callTool({ name: 'run_python_code', arguments: { code } }, undefined, { timeout: 120_000 });
        // As the view does: first by the call's code, then by the id that answer gave.
        let read;
        let text = '';
        let offset = 0;
        for (let i = 0; i < 200 && !text.includes('line 3\n'); i++) {
            read = await client.callTool({ name: 'read_run_output',
                arguments: read ? { run_id: read.structuredContent.run_id, offset } : { code, language: 'python', offset } });
            assert.notEqual(read.isError, true, textOf(read));
            for (const piece of read.structuredContent.output) {
                assert.equal(piece.stream, 'stdout');
                text += piece.text;
            }
            assert.ok(read.structuredContent.next_offset >= offset);
            offset = read.structuredContent.next_offset;
            await sleep(100);
        }
        assert.match(text, /^line 0\nline 1\nline 2\nline 3\n/, 'the output arrived in order, once');
        assert.equal(read.structuredContent.state, 'running');
        const runId = read.structuredContent.run_id;

        // Another id, as another client's run would be: refused, nothing stopped.
        const foreign = await client.callTool({ name: 'stop_run', arguments: { run_id: '00000000-0000-4000-8000-000000000000' } });
        assert.equal(foreign.isError, true);
        assert.match(textOf(foreign), /No run .* of this client/);

        const stop = await client.callTool({ name: 'stop_run', arguments: { run_id: runId } });
        assert.notEqual(stop.isError, true, textOf(stop));
        const result = await call;
        assert.equal(result.structuredContent.cancelled, true, JSON.stringify(result.structuredContent));
        assert.equal(result.structuredContent.cancel_reason, "stopped by the user from the run's view in the chat");
        assert.match(textOf(result), /\[cancelled: stopped by the user from the run's view in the chat\]/);
        // The result tells the view which run it was.
        assert.equal(result._meta['code-sandbox/run'].run_id, runId);
        // Read after the end: the rest of the output, then finished.
        let end = await client.callTool({ name: 'read_run_output', arguments: { run_id: runId, offset } });
        assert.equal(end.structuredContent.state, 'finished');
        const again = await client.callTool({ name: 'stop_run', arguments: { run_id: runId } });
        assert.equal(again.isError, true);
        assert.match(textOf(again), /ended already/);
    });
});

describe('a host with views: which run a view finds', () => {
    let client;
    after(async () => { await client?.close(); await waitForNoContainers(); });

    test('the call just made, not an earlier one with the same code, whatever the language is called', { timeout: 120_000 }, async () => {
        client = await startUiClient();
        const code = 'import time\nprint("go", flush=True)\ntime.sleep(3)';
        // "Python" as a model may write it: the run is python's, and the view sends it as given.
        const first = await client.callTool({ name: 'execute_code', arguments: { language: 'Python', code } });
        assert.notEqual(first.isError, true, textOf(first));
        const firstId = first._meta['code-sandbox/run'].run_id;
        const call = client.callTool({ name: 'execute_code', arguments: { language: 'Python', code } });
        let read;
        for (let i = 0; i < 100; i++) {
            read = await client.callTool({ name: 'read_run_output', arguments: { code, language: 'Python' } });
            if (!read.isError && read.structuredContent.state === 'running') break;
            await sleep(100);
        }
        assert.notEqual(read.isError, true, textOf(read));
        assert.equal(read.structuredContent.state, 'running');
        assert.notEqual(read.structuredContent.run_id, firstId, 'the finished earlier run was found');
        const second = await call;
        assert.equal(second._meta['code-sandbox/run'].run_id, read.structuredContent.run_id);
    });

    test('a run called as a task keeps the view\'s figures beside the task\'s own _meta', { timeout: 120_000 }, async () => {
        const { CallToolResultSchema, CreateTaskResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
        const created = await client.request({ method: 'tools/call',
            params: { name: 'run_python_code', arguments: { code: 'print(7)' }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
        const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
        assert.equal(result._meta['io.modelcontextprotocol/related-task'].taskId, created.task.taskId);
        assert.equal(result.structuredContent.stdout, '7\n');
        assert.match(result._meta['code-sandbox/run'].run_id, /^[0-9a-f-]{36}$/, JSON.stringify(result._meta));
    });
});

describe('a host with views (2026-07-28)', () => {
    let client;
    after(async () => { await client?.close(); });

    test('is offered the view per request, and a list made for it is not shared', async () => {
        client = new ModernClient({ name: 'view-host-2026', version: '1.0.0' },
            { capabilities: UI, versionNegotiation: { mode: { pin: '2026-07-28' } } });
        await client.connect(new ModernStdio({ command: BIN, args: ['--stdio'], env: { PATH: MINIMAL_PATH }, stderr: 'pipe' }));
        assert.equal(client.getProtocolEra(), 'modern');
        await checkOffered(client, '2026-07-28');
        // Lists made for a host with views are its own; the others stay shareable.
        assert.equal((await client.listTools()).cacheScope, 'private');
        assert.equal((await client.listResources()).cacheScope, 'private');
        assert.equal((await client.listPrompts()).cacheScope, 'public');
        const r = await client.callTool({ name: 'run_python_code',
            arguments: { code: 'import time\nx = bytearray(32 << 20)\ntime.sleep(1.5)\nprint(6 * 7)' } });
        assert.equal(r.structuredContent.stdout, '42\n');
        // The figures the view shows beside the exit code: the engine's default runtime here.
        const run = r._meta['code-sandbox/run'];
        assert.match(run.run_id, /^[0-9a-f-]{36}$/);
        assert.ok(run.peak_memory_bytes >= 32 << 20, JSON.stringify(run));
        assert.ok(run.cpu_time_ms >= 0, JSON.stringify(run));
        assert.match(run.runtime, /^(runc|crun)$/, JSON.stringify(run));
    });
});

describe('over HTTP, two sessions', () => {
    let server;
    const clients = [];
    after(async () => {
        for (const c of clients) await c.close();
        await server?.stop();
    });

    test('a view reads and stops only the runs of its own session', { timeout: 120_000 }, async () => {
        server = await startHttpServer();
        const connect = async (name) => {
            const c = new Client({ name, version: '1.0.0' }, { capabilities: UI });
            await c.connect(new StreamableHTTPClientTransport(new URL(server.url), {
                requestInit: { headers: { Authorization: 'Bearer ' + server.token } } }));
            clients.push(c);
            return c;
        };
        const [a, b] = [await connect('host-a'), await connect('host-b')];
        const code = 'import time\nprint("started", flush=True)\ntime.sleep(25)';
        const call = a.callTool({ name: 'run_python_code', arguments: { code } }, undefined, { timeout: 120_000 });
        let read;
        for (let i = 0; i < 200; i++) {
            read = await a.callTool({ name: 'read_run_output', arguments: { code } });
            if (!read.isError && read.structuredContent.next_offset > 0) break;
            await sleep(100);
        }
        assert.notEqual(read.isError, true, textOf(read));
        const runId = read.structuredContent.run_id;
        // The other session knows neither the code's run nor the id.
        const byCode = await b.callTool({ name: 'read_run_output', arguments: { code } });
        assert.equal(byCode.isError, true, JSON.stringify(byCode));
        const byId = await b.callTool({ name: 'read_run_output', arguments: { run_id: runId } });
        assert.equal(byId.isError, true, JSON.stringify(byId));
        const stop = await b.callTool({ name: 'stop_run', arguments: { run_id: runId } });
        assert.equal(stop.isError, true);
        // Still running for its own session, which stops it.
        read = await a.callTool({ name: 'read_run_output', arguments: { run_id: runId } });
        assert.equal(read.structuredContent.state, 'running');
        assert.notEqual((await a.callTool({ name: 'stop_run', arguments: { run_id: runId } })).isError, true);
        const result = await call;
        assert.equal(result.structuredContent.cancelled, true);
    });
});
