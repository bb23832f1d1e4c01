// What a workspace costs a call (issue 50): `run_python_code` over a read-only workspace of
// 200 MB in 5,000 files, the first call (the folder hashed, packed and sent into the engine's
// volume for its content), the next ones over the same folder (a stat walk, then the volume
// found: nothing sent), and calls after one file of the folder changed (only that file sent),
// against the same call without the workspace, on the local engine and, given an engines
// fixture (--engines-env), on its engines over TCP+TLS and over ssh. One server per engine, one
// call in flight, every answer checked, and the bytes each call sent (sent_bytes) reported.
//   node bench/workspaces.mjs [--bin PATH] [--calls N] [--files N] [--file-kib N]
//                             [--engines-env FILE] [--smoke]
// Prints a Markdown section and, last, one JSON line. Exit status: 0; 1 when an answer was
// wrong; 2 when a step failed.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { summarize } from './stats.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const now = () => performance.now();
const log = (message) => console.error(`workspaces: ${message}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// Between calls, so the pool has refilled (a warm sandbox per call, as in the latency rows).
const REFILL_MS = 2000;

function parseArgs(argv) {
    const o = { bin: path.join(ROOT, 'build/bin/code-sandbox'), calls: 10, files: 5000, fileKib: 40,
        enginesEnv: null, smoke: false };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const value = () => {
            if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
            return argv[++i];
        };
        if (a === '--bin') o.bin = path.resolve(value());
        else if (a === '--calls') o.calls = Number(value());
        else if (a === '--files') o.files = Number(value());
        else if (a === '--file-kib') o.fileKib = Number(value());
        else if (a === '--engines-env') o.enginesEnv = value();
        else if (a === '--smoke') o.smoke = true;
        else throw new Error(`unknown argument ${a}`);
    }
    if (o.smoke) Object.assign(o, { calls: 2, files: 50, fileKib: 4 });
    return o;
}

/** A folder of `files` files of random bytes (incompressible, as data usually is), 100 a folder. */
function makeFolder(files, fileKib) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-bench-ws-'));
    for (let i = 0; i < files; i++) {
        const sub = path.join(dir, `part-${String(Math.floor(i / 100)).padStart(3, '0')}`);
        if (i % 100 === 0) mkdirSync(sub);
        writeFileSync(path.join(sub, `${i}.bin`), randomBytes(fileKib * 1024));
    }
    return dir;
}

/** The engines to measure on: the local one, and the fixture's TLS and ssh engines when given. */
function targets(o) {
    const list = [{ name: 'local engine (unix socket)', args: [], env: {} }];
    if (!o.enginesEnv) return list;
    const F = {};
    for (const line of readFileSync(o.enginesEnv, 'utf8').split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0) F[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
    }
    list.push({ name: 'remote engine over TCP+TLS', env: {},
        args: ['--engine', F.CS_TLS_ENGINE, '--tls-ca', `${F.CS_TLS_CERT_PATH}/ca.pem`,
            '--tls-cert', `${F.CS_TLS_CERT_PATH}/cert.pem`, '--tls-key', `${F.CS_TLS_CERT_PATH}/key.pem`] });
    list.push({ name: 'remote engine over ssh', args: ['--engine', F.CS_SSH_ENGINE],
        env: { CODE_SANDBOX_SSH_CONFIG: F.CS_SSH_CONFIG } });
    return list;
}

async function startServer(bin, args, env) {
    const passed = {};
    for (const k of ['PATH', 'HOME', 'DOCKER_HOST']) if (process.env[k]) passed[k] = process.env[k];
    const transport = new StdioClientTransport({ command: bin, args: ['--stdio', '--no-history', ...args],
        env: { ...passed, ...env }, stderr: 'pipe' });
    transport.stderr?.on('data', () => {});
    const client = new Client({ name: 'code-sandbox-bench', version: '1.0.0' });
    await client.connect(transport);
    return client;
}

/** One call; its time and whether it counted the files it should have. */
async function call(client, workspaces, files) {
    const code = workspaces.length
        ? "import os\nprint(sum(len(f) for _, _, f in os.walk('/workspace/big')))"
        : `print(${files})`;
    await sleep(REFILL_MS);
    const t0 = now();
    const r = await client.callTool({ name: 'run_python_code', arguments: { code, workspaces } },
        undefined, { timeout: 600_000 });
    const ms = now() - t0;
    const text = r.content?.[0]?.text ?? '';
    if (r.isError || text.trim() !== String(files)) throw Object.assign(new Error(`wrong answer: ${text.slice(0, 300)}`), { wrong: true });
    return { ms, sent: r.structuredContent?.workspaces?.[0]?.sent_bytes ?? 0 };
}

async function measure(o, folder, target) {
    const client = await startServer(o.bin, [...target.args, '--workspace', `big=${folder}`], target.env);
    try {
        await call(client, [], o.files);   // the pool warm, the engine connection open
        const first = await call(client, ['big'], o.files);
        const again = [];
        const changed = [];
        const plain = [];
        for (let i = 0; i < o.calls; i++) {
            again.push(await call(client, ['big'], o.files));
            plain.push(await call(client, [], o.files));
            // One file of the folder rewritten: the next call sends that file.
            writeFileSync(path.join(folder, 'part-000', '0.bin'), randomBytes(o.fileKib * 1024));
            changed.push(await call(client, ['big'], o.files));
        }
        const ms = (list) => summarize(list.map((c) => c.ms));
        const maxSent = (list) => Math.max(...list.map((c) => c.sent));
        return { name: target.name, first: first.ms, firstSent: first.sent, again: ms(again),
            againSent: maxSent(again), changed: ms(changed), changedSent: maxSent(changed),
            plain: ms(plain) };
    } finally {
        await client.close();
    }
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const folder = makeFolder(o.files, o.fileKib);
    const mb = (o.files * o.fileKib * 1024 / 1e6).toFixed(0);
    log(`a folder of ${o.files} files, ${mb} MB, in ${folder}`);
    const rows = [];
    try {
        for (const t of targets(o)) {
            log(`${t.name}: measuring`);
            rows.push(await measure(o, folder, t));
        }
    } finally {
        rmSync(folder, { recursive: true, force: true });
    }
    const f = (v) => v.toFixed(0);
    const L = ['## Workspaces (issue 50)', '',
        `\`run_python_code\` counting the files of a read-only workspace of ${mb} MB in ${o.files.toLocaleString('en')} files ` +
        `(random bytes, ${o.fileKib} KiB each, 100 a folder) by \`bench/workspaces.mjs\`, one call in flight, the pool refilled before each (2 s). ` +
        'The first call hashes the folder, packs it and sends it into a volume for its content on the engine; the next ones over the same folder ' +
        'find every digest remembered (a stat walk) and the volume there, and send nothing; "one file changed" rewrites one file before each call, ' +
        'which then sends that file into a new volume filled from the previous one on the engine. "without" is `print(N)` in the same server, ' +
        'interleaved with them. Milliseconds; "sent" is the most one call of the row sent to the engine (`sent_bytes`).', '',
        '| Engine | first call (sent) | same folder p50 (p95), sent | one file changed p50 (p95), sent | without the workspace p50 |',
        '|---|---:|---:|---:|---:|'];
    const b = (v) => (v >= 1e6 ? `${(v / 1e6).toFixed(0)} MB` : v >= 1e3 ? `${(v / 1e3).toFixed(0)} kB` : `${v} B`);
    for (const r of rows) {
        L.push(`| ${r.name} | ${f(r.first)} (${b(r.firstSent)}) | ${f(r.again.p50)} (${f(r.again.p95)}), ${b(r.againSent)} | ` +
            `${f(r.changed.p50)} (${f(r.changed.p95)}), ${b(r.changedSent)} | ${f(r.plain.p50)} |`);
    }
    console.log(L.join('\n'));
    console.log(JSON.stringify({ files: o.files, bytes: o.files * o.fileKib * 1024, rows }));
}

main().catch((e) => {
    console.error(`workspaces: ${e.stack ?? e}`);
    process.exit(e.wrong ? 1 : 2);
});
