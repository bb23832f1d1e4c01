// Assistants told apart by credential, not by the name they claim (issue 51), against the real
// binary and the official SDK clients: per-assistant credentials made with --new-credential,
// policies that follow the credential whatever clientInfo says (both MCP eras), a name a
// credential holds not given to a client that merely claims it, revocation taking effect on the
// next request, a session not usable with another credential, and a stdio instance matched by
// the program that launched it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { BIN, MINIMAL_PATH, startClient, textOf } from './helpers.mjs';
import { PROTOCOL_VERSION, startHttpServer } from './httpserver.mjs';

const execFileP = promisify(execFile);
const home = mkdtempSync(path.join(os.tmpdir(), 'cs-identity-'));
const config = path.join(home, 'config');
const env = { HOME: home, XDG_CONFIG_HOME: config, XDG_DATA_HOME: path.join(home, 'data') };
const launcher = realpathSync(process.execPath); // what launches a stdio instance here: node

// The default lets Python only; 'alpha' (a credential) is refused; 'beta' (a credential) runs
// every language; 'gamma' (a name no credential holds) runs every language; 'from-node' runs
// every language when node launched it; 'from-elsewhere' when a program that is not node did.
function writePolicies() {
    mkdirSync(path.join(config, 'code-sandbox'), { recursive: true });
    const policies = JSON.stringify({
        default: { action: 'run', languages: ['python'] },
        assistants: [
            { client: 'alpha', action: 'refuse' },
            { client: 'beta', action: 'run' },
            { client: 'gamma', action: 'run' },
            { client: 'from-node', action: 'run', launcher },
            { client: 'from-elsewhere', action: 'run', launcher: '/usr/bin/claude' },
        ],
    });
    writeFileSync(path.join(config, 'code-sandbox', 'code-sandbox.conf'),
        `[assistants]\npolicies="${policies.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"\n`);
}

async function cli(args) {
    try {
        const { stdout, stderr } = await execFileP(BIN, args, { env: { PATH: MINIMAL_PATH, ...env }, timeout: 20_000 });
        return { code: 0, stdout, stderr };
    } catch (e) {
        return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
}

async function newCredential(name) {
    const r = await cli(['--new-credential', name]);
    assert.equal(r.code, 0, r.stderr);
    const secret = r.stdout.trim();
    assert.match(secret, /^csk_[A-Za-z0-9_-]{43}$/, 'the secret alone on stdout');
    assert.match(r.stderr, /claude mcp add --transport http code-sandbox http:\/\/127\.0\.0\.1:8765\/mcp/);
    return secret;
}

let server;
const secrets = {};
const clients = [];
before(async () => {
    writePolicies();
    secrets.alpha = await newCredential('alpha');
    secrets.beta = await newCredential('beta');
    server = await startHttpServer({ args: ['--no-monitor'], env });
});
after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await server?.stop();
    rmSync(home, { recursive: true, force: true });
});

async function connect(bearer, name) {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: 'Bearer ' + bearer } },
    }));
    clients.push(client);
    return client;
}

async function connectModern(bearer, name) {
    const client = new ModernClient({ name, version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernHttpTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: 'Bearer ' + bearer } },
    }));
    clients.push(client);
    return client;
}

const js = { name: 'run_javascript_code', arguments: { code: 'console.log(6 * 7)' } };
const py = { name: 'run_python_code', arguments: { code: 'print(6 * 7)' } };

async function ran(client, call) {
    const r = await client.callTool(call);
    return { ok: r.isError !== true && /42/.test(textOf(r)), text: textOf(r) };
}

test('the credentials file keeps digests only, 0600', () => {
    const file = path.join(config, 'code-sandbox', 'credentials.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const text = readFileSync(file, 'utf8');
    assert.ok(!text.includes(secrets.alpha) && !text.includes(secrets.alpha.slice(4)), 'no secret stored');
    assert.deepEqual(JSON.parse(text).credentials.map((c) => c.name), ['alpha', 'beta']);
});

test('two clients claiming the same name with different credentials get different policies', { timeout: 120_000 }, async () => {
    const a = await connect(secrets.alpha, 'same');
    const b = await connect(secrets.beta, 'same');
    const refused = await ran(a, py);
    assert.equal(refused.ok, false);
    assert.match(refused.text, /Refused by the policy for assistant 'alpha'/);
    const beta = await ran(b, js);
    assert.ok(beta.ok, `beta's policy runs JavaScript: ${beta.text}`);
});

test('2026-07-28 requests run as their credential too', { timeout: 120_000 }, async () => {
    const a = await connectModern(secrets.alpha, 'beta');
    assert.equal(a.getProtocolEra(), 'modern');
    const refused = await ran(a, py);
    assert.match(refused.text, /Refused by the policy for assistant 'alpha'/, 'claiming beta does not help');
    const b = await connectModern(secrets.beta, 'alpha');
    assert.ok((await ran(b, js)).ok, 'claiming alpha does not hurt');
});

test("a name a credential holds is not given to the shared token; other names still match", { timeout: 120_000 }, async () => {
    const claimsAlpha = await connect(server.token, 'alpha');
    // The default policy, not alpha's refusal: Python runs, JavaScript is beyond the default.
    assert.ok((await ran(claimsAlpha, py)).ok);
    const js1 = await ran(claimsAlpha, js);
    assert.equal(js1.ok, false);
    assert.match(js1.text, /default policy/);
    const claimsBeta = await connect(server.token, 'beta');
    assert.equal((await ran(claimsBeta, js)).ok, false, "beta's policy is beta's credential's");
    const gamma = await connect(server.token, 'gamma');
    assert.ok((await ran(gamma, js)).ok, 'a name no credential holds matches as claimed');
});

/** A raw initialize; resolves with the status and the session id. */
async function initialize(bearer) {
    const res = await fetch(server.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: 'Bearer ' + bearer },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    await res.text();
    return { status: res.status, session: res.headers.get('mcp-session-id') };
}

async function listTools(bearer, session) {
    const res = await fetch(server.url, {
        method: 'POST',
        headers: {
            'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
            Authorization: 'Bearer ' + bearer, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': PROTOCOL_VERSION,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    await res.text();
    return res.status;
}

test("a session is its credential's: another credential or the shared token cannot use its id", async () => {
    const { status, session } = await initialize(secrets.beta);
    assert.equal(status, 200);
    assert.equal(await listTools(secrets.beta, session), 200);
    assert.equal(await listTools(secrets.alpha, session), 404);
    assert.equal(await listTools(server.token, session), 404);
    assert.equal(await listTools(secrets.beta, session), 200, 'the owner still can');
});

test('a revoked credential gets 401 on its next request; the others go on', { timeout: 60_000 }, async () => {
    const extra = await newCredential('delta');
    const { status, session } = await initialize(extra);
    assert.equal(status, 200);
    const listed = await cli(['--list-credentials']);
    assert.match(listed.stdout, /c-[0-9a-f]{8}\s+delta\s+\S+ \S+\s+\d{4}-\d\d-\d\d/, `its last use is shown: ${listed.stdout}`);
    const revoked = await cli(['--revoke-credential', 'delta']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(await listTools(extra, session), 401, 'its open session is refused too');
    assert.equal((await initialize(extra)).status, 401);
    assert.equal((await initialize(secrets.beta)).status, 200);
    assert.equal((await initialize(server.token)).status, 200);
    const again = await cli(['--revoke-credential', 'delta']);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /no credential is named or numbered 'delta'/);
});

test('--new-credential refuses a name that is no name', async () => {
    for (const bad of ['', ' padded', 'x'.repeat(65), 'tab\there']) {
        const r = await cli(['--new-credential', bad]);
        assert.equal(r.code, 2, `'${bad}' accepted`);
        assert.equal(r.stdout, '');
    }
});

test('stdio: a policy that names a launcher matches only instances that program launched', { timeout: 120_000 }, async () => {
    const fromNode = await startClient({ env, name: 'from-node' });
    const elsewhere = await startClient({ env, name: 'from-elsewhere' });
    try {
        assert.ok((await ran(fromNode.client, js)).ok, `launched by ${launcher}: its policy`);
        const refused = await ran(elsewhere.client, js);
        assert.equal(refused.ok, false);
        assert.match(refused.text, /default policy/);
        assert.match(fromNode.stderr(), new RegExp(`launched by ${launcher.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    } finally {
        await fromNode.client.close();
        await elsewhere.client.close();
    }
});
