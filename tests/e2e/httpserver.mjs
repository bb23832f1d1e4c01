// Helpers for the Streamable HTTP end-to-end tests: start `code-sandbox --http`
// on a free loopback port with a random token, and stop it again.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { BIN, DOCKER, MINIMAL_PATH, SANDBOX_LABEL, sandboxContainers, sleep } from './helpers.mjs';

const execFileP = promisify(execFile);

/** The protocol version the raw probes announce. */
export const PROTOCOL_VERSION = '2025-06-18';

/**
 * Starts `code-sandbox --http --port 0` with a random token in CODE_SANDBOX_TOKEN
 * (not on the command line, where every local user could read it) and waits for
 * the "MCP endpoint http://…/mcp" line on stderr. `token: null` passes none (the
 * server then uses its token store; `args` may name one with --token-file).
 * Returns { url, port, token, child, exited, stderr(), stop() }.
 */
export async function startHttpServer({ args = [], env = {}, timeoutMs = 20_000, token = randomBytes(24).toString('hex') } = {}) {
    const child = spawn(BIN, ['--http', '--port', '0', ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { PATH: MINIMAL_PATH, ...(token ? { CODE_SANDBOX_TOKEN: token } : {}), ...env },
    });
    let log = '';
    const exited = new Promise((resolve) => {
        child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() }));
    });
    const url = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            reject(new Error(`no "MCP endpoint" line on stderr within ${timeoutMs} ms; stderr:\n${log}`));
        }, timeoutMs);
        child.stderr.on('data', (chunk) => {
            log += chunk.toString();
            const m = /MCP endpoint (http:\/\/\S+\/mcp)/.exec(log);
            if (m) {
                clearTimeout(timer);
                resolve(m[1]);
            }
        });
        child.on('error', (e) => { clearTimeout(timer); reject(e); });
        exited.then(({ code, signal }) => {
            clearTimeout(timer);
            reject(new Error(`server exited (code ${code}, signal ${signal}) before listening; stderr:\n${log}`));
        });
    });
    const port = Number(new URL(url).port);

    let stopped = null;
    return {
        url,
        port,
        token,
        child,
        exited,
        stderr: () => log,
        /** SIGTERM (the server removes its containers), SIGKILL if it is still there after 15 s. */
        stop() {
            if (!stopped) {
                stopped = (async () => {
                    if (child.exitCode !== null || child.signalCode !== null) return exited;
                    child.kill('SIGTERM');
                    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
                    const exit = await exited;
                    clearTimeout(timer);
                    return exit;
                })();
            }
            return stopped;
        },
    };
}

/**
 * IDs of the containers labelled code-sandbox that the server with this pid
 * created (label code-sandbox.pid), so that sandboxes of other servers running
 * on the same engine at the same time do not count.
 */
export async function containersOf(pid) {
    const { stdout } = await execFileP(DOCKER, ['ps', '-a', '--filter', `label=${SANDBOX_LABEL}`,
        '--filter', `label=${SANDBOX_LABEL}.pid=${pid}`, '--format', '{{.ID}}']);
    return stdout.split('\n').map((s) => s.trim()).filter(Boolean);
}

/**
 * Registers the last test of a file: runs `cleanup` (closing the clients and
 * stopping the server), then asserts that no container labelled code-sandbox
 * created by that server is left. A global check would also count the
 * sandboxes of unrelated servers using the same engine concurrently; those are
 * reported in the failure message of a leftover, not counted.
 */
export function testServerLeftNoContainers(getServer, cleanup) {
    test('no container labelled code-sandbox remains', { timeout: 40_000 }, async () => {
        const server = getServer();
        assert.ok(server, 'the server never started');
        await cleanup();
        const deadline = Date.now() + 10_000;
        let left;
        for (;;) {
            left = await containersOf(server.child.pid);
            if (left.length === 0 || Date.now() >= deadline) break;
            await sleep(250);
        }
        const all = await sandboxContainers();
        assert.deepEqual(left, [],
            `containers labelled ${SANDBOX_LABEL} left behind by the server (pid ${server.child.pid}): ` +
            `${left.join(' ')} (all labelled: ${all.join(' ')}); stderr:\n${server.stderr()}`);
    });
}
