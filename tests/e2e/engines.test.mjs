// Several engines at once, through the official SDK client: the main engine plus the two
// daemons of the engines fixture (tests/engines: one over TCP with TLS, one through ssh). Each
// address form runs code; an ssh engine is one ssh connection (and needs no docker command
// there, falls back to dial-stdio when the server refuses the forward, dies with the server); a burst is spread over three engines; a session stays on its engine;
// an engine killed mid-burst fails only its own calls, clearly, and later calls go elsewhere
// until it is back; nothing is left on any engine. Run by ctest as e2e_engines (it needs the
// fixture: `ctest -R e2e_engines` starts and stops it).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

import {
    DOCKER, engineFixture, SANDBOX_LABEL, sleep, startClient, textOf, waitForCount,
} from './helpers.mjs';

const execFileP = promisify(execFile);

const F = engineFixture();
const ENGINES_SH = new URL('../engines/engines.sh', import.meta.url).pathname;
const tlsArgs = ['--tls-ca', `${F.CS_TLS_CERT_PATH}/ca.pem`, '--tls-cert',
    `${F.CS_TLS_CERT_PATH}/cert.pem`, '--tls-key', `${F.CS_TLS_CERT_PATH}/key.pem`];
// Where each engine is reached directly, to look at what is on it.
const SOCKETS = { main: F.CS_MAIN_ENGINE, tls: F.CS_TLS_UNIX, ssh: F.CS_SSH_UNIX };
const hostPort = (url) => new URL(url.replace(/^(tcp|ssh):/, 'http:')).host;
const TLS_ID = hostPort(F.CS_TLS_ENGINE);
const SSH_ID = hostPort(F.CS_SSH_ENGINE);

// Which of the three an engine string from a result names.
function engineKey(engine) {
    if (!engine) return 'none';
    if (engine.includes(TLS_ID)) return 'tls';
    if (engine.includes(SSH_ID)) return 'ssh';
    if (engine.includes('docker.sock')) return 'main';
    return `other:${engine}`;
}

async function containersOn(name, extra = []) {
    const { stdout } = await execFileP(DOCKER, ['-H', SOCKETS[name], 'ps', '-a', '--filter',
        `label=${SANDBOX_LABEL}`, ...extra, '--format', '{{.ID}} {{.Names}}']);
    return stdout.split('\n').map((s) => s.trim()).filter(Boolean);
}

async function waitNothingLeft(names, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const left = {};
        for (const n of names) {
            const ids = await containersOn(n);
            if (ids.length) left[n] = ids;
        }
        if (Object.keys(left).length === 0 || Date.now() > deadline) return left;
        await sleep(500);
    }
}

const serverEnv = (extra = {}) => ({ CODE_SANDBOX_SSH_CONFIG: F.CS_SSH_CONFIG,
    DOCKER_CONFIG: dockerConfig, ...extra });
let dockerConfig;

before(() => {
    // The client's own Docker configuration, with a context made by the Docker CLI.
    dockerConfig = mkdtempSync(join(tmpdir(), 'cs-e2e-docker-config-'));
});
after(() => rmSync(dockerConfig, { recursive: true, force: true }));

async function runPython(client, code, timeoutMs = 120_000) {
    return client.callTool({ name: 'run_python_code', arguments: { code } },
        undefined, { timeout: timeoutMs });
}

describe('each address form runs code', () => {
    const forms = [
        ['tcp:// with TLS client certificates', 'tls', () => ['--engine', F.CS_TLS_ENGINE, ...tlsArgs], {}],
        ['ssh:// through the user\'s ssh', 'ssh', () => ['--engine', F.CS_SSH_ENGINE], {}],
        ['context:NAME made by the Docker CLI', 'tls', () => ['--engine', 'context:cs-e2e-tls'], {}],
        ['DOCKER_CONTEXT naming that context', 'tls', () => [], { DOCKER_CONTEXT: 'cs-e2e-tls' }],
    ];
    before(async () => {
        await execFileP(DOCKER, ['context', 'create', 'cs-e2e-tls', '--docker',
            `host=${F.CS_TLS_ENGINE},ca=${F.CS_TLS_CERT_PATH}/ca.pem,` +
            `cert=${F.CS_TLS_CERT_PATH}/cert.pem,key=${F.CS_TLS_CERT_PATH}/key.pem`],
        { env: { ...process.env, DOCKER_CONFIG: dockerConfig } });
    });
    for (const [label, where, args, env] of forms) {
        test(label, { timeout: 120_000 }, async () => {
            const { client, stderr } = await startClient({
                args: ['--stdio', '--no-history', '--no-monitor', '--pool', '0', ...args()], env: serverEnv(env) });
            try {
                const r = await runPython(client, 'print(6*7)');
                assert.equal(r.isError, undefined, `${textOf(r)}\n${stderr()}`);
                assert.match(textOf(r), /42/);
                // It ran there: a session's container is found on that daemon's own socket.
                const s = await client.callTool({ name: 'create_session',
                    arguments: { language: 'python' } }, undefined, { timeout: 120_000 });
                assert.ok(!s.isError, textOf(s));
                // The run's used sandbox may still wait there for its removal: bounded wait.
                const mine = await waitForCount(() => containersOn(where), 1);
                assert.equal(mine.length, 1, `expected the session's container on ${where}: ` +
                    `${JSON.stringify(mine)}\n${stderr()}`);
            } finally {
                await client.close();
            }
            assert.deepEqual(await waitNothingLeft([where], 15_000), {});
        });
    }
});

// An ssh engine is one ssh connection (its socket forwarded, a channel per engine connection),
// however many calls: counted in the fixture sshd's log, one "Accepted publickey" per connection.
function sshAccepted() {
    return readFileSync(F.CS_SSH_LOG, 'utf8').split('\n')
        .filter((l) => l.includes('Accepted publickey')).length;
}

// The ssh processes whose parent is `pid`.
function sshChildren(pid) {
    const found = [];
    for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        let stat;
        try {
            stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        } catch {
            continue; // gone meanwhile
        }
        const close = stat.lastIndexOf(')');
        const comm = stat.slice(stat.indexOf('(') + 1, close);
        const fields = stat.slice(close + 2).split(' ');
        if (comm === 'ssh' && Number(fields[1]) === pid && fields[0] !== 'Z') found.push(Number(entry));
    }
    return found;
}

const running = (pid) => {
    try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] !== 'Z';
    } catch {
        return false;
    }
};

// Workspaces (issue 50) reach a remote engine's sandboxes through its archive endpoint, the same
// way as the local engine's: the same program sees the same files, and a copy-on-write run's
// change set comes back while the folder stays as it was. The folder's content stays on the
// engine in a volume: the second call over the same folder sends none of its bytes.
describe('a workspace on remote engines', () => {
    let folder;
    before(() => {
        folder = mkdtempSync(join(tmpdir(), 'cs-e2e-ws-'));
        writeFileSync(join(folder, 'data.csv'), 'a,b\n1,2\n');
        writeFileSync(join(folder, '.env'), 'KEY=1\n');
    });
    after(() => rmSync(folder, { recursive: true, force: true }));
    for (const [name, args] of [
        ['tcp:// with TLS', () => ['--engine', F.CS_TLS_ENGINE, ...tlsArgs]],
        ['ssh://', () => ['--engine', F.CS_SSH_ENGINE]],
    ]) {
        test(name, { timeout: 180_000 }, async () => {
            const server = await startClient({
                args: ['--stdio', '--pool', '0', ...args(), '--workspace', `w=${folder}:rw`,
                    '--workspace', `r=${folder}`], env: serverEnv(),
            });
            try {
                const call = () => server.client.callTool({ name: 'run_python_code', arguments: {
                    code: [
                        'import os',
                        'print(sorted(os.listdir("/workspace/w")), open("/workspace/w/data.csv").read().split()[1])',
                        'print(sorted(os.listdir("/workspace/r")), open("/workspace/r/data.csv").read().split()[1])',
                        'open("/workspace/w/out.txt", "w").write("made on the engine\\n")',
                    ].join('\n'),
                    workspaces: ['w', 'r'],
                } }, undefined, { timeout: 150_000 });
                const sent = [];
                for (const round of ['first', 'second']) {
                    const r = await call();
                    assert.equal(r.isError, undefined, `${round}: ${textOf(r)}`);
                    assert.deepEqual(textOf(r).split('\n').slice(0, 2), ["['data.csv'] 1,2", "['data.csv'] 1,2"]);
                    const [rw, ro] = r.structuredContent.workspaces;
                    assert.deepEqual(rw.changes.added.map((c) => c.path), ['out.txt']);
                    assert.ok(!existsSync(join(folder, 'out.txt')), 'the folder was written');
                    sent.push([rw.sent_bytes, ro.sent_bytes]);
                }
                // (One folder, one content: the engine keeps it once, for both.)
                assert.ok(sent[0][0] + sent[0][1] > 0, `the first call sent the folder: ${sent}`);
                assert.deepEqual(sent[1], [0, 0], 'the second call sent nothing');
            } finally {
                await server.client.close();
            }
        });
    }
});

describe('ssh: one connection per engine', () => {
    test('a burst of 30 calls over ssh takes one key exchange', { timeout: 240_000 }, async (t) => {
        const before = sshAccepted();
        const { client, stderr } = await startClient({
            args: ['--stdio', '--no-history', '--no-monitor', '--engine', F.CS_SSH_ENGINE],
            env: serverEnv() });
        try {
            for (const round of ['cold', 'warm']) {
                const t0 = Date.now();
                const results = await Promise.all(Array.from({ length: 30 }, (_, i) =>
                    runPython(client, `print(${i} * ${i})`)));
                results.forEach((r, i) => {
                    assert.equal(r.isError, undefined, `${round} call ${i}: ${textOf(r)}\n${stderr()}`);
                    assert.equal(r.structuredContent.stdout.trim(), String(i * i));
                });
                t.diagnostic(`${round} burst of 30 over ssh: ${Date.now() - t0} ms`);
            }
        } finally {
            await client.close();
        }
        assert.equal(sshAccepted() - before, 1, 'ssh connections (key exchanges) for the two bursts');
    });

    test('a URL with the socket\'s path needs no docker command on the remote host',
        { timeout: 120_000 }, async () => {
            // Podman's form (ssh://user@host/run/podman/podman.sock); this key's sessions cannot
            // run docker, so only the forwarded socket reaches the engine.
            const { client, stderr } = await startClient({
                args: ['--stdio', '--no-history', '--no-monitor', '--pool', '0', '--engine', F.CS_SSH_ENGINE],
                env: serverEnv({ CODE_SANDBOX_SSH_CONFIG: F.CS_SSH_CONFIG_NODOCKER }) });
            try {
                const r = await runPython(client, 'print(6*7)');
                assert.equal(r.isError, undefined, `${textOf(r)}\n${stderr()}`);
                assert.match(textOf(r), /42/);
            } finally {
                await client.close();
            }
        });

    test('a server that refuses the forward is reached through dial-stdio, with a warning',
        { timeout: 120_000 }, async () => {
            const { client, stderr } = await startClient({
                args: ['--stdio', '--no-history', '--no-monitor', '--pool', '0', '--engine', F.CS_SSH_ENGINE],
                env: serverEnv({ CODE_SANDBOX_SSH_CONFIG: F.CS_SSH_CONFIG_NOFORWARD }) });
            try {
                const r = await runPython(client, 'print(6*7)');
                assert.equal(r.isError, undefined, `${textOf(r)}\n${stderr()}`);
                assert.match(textOf(r), /42/);
                assert.match(stderr(), /refuses to forward the engine's socket/);
            } finally {
                await client.close();
            }
        });

    test('the ssh connection dies with the server, even with kill -9', { timeout: 120_000 },
        async () => {
            const { client, transport, stderr } = await startClient({
                args: ['--stdio', '--no-history', '--no-monitor', '--pool', '0', '--engine', F.CS_SSH_ENGINE],
                env: serverEnv() });
            const pid = transport.pid;
            let masters;
            try {
                const r = await runPython(client, 'print(6*7)');
                assert.equal(r.isError, undefined, `${textOf(r)}\n${stderr()}`);
                masters = sshChildren(pid);
                assert.equal(masters.length, 1, `ssh processes of the server: ${masters}`);
                process.kill(pid, 'SIGKILL');
                const deadline = Date.now() + 30_000;
                while (running(masters[0]) && Date.now() < deadline) await sleep(100);
                assert.ok(!running(masters[0]), `ssh ${masters[0]} outlived its server`);
            } finally {
                await client.close().catch(() => {});
            }
        });
});

describe('three engines at once', () => {
    let server;
    const three = () => ['--engine', F.CS_MAIN_ENGINE, '--engine', F.CS_TLS_ENGINE, ...tlsArgs,
        '--engine', F.CS_SSH_ENGINE];

    before(async () => {
        server = await startClient({ args: ['--stdio', '--no-history', '--no-monitor', ...three()], env: serverEnv() });
    });
    after(async () => {
        await server?.client.close();
    });

    test('a burst of 30 calls is spread over all three, every answer right', { timeout: 240_000 },
        async (t) => {
            const calls = Array.from({ length: 30 }, (_, i) =>
                runPython(server.client, `import time\ntime.sleep(1.5)\nprint(${i} * ${i})`));
            const results = await Promise.all(calls);
            const count = { main: 0, tls: 0, ssh: 0 };
            results.forEach((r, i) => {
                assert.equal(r.isError, undefined, `call ${i}: ${textOf(r)}`);
                assert.equal(r.structuredContent.stdout.trim(), String(i * i), `call ${i}`);
                const key = engineKey(r.structuredContent.engine);
                assert.ok(key in count, `call ${i} ran on ${r.structuredContent.engine}`);
                count[key] += 1;
            });
            t.diagnostic(`calls per engine: ${JSON.stringify(count)}`);
            for (const [k, n] of Object.entries(count))
                assert.ok(n >= 5, `engine ${k} ran ${n} of 30 calls: ${JSON.stringify(count)}`);
        });

    test('a session stays on its engine', { timeout: 120_000 }, async () => {
        const s = await server.client.callTool({ name: 'create_session',
            arguments: { language: 'python' } }, undefined, { timeout: 120_000 });
        assert.ok(!s.isError, textOf(s));
        const id = s.structuredContent.session_id;
        const seen = new Set();
        for (let i = 0; i < 4; i += 1) {
            const r = await server.client.callTool({ name: 'execute_code', arguments: {
                session_id: id, code: i === 0 ? 'n = 1\nprint(n)' : 'n += 1\nprint(n)' } },
            undefined, { timeout: 60_000 });
            assert.ok(!r.isError, textOf(r));
            assert.equal(r.structuredContent.stdout.trim(), String(i + 1));
            seen.add(r.structuredContent.engine);
        }
        assert.equal(seen.size, 1, `a session's calls ran on ${[...seen].join(', ')}`);
        await server.client.callTool({ name: 'close_session', arguments: { session_id: id } });
    });

    test('an engine killed mid-burst fails only its calls, clearly; later calls go elsewhere; ' +
        'its return is noticed', { timeout: 300_000 }, async (t) => {
        const burst = Array.from({ length: 24 }, (_, i) =>
            runPython(server.client, `import time\ntime.sleep(4)\nprint(${i} + 1000)`));
        await sleep(2000);
        await execFileP('bash', [ENGINES_SH, 'kill', F.CS_ENGINES_DIR, 'ssh']);
        const results = await Promise.all(burst);
        let lost = 0;
        let fine = 0;
        results.forEach((r, i) => {
            if (r.isError) {
                // The error names the engine that went away.
                assert.ok(textOf(r).includes(SSH_ID), `call ${i} failed without naming the ` +
                    `engine: ${textOf(r)}`);
                lost += 1;
            } else {
                assert.equal(r.structuredContent.stdout.trim(), String(i + 1000));
                assert.notEqual(engineKey(r.structuredContent.engine), 'ssh',
                    `call ${i} ran to the end on the killed engine`);
                fine += 1;
            }
        });
        t.diagnostic(`killed mid-burst: ${lost} calls lost with the engine, ${fine} succeeded`);
        assert.ok(lost >= 1, `no call was running on the killed engine (${fine} succeeded)`);
        assert.ok(fine >= 1, 'no call succeeded on the other engines');
        // Later calls go to the others, and none waits for the dead one.
        const later = await Promise.all(Array.from({ length: 8 }, (_, i) =>
            runPython(server.client, `print(${i} + 2000)`)));
        later.forEach((r, i) => {
            assert.equal(r.isError, undefined, `later call ${i}: ${textOf(r)}`);
            assert.notEqual(engineKey(r.structuredContent.engine), 'ssh');
        });
        // Back: it gets calls again.
        await execFileP('bash', [ENGINES_SH, 'revive', F.CS_ENGINES_DIR, 'ssh']);
        const deadline = Date.now() + 60_000;
        let back = false;
        while (!back && Date.now() < deadline) {
            const rs = await Promise.all(Array.from({ length: 9 }, () =>
                runPython(server.client, 'import time\ntime.sleep(0.5)\nprint("ok")')));
            back = rs.some((r) => !r.isError && engineKey(r.structuredContent.engine) === 'ssh');
            if (!back) await sleep(1000);
        }
        assert.ok(back, 'the revived engine was never given a call again');
        t.diagnostic(`the revived engine ran a call again ${Math.round((Date.now() - deadline + 60_000) / 100) / 10} s after its revival`);
    });

    test('nothing is left on any engine', { timeout: 120_000 }, async () => {
        await server.client.close();
        server = undefined;
        const left = await waitNothingLeft(['main', 'tls', 'ssh'], 90_000);
        assert.deepEqual(left, {}, 'containers left behind');
    });
});
