// The MCP clients people use, from npm, against the real binary: Claude Code and Gemini CLI add
// the server over HTTP (with the shared token, and with an assistant's own credential) and over
// stdio, and their health checks connect; Claude Code, given the URL alone, says it needs to
// sign in (its sign-in itself is interactive); MCP Inspector's command line runs code over stdio
// and over HTTP with either token. Neither assistant can run a tool here without its model; the
// Inspector does.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { BIN, MINIMAL_PATH } from '../e2e/helpers.mjs';
import { startHttpServer } from '../e2e/httpserver.mjs';

const execFileP = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const bin = (name) => path.join(here, 'node_modules', '.bin', name);
const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'cs-clients-')));
const project = path.join(home, 'project');
const env = {
    PATH: `${path.dirname(process.execPath)}:${MINIMAL_PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_DATA_HOME: path.join(home, 'data'),
    // No updates, no telemetry: nothing but the server is reached.
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    GEMINI_CLI_NO_RELAUNCH: 'true',
};

async function run(command, args, timeout = 120_000) {
    try {
        const { stdout, stderr } = await execFileP(command, args, { env, cwd: project, timeout });
        return { code: 0, out: stdout + stderr };
    } catch (e) {
        return { code: e.code, out: (e.stdout ?? '') + (e.stderr ?? '') };
    }
}

let server;
let credential;
before(async () => {
    mkdirSync(project, { recursive: true });
    server = await startHttpServer({ args: ['--no-monitor'], env });
    const made = await run(BIN, ['--new-credential', 'Claude Code']);
    assert.equal(made.code, 0, made.out);
    credential = made.out.split('\n')[0].trim();
    assert.match(credential, /^csk_/);
});
after(async () => {
    await server?.stop();
    rmSync(home, { recursive: true, force: true });
});

test('Claude Code: shared token, own credential and stdio connect; the URL alone asks to sign in', { timeout: 300_000 }, async () => {
    const claude = bin('claude');
    for (const args of [
        ['--transport', 'http', 'cs-shared', server.url, '--header', `Authorization: Bearer ${server.token}`],
        ['--transport', 'http', 'cs-credential', server.url, '--header', `Authorization: Bearer ${credential}`],
        ['--transport', 'http', 'cs-signin', server.url],
        ['cs-stdio', '--', BIN, '--stdio', '--no-monitor'],
    ]) {
        const added = await run(claude, ['mcp', 'add', ...args]);
        assert.equal(added.code, 0, added.out);
    }
    const listed = await run(claude, ['mcp', 'list']);
    for (const name of ['cs-shared', 'cs-credential', 'cs-stdio'])
        assert.match(listed.out, new RegExp(`${name}: .* - ✔ Connected`), listed.out);
    assert.match(listed.out, /cs-signin: .* - ! Needs authentication/, listed.out);
});

test('Gemini CLI: shared token, own credential and stdio connect', { timeout: 300_000 }, async () => {
    mkdirSync(path.join(home, '.gemini'), { recursive: true });
    writeFileSync(path.join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [project]: 'TRUST_FOLDER' }));
    const gemini = bin('gemini');
    for (const args of [
        ['--transport', 'http', 'cs-shared', server.url, '-H', `Authorization: Bearer ${server.token}`],
        ['--transport', 'http', 'cs-credential', server.url, '-H', `Authorization: Bearer ${credential}`],
        ['cs-stdio', BIN, '--stdio', '--no-monitor'],
    ]) {
        const added = await run(gemini, ['mcp', 'add', ...args]);
        assert.equal(added.code, 0, added.out);
    }
    const listed = await run(gemini, ['mcp', 'list']);
    for (const name of ['cs-shared', 'cs-credential', 'cs-stdio'])
        assert.match(listed.out, new RegExp(`✓ ${name}: .* - Connected`), listed.out);
});

test('MCP Inspector (command line) runs code over stdio, and over HTTP with either token', { timeout: 300_000 }, async () => {
    const cli = path.join(here, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'cli', 'build', 'index.js');
    const call = ['--method', 'tools/call', '--tool-name', 'run_python_code', '--tool-arg', 'code=print(6 * 7)'];
    for (const target of [
        [BIN, '--stdio', '--no-monitor'],
        [server.url, '--transport', 'http', '--header', `Authorization: Bearer ${server.token}`],
        [server.url, '--transport', 'http', '--header', `Authorization: Bearer ${credential}`],
    ]) {
        const r = await run(process.execPath, [cli, ...target, ...call]);
        assert.equal(r.code, 0, r.out);
        assert.match(r.out, /"stdout": "42\\n"/, r.out);
    }
    const refused = await run(process.execPath, [cli, server.url, '--transport', 'http', '--header', 'Authorization: Bearer csk_revoked', ...call]);
    assert.notEqual(refused.code, 0, refused.out);
});
