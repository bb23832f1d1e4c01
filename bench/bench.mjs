// Latency, throughput, start-up time and memory of code-sandbox against the docker CLI
// alternatives, measured in one run by one clock. Usage: see README.md or `bench/run.sh --help`.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const execFileP = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
const IMAGE = 'code-sandbox/python:latest';
const CODE = 'print(1)';
const EXPECTED = '1\n';
const SERVER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const BENCH_LABEL = 'code-sandbox-bench';
const RUN_ID = `${process.pid}-${Date.now().toString(36)}`;
const TARGETS = {
    p50Ms: 25, vsExec: 0.35, vsFlow: 0.06, callsPerSecAt4: 10, initMs: 100, idleRssMb: 40,
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();

// ---------------------------------------------------------------- options

function usage() {
    return `Usage: bench/run.sh [--calls N] [--out FILE] [--bin PATH] [--smoke] [--engines]

  --calls N   latency sample per variant (default 100)
  --out FILE  Markdown report (default docs/benchmarks.md; with --smoke a temp file)
  --bin PATH  the code-sandbox binary (default build/bin/code-sandbox in the repo)
  --smoke     tiny counts, for CI: checks that every variant runs and answers correctly
  --engines   (run.sh) also start the engines fixture (tests/engines/engines.sh) and measure
              sustained calls/s with the main engine only and with three engines
  --engines-env FILE
              (bench.mjs) the fixture's env file: measure that section against it
  --check     (bench.mjs) only check the arguments, the binary and the image, and exit
Exit status is non-zero when any call answered wrongly, a container was left behind or a
step failed. Targets that are missed do not change the exit status.`;
}

function parseArgs(argv) {
    const o = { calls: 100, out: null, bin: path.join(ROOT, 'build/bin/code-sandbox'), smoke: false,
        enginesEnv: null, check: false };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const value = () => {
            if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
            return argv[++i];
        };
        if (a === '--calls') o.calls = Number(value());
        else if (a === '--out') o.out = value();
        else if (a === '--bin') o.bin = value();
        else if (a === '--smoke') o.smoke = true;
        else if (a === '--engines-env') o.enginesEnv = path.resolve(value());
        else if (a === '--check') o.check = true;
        else if (a === '-h' || a === '--help') { console.log(usage()); process.exit(0); }
        else throw new Error(`unknown argument ${a}\n${usage()}`);
    }
    if (!Number.isInteger(o.calls) || o.calls < 1) throw new Error('--calls needs a positive integer');
    if (o.smoke) {
        if (!argv.includes('--calls')) o.calls = 3;
        o.warmup = 1;
        o.throughputCalls = 8;
        o.initLaunches = 2;
        o.enginesCalls = 8;
        o.enginesConcurrency = [8];
    } else {
        o.warmup = 5;
        o.throughputCalls = 60;
        o.initLaunches = 10;
        o.enginesCalls = 60;
        o.enginesConcurrency = [8, 12];
    }
    o.bin = path.resolve(o.bin);
    if (!o.out) {
        o.out = o.smoke
            ? path.join(mkdtempSync(path.join(os.tmpdir(), 'code-sandbox-bench-')), 'benchmarks.md')
            : path.join(ROOT, 'docs/benchmarks.md');
    }
    o.out = path.resolve(o.out);
    return o;
}

// ---------------------------------------------------------------- statistics

function quantile(sorted, q) {
    if (sorted.length === 0) return NaN;
    const pos = (sorted.length - 1) * q;
    const lo = Math.floor(pos);
    const hi = Math.ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function summarize(samples) {
    const s = [...samples].sort((a, b) => a - b);
    return {
        n: s.length,
        min: s[0] ?? NaN,
        p50: quantile(s, 0.5),
        p95: quantile(s, 0.95),
        max: s[s.length - 1] ?? NaN,
        mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN,
    };
}

const ms = (v) => (Number.isFinite(v) ? v.toFixed(1) : '–');
const ratio = (v) => (Number.isFinite(v) ? `${v.toFixed(3)}×` : '–');

// ---------------------------------------------------------------- bookkeeping

const problems = [];   // anything that makes the run fail: wrong answers, leftovers, errors
function problem(message) {
    problems.push(message);
    console.error(`bench: PROBLEM: ${message}`);
}
const log = (message) => console.error(`bench: ${message}`);

// ---------------------------------------------------------------- docker helpers

async function docker(args, { timeout = 60_000 } = {}) {
    const { stdout } = await execFileP(DOCKER, args, { timeout, maxBuffer: 1 << 20 });
    return stdout;
}

/** Containers with `label` on the default engine, or on the engine at `host` (docker -H). */
async function containersWithLabel(label, host) {
    const out = await docker([...(host ? ['-H', host] : []), 'ps', '-a', '--filter', `label=${label}`,
        '--format', '{{.ID}} {{.State}} {{.Label "code-sandbox.language"}}']);
    return out.split('\n').filter(Boolean).map((line) => {
        const [id, state, language] = line.split(' ');
        return { id, state, language };
    });
}

/**
 * Waits until no container with `label` exists (on the engine at `host`, default: the default
 * engine); removes and reports any that stay.
 */
async function ensureNoContainers(label, what, timeoutMs = 30_000, host = undefined) {
    const deadline = Date.now() + timeoutMs;
    let left = [];
    for (;;) {
        left = await containersWithLabel(label, host);
        if (left.length === 0) return;
        if (Date.now() >= deadline) break;
        await sleep(250);
    }
    problem(`${what}: ${left.length} container(s) left ${timeoutMs / 1000} s after the end ` +
        `(${left.map((c) => c.id).join(' ')}); removing them`);
    await docker([...(host ? ['-H', host] : []), 'rm', '-f', ...left.map((c) => c.id)]).catch(() => {});
}

// ---------------------------------------------------------------- our server

function serverEnv(extra = {}) {
    const env = { PATH: SERVER_PATH };
    for (const k of ['DOCKER_HOST', 'CONTAINER_HOST']) if (process.env[k]) env[k] = process.env[k];
    return { ...env, ...extra };
}

/**
 * Spawns the server and connects the SDK client; returns timings and handles. `hosts`: the
 * engines (docker -H addresses) its containers are looked for on; default: the default engine.
 */
async function startServer(bin, extraArgs, { env = {}, hosts = [undefined] } = {}) {
    const transport = new StdioClientTransport({
        command: bin, args: ['--stdio', ...extraArgs], env: serverEnv(env), stderr: 'pipe',
    });
    let stderr = '';
    const warm = new Map();   // language -> size announced by the "pool: N <lang> ... warm" line
    // "<language> <engine>" -> size: with several engines each pool announces itself, ending
    // its line with " on <engine>".
    const warmAt = new Map();
    transport.stderr.on('data', (chunk) => {
        stderr += chunk.toString();
        for (const m of stderr.matchAll(/pool: (\d+) (\w+) sandbox\(es\) warm after \d+ ms(?: on (\S+))?[^\n]*\n/g)) {
            warm.set(m[2], Number(m[1]));
            warmAt.set(`${m[2]} ${m[3] ?? ''}`, Number(m[1]));
        }
    });
    const client = new Client({ name: 'code-sandbox-bench', version: '1.0.0' });
    const t0 = now();
    await client.connect(transport);   // spawn + initialize request + initialize result
    const initMs = now() - t0;
    const pid = transport.pid;
    let closed = false;
    const server = {
        client, pid, initMs, warm, warmAt, hosts,
        label: `code-sandbox.pid=${pid}`,
        stderr: () => stderr,
        async close() {
            if (closed) return;
            closed = true;
            await client.close();
            // close() ends stdin and escalates to signals if the process lingers; wait for it to go.
            const deadline = Date.now() + 15_000;
            while (Date.now() < deadline && isAlive(pid)) await sleep(50);
            openServers.delete(server);
        },
    };
    openServers.add(server);
    return server;
}
const openServers = new Set();

function isAlive(pid) {
    try { process.kill(pid, 0); return true; } catch { return false; }
}

function rssKb(pid) {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
}

/**
 * Waits until the server's pool is warm and quiet: the "warm" log line seen for python (when a
 * pool is expected), then every container of this server running and the set unchanged for a
 * few polls. Returns the number of warm containers.
 */
async function settle(server, { pooled, quick = false, timeoutMs = 60_000 }) {
    const deadline = Date.now() + timeoutMs;
    const engines = server.hosts.length;
    const pythonWarm = () => [...server.warmAt.keys()].filter((k) => k.startsWith('python ')).length;
    if (pooled) {
        while (pythonWarm() < engines && Date.now() < deadline) await sleep(50);
        if (pythonWarm() < engines) log(`"pool ... warm" seen for python on ${pythonWarm()} of ${engines} engine(s); continuing`);
    }
    const expected = [...server.warmAt.values()].reduce((a, b) => a + b, 0);
    let previous = '';
    let stable = 0;
    while (Date.now() < deadline) {
        const cs = (await Promise.all(server.hosts.map((h) => containersWithLabel(server.label, h)))).flat();
        const key = cs.map((c) => `${c.id}:${c.state}`).sort().join(',');
        const quiet = cs.every((c) => c.state === 'running') && (!pooled || cs.length >= expected);
        stable = quiet && key === previous ? stable + 1 : 0;
        previous = key;
        if (stable >= (quick ? 1 : 3)) return cs.length;
        await sleep(quick ? 100 : 200);
    }
    log('the server did not become quiet within the time allowed; continuing');
    return NaN;
}

/**
 * One run_python_code call (in the session `sessionId` when given); resolves to
 * { ok, ms, serverMs, detail }.
 */
async function callOurs(client, sessionId) {
    const t0 = now();
    const args = sessionId ? { code: CODE, session_id: sessionId } : { code: CODE };
    try {
        const r = await client.callTool({ name: 'run_python_code', arguments: args },
            undefined, { timeout: 120_000 });
        const elapsed = now() - t0;
        const sc = r.structuredContent ?? {};
        const text = r.content?.[0]?.text;
        const ok = r.isError !== true && sc.stdout === EXPECTED && sc.exit_code === 0 && text === EXPECTED;
        return { ok, ms: elapsed, serverMs: sc.duration_ms, engine: sc.engine,
            detail: ok ? '' : JSON.stringify(r).slice(0, 300) };
    } catch (e) {
        return { ok: false, ms: now() - t0, detail: String(e.message ?? e).slice(0, 300) };
    }
}

// ---------------------------------------------------------------- docker CLI variants

/** code-sandbox-mcp's per-call flow: create, start, copy the file in, exec, remove. */
async function callReproducedFlow(dir) {
    const t0 = now();
    let id = null;
    try {
        const file = path.join(dir, 'code.py');
        writeFileSync(file, CODE);
        id = (await docker(['create', '--label', `${BENCH_LABEL}=${RUN_ID}`, '--network', 'none',
            IMAGE, 'sleep', 'infinity'])).trim();
        await docker(['start', id]);
        await docker(['cp', file, `${id}:/tmp/code.py`]);
        const out = await docker(['exec', id, 'python3', '-u', '/tmp/code.py']);
        await docker(['rm', '-f', id]);
        id = null;
        const elapsed = now() - t0;
        return { ok: out === EXPECTED, ms: elapsed, detail: out === EXPECTED ? '' : JSON.stringify(out) };
    } catch (e) {
        return { ok: false, ms: now() - t0, detail: String(e.message ?? e).slice(0, 300) };
    } finally {
        if (id) await docker(['rm', '-f', id]).catch(() => {});
    }
}

async function callDockerExec(id) {
    const t0 = now();
    try {
        const out = await docker(['exec', id, 'python3', '-u', '-c', CODE]);
        return { ok: out === EXPECTED, ms: now() - t0, detail: out === EXPECTED ? '' : JSON.stringify(out) };
    } catch (e) {
        return { ok: false, ms: now() - t0, detail: String(e.message ?? e).slice(0, 300) };
    }
}

/** The docker CLI alone, without the engine: what each CLI step above pays before any work. */
async function callCliLaunch() {
    const t0 = now();
    try {
        const out = await docker(['--version']);
        const ok = /^Docker version /.test(out);
        return { ok, ms: now() - t0, detail: ok ? '' : JSON.stringify(out) };
    } catch (e) {
        return { ok: false, ms: now() - t0, detail: String(e.message ?? e).slice(0, 300) };
    }
}

function engineSocket() {
    const host = process.env.DOCKER_HOST;
    if (host && host.startsWith('unix://')) return host.slice('unix://'.length);
    return '/var/run/docker.sock';
}

function engineRequest(method, urlPath, body) {
    return new Promise((resolve, reject) => {
        const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
        const req = http.request({
            socketPath: engineSocket(), path: `/v1.41${urlPath}`, method,
            headers: data ? { 'Content-Type': 'application/json', 'Content-Length': data.length } : {},
        }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
            res.on('error', reject);
        });
        req.on('error', reject);
        if (data) req.write(data);
        req.end();
    });
}

/** Splits the engine's multiplexed stream (8-byte frame headers) into stdout and stderr. */
function demultiplex(buf) {
    let out = '';
    let err = '';
    for (let i = 0; i + 8 <= buf.length;) {
        const n = buf.readUInt32BE(i + 4);
        const text = buf.subarray(i + 8, i + 8 + n).toString();
        if (buf[i] === 2) err += text; else out += text;
        i += 8 + n;
    }
    return { out, err };
}

/** What `docker exec` does, straight over the Engine API: create the exec, start it, inspect it. */
async function callEngineExec(id) {
    const t0 = now();
    try {
        const created = await engineRequest('POST', `/containers/${id}/exec`,
            { AttachStdout: true, AttachStderr: true, Cmd: ['python3', '-u', '-c', CODE] });
        if (created.status !== 201) throw new Error(`exec create: HTTP ${created.status} ${created.body}`);
        const execId = JSON.parse(created.body).Id;
        const started = await engineRequest('POST', `/exec/${execId}/start`, { Detach: false, Tty: false });
        if (started.status !== 200) throw new Error(`exec start: HTTP ${started.status} ${started.body}`);
        const inspected = JSON.parse((await engineRequest('GET', `/exec/${execId}/json`)).body);
        const elapsed = now() - t0;
        const { out } = demultiplex(started.body);
        const ok = out === EXPECTED && inspected.ExitCode === 0;
        return { ok, ms: elapsed, detail: ok ? '' : JSON.stringify({ out, exit: inspected.ExitCode }) };
    } catch (e) {
        return { ok: false, ms: now() - t0, detail: String(e.message ?? e).slice(0, 300) };
    }
}

// ---------------------------------------------------------------- measurement loops

/**
 * Latency of several variants, interleaved: after the untimed warm-up of each, every round makes
 * one timed call of each variant, starting with a different variant each round, so a change in
 * machine load during the run affects all variants alike. A variant's `before` (untimed) runs
 * ahead of each of its calls, e.g. to wait until the pool is refilled.
 */
async function interleavedLatency(variants, { calls, warmup }) {
    const acc = variants.map(() => ({ samples: [], serverMs: [], failures: 0, warmFailures: 0 }));
    for (const [k, v] of variants.entries()) {
        log(`${v.name}: ${warmup} warm-up calls`);
        for (let i = 0; i < warmup; i++) {
            if (v.before) await v.before();
            if (!(await v.call()).ok) acc[k].warmFailures++;
        }
    }
    log(`${calls} rounds of ${variants.length} timed calls, interleaved`);
    for (let i = 0; i < calls; i++) {
        for (let j = 0; j < variants.length; j++) {
            const k = (i + j) % variants.length;
            const v = variants[k];
            if (v.before) await v.before();
            const r = await v.call();
            record(acc[k], v.name, r, i);
        }
        if ((i + 1) % 10 === 0) log(`round ${i + 1} of ${calls}`);
    }
    return variants.map((v, k) => finishVariant(v, acc[k], calls, warmup));
}

/** Untimed warm-up, then `calls` timed calls one right after the other. */
async function sequentialLatency(v, { calls, warmup }) {
    const a = { samples: [], serverMs: [], failures: 0, warmFailures: 0 };
    log(`${v.name}: ${warmup} warm-up + ${calls} timed calls`);
    for (let i = 0; i < warmup; i++) if (!(await v.call()).ok) a.warmFailures++;
    for (let i = 0; i < calls; i++) record(a, v.name, await v.call(), i);
    return finishVariant(v, a, calls, warmup);
}

function record(a, name, r, i) {
    if (r.ok) {
        a.samples.push(r.ms);
        if (Number.isFinite(r.serverMs)) a.serverMs.push(r.serverMs);
    } else {
        a.failures++;
        if (a.failures <= 3) log(`${name}: call ${i} failed: ${r.detail}`);
    }
}

function finishVariant(v, a, calls, warmup) {
    if (a.warmFailures) problem(`${v.name}: ${a.warmFailures} of ${warmup} warm-up calls answered wrongly`);
    if (a.failures) problem(`${v.name}: ${a.failures} of ${calls} timed calls answered wrongly`);
    const s = summarize(a.samples);
    log(`${v.name}: p50 ${ms(s.p50)} ms, p95 ${ms(s.p95)} ms, ${a.failures} failed`);
    return {
        key: v.key, name: v.name, ...s, failures: a.failures, calls,
        server: a.serverMs.length ? summarize(a.serverMs) : null,
    };
}

/** `total` calls with `concurrency` in flight on one client. */
async function throughput(client, concurrency, total, pid, sampleRss, what = `concurrency ${concurrency}`) {
    let next = 0;
    let ok = 0;
    let failures = 0;
    const engines = new Map();   // structuredContent.engine of the correct answers -> count
    let peakKb = 0;
    const timer = sampleRss ? setInterval(() => {
        try { peakKb = Math.max(peakKb, rssKb(pid)); } catch { /* process gone */ }
    }, 50) : null;
    if (sampleRss) peakKb = rssKb(pid);
    const t0 = now();
    const worker = async () => {
        while (next < total) {
            next++;
            const r = await callOurs(client);
            if (r.ok) {
                ok++;
                engines.set(r.engine, (engines.get(r.engine) ?? 0) + 1);
            } else {
                failures++;
                if (failures <= 3) log(`${what}: a call failed: ${r.detail}`);
            }
        }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const wallMs = now() - t0;
    if (timer) { clearInterval(timer); peakKb = Math.max(peakKb, rssKb(pid)); }
    if (failures) problem(`throughput, ${what}: ${failures} of ${total} calls answered wrongly`);
    const perSec = (ok / wallMs) * 1000;
    log(`${what}: ${total} calls in ${ms(wallMs)} ms = ${perSec.toFixed(2)} calls/s, ${failures} failed`);
    return { concurrency, total, ok, failures, wallMs, perSec, engines, peakKb: sampleRss ? peakKb : null };
}

// ---------------------------------------------------------------- several engines

/** The engines fixture's env file (tests/engines/engines.sh start DIR writes DIR/env). */
function readEnginesEnv(file) {
    const env = {};
    for (const line of readFileSync(file, 'utf8').split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0) env[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
    }
    for (const k of ['CS_MAIN_ENGINE', 'CS_TLS_ENGINE', 'CS_TLS_CERT_PATH', 'CS_TLS_UNIX',
        'CS_SSH_ENGINE', 'CS_SSH_CONFIG', 'CS_SSH_UNIX']) {
        if (!env[k]) throw new Error(`${file} has no ${k}: not an engines fixture's env file`);
    }
    return env;
}

const ENGINE_KEYS = ['main', 'tls', 'ssh'];
const load1 = () => os.loadavg()[0];

/**
 * Sustained calls/s with the main engine only and with three engines (the main one, dockerd #2
 * over TCP with TLS, dockerd #3 through ssh), `opts.enginesCalls` calls per row at each of
 * `opts.enginesConcurrency` in flight. Both servers are up side by side; at each concurrency the
 * two rows run one right after the other, the first of them alternating, so that both see the
 * same moment of the machine. Every answer is checked, the engine that ran each call counted, and
 * afterwards nothing may be left on any of the three engines.
 */
async function severalEngines(opts) {
    const t0 = now();
    const F = readEnginesEnv(opts.enginesEnv);
    // Where each engine is reached directly, to look at what is on it.
    const sockets = { main: F.CS_MAIN_ENGINE, tls: F.CS_TLS_UNIX, ssh: F.CS_SSH_UNIX };
    const hostPort = (url) => new URL(url.replace(/^(tcp|ssh):/, 'http:')).host;
    const tlsId = hostPort(F.CS_TLS_ENGINE);
    const sshId = hostPort(F.CS_SSH_ENGINE);
    // Which of the three an engine string from a result (or get_supported_languages) names.
    const keyOf = (engine) => {
        if (!engine) return null;
        if (engine.includes(tlsId)) return 'tls';
        if (engine.includes(sshId)) return 'ssh';
        if (engine.includes(sockets.main.replace(/^unix:\/\//, ''))) return 'main';
        return null;
    };
    const tlsArgs = ['--tls-ca', `${F.CS_TLS_CERT_PATH}/ca.pem`, '--tls-cert', `${F.CS_TLS_CERT_PATH}/cert.pem`,
        '--tls-key', `${F.CS_TLS_CERT_PATH}/key.pem`];
    const env = { CODE_SANDBOX_SSH_CONFIG: F.CS_SSH_CONFIG };
    const cpus = {};
    for (const k of ENGINE_KEYS) {
        cpus[k] = Number((await docker(['-H', sockets[k], 'info', '--format', '{{.NCPU}}'])).trim());
    }
    log(`several engines: CPUs in /info: ${ENGINE_KEYS.map((k) => `${k} ${cpus[k]}`).join(', ')}`);

    const setups = [
        { key: 'one', name: '1 engine (main)', args: ['--engine', F.CS_MAIN_ENGINE], hosts: [sockets.main] },
        { key: 'three', name: '3 engines (main, tcp+TLS, ssh)',
            args: ['--engine', F.CS_MAIN_ENGINE, '--engine', F.CS_TLS_ENGINE, ...tlsArgs, '--engine', F.CS_SSH_ENGINE],
            hosts: ENGINE_KEYS.map((k) => sockets[k]) },
    ];
    const rows = [];
    const seen = {};   // setup key -> the engines its server reports (get_supported_languages)
    const loadStart = load1();
    try {
        for (const s of setups) s.server = await startServer(opts.bin, s.args, { env, hosts: s.hosts });
        for (const s of setups) {
            await settle(s.server, { pooled: true });
            const r = await s.server.client.callTool({ name: 'get_supported_languages', arguments: {} })
                .catch(() => null);
            seen[s.key] = (r?.structuredContent?.engines ?? []).map((e) => ({ ...e, key: keyOf(e.address) }));
        }
        for (const [i, c] of opts.enginesConcurrency.entries()) {
            for (const s of i % 2 === 0 ? setups : [...setups].reverse()) {
                await settle(s.server, { pooled: true });
                const before = load1();
                const t = await throughput(s.server.client, c, opts.enginesCalls, s.server.pid, false,
                    `${s.name}, ${c} in flight`);
                const spread = Object.fromEntries(ENGINE_KEYS.map((k) => [k, 0]));
                for (const [engine, n] of t.engines) {
                    // A lone engine is not named in results: every call ran on it.
                    const k = s.key === 'one' && engine === undefined ? 'main' : keyOf(engine);
                    if (k) spread[k] += n;
                    else problem(`${s.name}, ${c} in flight: ${n} correct answer(s) name no engine of the ` +
                        `fixture (structuredContent.engine ${JSON.stringify(engine)})`);
                }
                log(`${s.name}, ${c} in flight: calls per engine ${JSON.stringify(spread)}`);
                rows.push({ ...t, setup: s.key, name: s.name, spread, loadBefore: before, loadAfter: load1() });
            }
        }
    } finally {
        for (const s of setups) await s.server?.close();
    }
    // Nothing left: on the main engine, the two servers' containers (by their pid label: other
    // servers may run there); on the fixture's own engines, any sandbox at all.
    for (const s of setups) {
        if (s.server) await ensureNoContainers(s.server.label, `several engines, ${s.name}, main engine`, 30_000, sockets.main);
    }
    for (const k of ['tls', 'ssh']) {
        await ensureNoContainers('code-sandbox', `several engines, engine ${k}`, 30_000, sockets[k]);
    }
    return { rows, cpus, seen, loadStart, loadEnd: load1(), elapsedS: (now() - t0) / 1000 };
}

// ---------------------------------------------------------------- the machine

async function machine(bin) {
    const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
    const cpu = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
    const memKb = Number(/^MemTotal:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]);
    const safe = async (f) => { try { return (await f()).trim(); } catch { return 'unknown'; } };
    const dockerVersion = await safe(() => docker(['version', '--format',
        'server {{.Server.Version}} (API {{.Server.APIVersion}}), client {{.Client.Version}}']));
    const imageId = await safe(() => docker(['image', 'inspect', '--format', '{{.Id}}', IMAGE]));
    const binVersion = await safe(async () => (await execFileP(bin, ['--version'])).stdout);
    const sdk = JSON.parse(readFileSync(path.join(HERE, 'node_modules/@modelcontextprotocol/sdk/package.json'),
        'utf8')).version;
    return {
        cpu, cores: os.cpus().length, memGiB: (memKb / 1048576).toFixed(1),
        kernel: `${os.type()} ${os.release()}`, dockerVersion, imageId: imageId.replace(/^sha256:/, '').slice(0, 12),
        binVersion, node: process.version, sdk, date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        loadStart: os.loadavg().map((v) => v.toFixed(2)).join(' '),
    };
}

// ---------------------------------------------------------------- report

function report({ opts, m, lat, thr, init, idleKb, busyKb, eng, elapsedS, command }) {
    const byName = Object.fromEntries(lat.map((l) => [l.key, l]));
    const { pooled, paced, unpooled, flow, exec } = byName;
    const r = {
        pacedVsExec: paced.p50 / exec.p50,
        pooledVsExec: pooled.p50 / exec.p50,
        pacedVsFlow: paced.p50 / flow.p50,
        pooledVsFlow: pooled.p50 / flow.p50,
        unpooledVsFlow: unpooled.p50 / flow.p50,
    };
    const at4 = thr.find((t) => t.concurrency === 4);
    const initPooled = init.find((i) => i.key === 'pooled');
    const mark = (met) => (met ? '**met**' : '**missed**');
    const mb = (kb) => (Number.isFinite(kb) ? (kb / 1024).toFixed(1) : '–');
    const L = [];
    L.push('# Benchmarks', '');
    if (opts.smoke) L.push('> **Smoke run** (tiny counts, for CI): the numbers below are not meaningful.', '');
    L.push('Latency of `run_python_code` with `print(1)` and the alternatives, measured in one run on one',
        'machine with one image by `bench/run.sh` (see `bench/README.md` for what each row does and',
        'how to read it). All times in milliseconds, by the same clock (Node `performance.now()`).', '');
    L.push('## Machine', '');
    L.push('| | |', '|---|---|');
    L.push(`| CPU | ${m.cpu}, ${m.cores} cores |`);
    L.push(`| Memory | ${m.memGiB} GiB |`);
    L.push(`| Kernel | ${m.kernel} |`);
    L.push(`| Docker | ${m.dockerVersion} |`);
    L.push(`| Image | \`${IMAGE}\` (${m.imageId}) |`);
    L.push(`| Server | \`${m.binVersion}\` |`);
    L.push(`| Client | Node ${m.node}, @modelcontextprotocol/sdk ${m.sdk}, StdioClientTransport |`);
    L.push(`| Date | ${m.date} |`);
    L.push(`| Load average (1/5/15 min) | ${m.loadStart} at start, ${m.loadEnd} at end |`);
    L.push(`| Command | \`${command}\` (${elapsedS.toFixed(0)} s) |`, '');

    L.push(`## Latency (${opts.calls} timed calls per variant after ${opts.warmup} untimed)`, '');
    L.push('Calls are sequential (one in flight). All rows but the first ran interleaved, one call of each per',
        'round, so they saw the same machine; the back-to-back row ran alone right after.', '');
    L.push('| Variant | ok | failed | min | p50 | mean | p95 | max |', '|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const l of lat) {
        L.push(`| ${l.name} | ${l.n} | ${l.failures} | ${ms(l.min)} | **${ms(l.p50)}** | ${ms(l.mean)} | ${ms(l.p95)} | ${ms(l.max)} |`);
    }
    L.push('');
    const srv = lat.filter((l) => l.server);
    if (srv.length) {
        L.push('Server-reported `duration_ms` (program written to the sandbox → exit status read), p50 / p95:',
            srv.map((l) => `${l.name} ${ms(l.server.p50)} / ${ms(l.server.p95)}`).join('; ') + '.', '');
    }

    L.push('## Ratios (p50 / p50, same run)', '');
    L.push('| Ratio | Value | Target |', '|---|---:|---:|');
    L.push(`| ours pooled, refilled / \`docker exec\` into a running container | ${ratio(r.pacedVsExec)} | ≤ ${TARGETS.vsExec}× |`);
    L.push(`| ours pooled, back-to-back / \`docker exec\` into a running container | ${ratio(r.pooledVsExec)} | ≤ ${TARGETS.vsExec}× |`);
    L.push(`| ours pooled, refilled / reproduced code-sandbox-mcp flow | ${ratio(r.pacedVsFlow)} | ≤ ${TARGETS.vsFlow}× |`);
    L.push(`| ours pooled, back-to-back / reproduced code-sandbox-mcp flow | ${ratio(r.pooledVsFlow)} | ≤ ${TARGETS.vsFlow}× |`);
    L.push(`| ours \`--pool 0\` / reproduced code-sandbox-mcp flow | ${ratio(r.unpooledVsFlow)} | – |`);
    L.push(`| context: ours pooled, refilled / exec over the Engine API | ${ratio(paced.p50 / byName.apiExec.p50)} | – |`, '');

    L.push(`## Throughput (pooled, one client, ${opts.throughputCalls} calls per row)`, '');
    L.push('| Calls in flight | ok | failed | wall time | calls/s |', '|---:|---:|---:|---:|---:|');
    for (const t of thr) {
        L.push(`| ${t.concurrency} | ${t.ok} | ${t.failures} | ${ms(t.wallMs)} | **${t.perSec.toFixed(2)}** |`);
    }
    L.push('');

    L.push(`## Start-up and memory`, '');
    L.push('| Measure | Value |', '|---|---:|');
    for (const i of init) {
        L.push(`| spawn → initialize answered, ${i.label} (median of ${i.n}; min–max) | **${ms(i.p50)}** (${ms(i.min)}–${ms(i.max)}) |`);
    }
    L.push(`| idle RSS (initialized, pool warm) | **${mb(idleKb)} MiB** |`);
    L.push(`| busy RSS (peak during the ${thr.at(-1)?.concurrency ?? '–'}-in-flight run, sampled every 50 ms) | ${mb(busyKb)} MiB |`, '');

    L.push('## Targets (issue 5)', '');
    L.push('| Target | Measured | |', '|---|---:|---|');
    for (const [l, label] of [[paced, 'pool refilled before each call'], [pooled, 'back-to-back']]) {
        const vsExec = l.p50 / exec.p50;
        const vsFlow = l.p50 / flow.p50;
        L.push(`| p50 \`print(1)\` ≤ ${TARGETS.p50Ms} ms (pooled, ${label}) | ${ms(l.p50)} ms | ${mark(l.p50 <= TARGETS.p50Ms && l.failures === 0)} |`);
        L.push(`| ≤ ${TARGETS.vsExec}× \`docker exec\` (pooled, ${label}) | ${ratio(vsExec)} | ${mark(vsExec <= TARGETS.vsExec)} |`);
        L.push(`| ≤ ${TARGETS.vsFlow}× the reproduced per-call flow (pooled, ${label}) | ${ratio(vsFlow)} | ${mark(vsFlow <= TARGETS.vsFlow)} |`);
    }
    L.push(`| ≥ ${TARGETS.callsPerSecAt4} calls/s at concurrency 4, all correct | ${at4 ? at4.perSec.toFixed(2) : '–'} calls/s, ${at4?.failures ?? '–'} failed | ${mark(at4 && at4.failures === 0 && at4.perSec >= TARGETS.callsPerSecAt4)} |`);
    L.push(`| initialize ≤ ${TARGETS.initMs} ms after launch (default, pooled) | ${ms(initPooled.p50)} ms | ${mark(initPooled.p50 <= TARGETS.initMs)} |`);
    L.push(`| idle RSS ≤ ${TARGETS.idleRssMb} MB | ${(idleKb * 1024 / 1e6).toFixed(1)} MB | ${mark(idleKb * 1024 / 1e6 <= TARGETS.idleRssMb)} |`, '');

    if (eng) L.push(...enginesReport(opts, m, eng));

    if (problems.length) {
        L.push('## Problems in this run', '', ...problems.map((p) => `- ${p}`), '');
    }
    return { text: L.join('\n'), ratios: r };
}

/** The "Several engines" section of the report. */
function enginesReport(opts, m, eng) {
    const L = [];
    const spread = (r) => ENGINE_KEYS.map((k) => r.spread[k]).join(' / ');
    L.push(`## Several engines (${opts.enginesCalls} calls per row)`, '');
    L.push('Sustained `run_python_code` with `print(1)`, one SDK client, against a server with the main engine',
        'only and one with three: the main engine, a second dockerd reached over TCP with TLS and a third',
        'reached through ssh (`tests/engines/engines.sh`). Both servers ran side by side with the default pool',
        '(2 per language on each engine) and default `--max-concurrent`; at each number in flight the two rows',
        `ran one right after the other. calls/s = correct answers / wall time. ${eng.elapsedS.toFixed(0)} s for this section.`, '');
    L.push('| Server | Calls in flight | ok | failed | wall time | calls/s | calls per engine (main / tls / ssh) | load (1 min) before → after |',
        '|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of eng.rows) {
        L.push(`| ${r.name} | ${r.concurrency} | ${r.ok} | ${r.failures} | ${ms(r.wallMs)} | **${r.perSec.toFixed(2)}** | ` +
            `${spread(r)} | ${r.loadBefore.toFixed(2)} → ${r.loadAfter.toFixed(2)} |`);
    }
    L.push('');
    // How many calls each server runs at once is the sum of its engines' capacities (from their
    // CPUs), the rest wait in its queue: worth seeing beside the rates.
    const seen = (key) => (eng.seen[key] ?? [])
        .map((e) => `${e.key ?? e.address} ${e.cpus ?? '?'} CPUs, capacity ${e.capacity}`).join('; ');
    if (seen('one') || seen('three')) {
        L.push(`The engines as each server saw them (\`get_supported_languages\`): 1 engine: ${seen('one') || '–'}. ` +
            `3 engines: ${seen('three') || '–'}.`, '');
    }
    const sameCpus = ENGINE_KEYS.every((k) => eng.cpus[k] === m.cores);
    L.push(`**Note.** This machine has ${m.cores} cores, and the three engines are three daemons on it` +
        (sameCpus ? `, each reporting these ${m.cores} CPUs in \`/info\`` : '') + ': they share the same',
    'CPUs, with the server and the client, so the 3-engine row is CPU-bound: it shows that the calls are',
    'spread and what placement over several engines costs, not what three machines give. On machines with',
    'their own cores each engine adds its own capacity: the server places each call by load against each',
    'engine\'s CPUs from `/info`, so with the engines on separate machines the sustained rate is expected to',
    'grow with the number of engines (up to about 3× the 1-engine row with three, while the server and the',
    'client keep up). That is an expectation, not a measurement of this report.', '');
    return L;
}

// ---------------------------------------------------------------- main

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    const command = ['bench/run.sh', ...process.argv.slice(2)].map((a) => (/^[\w./=:-]+$/.test(a) ? a : `'${a}'`)).join(' ');
    if (!existsSync(opts.bin)) throw new Error(`no server binary at ${opts.bin} (build it, or pass --bin)`);
    if (opts.enginesEnv) readEnginesEnv(opts.enginesEnv);   // a wrong file fails now, not at the end
    await docker(['image', 'inspect', IMAGE]).catch(() => { throw new Error(`image ${IMAGE} is missing`); });
    if (opts.check) return;
    const started = now();
    const m = await machine(opts.bin);
    log(`server ${opts.bin}, ${opts.calls} calls per latency variant, report to ${opts.out}`);

    const lat = [];
    const thr = [];
    const init = [];
    let idleKb = NaN;
    let busyKb = NaN;

    // Everything that is compared by latency runs side by side: both servers, the container
    // for docker exec, and the reproduced flow, one call of each per round.
    const pooled = await startServer(opts.bin, []);
    const unpooled = await startServer(opts.bin, ['--pool', '0']);
    let execId = null;
    let sessionId = null;
    const flowDir = mkdtempSync(path.join(os.tmpdir(), 'code-sandbox-bench-flow-'));
    try {
        await settle(pooled, { pooled: true });
        await settle(unpooled, { pooled: false });
        idleKb = rssKb(pooled.pid);
        log(`pooled server pid ${pooled.pid}: idle RSS ${(idleKb / 1024).toFixed(1)} MiB`);
        execId = (await docker(['run', '-d', '--label', `${BENCH_LABEL}=${RUN_ID}`, '--network', 'none',
            IMAGE, 'sleep', 'infinity'])).trim();
        // A live Python session on the pooled server: its calls reuse one container on purpose.
        const created = await pooled.client.callTool({ name: 'create_session', arguments: { language: 'python' } });
        sessionId = created.structuredContent?.session_id;
        if (!sessionId) throw new Error(`create_session failed: ${JSON.stringify(created).slice(0, 300)}`);

        lat.push(...await interleavedLatency([
            { key: 'paced', name: 'ours, pooled (default), pool refilled before each call',
                call: () => callOurs(pooled.client), before: () => settle(pooled, { pooled: true, quick: true }) },
            { key: 'unpooled', name: 'ours, `--pool 0`', call: () => callOurs(unpooled.client) },
            { key: 'session', name: 'ours, a call in a live Python session (create_session; state kept, not a fresh sandbox)',
                call: () => callOurs(pooled.client, sessionId) },
            { key: 'flow', name: 'code-sandbox-mcp flow (create, start, cp, exec, rm)', call: () => callReproducedFlow(flowDir) },
            { key: 'exec', name: '`docker exec` into a running container', call: () => callDockerExec(execId) },
            { key: 'apiExec', context: true, name: 'context: the same exec over the Engine API, no CLI', call: () => callEngineExec(execId) },
            { key: 'cli', context: true, name: 'context: `docker --version` (CLI launch alone)', call: callCliLaunch },
        ], opts));
    } finally {
        rmSync(flowDir, { recursive: true, force: true });
        if (sessionId)
            await pooled.client.callTool({ name: 'close_session', arguments: { session_id: sessionId } }).catch(() => {});
        if (execId) await docker(['rm', '-f', execId]).catch(() => {});
        await unpooled.close();
    }
    await ensureNoContainers(unpooled.label, 'ours, --pool 0');
    await ensureNoContainers(`${BENCH_LABEL}=${RUN_ID}`, 'docker CLI variants');

    // The pooled server alone: calls back to back (the pool cannot keep up), then throughput.
    try {
        await settle(pooled, { pooled: true });
        lat.unshift(await sequentialLatency({ key: 'pooled', name: 'ours, pooled (default), back-to-back',
            call: () => callOurs(pooled.client) }, opts));
        for (const c of [1, 4, 8]) {
            await settle(pooled, { pooled: true });
            const t = await throughput(pooled.client, c, opts.throughputCalls, pooled.pid, c === 8);
            thr.push(t);
            if (c === 8) busyKb = t.peakKb;
        }
    } finally {
        await pooled.close();
    }
    await ensureNoContainers(pooled.label, 'ours, pooled');

    // Start-up: spawn → initialize answered, median of several launches each.
    for (const [key, label, args] of [['pooled', 'pooled (default)', []], ['unpooled', '`--pool 0`', ['--pool', '0']]]) {
        const samples = [];
        for (let i = 0; i < opts.initLaunches; i++) {
            const s = await startServer(opts.bin, args);
            samples.push(s.initMs);
            await s.close();
            // Let the previous launch's pool be removed before the next launch is timed.
            await ensureNoContainers(s.label, `start-up, ${label}`);
        }
        const st = summarize(samples);
        log(`initialize, ${label}: median ${ms(st.p50)} ms`);
        init.push({ key, label, ...st });
    }

    // Several engines: after everything else, which it does not change (the fixture's daemons
    // are idle until now).
    let eng = null;
    if (opts.enginesEnv) eng = await severalEngines(opts);

    m.loadEnd = os.loadavg().map((v) => v.toFixed(2)).join(' ');
    const { text } = report({ opts, m, lat, thr, init, idleKb, busyKb, eng, elapsedS: (now() - started) / 1000, command });
    writeFileSync(opts.out, text);
    console.log(text);
    log(`report written to ${opts.out}`);
    if (problems.length) {
        log(`${problems.length} problem(s): the run is not valid`);
        process.exitCode = 1;
    }
}

// Stopped from outside (run.sh's trap passes on Ctrl-C as SIGTERM): the servers are closed
// first, so that they remove their sandboxes.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.once(signal, async () => {
        console.error(`bench: ${signal}: closing the servers`);
        for (const server of [...openServers]) await server.close().catch(() => {});
        process.exit(code);
    });
}

main().catch(async (e) => {
    console.error(`bench: ERROR: ${e.stack ?? e}`);
    for (const server of [...openServers]) await server.close().catch(() => {});
    const left = await containersWithLabel(`${BENCH_LABEL}=${RUN_ID}`).catch(() => []);
    if (left.length) await docker(['rm', '-f', ...left.map((c) => c.id)]).catch(() => {});
    process.exit(2);
});
