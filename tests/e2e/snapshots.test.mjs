// Sessions that last (issue 49): a snapshot after every call, list_snapshots, rewind_session and
// fork_session through the SDK client, on the real engine. Python keeps its globals with dill,
// JavaScript its declarations; every language keeps the files under /sandbox. What cannot be
// kept is named; caps hold; another client cannot see or use a session's snapshots.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';

import { sharedClient, startClient, testNoContainersLeft, textOf } from './helpers.mjs';

const shared = sharedClient({ args: ['--stdio', '--max-sessions', '6', '--no-history'] });
const call = (name, args) => shared.client.callTool({ name, arguments: args });

const open = new Set();
afterEach(async () => {
    for (const id of open) await call('close_session', { session_id: id });
    open.clear();
});

async function createSession(args, client = shared.client) {
    const r = await client.callTool({ name: 'create_session', arguments: args });
    assert.notEqual(r.isError, true, textOf(r));
    open.add(r.structuredContent.session_id);
    return r.structuredContent.session_id;
}

async function run(session, code, tool = 'run_python_code') {
    const r = await call(tool, { code, session_id: session });
    assert.notEqual(r.isError, true, textOf(r));
    return r;
}

async function snapshots(session) {
    const r = await call('list_snapshots', { session_id: session });
    assert.notEqual(r.isError, true, textOf(r));
    return r.structuredContent.snapshots;
}

const NAMES = "print(sorted(k for k in globals() if not k.startswith('_')))";

test('python: rewind to after call 1 leaves only x; to after call 2 brings back objects, functions, classes and files', { timeout: 180_000 }, async () => {
    const s = await createSession({ language: 'python' });
    await run(s, 'x = 41');
    await run(s, [
        'import pandas as pd',
        "df = pd.DataFrame({'a': range(100)})",
        'def f(v):\n    return v + x',
        'class C:\n    def __init__(self):\n        self.v = 3',
        'c = C()',
        'g = lambda v: v * 2',
        "open('/sandbox/data.txt', 'w').write('kept')",
    ].join('\n'));
    await run(s, "x = 0\ndel df\nimport socket\nconn = socket.socket()\nopen('/sandbox/data.txt', 'w').write('changed')");
    // The call after a snapshot that could not keep something says so.
    const told = await run(s, 'print(x)');
    assert.match(textOf(told) + JSON.stringify(told.structuredContent), /did not keep: `conn` \(socket\)/);

    const list = await snapshots(s);
    assert.ok(list.length >= 3, JSON.stringify(list));
    const [one, two, three] = list;
    assert.equal(one.after_call, 1);
    assert.equal(two.after_call, 2);
    assert.equal(two.parent, one.snapshot_id);
    assert.equal(one.kind, 'python');
    assert.ok(one.bytes > 0);
    assert.match(one.sha256, /^[0-9a-f]{64}$/);
    assert.ok(three.not_kept.some((n) => n.name === 'conn' && n.type === 'socket'), JSON.stringify(three.not_kept));

    const back = await call('rewind_session', { session_id: s, snapshot_id: one.snapshot_id });
    assert.notEqual(back.isError, true, textOf(back));
    assert.equal(textOf(await run(s, NAMES)), "['x']\n");
    assert.equal(textOf(await run(s, "import os\nprint(x, os.path.exists('/sandbox/data.txt'))")), '41 False\n');

    const again = await call('rewind_session', { session_id: s, snapshot_id: two.snapshot_id });
    assert.notEqual(again.isError, true, textOf(again));
    const out = await run(s, "print(x, int(df.a.sum()), f(1), c.v, type(c).__name__, g(4), open('data.txt').read(), pd.__name__)");
    assert.equal(textOf(out), '41 4950 42 3 C 8 kept pandas\n');

    // The later snapshots stay listed; the next one starts a branch from the one rewound to.
    const after = await snapshots(s);
    assert.ok(after.some((n) => n.snapshot_id === three.snapshot_id));
    const latest = after[after.length - 1];
    assert.equal(latest.parent, two.snapshot_id);
});

test('python: two forks of one snapshot change their copies independently; the session goes on', { timeout: 180_000 }, async () => {
    const s = await createSession({ language: 'python' });
    await run(s, "data = [1, 2, 3]\nopen('/sandbox/note.txt', 'w').write('base')");
    const [snap] = await snapshots(s);
    const forks = [];
    for (const value of ['a', 'b']) {
        const r = await call('fork_session', { session_id: s, snapshot_id: snap.snapshot_id });
        assert.notEqual(r.isError, true, textOf(r));
        assert.equal(r.structuredContent.forked_from, snap.snapshot_id);
        assert.notEqual(r.structuredContent.session_id, s);
        open.add(r.structuredContent.session_id);
        forks.push(r.structuredContent.session_id);
        await run(r.structuredContent.session_id, `data.append('${value}')\nopen('/sandbox/note.txt', 'w').write('${value}')`);
    }
    for (const [i, value] of ['a', 'b'].entries())
        assert.equal(textOf(await run(forks[i], "print(data, open('note.txt').read())")), `[1, 2, 3, '${value}'] ${value}\n`);
    assert.equal(textOf(await run(s, "print(data, open('note.txt').read())")), '[1, 2, 3] base\n');
    // The latest snapshot by default.
    const latest = await call('fork_session', { session_id: s });
    assert.notEqual(latest.isError, true, textOf(latest));
    open.add(latest.structuredContent.session_id);
    assert.equal(textOf(await run(latest.structuredContent.session_id, 'print(len(data))')), '3\n');
});

test('javascript: variables, objects and functions come back with a rewind', { timeout: 180_000 }, async () => {
    const s = await createSession({ language: 'javascript' });
    await run(s, "let n = 1; const o = { k: [1, 2] }; function twice(v) { return 2 * v; }", 'run_javascript_code');
    await run(s, "n = 50; o.k.push(3); require('fs').writeFileSync('/sandbox/j.txt', 'js')", 'run_javascript_code');
    const [first] = await snapshots(s);
    assert.equal(first.kind, 'javascript');
    const r = await call('rewind_session', { session_id: s, snapshot_id: first.snapshot_id });
    assert.notEqual(r.isError, true, textOf(r));
    const out = await run(s, "console.log(n, o.k.length, twice(21), require('fs').existsSync('/sandbox/j.txt'))", 'run_javascript_code');
    assert.equal(textOf(out), '1 2 42 false\n');
    // A later call can go on with them as if it had declared them.
    assert.equal(textOf(await run(s, 'n += 1; console.log(n)', 'run_javascript_code')), '2\n');
});


test('bash: a rewind brings the files back', { timeout: 120_000 }, async () => {
    const s = await createSession({ language: 'bash' });
    const runBash = async (code) => {
        const r = await call('execute_code', { language: 'bash', code, session_id: s });
        assert.notEqual(r.isError, true, textOf(r));
        return r;
    };
    await runBash('echo one > f.txt');
    await runBash('echo two > f.txt; touch g');
    const [first] = await snapshots(s);
    assert.equal(first.kind, 'files');
    const r = await call('rewind_session', { session_id: s, snapshot_id: first.snapshot_id });
    assert.notEqual(r.isError, true, textOf(r));
    const after = await runBash('cat f.txt; test -e g && echo g || echo no-g');
    assert.equal(after.structuredContent.stdout, 'one\nno-g\n');
});

test('refusals: unknown or another session\'s snapshot, another client, an ended session', { timeout: 180_000 }, async () => {
    const a = await createSession({ language: 'python' });
    const b = await createSession({ language: 'python' });
    await run(a, 'x = 1');
    await run(b, 'y = 2');
    const [snapA] = await snapshots(a);
    const wrong = await call('rewind_session', { session_id: b, snapshot_id: snapA.snapshot_id });
    assert.equal(wrong.isError, true);
    assert.match(textOf(wrong), /another session's; fork_session/);
    const unknown = await call('rewind_session', { session_id: a, snapshot_id: `${a}.99` });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /has no snapshot/);
    // The session is still usable after refusals.
    assert.equal(textOf(await run(a, 'print(x)')), '1\n');

    const other = await startClient({ args: ['--stdio', '--no-history'] });
    try {
        const r = await other.client.callTool({ name: 'list_snapshots', arguments: { session_id: a } });
        assert.equal(r.isError, true);
        const f = await other.client.callTool({ name: 'fork_session', arguments: { session_id: a, snapshot_id: snapA.snapshot_id } });
        assert.equal(f.isError, true);
    } finally {
        await other.client.close();
    }

    // An ended session's snapshots stay for a fork; a rewind is refused with the way out.
    await call('close_session', { session_id: a });
    open.delete(a);
    const ended = await call('rewind_session', { session_id: a, snapshot_id: snapA.snapshot_id });
    assert.equal(ended.isError, true);
    assert.match(textOf(ended), /fork_session/);
    const revived = await call('fork_session', { session_id: a });
    assert.notEqual(revived.isError, true, textOf(revived));
    open.add(revived.structuredContent.session_id);
    assert.equal(textOf(await run(revived.structuredContent.session_id, 'print(x)')), '1\n');
});

test('caps: a state over a session\'s cap is not kept and the session goes on; the oldest go first', { timeout: 180_000 }, async () => {
    const small = await startClient({ args: ['--stdio', '--no-history', '--snapshot-max', '2m,3m'] });
    const callSmall = (name, args) => small.client.callTool({ name, arguments: args });
    try {
        const r = await callSmall('create_session', { language: 'python' });
        assert.notEqual(r.isError, true, textOf(r));
        const s = r.structuredContent.session_id;
        await callSmall('run_python_code', { code: 'big = bytes(3_000_000)', session_id: s });
        const next = await callSmall('run_python_code', { code: 'print(len(big))', session_id: s });
        assert.equal(next.structuredContent.stdout, '3000000\n');
        assert.match(JSON.stringify(next), /no snapshot was kept after call 1: .*cap/);
        // Each about 0.8 MB: a session keeps two, the first ones go.
        await callSmall('run_python_code', { code: 'del big\nimport os\nblob = os.urandom(800_000)', session_id: s });
        for (let i = 0; i < 3; i++)
            await callSmall('run_python_code', { code: `blob = os.urandom(800_000)  # ${i}`, session_id: s });
        const list = (await callSmall('list_snapshots', { session_id: s })).structuredContent.snapshots;
        const total = list.reduce((sum, n) => sum + n.bytes, 0);
        assert.ok(total <= 2 * 1024 * 1024, JSON.stringify(list));
        assert.ok(list.length >= 1 && list[0].after_call > 2, JSON.stringify(list));
        await callSmall('close_session', { session_id: s });
    } finally {
        await small.client.close();
    }
});

test('workspaces are the folders\', not a snapshot\'s: after a rewind the session still sees them', { timeout: 180_000 }, async () => {
    const folder = mkdtempSync(join(tmpdir(), 'cs-snap-ws-'));
    writeFileSync(join(folder, 'data.csv'), 'a,b\n1,2\n');
    const ws = await startClient({ args: ['--stdio', '--no-history', '--workspace', `data=${folder}`, '--workspace', `out=${folder}:rw`] });
    const callWs = (name, args) => ws.client.callTool({ name, arguments: args });
    try {
        const made = await callWs('create_session', { language: 'python', workspaces: ['data', 'out'] });
        assert.notEqual(made.isError, true, textOf(made));
        const s = made.structuredContent.session_id;
        const first = await callWs('run_python_code', { session_id: s, code: "n = len(open('/workspace/data/data.csv').read().splitlines())\nprint(n)" });
        assert.equal(first.structuredContent.stdout, '2\n', textOf(first));
        await callWs('run_python_code', { session_id: s, code: "n = 0\nopen('/workspace/out/new.txt', 'w').write('x')" });
        const [one] = (await callWs('list_snapshots', { session_id: s })).structuredContent.snapshots;
        const back = await callWs('rewind_session', { session_id: s, snapshot_id: one.snapshot_id });
        assert.notEqual(back.isError, true, textOf(back));
        const after = await callWs('run_python_code', { session_id: s, code: "import os\nprint(n, open('/workspace/data/data.csv').read().splitlines()[1], sorted(os.listdir('/workspace/out')))" });
        assert.equal(after.structuredContent.stdout, "2 1,2 ['data.csv']\n", textOf(after));
        await callWs('close_session', { session_id: s });
    } finally {
        await ws.client.close();
        rmSync(folder, { recursive: true, force: true });
    }
});

test('restart: a kept session comes back with its variables and files, for the same assistant only', { timeout: 180_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'cs-kept-'));
    const env = { CODE_SANDBOX_HISTORY: join(home, 'history.sqlite') };
    try {
        let server = await startClient({ env, name: 'assistant-a' });
        const made = await server.client.callTool({ name: 'create_session', arguments: { language: 'python', keep: true } });
        assert.notEqual(made.isError, true, textOf(made));
        assert.equal(made.structuredContent.kept, true);
        const id = made.structuredContent.session_id;
        const first = await server.client.callTool({ name: 'run_python_code', arguments: { code: "x = 41\nopen('/sandbox/k.txt', 'w').write('here')", session_id: id } });
        assert.notEqual(first.isError, true, textOf(first));
        // Its snapshot is kept before the server stops.
        await server.client.callTool({ name: 'list_snapshots', arguments: { session_id: id } });
        await server.client.close();

        const stranger = await startClient({ env, name: 'assistant-b' });
        try {
            const r = await stranger.client.callTool({ name: 'run_python_code', arguments: { code: 'print(x)', session_id: id } });
            assert.equal(r.isError, true);
            assert.match(textOf(r), /kept for another assistant/);
            const list = await stranger.client.callTool({ name: 'list_sessions', arguments: {} });
            assert.deepEqual(list.structuredContent.sessions, []);
            const snaps = await stranger.client.callTool({ name: 'list_snapshots', arguments: { session_id: id } });
            assert.equal(snaps.isError, true);
            assert.match(textOf(snaps), /kept for another assistant/);
        } finally {
            await stranger.client.close();
        }

        server = await startClient({ env, name: 'assistant-a' });
        try {
            const list = await server.client.callTool({ name: 'list_sessions', arguments: {} });
            assert.deepEqual(list.structuredContent.sessions.map((s) => [s.session_id, s.state]), [[id, 'kept']]);
            // The snapshot tools bring it back too, as a run call does.
            const snaps = await server.client.callTool({ name: 'list_snapshots', arguments: { session_id: id } });
            assert.notEqual(snaps.isError, true, textOf(snaps));
            assert.deepEqual(snaps.structuredContent.snapshots.map((s) => [s.after_call, s.current]), [[1, true]]);
            const back = await server.client.callTool({ name: 'run_python_code', arguments: { code: "print(x + 1, open('k.txt').read())", session_id: id } });
            assert.notEqual(back.isError, true, textOf(back));
            assert.equal(back.structuredContent.stdout, '42 here\n');
            const closed = await server.client.callTool({ name: 'close_session', arguments: { session_id: id } });
            assert.notEqual(closed.isError, true, textOf(closed));
        } finally {
            await server.client.close();
        }
        // Closed: not kept any more.
        server = await startClient({ env, name: 'assistant-a' });
        try {
            const list = await server.client.callTool({ name: 'list_sessions', arguments: {} });
            assert.deepEqual(list.structuredContent.sessions, []);
        } finally {
            await server.client.close();
        }
    } finally {
        rmSync(home, { recursive: true, force: true });
    }
});

test("an assistant's policy keeps its sessions unless its call says keep: false", { timeout: 180_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'cs-keep-policy-'));
    mkdirSync(join(home, 'code-sandbox'));
    const policies = JSON.stringify({
        default: { action: 'run' },
        assistants: [{ client: 'keeper', action: 'run', keepSessions: true }],
    });
    writeFileSync(join(home, 'code-sandbox', 'code-sandbox.conf'),
        `[assistants]\npolicies="${policies.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"\n`);
    const env = { XDG_CONFIG_HOME: home, XDG_DATA_HOME: home };
    const kept = async (client, args) => {
        const r = await client.callTool({ name: 'create_session', arguments: { language: 'python', ...args } });
        assert.notEqual(r.isError, true, textOf(r));
        await client.callTool({ name: 'close_session', arguments: { session_id: r.structuredContent.session_id } });
        return [r.structuredContent.kept === true, /It is kept/.test(textOf(r))];
    };
    const keeper = await startClient({ env, name: 'keeper' });
    const other = await startClient({ env, name: 'other' });
    try {
        assert.deepEqual(await kept(keeper.client, {}), [true, true], 'kept by its policy');
        assert.deepEqual(await kept(keeper.client, { keep: false }), [false, false], 'the call says otherwise');
        assert.deepEqual(await kept(other.client, {}), [false, false], 'another assistant\'s policy');
        assert.deepEqual(await kept(other.client, { keep: true }), [true, true]);
    } finally {
        await keeper.client.close();
        await other.client.close();
        rmSync(home, { recursive: true, force: true });
    }
});

testNoContainersLeft(() => shared.close());
