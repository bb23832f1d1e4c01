// Shared helpers for the end-to-end tests: they start the real code-sandbox
// binary (path in CODE_SANDBOX_BIN) and talk MCP to it over stdio.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const execFileP = promisify(execFile);

function requireBinary() {
    const bin = process.env.CODE_SANDBOX_BIN;
    if (!bin) {
        throw new Error(
            'CODE_SANDBOX_BIN is not set: point it at the built server, e.g. ' +
            '`cd tests/e2e && CODE_SANDBOX_BIN=$PWD/../../build/bin/code-sandbox npm test` ' +
            '(ctest -R e2e_stdio sets it automatically).');
    }
    try {
        accessSync(bin, constants.X_OK);
    } catch (e) {
        throw new Error(`CODE_SANDBOX_BIN=${bin} is not an executable file: ${e.message}`);
    }
    return bin;
}

/** Absolute path of the server under test. */
export const BIN = requireBinary();

/** A small PATH for the server: the tests never hand it the caller's environment. */
export const MINIMAL_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The docker CLI used to look for leftover containers. */
export const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';

/** Label every sandbox container carries. */
export const SANDBOX_LABEL = 'code-sandbox';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `code-sandbox` with the SDK's stdio transport and connects a Client.
 * Returns { client, transport, stderr() } where stderr() is everything the
 * server logged so far (handy in assertion messages).
 */
export async function startClient({ args = ['--stdio'], env = {}, name = 'code-sandbox-e2e' } = {}) {
    const transport = new StdioClientTransport({
        command: BIN,
        args,
        env: { PATH: MINIMAL_PATH, ...env },
        stderr: 'pipe',
    });
    let log = '';
    transport.stderr.on('data', (chunk) => { log += chunk.toString(); });
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(transport);
    return { client, transport, stderr: () => log };
}

/**
 * One client for a whole test file: started before its first test, closed after its last (or
 * earlier by `close`, which the file's testNoContainersLeft passes in; closing twice is safe).
 * Read `.client` inside tests, once `before` has run.
 */
export function sharedClient(options) {
    let closed = false;
    const shared = {
        client: undefined,
        async close() {
            if (!closed) {
                closed = true;
                await shared.client?.close();
            }
        },
    };
    before(async () => {
        ({ client: shared.client } = await startClient(options));
    });
    after(shared.close);
    return shared;
}

/**
 * The engines fixture's addresses (tests/engines/engines.sh writes them to $CS_ENGINES_DIR/env;
 * ctest starts the fixture for the tests that need it).
 */
export function engineFixture() {
    const dir = process.env.CS_ENGINES_DIR;
    assert.ok(dir, 'CS_ENGINES_DIR is not set: run this through ctest (it starts the engines fixture)');
    const env = {};
    for (const line of readFileSync(join(dir, 'env'), 'utf8').split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1).trim();
    }
    return env;
}

/** The text of the first content item of a tool result. */
// The progress notifications of one call as they arrive on the wire. The SDK client handles a
// notification a microtask after it arrives but a response at once, so progress written just
// before the result, read in the same chunk under load, finds its request ended and is dropped
// (modelcontextprotocol/typescript-sdk#2580): what the server sent is read here instead.
export async function progressOnTheWire(client, callTool) {
    const transport = client.transport;
    const deliver = transport.onmessage;
    const seen = [];
    transport.onmessage = (message, extra) => {
        if (message?.method === 'notifications/progress')
            seen.push(message.params);
        deliver(message, extra);
    };
    try {
        const result = await callTool();
        const token = seen[0]?.progressToken;
        return { result, progress: seen.filter((p) => p.progressToken === token) };
    } finally {
        transport.onmessage = deliver;
    }
}

export function textOf(result) {
    assert.ok(Array.isArray(result.content) && result.content.length > 0,
        `result has no content: ${JSON.stringify(result)}`);
    assert.equal(result.content[0].type, 'text', `first content item is not text: ${JSON.stringify(result)}`);
    return result.content[0].text;
}

/** IDs of all containers (running or not) labelled code-sandbox. */
export async function sandboxContainers() {
    const { stdout } = await execFileP(DOCKER,
        ['ps', '-a', '--filter', `label=${SANDBOX_LABEL}`, '--format', '{{.ID}}']);
    return stdout.split('\n').map((s) => s.trim()).filter(Boolean);
}

/**
 * Polls until no container labelled code-sandbox exists or timeoutMs passes.
 * Returns the IDs still there at the end (empty on success).
 */
export async function waitForNoContainers(timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const ids = await sandboxContainers();
        if (ids.length === 0 || Date.now() >= deadline) return ids;
        await sleep(250);
    }
}

/**
 * How long the server may keep a used sandbox before it removes it: one whose program reported
 * its end waits, idle, for a moment when no call runs or waits there, at most 10 s
 * (docs/security.md, "a used sandbox ... waiting for removal"). A test that counts containers
 * while its server still runs waits this long at most for the count it expects, plus a margin.
 */
export const USED_SANDBOX_REMOVAL_MS = 10_000;

/**
 * Polls `count()` (a promise of a number, or of an array for its length) until it equals
 * `expected` or the server's removal of used sandboxes is overdue; returns the last value.
 */
export async function waitForCount(count, expected, timeoutMs = USED_SANDBOX_REMOVAL_MS + 5_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const value = await count();
        const n = Array.isArray(value) ? value.length : value;
        if (n === expected || Date.now() >= deadline) return value;
        await sleep(250);
    }
}

/** Polls until at least one container labelled code-sandbox exists. */
export async function waitForSomeContainer(timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const ids = await sandboxContainers();
        if (ids.length > 0 || Date.now() >= deadline) return ids;
        await sleep(100);
    }
}

/**
 * Registers the last test of a file: runs `cleanup` (closing the file's
 * clients), then asserts that no container labelled code-sandbox is left.
 */
export function testNoContainersLeft(cleanup = async () => {}) {
    test('no container labelled code-sandbox remains', { timeout: 30_000 }, async () => {
        await cleanup();
        const left = await waitForNoContainers(10_000);
        assert.deepEqual(left, [], `containers labelled ${SANDBOX_LABEL} left behind: ${left.join(' ')}`);
    });
}

/**
 * Spawns the server without the SDK, for raw protocol tests. Lines written to
 * stdin go out verbatim; every stdout line must be one JSON message.
 */
export function spawnRaw({ args = ['--stdio'], env = {} } = {}) {
    const child = spawn(BIN, args, {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: MINIMAL_PATH, ...env },
    });
    let log = '';
    child.stderr.on('data', (chunk) => { log += chunk.toString(); });

    const queue = [];
    const waiters = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
        const waiter = waiters.shift();
        if (waiter) waiter(line); else queue.push(line);
    });

    const exited = new Promise((resolve) => {
        child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() }));
    });

    return {
        child,
        exited,
        stderr: () => log,
        /** Writes one line (a string verbatim, anything else as JSON). */
        send(message) {
            child.stdin.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n');
        },
        /** Resolves with the next stdout line parsed as JSON; rejects after timeoutMs. */
        async next(timeoutMs = 10_000) {
            const line = queue.length > 0 ? queue.shift() : await new Promise((resolve, reject) => {
                const timer = setTimeout(() => {
                    const i = waiters.indexOf(onLine);
                    if (i >= 0) waiters.splice(i, 1);
                    reject(new Error(`no message from the server within ${timeoutMs} ms; its stderr:\n${log}`));
                }, timeoutMs);
                const onLine = (l) => { clearTimeout(timer); resolve(l); };
                waiters.push(onLine);
            });
            try {
                return JSON.parse(line);
            } catch (e) {
                throw new Error(`server wrote a line that is not JSON: ${JSON.stringify(line)}`);
            }
        },
        /** Unconsumed stdout lines. */
        pending: () => [...queue],
        /** Kills the process if it is still running (test teardown). */
        kill() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        },
    };
}

/** Sends initialize + notifications/initialized over a raw connection. */
export async function rawInitialize(server, id = 1) {
    server.send({
        jsonrpc: '2.0', id, method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-e2e', version: '1.0.0' } },
    });
    const reply = await server.next();
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return reply;
}
