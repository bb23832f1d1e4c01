// gVisor (runsc) as the sandboxes' runtime, through the official SDK client. The engines
// fixture's TLS daemon (tests/engines) has Debian's runsc registered as "runsc" (with
// --network=none, which Docker 20.10 needs for --network none containers) and "runsc-net" (with
// --network=host, for sandboxes on a network); the main engine has only runc. Run by ctest as
// e2e_gvisor, which starts the fixture.
//
// Under runsc: the kernel the program sees is gVisor's, the hardening reads back, and the cases
// of the stdio suite that touch the kernel hold (languages, files, plots, sessions, timeouts,
// memory, processes, output). Then placement: an assistant policy that requires gVisor sends its
// runs to the engine that has it, and is refused clearly where none has it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

import { DOCKER, engineFixture, SANDBOX_LABEL, startClient, textOf } from './helpers.mjs';

const execFileP = promisify(execFile);
const F = engineFixture();
const GVISOR_ENGINE = `${F.CS_TLS_UNIX}?runtime=runsc`;

// Every sandbox container left on one of the fixture's engines or the main one.
async function sandboxesOn(socket) {
    const { stdout } = await execFileP(DOCKER, ['-H', socket, 'ps', '-a', '--filter',
        `label=${SANDBOX_LABEL}`, '--format', '{{.ID}} {{.Names}}']);
    return stdout.split('\n').map((s) => s.trim()).filter(Boolean);
}

async function noneLeft(socket, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    let left = await sandboxesOn(socket);
    while (left.length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        left = await sandboxesOn(socket);
    }
    assert.deepEqual(left, [], `sandboxes left on ${socket}`);
}

// The runtime of every run in a history file, read with Debian's Python (Node 20 has no SQLite).
async function runtimesIn(history) {
    const { stdout } = await execFileP('python3', ['-c', [
        'import json, sqlite3, sys',
        'try:',
        '    db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)',
        '    print(json.dumps([r[0] for r in db.execute("SELECT runtime FROM runs WHERE tool = \'run_python_code\'")]))',
        'except sqlite3.Error:',
        '    print("[]")',
    ].join('\n'), history]);
    return JSON.parse(stdout);
}

// A settings folder whose default policy requires `isolation` of every assistant's runs.
const settingsDirs = [];
function settingsRequiring(isolation) {
    const dir = mkdtempSync(join(tmpdir(), 'cs-e2e-gvisor-'));
    settingsDirs.push(dir);
    mkdirSync(join(dir, 'code-sandbox'));
    const policies = JSON.stringify({ default: { action: 'run', isolation } });
    writeFileSync(join(dir, 'code-sandbox', 'code-sandbox.conf'),
        `[assistants]\npolicies="${policies.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"\n`);
    return dir;
}

describe('under runsc', () => {
    let server;
    let client;
    const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
    const python = (code, extra = {}) => call('execute_code', { language: 'python', code, ...extra });

    before(async () => {
        server = await startClient({ args: ['--stdio', '--engine', GVISOR_ENGINE, '--memory', '256m'] });
        client = server.client;
    });
    after(async () => {
        await client?.close();
        await noneLeft(F.CS_TLS_UNIX);
    });

    test('the program sees gVisor\'s kernel, and the hardening reads back', { timeout: 120_000 }, async () => {
        const r = await python([
            'import ctypes, json, os, platform',
            'caps = {l.split(":")[0]: l.split()[1] for l in open("/proc/self/status") if l.startswith("Cap")}',
            '# (gVisor leaves ST_RDONLY out of statvfs; its mount table says it)',
            'root = [l.split()[3].split(",")[0] for l in open("/proc/mounts") if l.split()[1] == "/"][0]',
            '# PR_GET_NO_NEW_PRIVS (gVisor\'s /proc/self/status has no NoNewPrivs line)',
            'nonewprivs = ctypes.CDLL(None).prctl(39, 0, 0, 0, 0)',
            'print(json.dumps({"release": platform.release(), "version": open("/proc/version").read(),',
            '    "uid": os.getuid(), "gid": os.getgid(), "caps": caps, "root": root,',
            '    "nonewprivs": nonewprivs}))',
        ].join('\n'));
        assert.notEqual(r.isError, true, textOf(r));
        const seen = JSON.parse(r.structuredContent.stdout);
        // gVisor reports a fixed Linux version of its own, never the host's.
        assert.notEqual(seen.release, release(), `the host's kernel: ${JSON.stringify(seen)}`);
        assert.equal(seen.release, '4.4.0', JSON.stringify(seen));
        assert.equal(seen.uid, 1000);
        assert.equal(seen.gid, 1000);
        for (const [name, value] of Object.entries(seen.caps))
            assert.match(value, /^0+$/, `${name} ${value}`);
        assert.equal(seen.root, 'ro');
        assert.equal(seen.nonewprivs, 1);
    });

    test('the languages of the images on this engine run', { timeout: 180_000 }, async () => {
        for (const [language, code] of [['python', 'print(6 * 7)'],
            ['javascript', 'console.log(6 * 7)'], ['typescript', 'const n: number = 6 * 7; console.log(n)']]) {
            const r = await call('execute_code', { language, code });
            assert.notEqual(r.isError, true, `${language}: ${textOf(r)}`);
            assert.equal(r.structuredContent.stdout, '42\n', language);
        }
    });

    test('files go in and come out, and plots come back', { timeout: 120_000 }, async () => {
        const r = await call('execute_code', {
            language: 'python',
            code: [
                'import os',
                'import matplotlib.pyplot as plt',
                'text = open("in.txt").read()',
                'open(os.path.join(os.environ["OUTPUT_DIR"], "upper.txt"), "w").write(text.upper())',
                'plt.figure(figsize=(2, 1), dpi=100); plt.plot([1, 2]); plt.show()',
                'print(text)',
            ].join('\n'),
            files: [{ path: 'in.txt', content: 'through gvisor' }],
        });
        assert.notEqual(r.isError, true, textOf(r));
        assert.equal(r.structuredContent.stdout, 'through gvisor\n');
        const kinds = r.structuredContent.files.map((f) => [f.kind, f.path ?? f.name]);
        assert.ok(r.structuredContent.files.some((f) => f.kind === 'plot'), JSON.stringify(kinds));
        const out = r.content.find((c) => c.type === 'resource' && /upper\.txt$/.test(c.resource.uri));
        assert.ok(out, `the output file: ${JSON.stringify(kinds)}`);
        assert.equal(out.resource.text, 'THROUGH GVISOR');
    });

    test('a session keeps its state between calls', { timeout: 120_000 }, async () => {
        const created = await call('create_session', { language: 'python' });
        const id = created.structuredContent?.session_id;
        assert.ok(id, textOf(created));
        await python('x = 41', { session_id: id });
        const again = await python('print(x + 1)', { session_id: id });
        assert.equal(again.structuredContent.stdout, '42\n', textOf(again));
        const closed = await call('close_session', { session_id: id });
        assert.notEqual(closed.isError, true, textOf(closed));
    });

    test('a program past its timeout is stopped and said to be', { timeout: 120_000 }, async () => {
        const r = await python('import time\nprint("start", flush=True)\ntime.sleep(60)', { timeout: 3 });
        assert.equal(r.structuredContent.timed_out, true, textOf(r));
        assert.equal(r.structuredContent.stdout, 'start\n');
    });

    test('the memory limit holds', { timeout: 120_000 }, async () => {
        const r = await python('x = bytearray(1024 * 1024 * 1024)\nprint("allocated")');
        assert.doesNotMatch(r.structuredContent.stdout, /allocated/, textOf(r));
        assert.notEqual(r.structuredContent.exit_code, 0, textOf(r));
    });

    test('a fork bomb is contained and the server goes on', { timeout: 120_000 }, async () => {
        const r = await python('import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass', { timeout: 5 });
        // runc: the forks fail at the pids limit and the loop runs to its timeout. Under gVisor
        // the run ends within a second with a failure status (137 or 2 seen: the limit reaches
        // the supervisor too). Either way it ends, and the server goes on.
        const sc = r.structuredContent;
        assert.ok(sc.timed_out || (sc.exit_code !== null && sc.exit_code !== 0), textOf(r));
        const after = await python('print("still serving")');
        assert.equal(after.structuredContent.stdout, 'still serving\n');
    });

    test('endless output is cut at the cap', { timeout: 120_000 }, async () => {
        const r = await python('import sys\nwhile True:\n    sys.stdout.write("x" * 65536)', { timeout: 10 });
        assert.equal(r.structuredContent.truncated, true, textOf(r).slice(0, 200));
    });
});

describe('placement by isolation', () => {
    const started = [];
    after(async () => {
        for (const s of started) await s.client.close();
        await noneLeft(F.CS_TLS_UNIX);
        await noneLeft(F.CS_MAIN_ENGINE);
    });
    const start = async (args, isolation) => {
        const config = settingsRequiring(isolation);
        // The history goes to the same folder (code-sandbox/history.sqlite), not the user's.
        const s = await startClient({ args: ['--stdio', ...args],
            env: { XDG_CONFIG_HOME: config, XDG_DATA_HOME: config } });
        s.history = join(config, 'code-sandbox', 'history.sqlite');
        started.push(s);
        // As a client can ask first: the engines, once each has said which runtimes it has.
        const deadline = Date.now() + 30_000;
        for (;;) {
            const r = await s.client.callTool({ name: 'get_supported_languages', arguments: {} });
            assert.notEqual(r.isError, true, textOf(r));
            const engines = r.structuredContent.engines;
            if (engines.every((e) => e.runtimes?.length > 0)) {
                s.engines = engines;
                break;
            }
            assert.ok(Date.now() < deadline, `the engines did not say their runtimes: ${JSON.stringify(engines)}`);
            await new Promise((resolve) => setTimeout(resolve, 250));
        }
        return s;
    };

    test('runs that require gVisor go to the engine that has it', { timeout: 180_000 }, async () => {
        // No --runtime: the engine's runsc is chosen for the policy's runs alone.
        const { client, stderr, engines, history } = await start(['--engine', F.CS_MAIN_ENGINE, '--engine', F.CS_TLS_UNIX], 'gvisor');
        assert.deepEqual(engines.map((e) => e.runtimes.includes('runsc')), [false, true], JSON.stringify(engines));
        for (let i = 0; i < 4; i++) {
            const r = await client.callTool({ name: 'run_python_code',
                arguments: { code: 'import platform; print(platform.release())' } });
            assert.notEqual(r.isError, true, `${textOf(r)}\n${stderr()}`);
            assert.equal(r.structuredContent.stdout, '4.4.0\n', `call ${i} ran on ${r.structuredContent.engine}`);
            assert.match(r.structuredContent.engine, /tls/, `call ${i} ran on ${r.structuredContent.engine}`);
        }
        // The history (what the window's run details show) names the runtime of each run.
        const deadline = Date.now() + 20_000;
        let runtimes = [];
        while (Date.now() < deadline) {
            runtimes = await runtimesIn(history);
            if (runtimes.length === 4) break;
            await new Promise((resolve) => setTimeout(resolve, 250));
        }
        assert.deepEqual(runtimes, ['runsc', 'runsc', 'runsc', 'runsc']);
    });

    test('with no engine that has gVisor, the run is refused naming the rule and the fix', { timeout: 60_000 }, async () => {
        const { client } = await start(['--engine', F.CS_MAIN_ENGINE], 'gvisor');
        const r = await client.callTool({ name: 'run_python_code', arguments: { code: 'print(1)' } });
        assert.equal(r.isError, true, textOf(r));
        assert.match(textOf(r), /no gVisor runtime/);
        assert.match(textOf(r), /daemon\.json/);
    });

    test('a runtime the engine does not have is refused with the fix', { timeout: 60_000 }, async () => {
        const { client, engines } = await start(['--engine', F.CS_TLS_UNIX, '--runtime', 'no-such-runtime'], '');
        assert.equal(engines[0].runtime, 'no-such-runtime');
        const r = await client.callTool({ name: 'run_python_code', arguments: { code: 'print(1)' } });
        assert.equal(r.isError, true, textOf(r));
        assert.match(textOf(r), /no container runtime "no-such-runtime" \(it has [^)]*runsc/);
    });
});

after(() => {
    for (const dir of settingsDirs) rmSync(dir, { recursive: true, force: true });
});
