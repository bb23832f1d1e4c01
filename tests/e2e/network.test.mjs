// A call's `network` argument, through the official MCP SDK client: declared in the run tools'
// and create_session's input schemas with what this server gives without it; refused with the
// rule when the server does not allow the hosts; and on an allow-list server, a run that names
// fewer hosts than the server's list reaches only those (the gateway refuses the rest, and the
// result's structuredContent.network says so).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { DOCKER, sleep, startClient, testNoContainersLeft, textOf } from './helpers.mjs';

const execFileP = promisify(execFile);
/** Containers and networks (ids) that carry `label`. */
async function withLabel(label) {
    const ps = await execFileP(DOCKER, ['ps', '-aq', '--filter', `label=${label}`]);
    const nets = await execFileP(DOCKER, ['network', 'ls', '-q', '--filter', `label=${label}`]);
    return [...ps.stdout.split('\n'), ...nets.stdout.split('\n')].map((s) => s.trim()).filter(Boolean);
}

// A plain-HTTP request to the npm registry through the proxy: the gateway's 403, or whatever the
// way there gives.
const FETCH_REGISTRY = [
    'import urllib.request, urllib.error',
    'try:',
    '    urllib.request.urlopen("http://registry.npmjs.org/", timeout=20)',
    '    print("reached")',
    'except urllib.error.HTTPError as e:',
    '    print("HTTP", e.code)',
    'except Exception as e:',
    '    print("ERR", type(e).__name__)',
].join('\n');

const NETWORK_TOOLS = ['create_session', 'execute_code', 'run_javascript_code', 'run_python_code'];

describe('a server without network', () => {
    let server;
    before(async () => {
        server = await startClient({ args: ['--stdio', '--pool', '0'] });
    });
    after(async () => server?.client.close());
    const call = (args) => server.client.callTool({ name: 'run_python_code', arguments: args });

    test('the tools declare network, saying that this server allows none', async () => {
        const { tools } = await server.client.listTools();
        const declaring = tools.filter((t) => t.inputSchema.properties?.network).map((t) => t.name);
        assert.deepEqual(declaring.sort(), NETWORK_TOOLS);
        for (const name of NETWORK_TOOLS) {
            const network = tools.find((t) => t.name === name).inputSchema.properties.network;
            assert.equal(network.type, 'array');
            assert.equal(network.items.type, 'string');
            assert.match(network.description, /Without it: no network/);
        }
    });

    test('a host is refused with the reason, and nothing runs', async () => {
        const result = await call({ code: 'print("ran")', network: ['pypi.org'] });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /its runs have no network .* so pypi\.org cannot be reached/);
        assert.doesNotMatch(textOf(result), /ran/);
    });

    test('an entry that is not a host pattern is refused', async () => {
        const result = await call({ code: 'print(1)', network: ['https://pypi.org/simple'] });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /^Invalid network: not a host pattern/);
    });

    test('network [] runs, without network', async () => {
        const result = await call({
            code: 'import os\nprint(sorted(k for k in os.environ if "proxy" in k.lower()))',
            network: [],
        });
        assert.ok(!result.isError, textOf(result));
        assert.equal(result.structuredContent.stdout.trim(), '[]');
    });

    test('create_session with a host is refused too', async () => {
        const result = await server.client.callTool({
            name: 'create_session', arguments: { network: ['pypi.org'] },
        });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /so pypi\.org cannot be reached/);
    });
});

describe('an allow-list server (--egress)', () => {
    let server;
    before(async () => {
        server = await startClient({
            args: ['--stdio', '--pool', '0', '--egress', 'registry.npmjs.org', '--egress', '*.github.com'],
        });
    });
    after(async () => server?.client.close());

    test('the schema names the server\'s list', async () => {
        const { tools } = await server.client.listTools();
        const network = tools.find((t) => t.name === 'execute_code').inputSchema.properties.network;
        assert.match(network.description, /Without it: this server's allow-list, registry\.npmjs\.org, \*\.github\.com/);
    });

    test('a host beyond the server\'s list is refused naming the list', async () => {
        const result = await server.client.callTool({
            name: 'execute_code', arguments: { code: 'print(1)', network: ['evil.test'] },
        });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /--egress: registry\.npmjs\.org, \*\.github\.com\), and evil\.test is not among them/);
    });

    test('a call that names one host of the list reaches no other', { timeout: 120_000 }, async () => {
        // The registry is on the server's list but not on this call's: the gateway refuses it
        // before any name is looked up.
        const result = await server.client.callTool({
            name: 'run_python_code', arguments: { code: FETCH_REGISTRY, network: ['api.github.com'] },
        });
        assert.ok(!result.isError, textOf(result));
        assert.equal(result.structuredContent.stdout.trim(), 'HTTP 403');
        assert.deepEqual(result.structuredContent.network.map(({ host, port, verdict }) => ({ host, port, verdict })),
            [{ host: 'registry.npmjs.org', port: 80, verdict: 'refused' }]);
        assert.match(textOf(result), /\[network refused: registry\.npmjs\.org:80 \(not on the allow-list\)\]/);
    });

    test('the same call without network gets the server\'s list', { timeout: 120_000 }, async () => {
        // The registry is allowed now, so the gateway goes on to it (the one outside host this
        // machine reaches); whatever the registry answers, the gateway did not refuse it.
        const result = await server.client.callTool({ name: 'execute_code', arguments: { code: FETCH_REGISTRY } });
        assert.ok(!result.isError, textOf(result));
        const [first] = result.structuredContent.network ?? [];
        assert.equal(first?.host, 'registry.npmjs.org', JSON.stringify(result.structuredContent));
        assert.notEqual(first.rule, 'not on the allow-list', JSON.stringify(first));
    });
});

// A run's network is decided once, from the server, the caller's policy and the call, and a
// session's when it is created: a policy that gives its runs none of the server's bound secrets
// holds for a session without libraries as for a run (the session's sandbox once got them all).
describe('a policy that gives no secret (--secret)', () => {
    let server;
    let settings;
    const SHOW_KEY = "import os\nprint(repr(os.environ.get('API_KEY')))";
    before(async () => {
        settings = mkdtempSync(join(tmpdir(), 'cs-e2e-secrets-'));
        mkdirSync(join(settings, 'code-sandbox'));
        const policies = JSON.stringify({ default: { action: 'run', secrets: [] } });
        writeFileSync(join(settings, 'code-sandbox', 'code-sandbox.conf'),
            `[assistants]\npolicies="${policies.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"\n`);
        server = await startClient({
            args: ['--stdio', '--pool', '0', '--secret', 'API_KEY=CS_E2E_API_KEY@api.example.test'],
            env: { CS_E2E_API_KEY: 'sk-e2e-not-given', XDG_CONFIG_HOME: settings, XDG_DATA_HOME: settings },
        });
    });
    after(async () => {
        await server?.client.close();
        rmSync(settings, { recursive: true, force: true });
    });
    const call = (args) => server.client.callTool({ name: 'run_python_code', arguments: args },
        undefined, { timeout: 120_000 });

    test('a run has neither the secret nor its placeholder', { timeout: 120_000 }, async () => {
        const result = await call({ code: SHOW_KEY });
        assert.ok(!result.isError, textOf(result));
        assert.equal(result.structuredContent.stdout.trim(), 'None');
    });

    test('nor has a session without libraries', { timeout: 120_000 }, async () => {
        const created = await server.client.callTool({ name: 'create_session', arguments: { language: 'python' } },
            undefined, { timeout: 120_000 });
        assert.ok(!created.isError, textOf(created));
        const id = created.structuredContent.session_id;
        const result = await call({ code: SHOW_KEY, session_id: id });
        assert.ok(!result.isError, textOf(result));
        assert.equal(result.structuredContent.stdout.trim(), 'None');
        await server.client.callTool({ name: 'close_session', arguments: { session_id: id } });
    });
});

test('a server killed with its gateway up: the next server removes the gateway and its networks', { timeout: 120_000 }, async () => {
    const doomed = await startClient({ args: ['--stdio', '--pool', '0', '--egress', 'registry.npmjs.org'] });
    const ran = await doomed.client.callTool({ name: 'run_python_code', arguments: { code: 'print(1)' } });
    assert.ok(!ran.isError, textOf(ran));
    const pid = doomed.transport.pid;
    const label = `code-sandbox.pid=${pid}`;
    assert.ok((await withLabel(label)).length >= 3, 'the gateway and its two networks');
    process.kill(pid, 'SIGKILL');
    while ((() => { try { process.kill(pid, 0); return true; } catch { return false; } })()) await sleep(50);
    await doomed.client.close().catch(() => {});
    // Its gateway stops on its own (its control stream ended), its networks stay: until the next
    // server's janitor finds them, by the dead pid.
    const next = await startClient({ args: ['--stdio', '--pool', '0'] });
    try {
        const deadline = Date.now() + 60_000;
        let left = await withLabel(label);
        while (left.length > 0 && Date.now() < deadline) {
            await sleep(250);
            left = await withLabel(label);
        }
        assert.deepEqual(left, [], `left behind by the killed server: ${left.join(' ')}\n${next.stderr()}`);
    } finally {
        await next.client.close();
    }
});

testNoContainersLeft();
