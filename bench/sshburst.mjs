// A burst of 30 calls to an engine reached over ssh: how long it takes cold (the server's first
// calls: the ssh connection is opened on the way) and warm (the same server again), and how many
// ssh connections (key exchanges, counted in the fixture sshd's log) the server opened for them.
// Needs the engines fixture (tests/engines/engines.sh start DIR):
//   node bench/sshburst.mjs --engines-env DIR/env [--bin PATH] [--rounds N] [--calls N]
// Each round is a fresh server (no pool, so that every call creates its container through ssh).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function options(argv) {
    const o = { bin: path.resolve(HERE, '../build/bin/code-sandbox'), rounds: 3, calls: 30, env: '' };
    for (let i = 0; i < argv.length; i += 1) {
        const [k, v] = [argv[i], argv[i + 1]];
        if (k === '--bin') o.bin = v;
        else if (k === '--rounds') o.rounds = Number(v);
        else if (k === '--calls') o.calls = Number(v);
        else if (k === '--engines-env') o.env = v;
        else throw new Error(`unknown option ${k}`);
        i += 1;
    }
    if (!o.env) throw new Error('--engines-env DIR/env is required');
    return o;
}

function readEnv(file) {
    const env = {};
    for (const line of readFileSync(file, 'utf8').split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1).trim();
    }
    return env;
}

const accepted = (F) => readFileSync(F.CS_SSH_LOG, 'utf8').split('\n')
    .filter((l) => l.includes('Accepted publickey')).length;

async function burst(client, n) {
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: n }, (_, i) => client.callTool(
        { name: 'run_python_code', arguments: { code: `print(${i})` } }, undefined,
        { timeout: 300_000 })));
    const ms = performance.now() - t0;
    const failed = results.filter((r, i) => r.isError || r.structuredContent?.stdout?.trim() !== String(i));
    return { ms, failed: failed.length, first: failed[0]?.content?.[0]?.text };
}

async function round(o, F) {
    const before = accepted(F);
    const t0 = performance.now();
    const transport = new StdioClientTransport({
        command: o.bin,
        args: ['--stdio', '--no-history', '--no-monitor', '--pool', '0', '--engine', F.CS_SSH_ENGINE],
        env: { PATH: SERVER_PATH, CODE_SANDBOX_SSH_CONFIG: F.CS_SSH_CONFIG },
        stderr: 'ignore',
    });
    const client = new Client({ name: 'sshburst', version: '1' });
    await client.connect(transport);
    const cold = await burst(client, o.calls);
    const coldTotal = performance.now() - t0;
    const warm = await burst(client, o.calls);
    await client.close();
    return { cold, coldTotal, warm, keyExchanges: accepted(F) - before };
}

const o = options(process.argv.slice(2));
const F = readEnv(o.env);
const rows = [];
for (let i = 0; i < o.rounds; i += 1) {
    const r = await round(o, F);
    rows.push(r);
    console.log(`round ${i + 1}: cold burst ${r.cold.ms.toFixed(0)} ms (start to last answer ` +
        `${r.coldTotal.toFixed(0)} ms, ${r.cold.failed} failed), warm burst ${r.warm.ms.toFixed(0)} ms ` +
        `(${r.warm.failed} failed), ssh key exchanges ${r.keyExchanges}` +
        (r.cold.first || r.warm.first ? `; first failure: ${r.cold.first || r.warm.first}` : ''));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`median of ${o.rounds}: cold ${median(rows.map((r) => r.cold.ms)).toFixed(0)} ms, ` +
    `warm ${median(rows.map((r) => r.warm.ms)).toFixed(0)} ms, key exchanges per server ` +
    `${median(rows.map((r) => r.keyExchanges))}`);
process.exitCode = rows.some((r) => r.cold.failed || r.warm.failed) ? 1 : 0;
