// The HTTP token and the names the endpoint answers to, against the real binary:
// one token store (0600, in the config folder), --token-file and
// CODE_SANDBOX_TOKEN as the ways to pass one, --print-token showing exactly the
// token a server with the same options would use, --allow-host, and the
// warning when binding beyond loopback.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';

import { BIN, MINIMAL_PATH } from './helpers.mjs';
import { PROTOCOL_VERSION, startHttpServer } from './httpserver.mjs';

const execFileP = promisify(execFile);

const home = mkdtempSync(path.join(os.tmpdir(), 'cs-token-'));
const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), CODE_SANDBOX_HISTORY: path.join(home, 'history.sqlite') };
const storePath = path.join(home, 'config', 'code-sandbox', 'http-token');
const servers = [];
after(async () => {
    for (const s of servers) await s.stop();
    rmSync(home, { recursive: true, force: true });
});

/** `code-sandbox ARGS` with the test's HOME; resolves with { code, stdout, stderr }. */
async function run(args, extraEnv = {}) {
    try {
        const { stdout, stderr } = await execFileP(BIN, args, { env: { PATH: MINIMAL_PATH, ...env, ...extraEnv }, timeout: 20_000 });
        return { code: 0, stdout, stderr };
    } catch (e) {
        return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
}

async function start(args, token = null, extraEnv = {}) {
    const server = await startHttpServer({ args: ['--no-monitor', ...args], token, env: { ...env, ...extraEnv } });
    servers.push(server);
    return server;
}

/** A request through node:http, which lets Host be set; resolves with { status, text }. */
function initializeWith(server, token, host = `127.0.0.1:${server.port}`) {
    const body = JSON.stringify({
        jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'token-e2e', version: '1' } },
    });
    return new Promise((resolve, reject) => {
        const req = http.request({
            host: '127.0.0.1', port: server.port, method: 'POST', path: '/mcp',
            headers: {
                Host: host, Authorization: 'Bearer ' + token, 'Content-Type': 'application/json',
                Accept: 'application/json, text/event-stream', 'Content-Length': Buffer.byteLength(body),
            },
        }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c) => { text += c; });
            res.on('end', () => resolve({ status: res.statusCode, text }));
        });
        req.on('error', reject);
        req.end(body);
    });
}

test('no token given: the server uses the store, 0600 in the config folder, and --print-token shows that token', { timeout: 60_000 }, async () => {
    const server = await start([]);
    const printed = await run(['--print-token']);
    assert.equal(printed.code, 0, printed.stderr);
    const token = printed.stdout.trim();
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.equal(statSync(storePath).mode & 0o777, 0o600, 'the token store is not 0600');
    assert.equal((await initializeWith(server, token)).status, 200);
    assert.equal((await initializeWith(server, randomBytes(32).toString('hex'))).status, 401);
    assert.match(server.stderr(), /the token from the token store/);
    await server.stop();
});

test('--token-file: the server uses the file\'s token, and --print-token with it prints that one', { timeout: 60_000 }, async () => {
    const file = path.join(home, 'my-token');
    const token = randomBytes(20).toString('hex');
    writeFileSync(file, token + '\n');
    chmodSync(file, 0o600);
    const printed = await run(['--print-token', '--token-file', file]);
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout.trim(), token);

    const server = await start(['--token-file', file]);
    assert.equal((await initializeWith(server, token)).status, 200);
    const stored = (await run(['--print-token'])).stdout.trim();
    assert.notEqual(stored, token);
    assert.equal((await initializeWith(server, stored)).status, 401, 'the store\'s token must not work beside --token-file');
    assert.ok(!server.stderr().includes(token), 'the token was logged');
    await server.stop();
});

test('CODE_SANDBOX_TOKEN: --print-token prints it, the way the server would use it', { timeout: 30_000 }, async () => {
    const token = randomBytes(20).toString('hex');
    const printed = await run(['--print-token'], { CODE_SANDBOX_TOKEN: token });
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout.trim(), token);
    // --token-file wins over the variable, as options win over the environment.
    const file = path.join(home, 'other-token');
    writeFileSync(file, 'from-the-file\n');
    assert.equal((await run(['--print-token', '--token-file', file], { CODE_SANDBOX_TOKEN: token })).stdout.trim(), 'from-the-file');
});

test('the option conflicts and the --help warning about --token', { timeout: 30_000 }, async () => {
    const both = await run(['--http', '--token', 'x', '--token-file', '/dev/null']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /choose one of --token and --token-file/);
    const empty = await run(['--print-token', '--token-file', path.join(home, 'missing')]);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /--token-file: cannot read/);
    const help = await run(['--help']);
    assert.match(help.stdout.replace(/\s+/g, ' '), /--token <t>.*visible to every local user/);
    assert.match(help.stdout, /--token-file <path>/);
    assert.match(help.stdout, /--allow-host <name>/);
});

test('--allow-host: that name is accepted in Host, others still get 403', { timeout: 60_000 }, async () => {
    const token = randomBytes(20).toString('hex');
    const plain = await start([], token);
    assert.equal((await initializeWith(plain, token, `sandbox.example:${plain.port}`)).status, 403);
    await plain.stop();

    const server = await start(['--allow-host', 'sandbox.example', '--allow-host', '192.0.2.7'], token);
    assert.equal((await initializeWith(server, token, `sandbox.example:${server.port}`)).status, 200);
    assert.equal((await initializeWith(server, token, `SANDBOX.example`)).status, 200);
    assert.equal((await initializeWith(server, token, `192.0.2.7:${server.port}`)).status, 200);
    assert.equal((await initializeWith(server, token, `evil.example:${server.port}`)).status, 403);
    assert.equal((await initializeWith(server, 'wrong', `sandbox.example:${server.port}`)).status, 401);
    const bad = await run(['--http', '--allow-host', 'http://x/']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--allow-host takes a host name/);
    await server.stop();
});

test('beyond loopback: a token is still required and the startup line warns', { timeout: 60_000 }, async () => {
    const noAuth = await run(['--http', '--host', '0.0.0.0', '--port', '0', '--no-auth']);
    assert.equal(noAuth.code, 2);
    assert.match(noAuth.stderr, /--no-auth is only allowed on a loopback address/);

    const token = randomBytes(20).toString('hex');
    const server = await start(['--host', '0.0.0.0', '--allow-host', 'sandbox.example'], token);
    assert.match(server.stderr(), /warning: listening on 0\.0\.0\.0, not loopback/);
    assert.match(server.stderr(), /Host names accepted: .*sandbox\.example/);
    assert.equal((await initializeWith(server, 'wrong', `sandbox.example:${server.port}`)).status, 401);
    assert.equal((await initializeWith(server, token, `sandbox.example:${server.port}`)).status, 200);
    await server.stop();
});
