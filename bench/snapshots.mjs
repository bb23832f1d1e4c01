// What sessions that last cost (issue 49): a Python session holding pandas and a DataFrame of
// 1,000,000 rows (smoke: 1,000). After a call, the snapshot is taken while the session is idle:
// its time is from the call's answer to list_snapshots' answer (which waits for it), and its size
// is what list_snapshots says. Then rewind_session to it (a fresh sandbox, the snapshot put in
// and loaded), fork_session from it and the fork's first answer, and a small call right after a
// call (which waits for that call's snapshot) against one after the snapshot is done. Every
// answer is checked.
//   node bench/snapshots.mjs [--bin PATH] [--rows N] [--rounds N] [--smoke]
// Prints a Markdown section and, last, one JSON line. Exit status: 0; 1 when an answer was
// wrong; 2 when a step failed.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { summarize } from './stats.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const now = () => performance.now();
const log = (message) => console.error(`snapshots: ${message}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function parseArgs(argv) {
    const o = { bin: path.join(ROOT, 'build/bin/code-sandbox'), rows: 1_000_000, rounds: 5, smoke: false };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const value = () => {
            if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
            return argv[++i];
        };
        if (a === '--bin') o.bin = path.resolve(value());
        else if (a === '--rows') o.rows = Number(value());
        else if (a === '--rounds') o.rounds = Number(value());
        else if (a === '--smoke') o.smoke = true;
        else throw new Error(`unknown argument ${a}`);
    }
    if (o.smoke) Object.assign(o, { rows: 1000, rounds: 1 });
    return o;
}

class WrongAnswer extends Error {}

async function tool(client, name, args) {
    const t0 = now();
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
    const ms = now() - t0;
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
    return { r, ms };
}

function expect(result, stdout) {
    if (result.structuredContent?.stdout !== stdout)
        throw new WrongAnswer(`expected ${JSON.stringify(stdout)}, got ${JSON.stringify(result.structuredContent)}`);
}

async function round(client, o) {
    const { r: made } = await tool(client, 'create_session', { language: 'python' });
    const s = made.structuredContent.session_id;
    const build = `import pandas as pd, numpy as np\ndf = pd.DataFrame({'a': np.arange(${o.rows}), 'b': np.random.rand(${o.rows}), 'c': ['x%d' % (i % 100) for i in range(${o.rows})]})\nprint(len(df))`;
    const { r: built } = await tool(client, 'run_python_code', { code: build, session_id: s });
    expect(built, `${o.rows}\n`);
    const t0 = now();
    const { r: listed } = await tool(client, 'list_snapshots', { session_id: s });
    const snapshotMs = now() - t0;
    const snap = listed.structuredContent.snapshots.at(-1);
    if (!snap || snap.after_call !== 1) throw new WrongAnswer(`no snapshot after call 1: ${JSON.stringify(listed.structuredContent)}`);
    // A call right after a call waits for its snapshot; one after the snapshot does not.
    await tool(client, 'run_python_code', { code: 'df["d"] = df.a * 2\nprint(1)', session_id: s });
    const { ms: afterCallMs, r: quick } = await tool(client, 'run_python_code', { code: 'print(2)', session_id: s });
    expect(quick, '2\n');
    await tool(client, 'list_snapshots', { session_id: s });
    const { ms: idleCallMs, r: idle } = await tool(client, 'run_python_code', { code: 'print(3)', session_id: s });
    expect(idle, '3\n');
    const { ms: rewindMs } = await tool(client, 'rewind_session', { session_id: s, snapshot_id: snap.snapshot_id });
    const { r: back } = await tool(client, 'run_python_code', { code: "print(len(df), 'd' in df)", session_id: s });
    expect(back, `${o.rows} False\n`);
    const t1 = now();
    const { r: forked } = await tool(client, 'fork_session', { session_id: s, snapshot_id: snap.snapshot_id });
    const { r: first } = await tool(client, 'run_python_code', { code: 'print(int(df.a.sum()))', session_id: forked.structuredContent.session_id });
    const forkMs = now() - t1;
    expect(first, `${(o.rows * (o.rows - 1)) / 2}\n`);
    await tool(client, 'close_session', { session_id: forked.structuredContent.session_id });
    await tool(client, 'close_session', { session_id: s });
    return { snapshotMs, bytes: snap.bytes, afterCallMs, idleCallMs, rewindMs, forkMs };
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const transport = new StdioClientTransport({ command: o.bin, args: ['--stdio', '--no-history', '--snapshot-max', '1g,2g'], stderr: 'inherit' });
    const client = new Client({ name: 'bench-snapshots', version: '1.0.0' });
    await client.connect(transport);
    const rounds = [];
    try {
        for (let i = 0; i < o.rounds; i++) {
            rounds.push(await round(client, o));
            log(`round ${i + 1}/${o.rounds}: ${JSON.stringify(rounds.at(-1))}`);
            await sleep(1000);
        }
    } finally {
        await client.close();
    }
    const f = (key) => summarize(rounds.map((r) => r[key]));
    const ms = (x) => `${Math.round(x.p50)} ms (max ${Math.round(x.max)})`;
    const rows = ['snapshotMs', 'rewindMs', 'forkMs', 'afterCallMs', 'idleCallMs'].map((k) => [k, f(k)]);
    const mb = (f('bytes').p50 / 1e6).toFixed(1);
    const L = [];
    L.push('## Sessions that last', '');
    L.push(`A Python session holding pandas and a DataFrame of ${o.rows.toLocaleString('en')} rows (three columns: integers, floats, short strings), on the local engine, ${o.rounds} rounds, median (max):`, '');
    L.push('| step | time |', '| --- | --- |');
    const label = {
        snapshotMs: `snapshot after the call (${mb} MB), from the call's answer until it is kept`,
        rewindMs: 'rewind_session to it (a fresh sandbox, the snapshot loaded)',
        forkMs: 'fork_session from it, until the fork\'s first answer',
        afterCallMs: 'a small call sent right after a call (waits for that snapshot)',
        idleCallMs: 'the same call once the snapshot is kept',
    };
    for (const [k, s] of rows) L.push(`| ${label[k]} | ${ms(s)} |`);
    console.log(L.join('\n'));
    console.log(JSON.stringify({ section: 'snapshots', rows: o.rows, rounds }));
}

main().catch((e) => {
    console.error(`snapshots: ${e.stack || e}`);
    process.exit(e instanceof WrongAnswer ? 1 : 2);
});
