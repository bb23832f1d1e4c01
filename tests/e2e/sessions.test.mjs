// Stateful sessions through the SDK client: state that persists between calls (live for Python
// and JavaScript, files for every language), isolation from calls without the session, limits,
// closing and expiry, and no container left behind.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';

import { sandboxContainers, sharedClient, sleep, startClient, testNoContainersLeft, textOf } from './helpers.mjs';

const shared = sharedClient({ args: ['--stdio', '--session-idle', '6', '--max-sessions', '4'] });
const call = (name, args) => shared.client.callTool({ name, arguments: args });

// Sessions a test made are closed when it ends (the server allows four at once here).
const open = new Set();
afterEach(async () => {
    for (const id of open) await call('close_session', { session_id: id });
    open.clear();
});

async function createSession(args) {
    const r = await call('create_session', args);
    assert.notEqual(r.isError, true, textOf(r));
    assert.match(r.structuredContent.session_id, /^s-[0-9a-z]{1,8}-[0-9a-f]{12}$/);
    open.add(r.structuredContent.session_id);
    return r.structuredContent;
}

test('python: a variable from one call is there in the next; a fresh run does not see it', { timeout: 90_000 }, async () => {
    const s = await createSession({ language: 'python' });
    assert.equal(s.language, 'python');
    assert.equal(s.live_state, true);
    assert.equal(s.state, 'idle');

    const first = await call('run_python_code', { code: 'x = 41\nimport math', session_id: s.session_id });
    assert.notEqual(first.isError, true, textOf(first));
    const second = await call('run_python_code', { code: 'print(x + 1)\nprint(math.sqrt(16))', session_id: s.session_id });
    assert.equal(textOf(second), '42\n4.0\n');
    // The last expression's value is shown, as in a REPL.
    const value = await call('execute_code', { code: 'x * 2', session_id: s.session_id });
    assert.equal(value.structuredContent.stdout, '82\n');
    assert.equal(value.structuredContent.language, 'python');

    const fresh = await call('run_python_code', { code: 'print(x)' });
    assert.equal(fresh.isError, true);
    assert.match(fresh.structuredContent.stderr, /NameError: name 'x' is not defined/);

    // An error in one call leaves the session usable.
    const boom = await call('run_python_code', { code: 'def f():\n    return 1 / 0\nf()', session_id: s.session_id });
    assert.equal(boom.isError, true);
    assert.match(boom.structuredContent.stderr, /ZeroDivisionError/);
    const after = await call('run_python_code', { code: 'print(f.__name__, x)', session_id: s.session_id });
    assert.equal(textOf(after), 'f 41\n');
});

test('javascript: let, functions and values persist', { timeout: 90_000 }, async () => {
    const s = await createSession({ language: 'javascript' });
    assert.equal(s.live_state, true);
    const a = await call('run_javascript_code', { code: 'let x = 41; function twice(n) { return 2 * n; }', session_id: s.session_id });
    assert.notEqual(a.isError, true, textOf(a));
    const b = await call('run_javascript_code', { code: 'console.log(x + 1)', session_id: s.session_id });
    assert.equal(textOf(b), '42\n');
    const c = await call('execute_code', { code: 'twice(x)', session_id: s.session_id });
    assert.equal(c.structuredContent.stdout, '82\n');
    const fresh = await call('run_javascript_code', { code: 'console.log(typeof x)' });
    assert.equal(textOf(fresh), 'undefined\n');
});

test('a file written in one call is read in the next (python, bash)', { timeout: 90_000 }, async () => {
    const py = await createSession({ language: 'python' });
    await call('run_python_code', { code: 'open("notes.txt", "w").write("kept\\n")', session_id: py.session_id });
    const read = await call('run_python_code', { code: 'print(open("notes.txt").read(), end="")', session_id: py.session_id });
    assert.equal(textOf(read), 'kept\n');

    const sh = await createSession({ language: 'bash' });
    assert.equal(sh.live_state, false);
    const w = await call('execute_code', { code: 'echo persisted > data.txt; echo written', session_id: sh.session_id });
    assert.equal(w.structuredContent.stdout, 'written\n');
    const r = await call('execute_code', { code: 'cat data.txt', session_id: sh.session_id });
    assert.equal(r.structuredContent.stdout, 'persisted\n');
    const fresh = await call('execute_code', { language: 'bash', code: 'cat data.txt' });
    assert.equal(fresh.isError, true);
    assert.match(fresh.structuredContent.stderr, /No such file/);
});

test('a plot made in a session comes back once, with its call', { timeout: 90_000 }, async () => {
    const s = await createSession({ language: 'python' });
    const plot = await call('run_python_code', {
        code: 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()', session_id: s.session_id,
    });
    assert.equal(plot.content.filter((c) => c.type === 'image').length, 1, JSON.stringify(plot.structuredContent));
    const next = await call('run_python_code', { code: 'print("no plot here")', session_id: s.session_id });
    assert.equal(next.content.filter((c) => c.type === 'image').length, 0);
});

test('in a session, a backend the program selects, files it saves and open figures come back with their call only', { timeout: 90_000 }, async () => {
    const s = await createSession({ language: 'python' });
    const run = (code) => call('run_python_code', { code, session_id: s.session_id });
    const names = (r) => r.structuredContent.files.map((f) => f.name);
    const images = (r) => r.content.filter((c) => c.type === 'image').length;
    const saved = await run("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.savefig('chart.png')");
    assert.notEqual(saved.isError, true, textOf(saved));
    assert.deepEqual(names(saved), ['chart.png']);
    assert.equal(images(saved), 1);
    const open = await run("plt.switch_backend('agg')\nplt.figure()\nplt.plot([3, 2, 1])");
    assert.deepEqual(names(open), ['figure-0001.png'], 'chart.png is not returned again');
    assert.equal(images(open), 1);
    const quiet = await run('print("nothing")');
    assert.deepEqual(names(quiet), []);
    const again = await run("from PIL import Image\nImage.new('RGB', (5, 5)).save('chart.png')");
    assert.deepEqual(names(again), ['chart.png'], 'changed, so returned again');

    const sh = await createSession({ language: 'bash' });
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"/>';
    const drawn = await call('execute_code', { code: `printf '%s' '${svg}' > pic.svg`, session_id: sh.session_id });
    assert.deepEqual(names(drawn), ['pic.svg']);
    const after = await call('execute_code', { code: 'cat pic.svg', session_id: sh.session_id });
    assert.equal(after.structuredContent.stdout, svg);
    assert.deepEqual(names(after), []);

    const js = await createSession({ language: 'javascript' });
    const written = await call('execute_code', { code: `require("fs").writeFileSync("pic.svg", '${svg}')`, session_id: js.session_id });
    assert.deepEqual(names(written), ['pic.svg']);
    const later = await call('execute_code', { code: '1 + 1', session_id: js.session_id });
    assert.deepEqual(names(later), []);
});

test('a call past its timeout is interrupted and the session goes on (python, javascript, bash)', { timeout: 90_000 }, async () => {
    const cases = [
        ['python', 'y = 7', 'while True: pass', 'print(y)'],
        ['javascript', 'var y = 7', 'for (;;) {}', 'console.log(y)'],
        ['bash', 'echo 7 > y.txt', 'sleep 60', 'cat y.txt'],
    ];
    for (const [language, before, slow, after] of cases) {
        const s = await createSession({ language });
        await call('execute_code', { code: before, session_id: s.session_id });
        const r = await call('execute_code', { code: slow, timeout: 2, session_id: s.session_id });
        assert.equal(r.structuredContent.timed_out, true, `${language}: ${JSON.stringify(r.structuredContent)}`);
        const next = await call('execute_code', { code: after, session_id: s.session_id });
        assert.equal(next.structuredContent.stdout, '7\n', `${language}: ${JSON.stringify(next.structuredContent)}`);
    }
});

test('list_sessions, wrong language, close_session, and a closed session is refused', { timeout: 90_000 }, async () => {
    const before = new Set(await sandboxContainers());
    const s = await createSession({ language: 'python' });
    const mine = (await sandboxContainers()).filter((id) => !before.has(id));
    assert.ok(mine.length >= 1, 'the session has a container');
    const listed = await call('list_sessions', {});
    assert.deepEqual(listed.structuredContent.sessions.map((x) => [x.session_id, x.language, x.state]),
        [[s.session_id, 'python', 'idle']]);
    const wrong = await call('run_javascript_code', { code: '1', session_id: s.session_id });
    assert.equal(wrong.isError, true);
    assert.match(textOf(wrong), /runs python, not javascript/);

    const closed = await call('close_session', { session_id: s.session_id });
    open.delete(s.session_id);
    assert.equal(closed.structuredContent.closed, true);
    const refused = await call('run_python_code', { code: 'print(1)', session_id: s.session_id });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /has ended \(closed with close_session\)/);
    let left = [];
    for (let i = 0; i < 40; ++i) {
        const now = new Set(await sandboxContainers());
        left = mine.filter((id) => now.has(id));
        if (left.length === 0) break;
        await sleep(250);
    }
    assert.deepEqual(left, [], 'the closed session container was removed');
    const unknown = await call('run_python_code', { code: 'print(1)', session_id: 's-000000000000' });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /no session 's-000000000000'/i);
});

test('the number of sessions is capped', { timeout: 90_000 }, async () => {
    for (let i = 0; i < 4; ++i) await createSession({ language: 'bash' });
    const fifth = await call('create_session', { language: 'bash' });
    assert.equal(fifth.isError, true);
    assert.match(textOf(fifth), /4 sessions are open/);
});

test('an idle session expires, is refused with a clear error, and its container is gone', { timeout: 90_000 }, async () => {
    const before = new Set(await sandboxContainers());
    const s = await createSession({ language: 'python' });
    const mine = (await sandboxContainers()).filter((id) => !before.has(id));
    assert.ok(mine.length >= 1, 'the session has a container');
    await sleep(9_000); // idle limit 6 s, checked every second
    const r = await call('run_python_code', { code: 'print(1)', session_id: s.session_id });
    open.delete(s.session_id);
    assert.equal(r.isError, true);
    assert.match(textOf(r), /has ended \(expired after 6 s without a call\)/);
    const left = new Set(await sandboxContainers());
    assert.deepEqual(mine.filter((id) => left.has(id)), [], 'the expired session container was removed');
});

test('sessions of one client are not usable by another', { timeout: 90_000 }, async () => {
    const s = await createSession({ language: 'python' });
    const other = await startClient();
    try {
        const r = await other.client.callTool({ name: 'run_python_code', arguments: { code: 'print(1)', session_id: s.session_id } });
        assert.equal(r.isError, true);
        // Another stdio client is another instance: the answer names the one that holds it.
        assert.match(textOf(r), /belongs to another instance of this server/i);
        const list = await other.client.callTool({ name: 'list_sessions', arguments: {} });
        assert.deepEqual(list.structuredContent.sessions, []);
    } finally {
        await other.client.close();
    }
});

testNoContainersLeft(() => shared.close());
