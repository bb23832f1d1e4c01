// Workspaces through the official MCP SDK client (issue 50): the run tools and create_session
// declare `workspaces` only on a server that has some, naming them and their modes (never their
// host paths); pandas reads a 20 MB CSV from a read-only workspace; a copy-on-write run's change
// set comes back in structuredContent while the folder stays as it was; an unknown name is
// refused with the server's names. A session with workspaces: its calls read them, see a
// read-only one as the folder is at each call, cannot add others, and list_sessions names them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startClient, testNoContainersLeft, textOf } from './helpers.mjs';

const RUN_TOOLS = ['execute_code', 'run_javascript_code', 'run_python_code'];
// The tools that take `workspaces`: the run tools, and create_session for a whole session.
const WORKSPACE_TOOLS = ['create_session', ...RUN_TOOLS];

describe('a server with workspaces', () => {
    let server;
    let data;
    let proj;
    let expectedTotal = 0;
    before(async () => {
        data = mkdtempSync(join(tmpdir(), 'cs-ws-data-'));
        proj = mkdtempSync(join(tmpdir(), 'cs-ws-proj-'));
        // About 20 MB of sales rows.
        const rows = ['region,units,price'];
        for (let i = 0; i < 700_000; i++) {
            const units = i % 17;
            expectedTotal += units;
            rows.push(`region-${i % 9},${units},${(i % 1000) / 10}`);
        }
        writeFileSync(join(data, 'sales.csv'), rows.join('\n') + '\n');
        writeFileSync(join(data, '.env'), 'API_KEY=hunter2\n');
        writeFileSync(join(proj, 'README.md'), '# a project\n');
        server = await startClient({
            args: ['--stdio', '--pool', '0', '--workspace', `data=${data}`, '--workspace', `proj=${proj}:rw`],
        });
    });
    after(async () => {
        await server?.client.close();
        for (const d of [data, proj]) if (d) rmSync(d, { recursive: true, force: true });
    });
    const python = (code, workspaces) =>
        server.client.callTool({ name: 'run_python_code', arguments: { code, workspaces } }, undefined, { timeout: 180_000 });

    test('the run tools declare workspaces with their names and modes, not their paths', async () => {
        const { tools } = await server.client.listTools();
        const declaring = tools.filter((t) => t.inputSchema.properties?.workspaces).map((t) => t.name);
        assert.deepEqual(declaring.sort(), WORKSPACE_TOOLS);
        for (const name of WORKSPACE_TOOLS) {
            const schema = tools.find((t) => t.name === name).inputSchema.properties.workspaces;
            assert.equal(schema.type, 'array');
            assert.equal(schema.items.type, 'string');
            assert.match(schema.description, /data \(read-only\), proj \(copy-on-write\)/);
            assert.ok(!schema.description.includes(data), 'the host path stays on the host');
        }
        const session = tools.find((t) => t.name === 'create_session').inputSchema.properties.workspaces;
        assert.match(session.description, /brought up to date before each call/);
    });

    test('pandas reads a 20 MB CSV from a read-only workspace; credentials stay out', async () => {
        const result = await python([
            'import os, pandas as pd',
            'df = pd.read_csv("/workspace/data/sales.csv")',
            'print(len(df), int(df.units.sum()))',
            'print(os.path.exists("/workspace/data/.env"))',
        ].join('\n'), ['data']);
        assert.equal(result.isError, undefined, textOf(result));
        assert.match(textOf(result), new RegExp(`^700000 ${expectedTotal}\\nFalse\\n`));
        const [ws] = result.structuredContent.workspaces;
        assert.equal(ws.name, 'data');
        assert.equal(ws.mode, 'read-only');
        assert.equal(ws.path, '/workspace/data');
        assert.equal(ws.files, 1);
        assert.equal(ws.excluded, 1);
        assert.equal(ws.changes, undefined);
    });

    test('a copy-on-write run returns its change set and leaves the folder as it was', async () => {
        const result = await python([
            'open("/workspace/proj/README.md", "a").write("more\\n")',
            'open("/workspace/proj/summary.txt", "w").write("total\\n")',
        ].join('\n'), ['proj']);
        assert.equal(result.isError, undefined, textOf(result));
        const [ws] = result.structuredContent.workspaces;
        assert.equal(ws.mode, 'copy-on-write');
        assert.equal(ws.apply, 'never');
        assert.deepEqual(ws.changes.added.map((c) => c.path), ['summary.txt']);
        assert.deepEqual(ws.changes.modified.map((c) => c.path), ['README.md']);
        assert.match(ws.changes.modified[0].diff, /\+more/);
        assert.match(textOf(result), /not applied/);
        assert.equal(readFileSync(join(proj, 'README.md'), 'utf8'), '# a project\n');
        assert.ok(!existsSync(join(proj, 'summary.txt')));
    });

    test('an unknown workspace is refused with the names the server has', async () => {
        const result = await python('print(1)', ['nope']);
        assert.equal(result.isError, true);
        assert.match(textOf(result), /Unknown workspace nope: this Code Sandbox server has data, proj\./);
    });

    testNoContainersLeft(() => server?.client.close());
});

describe('a session with workspaces', () => {
    let server;
    let data;
    let proj;
    let session;
    before(async () => {
        data = mkdtempSync(join(tmpdir(), 'cs-ws-sdata-'));
        proj = mkdtempSync(join(tmpdir(), 'cs-ws-sproj-'));
        writeFileSync(join(data, 'facts.txt'), 'the sky is blue\n');
        writeFileSync(join(proj, 'README.md'), '# a project\n');
        server = await startClient({
            args: ['--stdio', '--pool', '0', '--workspace', `data=${data}`, '--workspace', `proj=${proj}:rw`],
        });
    });
    after(async () => {
        await server?.client.close();
        for (const d of [data, proj]) if (d) rmSync(d, { recursive: true, force: true });
    });
    const call = (name, args) => server.client.callTool({ name, arguments: args }, undefined, { timeout: 180_000 });
    const python = (code, extra = {}) => call('run_python_code', { code, session_id: session, ...extra });

    test('create_session takes workspaces; its calls read them without naming them', async () => {
        const created = await call('create_session', { language: 'python', workspaces: ['data', 'proj'] });
        assert.notEqual(created.isError, true, textOf(created));
        session = created.structuredContent.session_id;
        assert.deepEqual(created.structuredContent.workspaces, [
            { name: 'data', mode: 'read-only', path: '/workspace/data' },
            { name: 'proj', mode: 'copy-on-write', path: '/workspace/proj' },
        ]);
        assert.match(textOf(created), /\/workspace\/data \(read-only\), \/workspace\/proj \(copy-on-write\)/);
        const read = await python('facts = open("/workspace/data/facts.txt").read()\nprint(facts)');
        assert.notEqual(read.isError, true, textOf(read));
        // The copy-on-write one says what the session's copy changed: nothing yet.
        assert.equal(textOf(read), 'the sky is blue\n\n[workspace proj: no changes]');
    });

    test('a read-only workspace is seen as the folder is at each call', async () => {
        writeFileSync(join(data, 'facts.txt'), 'the sea is blue too\n');
        writeFileSync(join(data, 'more.txt'), 'more\n');
        const r = await python('import os\nprint(sorted(os.listdir("/workspace/data")), facts.strip())\nprint(open("/workspace/data/facts.txt").read())');
        assert.notEqual(r.isError, true, textOf(r));
        // The variable from the first call is still there: the same session, a new version.
        assert.match(textOf(r), /^\['facts\.txt', 'more\.txt'\] the sky is blue\nthe sea is blue too\n/);
    });

    test("a copy-on-write workspace's change set is the session's, call after call", async () => {
        const first = await python('open("/workspace/proj/a.txt", "w").write("a\\n")');
        assert.deepEqual(first.structuredContent.workspaces.find((w) => w.name === 'proj').changes.added.map((c) => c.path), ['a.txt']);
        const second = await python('open("/workspace/proj/b.txt", "w").write("b\\n")');
        const proj2 = second.structuredContent.workspaces.find((w) => w.name === 'proj');
        assert.deepEqual(proj2.changes.added.map((c) => c.path), ['a.txt', 'b.txt']);
        assert.match(textOf(second), /not applied/);
        assert.ok(!existsSync(join(proj, 'a.txt')));
    });

    test('a call in the session cannot name other workspaces', async () => {
        const other = await call('create_session', { language: 'python', workspaces: ['data'] });
        assert.notEqual(other.isError, true, textOf(other));
        const refused = await call('run_python_code', { code: 'print(1)', session_id: other.structuredContent.session_id, workspaces: ['proj'] });
        assert.equal(refused.isError, true);
        assert.match(textOf(refused), /a session's workspaces are chosen when it is created/);
        await call('close_session', { session_id: other.structuredContent.session_id });
    });

    test('list_sessions shows the workspaces, never the folders', async () => {
        const listed = await call('list_sessions', {});
        const [s] = listed.structuredContent.sessions;
        assert.equal(s.session_id, session);
        assert.deepEqual(s.workspaces.map((w) => `${w.name} ${w.mode}`), ['data read-only', 'proj copy-on-write']);
        assert.match(textOf(listed), /workspaces: \/workspace\/data \(read-only\)/);
        const everything = JSON.stringify(listed);
        assert.ok(!everything.includes(data) && !everything.includes(proj), 'the host paths stay on the host');
        await call('close_session', { session_id: session });
    });

    testNoContainersLeft(() => server?.client.close());
});

describe('a server without workspaces', () => {
    let server;
    before(async () => {
        server = await startClient({ args: ['--stdio', '--pool', '0'] });
    });
    after(async () => server?.client.close());

    test('offers no workspaces argument', async () => {
        const { tools } = await server.client.listTools();
        assert.deepEqual(tools.filter((t) => t.inputSchema.properties?.workspaces).map((t) => t.name), []);
    });
});
