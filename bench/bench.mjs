// Latency, bursts, throughput, start-up time and memory of code-sandbox against the per-call flow
// of the projects users move from (reproduced through the Engine API by peers.py) and against the
// engine's own create+start+wait+remove rate, measured in one run by one clock. Usage: see
// README.md or `bench/run.sh --help`.
import { execFile, spawn } from 'node:child_process';
import readline from 'node:readline';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { summarize } from './stats.mjs';

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
const PEERS_PYTHON = '/usr/bin/python3';   // Debian's, with python3-docker
const TARGETS = {
    // issue 5
    p50Ms: 25, vsExec: 0.35, vsFlow: 0.06, callsPerSecAt4: 10, initMs: 100, idleRssMb: 40,
    // issue 19
    backToBackP50Ms: 30, burstP50Ms: 60,
    // issue 31 (replacing issue 19's 1.2× and 5 minutes): the sustained rate against the bare
    // ceiling measured in the same run, and the first answer on a fresh machine
    vsCeilingAt4: 0.95, firstRunS: 240, firstRunIssue54S: 180,
    // issue 27: what an HTTPS request through the egress gateway adds, p50
    gatewayAddsMs: 2,
};
const BURST = 8;          // calls sent at once in a burst row
const B2B_ROUND = 25;     // back-to-back calls per round

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();

// ---------------------------------------------------------------- options

function usage() {
    return `Usage: bench/run.sh [--calls N] [--flow-calls N] [--out FILE] [--bin PATH] [--smoke] [--engines] [--first-run]
                    [--only realistic] [--realistic-rounds N] [--realistic-warmup N] [--realistic-flow-calls N]

  --calls N   latency sample per variant (default 100; back-to-back: rounds of 25 up to N)
  --flow-calls N
              timed calls of the whole reproduced code-sandbox-mcp flow (default 10; each
              takes 10+ s: it waits out the stop grace period)
  --out FILE  Markdown report (default docs/benchmarks.md; with --smoke a temp file)
  --bin PATH  the code-sandbox binary (default build/bin/code-sandbox in the repo)
  --smoke     tiny counts, for CI: checks that every variant runs and answers correctly
  --engines   (run.sh) also start the engines fixture (tests/engines/engines.sh) and measure
              sustained calls/s with the main engine only and with three engines
  --engines-env FILE
              (bench.mjs) the fixture's env file: measure that section against it
  --first-run also time ./dev.sh run on a fresh Debian 12 container (bench/firstrun.sh: a fresh
              clone, packages, engine, images and app from nothing) to its first answer, last
              of all, once the machine is quiet again (about 3 minutes)
  --only realistic
              only the realistic programs' section (its latency rows, its sustained rows and
              memory): the report has the machine, that section and the loads
  --realistic-rounds N
              timed rounds of the realistic programs (default 20; smoke 1)
  --realistic-warmup N
              untimed rounds of them before (default 3; smoke 1)
  --realistic-flow-calls N
              whole code-sandbox-mcp flows per realistic program (default 1, 20+ s each; smoke 0)
  --check     (bench.mjs) only check the arguments, the binary and the image, and exit
Exit status is non-zero when any call answered wrongly, a container was left behind or a
step failed. Targets that are missed do not change the exit status.`;
}

function parseArgs(argv) {
    const o = { calls: 100, out: null, bin: path.join(ROOT, 'build/bin/code-sandbox'), smoke: false,
        enginesEnv: null, check: false, flowCalls: null, firstRun: false, only: null,
        realisticRounds: null, realisticWarmup: null, realisticFlowCalls: null };
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
        else if (a === '--flow-calls') o.flowCalls = Number(value());
        else if (a === '--engines-env') o.enginesEnv = path.resolve(value());
        else if (a === '--check') o.check = true;
        else if (a === '--first-run') o.firstRun = true;
        else if (a === '--only') o.only = value();
        else if (a === '--realistic-rounds') o.realisticRounds = Number(value());
        else if (a === '--realistic-warmup') o.realisticWarmup = Number(value());
        else if (a === '--realistic-flow-calls') o.realisticFlowCalls = Number(value());
        else if (a === '-h' || a === '--help') { console.log(usage()); process.exit(0); }
        else throw new Error(`unknown argument ${a}\n${usage()}`);
    }
    if (!Number.isInteger(o.calls) || o.calls < 1) throw new Error('--calls needs a positive integer');
    if (o.only !== null && o.only !== 'realistic') throw new Error(`--only takes "realistic", not ${JSON.stringify(o.only)}`);
    if (o.only && o.enginesEnv) throw new Error('--only realistic runs no several-engines rows: leave out --engines');
    if (o.only && o.firstRun) throw new Error('--only realistic runs no first run: leave out --first-run');
    if (o.smoke) {
        if (!argv.includes('--calls')) o.calls = 3;
        o.warmup = 1;
        o.throughputCalls = 8;
        o.sustainedWarmup = 4;
        o.sustainedWarmupRounds = 1;
        o.ceilingTrials = 1;
        o.initLaunches = 2;
        o.enginesCalls = 8;
        o.enginesConcurrency = [8];
        o.flowCalls ??= 1;
        o.burstServers = 1;      // fresh servers, one first burst each
        o.burstsAfter = 1;       // bursts per server after its first
        o.gateway = { rounds: 1, perRound: 5, warmup: 2 };
        o.requestCalls = 8;
        o.realisticRounds ??= 1;
        o.realisticWarmup ??= 1;
        o.realisticFlowCalls ??= 0;
    } else {
        o.warmup = 5;
        o.throughputCalls = 60;
        o.sustainedWarmup = 24;
        o.sustainedWarmupRounds = 6;
        o.ceilingTrials = 3;
        o.initLaunches = 10;
        o.enginesCalls = 60;
        o.enginesConcurrency = [8, 12];
        o.flowCalls ??= 10;
        o.burstServers = 3;
        o.burstsAfter = 3;
        o.gateway = { rounds: 6, perRound: 50, warmup: 5 };
        o.requestCalls = 40;
        o.realisticRounds ??= 20;
        o.realisticWarmup ??= 3;
        o.realisticFlowCalls ??= 1;
    }
    o.realisticSustainedCalls = o.throughputCalls;
    for (const [flag, v, min] of [['--realistic-rounds', o.realisticRounds, 1], ['--realistic-warmup', o.realisticWarmup, 0],
        ['--realistic-flow-calls', o.realisticFlowCalls, 0]]) {
        if (!Number.isInteger(v) || v < min) throw new Error(`${flag} needs an integer ≥ ${min}`);
    }
    o.realisticFlowCalls = Math.min(o.realisticFlowCalls, o.realisticRounds);
    if (!Number.isInteger(o.flowCalls) || o.flowCalls < 1) throw new Error('--flow-calls needs a positive integer');
    o.flowCalls = Math.min(o.flowCalls, o.calls);
    o.b2bRounds = Math.max(1, Math.ceil(o.calls / B2B_ROUND));
    o.bin = path.resolve(o.bin);
    if (!o.out) {
        o.out = o.smoke
            ? path.join(mkdtempSync(path.join(os.tmpdir(), 'code-sandbox-bench-')), 'benchmarks.md')
            : path.join(ROOT, 'docs/benchmarks.md');
    }
    o.out = path.resolve(o.out);
    return o;
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

// Whether the engine has a runtime named runsc (docker info's Runtimes).
async function engineHasRunsc() {
    try {
        return 'runsc' in JSON.parse(await docker(['info', '--format', '{{json .Runtimes}}']));
    } catch {
        return false;
    }
}

async function docker(args, { timeout = 60_000 } = {}) {
    const { stdout } = await execFileP(DOCKER, args, { timeout, maxBuffer: 1 << 20 });
    return stdout;
}

/** Containers with `label` on the default engine, or on the engine at `host` (docker -H). */
async function containersWithLabel(label, host) {
    const out = await docker([...(host ? ['-H', host] : []), 'ps', '-a', '--filter', `label=${label}`,
        '--format', '{{.ID}}\t{{.State}}\t{{.Label "code-sandbox.language"}}\t{{.Label "code-sandbox.gateway-of"}}']);
    // An allow-list server's egress gateway carries the server's pid too; it is no sandbox.
    return out.split('\n').filter(Boolean).map((line) => {
        const [id, state, language, gatewayOf] = line.split('\t');
        return { id, state, language, gatewayOf };
    }).filter((c) => !c.gatewayOf).map(({ id, state, language }) => ({ id, state, language }));
}

/**
 * The containers with `label` on the default engine, read from the Engine API over its unix
 * socket: cheap enough to poll inside a timed row, where a docker CLI launch would add tens of ms
 * of CPU each time. Falls back to the CLI when the engine is not a local socket.
 */
function engineContainers(label) {
    const host = process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
    if (!host.startsWith('unix://')) return containersWithLabel(label);
    const filters = encodeURIComponent(JSON.stringify({ label: [label] }));
    return new Promise((resolve, reject) => {
        const req = http.get({ socketPath: host.slice('unix://'.length), path: `/containers/json?all=1&filters=${filters}` }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk) => { body += chunk; });
            res.on('end', () => {
                try {
                    resolve(JSON.parse(body).filter((c) => !c.Labels?.['code-sandbox.gateway-of'])
                        .map((c) => ({ id: c.Id.slice(0, 12), state: c.State, language: c.Labels?.['code-sandbox.language'] })));
                } catch (e) {
                    reject(new Error(`engine answered ${res.statusCode}: ${body.slice(0, 200)}`));
                }
            });
        });
        req.on('error', reject);
    });
}

/** CPU time the whole machine has spent (every core, all processes, kernel included), in ms. */
function machineCpuMs() {
    const v = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: all but idle and iowait, in USER_HZ (100/s).
    return (v.slice(0, 8).reduce((a, b) => a + b, 0) - v[3] - v[4]) * 10;
}

/**
 * Waits until the server's sandboxes are back where a row found them: exactly the pool's size
 * (poolTarget: what its log says it aims at now), every one running (refilled and started; the
 * used ones removed: one waits, running and idle, for a quiet moment before its removal), and the
 * same ones for STABLE_MS.
 * Resolves to the time it took, in ms, without the STABLE_MS: when the pool was first seen so.
 */
async function backToStart(server, timeoutMs = 120_000) {
    const STABLE_MS = 250;
    const t0 = now();
    let since = null;
    let key = '';
    while (now() - t0 < timeoutMs) {
        const t = now();
        const cs = await engineContainers(server.label);
        const k = cs.map((c) => c.id).sort().join(',');
        // The pool's size now (it may have grown over the row); more containers than that are
        // used ones still waiting for their removal, which is part of the row's work.
        if (cs.length === poolTarget(server) && cs.every((c) => c.state === 'running')) {
            if (since === null || k !== key) since = t;
            if (now() - since >= STABLE_MS) return since - t0;
        } else {
            since = null;
        }
        key = k;
        // (Every poll is a request the engine serves, on the CPUs the row is measuring.)
        await sleep(50);
    }
    problem(`the server's sandboxes (${server.label}) were not back to ${poolTarget(server)} running within ${timeoutMs / 1000} s`);
    return NaN;
}

/**
 * The untimed warm-up of a sustained row: rounds of `opts.sustainedWarmup` calls at the row's
 * concurrency, one right after the other, until a round no longer grows the pool (the pool has
 * learnt the demand: what it keeps under this load), at most `opts.sustainedWarmupRounds`; then
 * the pool settles. Without it the timed row would pay for growing the pool, sandboxes that no
 * call of the row uses (a row's 60 calls grew a 24-call warm-up's pool by 8). `call` (default:
 * print(1)) makes one call. Resolves to { calls, count }: the warm-up's calls, and the server's
 * sandboxes once settled.
 */
async function warmToSteady(server, concurrency, what, opts, call = undefined) {
    let calls = 0;
    for (let round = 1; round <= opts.sustainedWarmupRounds; round++) {
        const before = poolTarget(server);
        await throughput(server.client, concurrency, opts.sustainedWarmup, server.pid, false, `${what}, round ${round}`,
            null, call);
        calls += opts.sustainedWarmup;
        // The growth is logged when a call takes its sandbox, before its answer; the stderr chunk
        // may still be on its way.
        await sleep(100);
        if (poolTarget(server) === before) break;
    }
    const count = await settle(server, { pooled: true, exact: true });
    log(`${what}: ${calls} calls, the pool aims at ${poolTarget(server)} (${count} sandboxes)`);
    return { calls, count };
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
    // language -> size the pool grew to ("pool: <lang> grows to N"): what a refill aims at.
    const grown = new Map();
    transport.stderr.on('data', (chunk) => {
        stderr += chunk.toString();
        for (const m of stderr.matchAll(/pool: (\d+) (\w+) sandbox\(es\) warm after \d+ ms(?: on (\S+))?[^\n]*\n/g)) {
            warm.set(m[2], Number(m[1]));
            warmAt.set(`${m[2]} ${m[3] ?? ''}`, Number(m[1]));
        }
        for (const m of stderr.matchAll(/pool: (\w+) grows to (\d+)/g)) grown.set(m[1], Number(m[2]));
    });
    const client = new Client({ name: 'code-sandbox-bench', version: '1.0.0' });
    const t0 = now();
    await client.connect(transport);   // spawn + initialize request + initialize result
    const initMs = now() - t0;
    const pid = transport.pid;
    let closed = false;
    const server = {
        client, pid, initMs, warm, warmAt, grown, hosts,
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
async function settle(server, { pooled, quick = false, exact = false, timeoutMs = 180_000 }) {
    const deadline = Date.now() + timeoutMs;
    const engines = server.hosts.length;
    const pythonWarm = () => [...server.warmAt.keys()].filter((k) => k.startsWith('python ')).length;
    if (pooled) {
        while (pythonWarm() < engines && Date.now() < deadline) await sleep(50);
        if (pythonWarm() < engines) log(`"pool ... warm" seen for python on ${pythonWarm()} of ${engines} engine(s); continuing`);
    }
    let previous = '';
    let stable = 0;
    while (Date.now() < deadline) {
        const expected = poolTarget(server);
        const cs = (await Promise.all(server.hosts.map((h) => containersWithLabel(server.label, h)))).flat();
        const key = cs.map((c) => `${c.id}:${c.state}`).sort().join(',');
        // (A session's container is there too; a used sandbox waits, running and idle, for its
        // removal at a quiet moment, which changes the set when it goes.)
        // With `exact` (a server without sessions), only the pool: the used ones are gone.
        const quiet = cs.every((c) => c.state === 'running') &&
            (!pooled || (exact ? cs.length === expected : cs.length >= expected));
        stable = quiet && key === previous ? stable + 1 : 0;
        previous = key;
        // The pool's own size: a container beyond it is a session's or a used one.
        if (stable >= (quick ? 1 : 3)) return pooled ? Math.min(cs.length, expected) : cs.length;
        await sleep(quick ? 100 : 200);
    }
    log('the server did not become quiet within the time allowed; continuing');
    return NaN;
}

/**
 * What the server's pool aims at, from its own log: what each language announced warm, or what
 * it grew to since (a grown pool is refilled up to its new size). With several engines, the
 * announcements. A container of the server's beyond this is a used one waiting for removal.
 */
function poolTarget(server) {
    if (server.hosts.length > 1) return [...server.warmAt.values()].reduce((a, b) => a + b, 0);
    let n = 0;
    for (const [k, v] of server.warmAt) n += Math.max(v, server.grown.get(k.split(' ')[0]) ?? 0);
    return n;
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

// ---------------------------------------------------------------- HTTPS through the gateway

// The world of the gateway row: an HTTPS server of the bench's own on this machine's outward
// address (not loopback, which a container cannot reach), with a certificate for
// WORLD_HOST from a CA made for the run, which the programs trust. Each answers "ok".
const WORLD_HOST = 'bench-world.test';

function outwardAddress() {
    const all = Object.values(os.networkInterfaces()).flat()
        .filter((a) => a.family === 'IPv4' && !a.internal);
    return (all.find((a) => !a.address.startsWith('172.')) ?? all[0])?.address;
}

async function startWorld() {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'code-sandbox-bench-tls-'));
    const openssl = (args) => execFileP('openssl', args, { cwd: dir });
    writeFileSync(path.join(dir, 'ext'), `subjectAltName=DNS:${WORLD_HOST}\n`);
    await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem',
        '-days', '2', '-subj', '/CN=code-sandbox bench CA']);
    await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr',
        '-subj', `/CN=${WORLD_HOST}`]);
    await openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
        '-out', 'server.pem', '-days', '2', '-extfile', 'ext']);
    const read = (f) => readFileSync(path.join(dir, f));
    const server = https.createServer({ key: read('server.key'), cert: read('server.pem') }, (req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' });
        res.end('ok');
    });
    const address = outwardAddress();
    if (!address) throw new Error('the machine has no non-loopback IPv4 address for the gateway row');
    await new Promise((resolve, reject) => server.listen(0, '0.0.0.0', resolve).once('error', reject));
    const ca = read('ca.pem').toString();
    rmSync(dir, { recursive: true, force: true });
    return { server, address, port: server.address().port, ca, close: () => new Promise((r) => server.close(r)) };
}

// A Python program that makes `count` HTTPS requests to the world, each on a new connection (TCP,
// TLS handshake, request, answer), and prints their times in ms. urllib takes HTTPS_PROXY from
// the environment: through the gateway in a sandbox of the allow-list mode, straight out on
// the bridge.
function worldProgram(world, count) {
    // Name lookups are cached (the first is in the warm-up): the bridge side would otherwise pay
    // for its image's resolver order on each request, which the sandbox (it connects to the
    // gateway's address) never does.
    return `import json, socket, ssl, time, urllib.request
lookups = {}
lookup = socket.getaddrinfo
def cached(*args, **kwargs):
    key = (args, tuple(sorted(kwargs.items())))
    if key not in lookups:
        lookups[key] = lookup(*args, **kwargs)
    return lookups[key]
socket.getaddrinfo = cached
ctx = ssl.create_default_context(cadata=${JSON.stringify(world.ca)})
url = "https://${WORLD_HOST}:${world.port}/"
times = []
for i in range(${count}):
    t = time.perf_counter()
    body = urllib.request.urlopen(url, context=ctx, timeout=15).read()
    times.append((time.perf_counter() - t) * 1000)
    assert body == b"ok", body
print(json.dumps(times))
`;
}

/**
 * The time an HTTPS request through the egress gateway adds: the same program, timing its own
 * requests, in a sandbox of the allow-list server (through the gateway: CONNECT, the gateway's
 * name and SNI checks, its own connection out) and in a container on the engine's bridge (its
 * own connection out), in alternating rounds; the first few requests of each round are warm-up.
 */
async function gatewayHttps(server, world, { rounds, perRound, warmup }) {
    const program = worldProgram(world, perRound + warmup);
    const through = [];
    const bridge = [];
    let failures = 0;
    const details = [];
    const parse = (text, into, what) => {
        try {
            const times = JSON.parse(text.trim().split('\n').pop());
            if (!Array.isArray(times) || times.length !== perRound + warmup) throw new Error('wrong count');
            into.push(...times.slice(warmup));
        } catch (e) {
            failures += 1;
            details.push(`${what}: ${String(text).slice(0, 300)}`);
        }
    };
    for (let round = 0; round < rounds; round++) {
        const r = await server.client.callTool({ name: 'run_python_code', arguments: { code: program } },
            undefined, { timeout: 120_000 }).catch((e) => ({ isError: true, content: [{ text: String(e.message ?? e) }] }));
        const sc = r.structuredContent ?? {};
        if (r.isError || sc.exit_code !== 0) {
            failures += 1;
            details.push(`through the gateway: ${JSON.stringify(r).slice(0, 300)}`);
        } else {
            parse(sc.stdout, through, 'through the gateway');
        }
        const out = await docker(['run', '--rm', '--label', `${BENCH_LABEL}=${RUN_ID}`, '--network', 'bridge',
            '--add-host', `${WORLD_HOST}:${world.address}`, '--user', '1000:1000',
            // The sandbox's default limits, so that only the path differs.
            '--cpus', '1', '--memory', '512m', '--read-only', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
            IMAGE, 'python3', '-c', program],
        { timeout: 120_000 }).catch((e) => `ERR ${e.message}`);
        parse(out, bridge, 'on the bridge');
    }
    const t = summarize(through);
    const b = summarize(bridge);
    return { through: t, bridge: b, addsMs: t.p50 - b.p50, failures, details };
}

// ---------------------------------------------------------------- the peers' flows (peers.py)

/**
 * The long-lived Python helper (peers.py, Docker SDK for Python from Debian) that runs the flows
 * of the projects users move from, one request at a time, answers in order.
 */
function startPeers() {
    const child = spawn(PEERS_PYTHON, [path.join(HERE, 'peers.py')], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => { stderr += c.toString(); });
    const waiting = [];
    const lines = readline.createInterface({ input: child.stdout });
    lines.on('line', (line) => {
        const w = waiting.shift();
        if (!w) return;
        try { w.resolve(JSON.parse(line)); } catch (e) { w.reject(e); }
    });
    child.on('exit', (code) => {
        for (const w of waiting.splice(0)) w.reject(new Error(`peers.py exited (${code}): ${stderr.slice(-400)}`));
    });
    let chain = Promise.resolve();
    const request = (op, extra = {}) => {
        const next = chain.then(() => new Promise((resolve, reject) => {
            waiting.push({ resolve, reject });
            child.stdin.write(`${JSON.stringify({ op, ...extra })}\n`);
        }));
        chain = next.catch(() => {});
        return next;
    };
    return {
        request,
        async close() {
            if (child.exitCode !== null) return;
            child.stdin.write('{"op": "quit"}\n');
            child.stdin.end();
            await new Promise((resolve) => {
                const t = setTimeout(() => { child.kill('SIGTERM'); resolve(); }, 60_000);
                child.once('exit', () => { clearTimeout(t); resolve(); });
            });
        },
    };
}

/**
 * One flow of peers.py, timed by this process's clock (the pipe round trip included); `extra`: the
 * request's program ({ code, expect, plot }; default print(1)).
 */
async function callPeer(peers, op, extra = {}) {
    const t0 = now();
    try {
        const r = await peers.request(op, extra);
        return { ok: r.ok === true, ms: now() - t0, parts: r.parts, setup: r.setup,
            detail: r.ok ? '' : `${r.detail} ${r.trace ?? ''}`.slice(0, 600) };
    } catch (e) {
        return { ok: false, ms: now() - t0, detail: String(e.message ?? e).slice(0, 300) };
    }
}

// ---------------------------------------------------------------- docker CLI context rows

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

/** "POST /v1.41/containers/3f0c…/start?x=1" → "POST /containers/{id}/start": one kind per request. */
function requestKind(method, target) {
    const p = target.split('?')[0].replace(/^\/v\d+(\.\d+)?(?=\/)/, '');
    const parts = p.split('/');
    // An image's name has slashes of its own: /images/code-sandbox/python:latest/json.
    if (parts[1] === 'images' && parts.length > 3) return `${method} /images/{name}/${parts[parts.length - 1]}`;
    // /containers/ID/..., /volumes/NAME, /networks/ID/..., /exec/ID/...
    if (['containers', 'volumes', 'networks', 'exec', 'images'].includes(parts[1]) && parts.length > 2 &&
        !['create', 'json', 'prune'].includes(parts[2])) parts[2] = '{id}';
    return `${method} ${parts.join('/')}`;
}

/**
 * A Unix socket in front of the engine's that counts the HTTP requests going through it, by kind
 * (requestKind), and passes every byte on unchanged. A request's body is skipped by its
 * Content-Length; after an upgrade (attach) the connection is the container's stream, not HTTP.
 */
async function startEngineCounter() {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-bench-count-'));
    const socketPath = path.join(dir, 'engine.sock');
    const counts = new Map();
    const server = net.createServer((client) => {
        const engine = net.connect(engineSocket());
        let buffer = Buffer.alloc(0);
        let skip = 0;        // body bytes still to pass
        let raw = false;     // upgraded: no more requests on this connection
        client.on('data', (chunk) => {
            engine.write(chunk);
            if (raw) return;
            buffer = Buffer.concat([buffer, chunk]);
            for (;;) {
                if (skip > 0) {
                    const n = Math.min(skip, buffer.length);
                    buffer = buffer.subarray(n);
                    skip -= n;
                    if (skip > 0) return;
                }
                const end = buffer.indexOf('\r\n\r\n');
                if (end < 0) return;
                const head = buffer.subarray(0, end).toString('latin1').split('\r\n');
                buffer = buffer.subarray(end + 4);
                const [method, target] = head[0].split(' ');
                const kind = requestKind(method, target ?? '');
                counts.set(kind, (counts.get(kind) ?? 0) + 1);
                const header = (name) => head.find((h) => h.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
                if (header('upgrade') || /\/attach$/.test(kind)) { raw = true; return; }
                skip = Number(header('content-length') ?? 0);
            }
        });
        engine.on('data', (chunk) => client.write(chunk));
        const both = () => { client.destroy(); engine.destroy(); };
        client.on('close', both);
        engine.on('close', both);
        client.on('error', both);
        engine.on('error', both);
    });
    await new Promise((resolve, reject) => server.listen(socketPath, resolve).on('error', reject));
    return {
        host: `unix://${socketPath}`,
        snapshot: () => new Map(counts),
        async close() {
            await new Promise((resolve) => server.close(resolve));
            rmSync(dir, { recursive: true, force: true });
        },
    };
}

/** after − before, per kind, divided by `per`. */
function requestsPer(before, after, per) {
    const out = {};
    for (const [kind, n] of after) {
        const d = n - (before.get(kind) ?? 0);
        if (d > 0) out[kind] = d / per;
    }
    return out;
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
    const acc = variants.map(() => ({ samples: [], serverMs: [], parts: {}, failures: 0, warmFailures: 0, made: 0 }));
    for (const [k, v] of variants.entries()) {
        const n = v.warmup ?? warmup;
        log(`${v.name}: ${n} warm-up calls`);
        for (let i = 0; i < n; i++) {
            if (v.before) await v.before();
            if (!(await v.call()).ok) acc[k].warmFailures++;
        }
    }
    log(`${calls} rounds of ${variants.length} timed calls, interleaved`);
    for (let i = 0; i < calls; i++) {
        for (let j = 0; j < variants.length; j++) {
            const k = (i + j) % variants.length;
            const v = variants[k];
            // A slow variant (v.every > 1) takes part in every v.every-th round only.
            if (v.every && i % v.every !== 0) continue;
            if (v.before) await v.before();
            const r = await v.call();
            record(acc[k], v.name, r, i);
            acc[k].made++;
        }
        if ((i + 1) % 10 === 0) log(`round ${i + 1} of ${calls}`);
    }
    return variants.map((v, k) => finishVariant(v, acc[k], acc[k].made, v.warmup ?? warmup));
}

/**
 * Back-to-back calls in rounds of B2B_ROUND, each call sent as soon as the previous answered,
 * each round after the pool refilled (untimed wait). The first round is the pool's first such
 * burst (at its base size) and is reported on its own; `rounds` more rounds follow, which find a
 * pool that has seen such a burst. Returns [first round, later rounds].
 */
async function backToBackRounds(server, rounds) {
    const first = { key: 'b2bFirst', name: `ours, pooled, ${B2B_ROUND} back-to-back: first round (pool at its base)` };
    const later = { key: 'pooled', name: `ours, pooled, ${B2B_ROUND} back-to-back: ${rounds} round(s) after the pool has seen one` };
    const acc = [first, later].map(() => ({ samples: [], serverMs: [], parts: {}, failures: 0, warmFailures: 0 }));
    const roundP50 = [];
    for (let r = 0; r <= rounds; r++) {
        await settle(server, { pooled: true });
        const a = acc[r === 0 ? 0 : 1];
        const mine = [];
        for (let i = 0; i < B2B_ROUND; i++) {
            const res = await callOurs(server.client);
            record(a, r === 0 ? first.name : later.name, res, i);
            if (res.ok) mine.push(res.ms);
        }
        if (r > 0) roundP50.push(summarize(mine).p50);
        log(`back-to-back round ${r} of ${rounds}: p50 ${ms(summarize(mine).p50)} ms, pool now ` +
            `${server.grown.get('python') ?? 'at its base'}`);
    }
    return [finishVariant(first, acc[0], B2B_ROUND, 0),
        { ...finishVariant(later, acc[1], B2B_ROUND * rounds, 0), roundP50 }];
}

/**
 * Bursts of BURST calls sent at once, each after the pool is warm and the engine quiet; each
 * call's latency from the moment the burst was sent. On each of `servers` fresh servers: one
 * burst at the base pool, then `after` bursts once the pool has seen one.
 */
async function bursts(bin, servers, after) {
    const first = { key: 'burstFirst', name: `ours, pooled, burst of ${BURST} at once: first burst (pool at its base)` };
    const later = { key: 'burst', name: `ours, pooled, burst of ${BURST} at once: after the pool has seen one` };
    const acc = [first, later].map(() => ({ samples: [], serverMs: [], parts: {}, failures: 0, warmFailures: 0 }));
    // Each fresh server is a trial of its own: the p50 of its bursts after the first, so that a
    // target is met in every trial, not only by the samples of all of them together.
    const trials = [];
    for (let s = 0; s < servers; s++) {
        const server = await startServer(bin, []);
        const trial = [];
        try {
            for (let b = 0; b <= after; b++) {
                await settle(server, { pooled: true, exact: true });
                const a = acc[b === 0 ? 0 : 1];
                const results = await Promise.all(Array.from({ length: BURST }, () => callOurs(server.client)));
                results.forEach((res, i) => record(a, b === 0 ? first.name : later.name, res, i));
                if (b > 0) trial.push(...results.filter((x) => x.ok).map((x) => x.ms));
                log(`burst ${b} on server ${s}: p50 ${ms(summarize(results.map((x) => x.ms)).p50)} ms, ` +
                    `max ${ms(Math.max(...results.map((x) => x.ms)))} ms`);
            }
        } finally {
            await server.close();
        }
        if (trial.length) trials.push(summarize(trial).p50);
        await ensureNoContainers(server.label, 'ours, bursts');
    }
    return [finishVariant(first, acc[0], BURST * servers, 0),
        { ...finishVariant(later, acc[1], BURST * servers * after, 0), trialP50: trials }];
}

function record(a, name, r, i) {
    if (r.ok) {
        a.samples.push(r.ms);
        if (Number.isFinite(r.serverMs)) a.serverMs.push(r.serverMs);
        for (const [step, v] of Object.entries(r.parts ?? {})) (a.parts[step] ??= []).push(v);
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
    const parts = Object.entries(a.parts ?? {}).map(([step, xs]) => [step, summarize(xs).p50]);
    return {
        key: v.key, name: v.name, context: v.context ?? false, ...s, failures: a.failures, calls,
        server: a.serverMs.length ? summarize(a.serverMs) : null, parts,
    };
}

/**
 * `total` calls with `concurrency` in flight on one client; `call` (default: print(1) checked by
 * callOurs) makes one. With `settleTo` ({ server, idle }) the clock runs until the server's
 * sandboxes are back to the start (and, with `idle`, until they use no more CPU: poolIdle).
 */
async function throughput(client, concurrency, total, pid, sampleRss, what = `concurrency ${concurrency}`,
    settleTo = null, call = () => callOurs(client)) {
    let next = 0;
    let ok = 0;
    let failures = 0;
    const engines = new Map();   // structuredContent.engine of the correct answers -> count
    let peakKb = 0;
    const timer = sampleRss ? setInterval(() => {
        try { peakKb = Math.max(peakKb, rssKb(pid)); } catch { /* process gone */ }
    }, 50) : null;
    if (sampleRss) peakKb = rssKb(pid);
    const cpu0 = machineCpuMs();
    const t0 = now();
    const worker = async () => {
        while (next < total) {
            next++;
            const r = await call();
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
    // The whole work of the row: until the pool is as full as the row found it and the used
    // sandboxes are gone, so that sandboxes made before the clock started do not count as speed.
    let settledMs = null;
    if (settleTo) settledMs = wallMs + await backToStart(settleTo.server);
    if (settleTo?.idle) {
        const idle = await poolIdle(settleTo.server);
        if (!Number.isFinite(idle.ms)) problem(`${what}: the server's sandboxes did not come to rest (CPU) after the row`);
        settledMs += idle.ms;
    }
    const cpuPerCall = (machineCpuMs() - cpu0) / total;
    const perSecSettled = settledMs ? (ok / settledMs) * 1000 : null;
    log(`${what}: ${total} calls in ${ms(wallMs)} ms = ${perSec.toFixed(2)} calls/s` +
        (settledMs ? `, back to the start in ${ms(settledMs)} ms = ${perSecSettled.toFixed(2)} calls/s` : '') +
        `, machine CPU ${cpuPerCall.toFixed(0)} ms/call, ${failures} failed`);
    return { concurrency, total, ok, failures, wallMs, perSec, settledMs, perSecSettled, cpuPerCall, engines,
        peakKb: sampleRss ? peakKb : null };
}

// ---------------------------------------------------------------- realistic programs (issue 54)

// Five programs as assistants write them, each run with run_python_code and the server's
// defaults. Every answer is checked: exit status 0, exactly this stdout (the text content too),
// and for the two that plot a PNG returned as an image content item.
const SNIPPETS = [
    { key: 'print', name: '`print(1)`', code: 'print(1)', stdout: '1\n' },
    { key: 'numpy', name: 'numpy: the sum of an array', stdout: '499500\n', code: [
        'import numpy as np',
        '',
        'arr = np.arange(1000)',
        'print(arr.sum())',
    ].join('\n') },
    { key: 'pandas', name: 'pandas: a 1,000-row DataFrame, a column\'s sum', stdout: '249750.0\n', code: [
        'import pandas as pd',
        'import numpy as np',
        '',
        'df = pd.DataFrame({',
        '    "id": np.arange(1000),',
        '    "value": np.arange(1000) * 0.5,',
        '})',
        'print(df["value"].sum())',
    ].join('\n') },
    { key: 'matplotlib', name: 'matplotlib: a line plot, shown (PNG)', stdout: '', image: true, code: [
        'import matplotlib.pyplot as plt',
        '',
        'x = [1, 2, 3, 4, 5]',
        'y = [2, 4, 6, 8, 10]',
        '',
        'plt.plot(x, y, marker="o")',
        'plt.title("Simple line plot")',
        'plt.xlabel("x")',
        'plt.ylabel("y")',
        'plt.show()',
    ].join('\n') },
    { key: 'dfplot', name: 'pandas + `df.plot()`, shown (PNG)', stdout: '', image: true, code: [
        'import pandas as pd',
        'import matplotlib.pyplot as plt',
        '',
        'df = pd.DataFrame({',
        '    "month": ["Jan", "Feb", "Mar", "Apr", "May", "Jun"],',
        '    "sales": [120, 135, 150, 145, 160, 175],',
        '})',
        'df.plot(x="month", y="sales", kind="line", title="Monthly sales")',
        'plt.show()',
    ].join('\n') },
];
const SNIPPET = Object.fromEntries(SNIPPETS.map((s) => [s.key, s]));
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
// issue 54: a fresh sandbox's p50 within 1.5× a live session's p50 + 40 ms, per program.
const REALISTIC_TARGET = { factor: 1.5, plusMs: 40 };
const FLOWS = {
    fresh: 'ours, fresh sandbox (pooled, pool refilled and idle before each call)',
    live: 'ours, a call in a live session (imports done by its earlier calls)',
    lean: 'a container per call, lower bound (Engine API: create, start, put_archive, exec, remove)',
    whole: 'code-sandbox-mcp / llm-sandbox per call (the whole flow)',
};

/** What is wrong with our answer to `snippet` ('' when nothing is). */
function wrongAnswer(r, snippet) {
    const sc = r.structuredContent ?? {};
    const content = r.content ?? [];
    if (r.isError === true) return 'isError';
    if (sc.exit_code !== 0) return `exit status ${sc.exit_code}`;
    if (sc.stdout !== snippet.stdout) return `stdout ${JSON.stringify(sc.stdout)}`;
    if (snippet.image) {
        const png = content.filter((c) => c.type === 'image' && c.mimeType === 'image/png' &&
            Buffer.from(c.data ?? '', 'base64').subarray(0, 8).equals(PNG_SIGNATURE));
        if (png.length === 0) return 'no PNG image in the content';
    } else if (content[0]?.text !== snippet.stdout) {
        return `text content ${JSON.stringify(content[0]?.text)}`;
    }
    return '';
}

/** One run_python_code call of `snippet` (in the session `sessionId` when given), checked. */
async function callSnippet(client, snippet, sessionId) {
    const t0 = now();
    const args = sessionId ? { code: snippet.code, session_id: sessionId } : { code: snippet.code };
    try {
        const r = await client.callTool({ name: 'run_python_code', arguments: args }, undefined, { timeout: 120_000 });
        const elapsed = now() - t0;
        const wrong = wrongAnswer(r, snippet);
        const shown = { ...r, content: (r.content ?? []).map((c) => (c.type === 'image' ? { type: 'image', mimeType: c.mimeType, bytes: c.data?.length } : c)) };
        return { ok: !wrong, ms: elapsed, serverMs: r.structuredContent?.duration_ms,
            detail: wrong ? `${wrong}: ${JSON.stringify(shown).slice(0, 400)}` : '' };
    } catch (e) {
        return { ok: false, ms: now() - t0, detail: String(e.message ?? e).slice(0, 300) };
    }
}

/** The request peers.py gets for `snippet`. */
const peerProgram = (snippet) => ({ code: snippet.code, expect: snippet.stdout, plot: Boolean(snippet.image) });

/** The server's containers, with their full ids, from the Engine API (the gateway left out). */
async function serverContainers(server) {
    const filters = encodeURIComponent(JSON.stringify({ label: [server.label] }));
    const r = await engineRequest('GET', `/containers/json?all=1&filters=${filters}`);
    if (r.status !== 200) throw new Error(`engine answered ${r.status}: ${r.body.toString().slice(0, 200)}`);
    return JSON.parse(r.body).filter((c) => !c.Labels?.['code-sandbox.gateway-of'])
        .map((c) => ({ id: c.Id, state: c.State, language: c.Labels?.['code-sandbox.language'] }));
}

/**
 * A container's cgroup, read from /sys/fs/cgroup (the engine on this machine): v2 (systemd or
 * cgroupfs driver) or v1 (the memory and cpuacct hierarchies). null when it is not there (another
 * layout, or an engine elsewhere).
 */
function cgroupOf(id) {
    for (const d of [`/sys/fs/cgroup/system.slice/docker-${id}.scope`, `/sys/fs/cgroup/docker/${id}`]) {
        if (existsSync(`${d}/memory.current`)) return { v2: true, memory: d, cpu: d };
    }
    const find = (controllers) => {
        for (const c of controllers) {
            for (const d of [`/sys/fs/cgroup/${c}/docker/${id}`, `/sys/fs/cgroup/${c}/system.slice/docker-${id}.scope`]) {
                if (existsSync(d)) return d;
            }
        }
        return null;
    };
    const memory = find(['memory']);
    const cpu = find(['cpuacct', 'cpu,cpuacct']);
    return memory && cpu ? { v2: false, memory, cpu } : null;
}

const statField = (text, name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);

/** CPU time the container has used, in ns. */
function cgroupCpuNs(cg) {
    if (cg.v2) return statField(readFileSync(`${cg.cpu}/cpu.stat`, 'utf8'), 'usage_usec') * 1000;
    return Number(readFileSync(`${cg.cpu}/cpuacct.usage`, 'utf8'));
}

/**
 * A container's memory in bytes: `usage` is the cgroup's whole charge (memory.current, v1
 * memory.usage_in_bytes: anonymous memory, page cache, kernel memory), `anon` its anonymous
 * memory (memory.stat anon, v1 total_rss): the processes' own heaps, what a loaded module costs.
 * Without the cgroup files, the Engine API's stats (one-shot).
 */
async function containerMemory(id) {
    const cg = cgroupOf(id);
    if (cg) {
        const stat = readFileSync(`${cg.memory}/memory.stat`, 'utf8');
        if (cg.v2) return { usage: Number(readFileSync(`${cg.memory}/memory.current`, 'utf8')), anon: statField(stat, 'anon') };
        return { usage: Number(readFileSync(`${cg.memory}/memory.usage_in_bytes`, 'utf8')), anon: statField(stat, 'total_rss') };
    }
    const r = await engineRequest('GET', `/containers/${id}/stats?stream=false&one-shot=true`);
    const m = JSON.parse(r.body).memory_stats ?? {};
    return { usage: m.usage ?? NaN, anon: m.stats?.anon ?? m.stats?.total_rss ?? m.stats?.rss ?? NaN };
}

/**
 * Waits until the server's running containers use no CPU: together less than 2 ms over 200 ms (a
 * warm sandbox waits for its program on a read), the same containers as the poll before. A
 * sandbox may still be loading what its pool prepares (modules the calls import) after it runs;
 * this is the pool at rest, as when a model thinks between calls. Without the cgroup files: a
 * pause of 1 s. Resolves to { ms } (the time until the first idle interval began).
 */
async function poolIdle(server, timeoutMs = 30_000) {
    const INTERVAL_MS = 200;
    const QUIET_NS = 2e6;
    const t0 = now();
    let previous = null;
    while (now() - t0 < timeoutMs) {
        const t = now();
        let sample = null;
        try {
            const cs = (await serverContainers(server)).filter((c) => c.state === 'running');
            const groups = cs.map((c) => [c.id, cgroupOf(c.id)]);
            if (groups.some(([, g]) => !g)) {
                await sleep(1000);
                return { ms: now() - t0, measured: false };
            }
            sample = new Map(groups.map(([id, g]) => [id, cgroupCpuNs(g)]));
        } catch {
            sample = null;   // a container went between the listing and its files: poll again
        }
        if (sample && previous && sample.size === previous.size && [...sample.keys()].every((k) => previous.map.has(k))) {
            let used = 0;
            for (const [k, v] of sample) used += v - previous.map.get(k);
            if (used < QUIET_NS) return { ms: Math.max(0, previous.t - t0), measured: true };
        }
        previous = sample ? { map: sample, size: sample.size, t } : null;
        await sleep(INTERVAL_MS);
    }
    log(`the sandboxes of ${server.label} still used CPU after ${timeoutMs / 1000} s; continuing`);
    return { ms: NaN, measured: true };
}

/**
 * Memory of the server's warm python sandboxes, idle: once the pool is back to its size, every
 * sandbox running and none using CPU (poolIdle). Per sandbox: p50, min and max of `usage` and
 * `anon` (containerMemory), and the sum over all of them.
 */
async function warmSandboxMemory(server, what) {
    await settle(server, { pooled: true, exact: true });
    await poolIdle(server);
    const cs = (await serverContainers(server)).filter((c) => c.state === 'running' && c.language === 'python');
    const mem = [];
    for (const c of cs) mem.push(await containerMemory(c.id).catch(() => ({ usage: NaN, anon: NaN })));
    const usage = summarize(mem.map((x) => x.usage).filter(Number.isFinite));
    const anon = summarize(mem.map((x) => x.anon).filter(Number.isFinite));
    const total = mem.reduce((a, x) => a + (Number.isFinite(x.usage) ? x.usage : 0), 0);
    const source = cs.length && cgroupOf(cs[0].id) ? 'cgroup' : 'Engine API stats';
    log(`${what}: ${cs.length} warm python sandbox(es), memory per sandbox p50 ${mib(usage.p50)} MiB ` +
        `(anonymous ${mib(anon.p50)} MiB), ${mib(total)} MiB in all (${source})`);
    return { what, n: cs.length, usage, anon, total, source };
}
const mib = (bytes) => (Number.isFinite(bytes) ? (bytes / 1048576).toFixed(1) : '–');

/**
 * The realistic programs, three flows each, interleaved (one call in flight): our fresh sandbox
 * (a pooled server of its own; before each call, untimed, its pool refilled and idle), a call in
 * a live session (another server, one python session), and the per-call container flow of the
 * tools users move from (peers.py: the lower bound every round, the whole flow in one round of
 * every few). First `realisticWarmup` untimed rounds of all programs and flows but the whole flow:
 * the fresh server sees the programs the calls bring (what they import) before the timing, and the
 * session has imported what they use. Then `realisticRounds` timed rounds, each starting with a
 * different (program, flow), as interleavedLatency does.
 */
async function realisticLatency(opts, peers) {
    const fresh = await startServer(opts.bin, []);
    const live = await startServer(opts.bin, []);
    let sessionId = null;
    let rows = null;
    let memory = null;
    try {
        await settle(fresh, { pooled: true });
        await settle(live, { pooled: true });
        const created = await live.client.callTool({ name: 'create_session', arguments: { language: 'python' } });
        sessionId = created.structuredContent?.session_id;
        if (!sessionId) throw new Error(`create_session failed: ${JSON.stringify(created).slice(0, 300)}`);
        const flowEvery = opts.realisticFlowCalls > 0 ? Math.max(1, Math.ceil(opts.realisticRounds / opts.realisticFlowCalls)) : 0;
        const variants = [];
        for (const s of SNIPPETS) {
            variants.push(
                { snippet: s, flow: 'fresh', call: () => callSnippet(fresh.client, s),
                    before: async () => { await settle(fresh, { pooled: true, quick: true }); await poolIdle(fresh); } },
                { snippet: s, flow: 'live', call: () => callSnippet(live.client, s, sessionId) },
                { snippet: s, flow: 'lean', call: () => callPeer(peers, 'lean', peerProgram(s)) });
            if (flowEvery) variants.push({ snippet: s, flow: 'whole', call: () => callPeer(peers, 'flow', peerProgram(s)), every: flowEvery, warmup: false });
        }
        for (const v of variants) {
            v.key = `${v.snippet.key}:${v.flow}`;
            v.name = `${v.snippet.name}: ${FLOWS[v.flow]}`;
        }
        const acc = variants.map(() => ({ samples: [], serverMs: [], parts: {}, failures: 0, warmFailures: 0, made: 0, warmMade: 0 }));
        const order = (i, j) => (i + j) % variants.length;
        for (let i = 0; i < opts.realisticWarmup; i++) {
            for (let j = 0; j < variants.length; j++) {
                const k = order(i, j);
                const v = variants[k];
                if (v.warmup === false) continue;
                if (v.before) await v.before();
                const r = await v.call();
                acc[k].warmMade++;
                if (!r.ok) {
                    acc[k].warmFailures++;
                    log(`${v.name}: warm-up call failed: ${r.detail}`);
                }
            }
            log(`realistic programs: warm-up round ${i + 1} of ${opts.realisticWarmup}`);
        }
        log(`realistic programs: ${opts.realisticRounds} timed rounds of ${variants.length} (program, flow) pairs, interleaved`);
        for (let i = 0; i < opts.realisticRounds; i++) {
            for (let j = 0; j < variants.length; j++) {
                const k = order(i, j);
                const v = variants[k];
                if (v.every && i % v.every !== 0) continue;
                if (v.before) await v.before();
                const r = await v.call();
                record(acc[k], v.name, r, i);
                acc[k].made++;
            }
            log(`realistic programs: round ${i + 1} of ${opts.realisticRounds}`);
        }
        const done = variants.map((v, k) => ({ ...finishVariant(v, acc[k], acc[k].made, acc[k].warmMade), snippet: v.snippet.key, flow: v.flow }));
        rows = SNIPPETS.map((s) => {
            const of = (flow) => done.find((d) => d.snippet === s.key && d.flow === flow) ?? null;
            const row = { snippet: s, fresh: of('fresh'), live: of('live'), lean: of('lean'), whole: of('whole') };
            row.limitMs = REALISTIC_TARGET.factor * row.live.p50 + REALISTIC_TARGET.plusMs;
            row.met = row.fresh.p50 <= row.limitMs && row.fresh.failures === 0 && row.live.failures === 0;
            log(`realistic, ${s.key}: fresh p50 ${ms(row.fresh.p50)} ms, live p50 ${ms(row.live.p50)} ms ` +
                `(limit ${ms(row.limitMs)} ms: ${row.met ? 'met' : 'missed'})`);
            return row;
        });
        // What the fresh server's warm sandboxes hold now that it has seen all the programs.
        memory = await warmSandboxMemory(fresh, 'after the realistic rounds');
    } finally {
        if (sessionId) await live.client.callTool({ name: 'close_session', arguments: { session_id: sessionId } }).catch(() => {});
        await fresh.close();
        await live.close();
    }
    await ensureNoContainers(fresh.label, 'ours, realistic programs, fresh sandboxes');
    await ensureNoContainers(live.label, 'ours, realistic programs, live session');
    await ensureNoContainers(`${BENCH_LABEL}=${RUN_ID}`, 'peers.py flows of the realistic programs');
    return { rows, memory, rounds: opts.realisticRounds, warmup: opts.realisticWarmup, flowCalls: opts.realisticFlowCalls };
}

/** Both halves of an engine ceiling together (see runCeiling in main). */
function joinHalves(halves) {
    const okCalls = halves.reduce((a, r) => a + (r.okCalls ?? 0), 0);
    const total = halves.reduce((a, r) => a + (r.total ?? 0), 0);
    const wallMs = halves.reduce((a, r) => a + (r.wallMs ?? NaN), 0);
    return { concurrency: 4, total, okCalls, wallMs, perSec: (okCalls / wallMs) * 1000,
        cpuPerContainer: halves.reduce((a, r) => a + (r.cpuMs ?? NaN), 0) / Math.max(1, total),
        failed: halves.reduce((a, r) => a + (r.failed ?? 0), 0),
        halves: halves.map((r) => ((r.okCalls ?? 0) / r.wallMs) * 1000), hostConfig: halves.find((r) => r.hostConfig)?.hostConfig,
        // peers.py's requests by method and path, made into kinds, per container
        requestsPerContainer: requestsPer(new Map(), halves.reduce((all, r) => {
            for (const [raw, n] of Object.entries(r.requests ?? {})) {
                const [method, target] = raw.split(' ');
                const kind = requestKind(method, target);
                all.set(kind, (all.get(kind) ?? 0) + n);
            }
            return all;
        }, new Map()), Math.max(1, total)) };
}

/**
 * The sustained rows of the realistic section: for print(1) and for the pandas program, a fresh
 * server at 4 in flight after its warm-up to steady (the same calls), between two halves of the
 * engine's bare ceiling running the same program (`python3 -c PROGRAM` in containers made like
 * that server's sandboxes). The clock runs until the pool is back to the start and idle. Then the
 * memory of its warm python sandboxes, idle.
 */
async function realisticSustained(opts, peers, section) {
    const rows = [];
    for (const snippet of [SNIPPET.print, SNIPPET.pandas]) {
        const server = await startServer(opts.bin, []);
        const what = `realistic, sustained ${snippet.key}, 4 in flight`;
        try {
            await settle(server, { pooled: true, exact: true });
            const call = () => callSnippet(server.client, snippet);
            const warmup = await warmToSteady(server, 4, `${what}: warm-up`, opts, call);
            const half = async (when) => {
                await settle(server, { pooled: true, exact: true });
                await poolIdle(server);
                const mine = (await containersWithLabel(server.label)).find((x) => x.language === 'python');
                if (!mine) throw new Error('no python sandbox of the server to copy settings from');
                const r = await section(`engine ceiling (bare, ${snippet.key}), 4 in flight (${when})`,
                    () => peers.request('ceiling', { total: Math.ceil(opts.realisticSustainedCalls / 2), concurrency: 4,
                        container: mine.id, variant: 'bare', code: snippet.code }));
                if (!r.ok) problem(`engine ceiling (bare, ${snippet.key}, ${when}): ${r.okCalls ?? 0} of ${r.total ?? '?'} containers ran correctly: ${r.detail}`);
                return r;
            };
            // As in "Sustained calls": several trials one after the other on the same server, each
            // between halves of the ceiling, and the target judged on the median, since one trial
            // on 2 cores swings by several percent either way.
            for (let trial = 1; trial <= opts.ceilingTrials; trial++) {
                const name = opts.ceilingTrials > 1 ? `${what}, trial ${trial}` : what;
                const before = await half('before ours');
                const count = await settle(server, { pooled: true, exact: true });
                await poolIdle(server);
                const t = await section(name, () => throughput(server.client, 4, opts.realisticSustainedCalls, server.pid, false, name,
                    { server, idle: true }, call));
                t.poolAtStart = count;
                t.warmupCalls = trial === 1 ? warmup.calls : 0;
                t.gained = Math.max(0, poolTarget(server) - count);
                const after = await half('after ours');
                t.ceiling = joinHalves([before, after]);
                t.vsCeiling = (t.perSecSettled ?? t.perSec) / t.ceiling.perSec;
                t.trial = opts.ceilingTrials > 1 ? trial : 0;
                log(`${name}: ${(t.perSecSettled ?? t.perSec).toFixed(2)} calls/s = ${ratio(t.vsCeiling)} the bare ceiling of the same program (${t.ceiling.perSec.toFixed(2)}/s)`);
                if (trial === opts.ceilingTrials) t.memory = await warmSandboxMemory(server, `after the sustained ${snippet.key} row`);
                rows.push({ snippet, ...t });
            }
        } finally {
            await server.close();
        }
        await ensureNoContainers(server.label, `ours, ${what}`);
    }
    await ensureNoContainers(`${BENCH_LABEL}=${RUN_ID}`, 'engine ceiling of the realistic rows');
    return rows;
}

/**
 * The realistic section's print(1) trials at 4 in flight, by their ratio to the ceiling, and the
 * median one (the lower of the two middle ones for an even count), which the target is judged on.
 */
function realisticPrintSustained(real) {
    const printTrials = (real?.sustained ?? []).filter((t) => t.snippet.key === 'print').sort((a, b) => a.vsCeiling - b.vsCeiling);
    return { printTrials, printRow: printTrials[Math.floor((printTrials.length - 1) / 2)] };
}

/** The "Realistic programs" section of the report. */
function realisticReport(opts, m, real) {
    const L = [];
    if (!real?.latency) return L;
    const { rows, memory, rounds, warmup, flowCalls } = real.latency;
    const every = flowCalls > 0 ? Math.max(1, Math.ceil(rounds / flowCalls)) : 0;
    L.push('## Realistic programs (issue 54)', '');
    L.push(`Five programs as an assistant writes them, each sent with \`run_python_code\` and the server's defaults, in three`,
        'flows, all interleaved (one call in flight, each round starting with a different program and flow): **fresh**, a',
        'server of ours with the default pool, one call each, its pool refilled and idle (no sandbox using CPU) before each',
        'call; **live**, the same program as a call in a live Python session of another server of ours (`create_session`,',
        'then `session_id`), whose earlier calls have imported what it uses; and the **per-call container** flow of the',
        'tools users move from (`peers.py`, the same image): its lower bound every round (a program that plots gets the',
        'least set-up that saves its figure, read back from the container),',
        every ? `and code-sandbox-mcp's whole flow in one round of every ${every} (${flowCalls} call(s) per program; a program that plots runs as` +
            ' llm-sandbox\'s ArtifactSandboxSession runs it, with its plot set-up, the figure read back from the container).'
            : 'not the whole code-sandbox-mcp flow (`--realistic-flow-calls 0`).',
        `Before the timing, ${warmup} untimed round(s) of every program in every flow (the whole flow excepted), so that the`,
        `fresh server has seen the programs' calls; then ${rounds} timed round(s). Every answer is checked (stdout, exit`,
        'status 0, for the plots a PNG image in the answer); a wrong one is counted, not timed. Target per program: fresh',
        `p50 ≤ ${REALISTIC_TARGET.factor} × live p50 + ${REALISTIC_TARGET.plusMs} ms.`, '');
    L.push('| Program | fresh p50 | fresh p95 | live p50 | live p95 | per call, lower bound p50 | code-sandbox-mcp per call p50 | fresh ≤ 1.5 × live + 40 ms |',
        '|---|---:|---:|---:|---:|---:|---:|---|');
    for (const r of rows) {
        L.push(`| ${r.snippet.name} | **${ms(r.fresh.p50)}** | ${ms(r.fresh.p95)} | **${ms(r.live.p50)}** | ${ms(r.live.p95)} | ` +
            `${ms(r.lean.p50)} | ${r.whole ? ms(r.whole.p50) : '–'} | ${ms(r.fresh.p50)} ≤ ${ms(r.limitMs)}: ${r.met ? '**met**' : '**missed**'} |`);
    }
    L.push('', 'Every flow of every program (ms):', '');
    L.push('| Program, flow | ok | failed | min | p50 | mean | p95 | max | server `duration_ms` p50 |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) {
        for (const flow of ['fresh', 'live', 'lean', 'whole']) {
            const l = r[flow];
            if (!l) continue;
            L.push(`| ${r.snippet.name}: ${FLOWS[flow]} | ${l.n} | ${l.failures} | ${ms(l.min)} | ${ms(l.p50)} | ${ms(l.mean)} | ${ms(l.p95)} | ${ms(l.max)} | ${l.server ? ms(l.server.p50) : '–'} |`);
        }
    }
    L.push('');
    const parts = rows.flatMap((r) => ['lean', 'whole'].filter((f) => r[f]?.parts.length)
        .map((f) => `- ${r.snippet.name}, ${f === 'lean' ? 'lower bound' : 'whole flow'}: ${r[f].parts.map(([s, v]) => `${s} ${ms(v)}`).join(', ')}`));
    if (parts.length) L.push('Steps of the per-call container flows (p50 of each step, ms, timed inside `peers.py`):', '', ...parts, '');
    L.push('The programs:', '');
    for (const s of SNIPPETS) L.push(`- ${s.name}:`, '', '  ```python', ...s.code.split('\n').map((x) => (x ? `  ${x}` : '')), '  ```', '');

    const sus = real.sustained ?? [];
    if (sus.length) {
        L.push('### Sustained, 4 in flight, against the engine\'s ceiling', '');
        L.push(`Each program on a fresh server of ours (default pool), after untimed calls of the same program at 4 in flight`,
            `until the pool grows no more (at most ${opts.sustainedWarmupRounds} round(s) of ${opts.sustainedWarmup}); then ${opts.realisticSustainedCalls} calls, the clock running until`,
            'the pool is back to the start and no sandbox uses CPU. Against it, right before and right after (half each), the',
            'engine\'s bare ceiling for the same program: containers made like that server\'s sandboxes, each created, started',
            '(`python3 -c PROGRAM`), waited for (exit status 0) and removed, 4 at once.',
            opts.ceilingTrials > 1 ? `${opts.ceilingTrials} trials of each program one after the other on the same server, each between its own halves;`
                + ' the target is judged on the median trial.' : 'One trial each.', '');
        L.push('| Program | ok | failed | warm-up | pool at the start | gained | back to the start and idle | **calls/s** | bare ceiling, same program | ours / ceiling | machine CPU per call |',
            '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
        for (const t of sus) {
            L.push(`| ${t.snippet.name}${t.trial ? `, trial ${t.trial}` : ''} | ${t.ok} | ${t.failures} | ${t.warmupCalls} | ${t.poolAtStart} | ${t.gained} | ${t.settledMs ? `${ms(t.settledMs)} ms` : '–'} | ` +
                `**${(t.perSecSettled ?? t.perSec).toFixed(2)}** | ${t.ceiling.perSec.toFixed(2)}/s (${t.ceiling.halves.map((v) => v.toFixed(2)).join(' and ')}) | ` +
                `**${ratio(t.vsCeiling)}** | ${ms(t.cpuPerCall)} ms |`);
        }
        L.push('');
    }
    const mems = [...sus.map((t) => t.memory), memory].filter(Boolean);
    if (mems.length) {
        L.push('### Memory per warm sandbox', '');
        L.push('The python sandboxes a server keeps warm, idle (the pool at its size, no sandbox using CPU), read from each',
            'container\'s cgroup: the whole charge (`memory.current`; v1 `memory.usage_in_bytes`) and the anonymous memory',
            '(`memory.stat` `anon`; v1 `total_rss`), the processes\' own, per sandbox.', '');
        L.push('| After | warm python sandboxes | memory per sandbox, p50 (min–max) MiB | anonymous, p50 MiB | all of them, MiB |', '|---|---:|---:|---:|---:|');
        for (const x of mems) {
            L.push(`| ${x.what} | ${x.n} | **${mib(x.usage.p50)}** (${mib(x.usage.min)}–${mib(x.usage.max)}) | ${mib(x.anon.p50)} | ${mib(x.total)} |`);
        }
        if (mems.some((x) => x.source !== 'cgroup')) L.push('', '(Where the cgroup files were not readable: the Engine API\'s stats.)');
        L.push('');
    }
    const { printTrials, printRow } = realisticPrintSustained(real);
    L.push('Targets of issue 54 in this section:', '');
    L.push(`- fresh p50 ≤ ${REALISTIC_TARGET.factor} × live p50 + ${REALISTIC_TARGET.plusMs} ms for every program: ${rows.filter((r) => r.met).length} of ${rows.length} ` +
        `(${rows.every((r) => r.met) ? '**met**' : '**missed**'})`);
    if (printRow) {
        const of = printTrials.length > 1 ? ` (the median of ${printTrials.map((t) => ratio(t.vsCeiling)).join(', ')})` : '';
        L.push(`- \`print(1)\` sustained at 4 in flight ≥ ${TARGETS.vsCeilingAt4}× the engine's ceiling: ${ratio(printRow.vsCeiling)} here${of} ` +
            `(${printRow.vsCeiling >= TARGETS.vsCeilingAt4 && printTrials.every((t) => t.failures === 0) ? '**met**' : '**missed**'})`);
    }
    L.push('');
    return L;
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

/** bench/firstrun.sh: the steps and the seconds to the first answer (null when none came). */
async function firstRun() {
    const loadBefore = load1();
    let out = '';
    let detail = '';
    try {
        ({ stdout: out } = await execFileP('bash', [path.join(HERE, 'firstrun.sh')], { timeout: 20 * 60_000, maxBuffer: 1 << 22 }));
    } catch (e) {
        out = e.stdout ?? '';
        detail = String(e.stderr ?? e.message).trim().split('\n').slice(-3).join(' ');
        problem(`first run: ${detail}`);
    }
    const steps = out.split('\n').filter((l) => /^\s*[0-9.]+ /.test(l));
    const m = /first answer after ([0-9.]+) s/.exec(out);
    return { steps, seconds: m ? Number(m[1]) : null, detail, loadBefore, loadAfter: load1() };
}

// ---------------------------------------------------------------- other work (cpuwatch.mjs)

// Busy: other work above this many cores. A build or a test run takes a core or more; the
// machine's background daemons stay well under (a few hundredths of a core on an idle machine).
const OTHER_WORK_LIMIT = 0.25;
// The sections with one call in flight and nothing else of the benchmark running: other work
// there is what "busy" is about. The later ones are shown, not counted.
const QUIET_SECTIONS = ['interleaved latency', 'realistic programs, latency'];
const PEAK_WINDOW_MS = 30_000;   // other work's peak: the busiest 30 s of a section
const PRE_WINDOW_MS = 10_000;    // watched before the run starts

/**
 * Starts bench/cpuwatch.mjs, a process of its own (its reading of /proc never holds up a timed
 * call here), and collects its samples. `failure` says why other work is not measured (it did
 * not start, or it stopped during the run); the report then calls the machine busy. It exits by
 * itself when this process is gone, so an early exit needs no clean-up.
 */
function startCpuWatch() {
    const w = { samples: [], failure: null, startedAt: null, stopping: false };
    const child = spawn(process.execPath, [path.join(HERE, 'cpuwatch.mjs'), String(process.pid)],
        { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-300); });
    const exited = new Promise((resolve) => child.once('close', resolve));
    child.once('error', (e) => { w.failure ??= `did not start: ${e.message}`; });
    child.once('exit', (code, signal) => {
        if (!w.stopping) w.failure ??= `stopped during the run: ${signal ? `signal ${signal}` : `exit status ${code}`}${stderr.trim() ? `, ${stderr.trim()}` : ''}`;
    });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
        let s;
        try { s = JSON.parse(line); } catch { w.failure ??= `wrote something else than a sample: ${line.slice(0, 80)}`; return; }
        if (s.start) w.startedAt = s.t;
        else w.samples.push(s);
    });
    // Resolves once its first line came (at most 10 s).
    w.ready = async () => {
        for (let waited = 0; w.startedAt === null && !w.failure && waited < 10_000; waited += 50) await sleep(50);
        if (w.startedAt === null) w.failure ??= 'did not start within 10 s';
        if (w.failure) log(`other work is not measured: bench/cpuwatch.mjs ${w.failure}`);
    };
    w.stop = async () => {
        w.stopping = true;
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(5000)]);
    };
    return w;
}

/**
 * Other work in [a, b] (epoch ms): { mean, peak, top, seconds }, or null when no sample covers
 * any of it. Cores = (other CPU s + steal s) / the seconds the samples cover; each sample counts
 * by the part of its interval inside [a, b]. peak: the busiest PEAK_WINDOW_MS inside (the whole
 * span when shorter). top: the three commands (or steal) with the most CPU, from each sample's
 * own top three.
 */
function otherWork(samples, a, b) {
    const inside = samples.filter((s) => s.t > a && s.t - s.dt * 1000 < b);
    const mean = coresIn(inside, a, b);
    if (mean === null) return null;
    // The windowed mean changes linearly between sample edges: its maximum is at a window that
    // starts or ends on one.
    let peak = mean;
    if (b - a > PEAK_WINDOW_MS) {
        const edges = inside.flatMap((s) => [s.t - s.dt * 1000, s.t]);
        const starts = [a, b - PEAK_WINDOW_MS, ...edges, ...edges.map((e) => e - PEAK_WINDOW_MS)]
            .filter((x) => x >= a && x <= b - PEAK_WINDOW_MS);
        peak = Math.max(...starts.map((x) => coresIn(inside, x, x + PEAK_WINDOW_MS) ?? 0));
    }
    const by = new Map();
    for (const s of inside) {
        const f = overlapMs(s, a, b) / (s.dt * 1000);
        for (const { comm, s: cpu } of [...s.top, { comm: 'steal time', s: s.steal }])
            by.set(comm, (by.get(comm) ?? 0) + f * cpu);
    }
    const top = [...by].filter(([, cpu]) => cpu >= 0.05).sort((x, y) => y[1] - x[1]).slice(0, 3)
        .map(([comm, cpu]) => ({ comm, cpu }));
    return { mean, peak, top, seconds: (b - a) / 1000 };
}

const overlapMs = (s, a, b) => Math.max(0, Math.min(b, s.t) - Math.max(a, s.t - s.dt * 1000));

/** Other CPU and steal per second over the part of [a, b] the samples cover (null: none). */
function coresIn(samples, a, b) {
    let cpu = 0;
    let covered = 0;
    for (const s of samples) {
        const o = overlapMs(s, a, b);
        if (o <= 0) continue;
        cpu += (o / (s.dt * 1000)) * (s.other + s.steal);
        covered += o;
    }
    return covered > 0 ? cpu / (covered / 1000) : null;
}

/** "`cc1plus` 12.3 s, `make` 0.4 s" (names cleaned for a Markdown table). */
const topText = (top) => (top?.length
    ? top.map((t) => `\`${t.comm.replace(/[`|]/g, '?')}\` ${t.cpu.toFixed(1)} s`).join(', ')
    : 'none');

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
        loadStart: os.loadavg().map((v) => v.toFixed(2)).join(' '), loadStart1: load1(),
    };
}

// ---------------------------------------------------------------- report

/**
 * Busy means other work, measured (bench/cpuwatch.mjs): the CPU of the processes that are neither
 * the benchmark's nor the container engine's, and steal time, above OTHER_WORK_LIMIT cores in the
 * 10 s before the start or in any 30 s of the sections with one call in flight (QUIET_SECTIONS).
 * Not the load average: on 2 cores those sections raise it above 2 by themselves (warm sandboxes
 * importing what they prepare, the peers' pip, dockerd), so it cannot tell other work from ours.
 * Other work not measured (the sampler failed) is busy too: nothing shows the machine was idle.
 * Returns { busy, unmeasured (the reason, or null), peak (cores), where, top }.
 */
function busyState(m, sections) {
    const windows = [{ where: 'in the 10 s before the start', work: m.preWork },
        ...sections.filter((s) => QUIET_SECTIONS.includes(s.name))
            .map((s) => ({ where: `in a 30-s window of "${s.name}"`, work: s.work }))];
    const unmeasured = m.watchFailure ?? (windows.some((w) => !w.work) ? 'wrote no sample covering the start or a latency section' : null);
    const worst = windows.filter((w) => w.work).sort((x, y) => y.work.peak - x.work.peak)[0];
    const peak = worst?.work.peak ?? NaN;
    return { busy: unmeasured !== null || !(peak <= OTHER_WORK_LIMIT), unmeasured, peak, where: worst?.where, top: worst?.work.top };
}

/** Why the run is busy, or how quiet it was: one phrase for the banner, the table and the targets. */
function busyWhy(b) {
    if (b.unmeasured) return `other work not measured (bench/cpuwatch.mjs ${b.unmeasured})`;
    return `other work peaked at ${b.peak.toFixed(2)} cores ${b.where}, ${b.peak > OTHER_WORK_LIMIT ? 'above' : 'within'} ` +
        `the limit of ${OTHER_WORK_LIMIT} (most CPU: ${topText(b.top)})`;
}

/** The report's opening: the title, the busy and smoke notes, and the machine table. */
function reportHead(L, { opts, m, peerInfo, b, command, elapsedS, intro }) {
    L.push('# Benchmarks', '');
    if (b.busy && b.unmeasured) {
        L.push(`> **Busy machine: not suitable for publishing.** Other work was not measured (bench/cpuwatch.mjs ${b.unmeasured}): ` +
            'nothing shows that no other work shared the CPUs, so every row may be inflated by an unknown amount.', '');
    } else if (b.busy) {
        L.push(`> **Busy machine: not suitable for publishing.** Other work (processes that are neither the benchmark's ` +
            `nor the container engine's, and steal time) took ${b.peak.toFixed(2)} cores ${b.where}, above the limit of ` +
            `${OTHER_WORK_LIMIT} (most CPU: ${topText(b.top)}; see "Load average" below): it shared the CPUs, and every row ` +
            'is inflated by an unknown amount.', '');
    }
    if (opts.smoke) L.push('> **Smoke run** (tiny counts, for CI): the numbers below are not meaningful.', '');
    L.push(...intro, '');
    L.push('## Machine', '');
    L.push('| | |', '|---|---|');
    L.push(`| CPU | ${m.cpu}, ${m.cores} cores |`);
    L.push(`| Memory | ${m.memGiB} GiB |`);
    L.push(`| Kernel | ${m.kernel} |`);
    L.push(`| Docker | ${m.dockerVersion} |`);
    L.push(`| Image | \`${IMAGE}\` (${m.imageId}) |`);
    L.push(`| Server | \`${m.binVersion}\` |`);
    L.push(`| Client | Node ${m.node}, @modelcontextprotocol/sdk ${m.sdk}, StdioClientTransport |`);
    L.push(`| Peers' flows | Python ${peerInfo?.python ?? '?'}, Docker SDK for Python ${peerInfo?.sdk ?? '?'} (\`bench/peers.py\`), \`--network none\` |`);
    L.push(`| Date | ${m.date} |`);
    L.push(`| Load average (1/5/15 min) | ${m.loadStart} at start, ${m.loadEnd} at end |`);
    L.push(`| Machine busy (other work above ${OTHER_WORK_LIMIT} cores in the 10 s before the start or in any 30 s of the latency rows with one call in flight) | ${b.busy ? '**yes**' : 'no'}: ${busyWhy(b)} |`);
    L.push(`| Command | \`${command}\` (${elapsedS.toFixed(0)} s) |`, '');
}

/** The load average table, with the other work measured in each section. */
function loadTable(L, m, sections) {
    L.push('## Load average', '');
    L.push(`1-minute load average before and after each section (${m.cores} cores), for context: the benchmark's own work raises it (on this machine the latency rows with one call in flight take it near or above ${m.cores} by themselves), and it lags (a section's "before" carries the sections just run). ` +
        'Other work is measured: the CPU of the processes that are neither the benchmark\'s (it, its servers, peers.py, the docker CLI) nor the container engine\'s (dockerd, containerd, the shims, runc, docker-proxy, conmon, podman, runsc, and their descendants: every container), plus steal time, sampled every 2 s from `/proc` by `bench/cpuwatch.mjs` (kernel threads count as neither). ' +
        `It is given in cores: its mean over the section and its busiest 30 s (the whole section when shorter), and the commands with the most CPU. Above ${OTHER_WORK_LIMIT} cores in the 10 s before the start or in the latency rows with one call in flight (interleaved, realistic programs): busy.` +
        (m.watchFailure ? ` **Other work was not measured in this run** (bench/cpuwatch.mjs ${m.watchFailure}).` : ''), '');
    L.push('| Section | seconds | load before | load after | other work (cores, mean / 30-s peak) | most CPU of other work |',
        '|---|---:|---:|---:|---:|---|');
    const work = (w, counts) => {
        if (!w) return ['–', '–'];
        const peak = counts && w.peak > OTHER_WORK_LIMIT ? `**${w.peak.toFixed(2)}**` : w.peak.toFixed(2);
        return [`${w.mean.toFixed(2)} / ${peak}`, topText(w.top)];
    };
    L.push(`| run start (${PRE_WINDOW_MS / 1000} s watched) | ${PRE_WINDOW_MS / 1000} | ${m.loadStart1.toFixed(2)} | | ${work(m.preWork, true).join(' | ')} |`);
    for (const s of sections) {
        L.push(`| ${s.name} | ${s.seconds.toFixed(0)} | ${s.before.toFixed(2)} | ${s.after.toFixed(2)} | ` +
            `${work(s.work, QUIET_SECTIONS.includes(s.name)).join(' | ')} |`);
    }
    L.push(`| run end | | | ${m.loadEnd1.toFixed(2)} | | |`, '');
}

/** The report of `--only realistic`: the machine, the realistic programs' section, the loads. */
function realisticOnlyReport({ opts, m, real, peerInfo, sections, elapsedS, command }) {
    const b = busyState(m, sections);
    const L = [];
    reportHead(L, { opts, m, peerInfo, b, command, elapsedS, intro: [
        'The realistic programs\' section alone (`--only realistic`), measured in one run on one machine with one image by',
        '`bench/run.sh` (see `bench/README.md` for what each row includes). All times in milliseconds, by the same clock',
        '(Node `performance.now()`).'] });
    L.push(...realisticReport(opts, m, real));
    if (b.busy) L.push(`Targets measured on a busy machine say little either way: ${busyWhy(b)}.`, '');
    loadTable(L, m, sections);
    if (problems.length) L.push('## Problems in this run', '', ...problems.map((p) => `- ${p}`), '');
    return { text: L.join('\n') };
}

function report({ opts, m, lat, thr, init, idleKb, busyKb, eng, first, ceiling, handoverCeiling, requestsRow, burstRows, peerInfo, gatewayRow, real, sections, elapsedS, command }) {
    const all = [...lat, ...burstRows];
    const byName = Object.fromEntries(all.map((l) => [l.key, l]));
    const { pooled, paced, unpooled, flow, lean, apiExec, session, peerSession, burst, allowlist } = byName;
    // At 4 in flight: the trial whose ratio to its own bare ceiling is the median (the lower of
    // the two middle ones for an even count), each trial's whole work (until its pool is back to
    // the start) against the ceiling measured around it.
    const trials4 = thr.filter((t) => t.concurrency === 4 && !t.gvisor);
    const byRatio = [...trials4].sort((a, b) => (a.vsCeiling ?? 0) - (b.vsCeiling ?? 0));
    const at4 = byRatio[Math.floor((byRatio.length - 1) / 2)];
    const at4Gvisor = thr.find((t) => t.gvisor);
    const at4Rate = at4 ? (at4.perSecSettled ?? at4.perSec) : NaN;
    const vsCeiling = at4?.vsCeiling ?? NaN;
    const trialRatios = (key) => trials4.map((t) => ratio(t[key])).join(', ');
    const cpu4 = trials4.reduce((a, t) => a + t.cpuPerCall * t.total, 0) / Math.max(1, trials4.reduce((a, t) => a + t.total, 0));
    const initPooled = init.find((i) => i.key === 'pooled');
    const mark = (met) => (met ? '**met**' : '**missed**');
    const mb = (kb) => (Number.isFinite(kb) ? (kb / 1024).toFixed(1) : '–');
    const b = busyState(m, sections);
    const L = [];
    reportHead(L, { opts, m, peerInfo, b, command, elapsedS, intro: [
        'Latency of `run_python_code` with `print(1)` and of the flows users move from, measured in one run on',
        'one machine with one image by `bench/run.sh` (see `bench/README.md` for exactly what each row includes',
        'and how to read it). All times in milliseconds, by the same clock (Node `performance.now()`).'] });

    L.push('## Headline figures (p50 unless said)', '');
    L.push('| Measure | Value |', '|---|---:|');
    L.push(`| ${B2B_ROUND} back-to-back calls, after the pool has seen one such round | ${ms(pooled.p50)} ms (p95 ${ms(pooled.p95)}) |`);
    L.push(`| burst of ${BURST} calls at once, after the pool has seen one | ${ms(burst?.p50)} ms (p95 ${ms(burst?.p95)}) |`);
    L.push(`| one call, pool refilled before it | ${ms(paced.p50)} ms |`);
    L.push(`| the same in the allow-list mode (\`--egress\`) | ${ms(allowlist?.p50)} ms |`);
    L.push(`| an HTTPS request (new connection) through the egress gateway, against the same from a container on the bridge | ${ms(gatewayRow?.through.p50)} ms against ${ms(gatewayRow?.bridge.p50)} ms: adds ${ms(gatewayRow?.addsMs)} ms |`);
    if (byName.gvisor) {
        L.push(`| the same under gVisor (\`--runtime runsc\`) | ${ms(byName.gvisor.p50)} ms (p95 ${ms(byName.gvisor.p95)}) |`);
        L.push(`| \`--pool 0\`: runc, gVisor | ${ms(unpooled.p50)} ms, ${ms(byName.gvisorUnpooled?.p50)} ms |`);
        const rate = (t) => (t ? (t.perSecSettled ?? t.perSec).toFixed(2) : '–');
        L.push(`| sustained, 4 in flight: runc, gVisor | ${rate(at4)}, ${rate(at4Gvisor)} calls/s |`);
    } else {
        L.push('| gVisor | not measured: the engine has no `runsc` runtime registered |');
    }
    L.push(`| a call in a live session | ${ms(session.p50)} ms |`);
    const of = trials4.length > 1 ? ` (the median of ${trials4.length} trials)` : '';
    L.push(`| sustained, 4 in flight (until the pool is back to the start)${of} | ${at4 ? at4Rate.toFixed(2) : '–'} calls/s = ${ratio(vsCeiling)} the engine's own create+start+wait+remove (${at4?.ceiling ? at4.ceiling.perSec.toFixed(2) : '–'}/s) |`);
    if (at4?.handover) L.push(`| the same, against those containers used without a pool (create, attach, start, hand-over, result, wait, remove) | ${ratio(at4.vsHandover)} (${at4.handover.perSec.toFixed(2)}/s) |`);
    L.push(`| code-sandbox-mcp / llm-sandbox, one call (Engine API reproduction) | ${ms(flow.p50)} ms |`);
    L.push(`| idle RSS, pool at its base | ${mb(idleKb)} MiB |`, '');

    L.push(`## Latency, interleaved (${opts.calls} rounds, one call of each per round, one in flight)`, '');
    L.push('All rows of this table ran interleaved, one call of each per round (the whole code-sandbox-mcp flow',
        `in one round of every ${Math.max(1, Math.ceil(opts.calls / opts.flowCalls))} only: it takes over 10 s), so they saw the same machine. ` +
        `Untimed warm-up: ${opts.warmup} call(s) per row (none for the whole flow).`, '');
    const table = (rows) => {
        L.push('| Variant | ok | failed | min | p50 | mean | p95 | max |', '|---|---:|---:|---:|---:|---:|---:|---:|');
        for (const l of rows) {
            L.push(`| ${l.name} | ${l.n} | ${l.failures} | ${ms(l.min)} | **${ms(l.p50)}** | ${ms(l.mean)} | ${ms(l.p95)} | ${ms(l.max)} |`);
        }
        L.push('');
    };
    const interleaved = lat.filter((l) => !['pooled', 'b2bFirst'].includes(l.key));
    table(interleaved);
    const withParts = interleaved.filter((l) => l.parts.length);
    if (withParts.length) {
        L.push('Steps of the reproduced flows (p50 of each step, ms, timed inside `peers.py`):', '');
        for (const l of withParts) L.push(`- ${l.name}: ${l.parts.map(([s, v]) => `${s} ${ms(v)}`).join(', ')}`);
        L.push('');
    }
    if (peerInfo?.sessionSetup) {
        L.push('Exit status of the llm-sandbox environment set-up commands (the open session; each flow does the same): ' +
            Object.entries(peerInfo.sessionSetup).map(([k, v]) => `${k} ${v}`).join(', ') +
            '. With no network, the pip upgrade retries 5 times, then finds pip already installed and exits 0.', '');
    }

    if (gatewayRow) {
        const g = opts.gateway;
        L.push('## An HTTPS request through the egress gateway', '');
        L.push(`The same Python program, timing its own requests (each a new connection: TCP, TLS handshake, \`GET\`, answer) to the bench's HTTPS server on this machine's address, by name (\`${WORLD_HOST}\`, with a CA made for the run): in a sandbox of the allow-list server (urllib through \`HTTPS_PROXY\`: CONNECT to the gateway, its credential, name and SNI checks, its own connection out) and in a container on the engine's bridge with the sandbox's default limits (1 CPU, 512 MiB, read-only, no capabilities; its own connection out, the name from \`--add-host\`). Name lookups are cached by the program on both sides (the first is in the warm-up). ${g.rounds} alternating rounds of ${g.perRound} requests each, after ${g.warmup} untimed ones per round.`, '');
        L.push('| Path | n | p50 ms | p95 ms | min ms | max ms |', '|---|---:|---:|---:|---:|---:|');
        for (const [name, t] of [['through the egress gateway (allow-list mode)', gatewayRow.through], ['on the bridge (no gateway)', gatewayRow.bridge]])
            L.push(`| ${name} | ${t.n} | ${ms(t.p50)} | ${ms(t.p95)} | ${ms(t.min)} | ${ms(t.max)} |`);
        L.push('', `The gateway adds **${ms(gatewayRow.addsMs)} ms** at p50${gatewayRow.failures ? ` (${gatewayRow.failures} rounds failed; see the problems)` : ''}.`, '');
    }

    // "Bound secrets" (bench/secrets.mjs, run by run.sh before this script): its section as it printed it.
    if (process.env.CS_BENCH_SECRETS_SECTION) L.push(process.env.CS_BENCH_SECRETS_SECTION.trimEnd(), '');
    // "Workspaces" (bench/workspaces.mjs, run by run.sh before this script), as it printed it.
    if (process.env.CS_BENCH_WORKSPACES_SECTION) L.push(process.env.CS_BENCH_WORKSPACES_SECTION.trimEnd(), '');
    if (process.env.CS_BENCH_SNAPSHOTS_SECTION) L.push(process.env.CS_BENCH_SNAPSHOTS_SECTION.trimEnd(), '');

    L.push(`## Back-to-back and bursts (pooled server, default \`--pool\` and \`--pool-max\`)`, '');
    L.push(`Back-to-back: rounds of ${B2B_ROUND} calls, each sent as soon as the previous answered, each round after the`,
        `pool refilled; the first round is shown on its own, the next ${opts.b2bRounds} together. Bursts: ${BURST} calls sent at`,
        `once, latency of each from the moment the burst was sent, after the pool is warm and the engine quiet; on`,
        `${opts.burstServers} fresh server(s), one first burst each, then ${opts.burstsAfter} burst(s) each once the pool has seen one.`, '');
    table([...lat.filter((l) => ['b2bFirst', 'pooled'].includes(l.key)), ...burstRows]);
    if (pooled.roundP50?.length) L.push(`p50 of each back-to-back round after the first: ${pooled.roundP50.map(ms).join(', ')}.`, '');
    if (burst?.trialP50?.length) L.push(`p50 of each fresh server's bursts after its first (each server a trial of its own): ${burst.trialP50.map(ms).join(', ')}.`, '');
    const srv = all.filter((l) => l.server);
    if (srv.length) {
        L.push('Server-reported `duration_ms` (program written to the sandbox → exit status read), p50 / p95:',
            srv.map((l) => `${l.name} ${ms(l.server.p50)} / ${ms(l.server.p95)}`).join('; ') + '.', '');
    }

    L.push('## Ratios (p50 / p50, same run)', '');
    L.push('| Ratio | Value | Target |', '|---|---:|---:|');
    L.push(`| ours pooled, refilled / exec over the Engine API into a running container | ${ratio(paced.p50 / apiExec.p50)} | ≤ ${TARGETS.vsExec}× |`);
    L.push(`| ours pooled, back-to-back / exec over the Engine API | ${ratio(pooled.p50 / apiExec.p50)} | ≤ ${TARGETS.vsExec}× |`);
    L.push(`| ours pooled, refilled / code-sandbox-mcp flow (Engine API) | ${ratio(paced.p50 / flow.p50)} | ≤ ${TARGETS.vsFlow}× |`);
    L.push(`| ours pooled, back-to-back / code-sandbox-mcp flow (Engine API) | ${ratio(pooled.p50 / flow.p50)} | ≤ ${TARGETS.vsFlow}× |`);
    L.push(`| ours pooled, refilled / lower bound of that flow | ${ratio(paced.p50 / lean.p50)} | – |`);
    L.push(`| ours \`--pool 0\` / lower bound of that flow | ${ratio(unpooled.p50 / lean.p50)} | – |`);
    L.push(`| ours, a call in a live session / llm-sandbox, a call in an open session | ${ratio(session.p50 / peerSession.p50)} | – |`, '');

    L.push(`## Sustained calls (pooled, one client, ${opts.throughputCalls} calls per row, each row on a fresh server)`, '');
    L.push(`Each row's server first serves untimed calls at the same concurrency, in rounds of ${opts.sustainedWarmup} one right after the other`,
        `until a round grows its pool no more (at most ${opts.sustainedWarmupRounds} rounds; "warm-up"), so that the pool has learnt the demand: the timed`,
        'row finds it at what the server keeps under this load, as under any sustained load. The clock starts with the first',
        'timed call; "last answer" stops it when the last call is answered, "back to the start" when the pool is as full as',
        'it aims to be then, every sandbox started and the used ones removed: the engine work of every call in the row, as in',
        'the ceiling below (which waits for each removal). Sandboxes the row still added to the pool ("gained") are work done',
        'ahead that no call of the row used; they are not credited: the row pays for them. Machine CPU: all the machine\'s CPU',
        'time over the row (every process: the client, the server, the engine, the sandboxes; /proc/stat), per call.',
        ...(opts.ceilingTrials > 1 ? [`At 4 in flight, ${opts.ceilingTrials} trials one after the other on the same server, each between`,
            'the engine ceilings measured around it (below): the machine\'s speed drifts by more than the gap measured.'] : []), '');
    L.push('| Calls in flight | ok | failed | warm-up | pool at the start | gained | last answer | calls/s | back to the start | **calls/s** | machine CPU per call |',
        '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const t of thr) {
        L.push(`| ${t.concurrency}${t.gvisor ? ' (gVisor)' : ''}${t.trial ? `, trial ${t.trial}` : ''} | ${t.ok} | ${t.failures} | ${t.warmupCalls ?? '–'} | ${t.poolAtStart ?? '–'} | ${t.gained ?? '–'} | ` +
            `${ms(t.wallMs)} ms | ${t.perSec.toFixed(2)} | ` +
            `${t.settledMs ? `${ms(t.settledMs)} ms` : '–'} | **${t.perSecSettled ? t.perSecSettled.toFixed(2) : '–'}** | ${ms(t.cpuPerCall)} ms |`);
    }
    L.push('');
    if (ceiling) {
        const perTrial = (key) => trials4.map((t) => t[key] ? `${t[key].halves.map((v) => v.toFixed(2)).join(' and ')}/s` : '–').join('; ');
        L.push(`The engine's own ceiling, measured right before and right after each 4-in-flight trial (half each), ${ceiling.total} containers in all, made like`,
            `ours (settings copied from one of the server's sandboxes: ${(ceiling.hostConfig ?? []).join(', ')}; same image, user,`,
            'work dir, no network), each created, started, waited for and removed (with its volume) through the Engine',
            `API (Docker SDK for Python), running \`python3 -c 'print(1)'\`, 4 at once: ${ceiling.okCalls} exited 0, ${ceiling.failed} did not,`,
            `wall ${ms(ceiling.wallMs)} ms in all = **${ceiling.perSec.toFixed(2)} containers/s** (before and after each trial: ${perTrial('ceiling')}), ` +
            `machine CPU ${ms(ceiling.cpuPerContainer)} ms per container. Ours (back to the start) / the ceiling around the same trial at 4 in flight: ` +
            `${trialRatios('vsCeiling')}${trials4.length > 1 ? `; median **${ratio(vsCeiling)}**` : ''}.`, '');
        if (handoverCeiling) {
            L.push(`The same containers used the way our server uses them, without a pool: ${handoverCeiling.total} containers with our`,
                'sandboxes\' command and environment, each created, attached, started, sent `print(1)` framed as `cs-run` expects, read',
                `until its result line, waited for and removed, 4 at once: ${handoverCeiling.okCalls} said exit status 0, wall ${ms(handoverCeiling.wallMs)} ms =`,
                `**${handoverCeiling.perSec.toFixed(2)} calls/s** (before and after each trial: ${perTrial('handover')}), ` +
                `machine CPU ${ms(handoverCeiling.cpuPerContainer)} ms per call. Ours / this, per trial: ${trialRatios('vsHandover')}.`, '');
        }
        if (at4 && Number.isFinite(ceiling.cpuPerContainer)) {
            const cpuMs = m.cores * 1000;
            L.push(`What bounds these rows is the CPU: ${m.cores} cores give ${cpuMs} ms of CPU a second. At ${ms(ceiling.cpuPerContainer)} ms a ` +
                `container the bare ceiling can reach at most ${(cpuMs / ceiling.cpuPerContainer).toFixed(1)}/s; at ${ms(cpu4)} ms a call (the 4-in-flight trials together), ` +
                `ours at most ${(cpuMs / cpu4).toFixed(1)}/s. Every call of ours runs in a container of its own, so it costs what a container ` +
                'of the bare ceiling costs (create, start, a Python process, removal) plus the program\'s hand-over, the supervisor and the answer. ' +
                'A pool hides a container\'s making from a call\'s latency, and on a machine with idle cores it keeps more containers in the making ' +
                'than calls in flight; on a machine whose CPUs the engine already fills, it cannot make the engine\'s work smaller.', '');
        }
    }
    if (requestsRow) {
        // What each side asks of the engine per call or container, kind by kind.
        const sides = [['ours', requestsRow.perCall], ['bare ceiling', ceiling?.requestsPerContainer],
            ['hand-over ceiling', handoverCeiling?.requestsPerContainer]].filter(([, v]) => v);
        const kinds = [...new Set(sides.flatMap(([, v]) => Object.keys(v)))].sort();
        const total = (v) => Object.values(v).reduce((a, b) => a + b, 0);
        L.push('### Engine requests per call', '',
            `Counted on the way to the engine (a socket in front of its own that counts each HTTP request and passes it on), in a row of`,
            `their own (${requestsRow.calls} calls of ours at 4 in flight on a fresh server, from the first call until its pool is back where it`,
            `started, so a call's refill is counted with it; ${requestsRow.gained} warm sandbox(es) gained over the row are work done ahead, their`,
            'create, attach and start left out; the timed rows above go to the engine directly), and by peers.py for the',
            'ceilings\' containers. Per call of ours, per container of the ceilings:', '');
        L.push(`| Request | ${sides.map(([n]) => n).join(' | ')} |`, `|---|${sides.map(() => '---:').join('|')}|`);
        for (const k of kinds) L.push(`| \`${k}\` | ${sides.map(([, v]) => (v[k] ? v[k].toFixed(2) : '–')).join(' | ')} |`);
        L.push(`| **all** | ${sides.map(([, v]) => `**${total(v).toFixed(2)}**`).join(' | ')} |`, '');
    }

    L.push(...realisticReport(opts, m, real));

    L.push(`## Start-up and memory`, '');
    L.push('| Measure | Value |', '|---|---:|');
    for (const i of init) {
        L.push(`| spawn → initialize answered, ${i.label} (median of ${i.n}; min–max) | **${ms(i.p50)}** (${ms(i.min)}–${ms(i.max)}) |`);
    }
    L.push(`| idle RSS (initialized, pool warm at its base) | **${mb(idleKb)} MiB** |`);
    L.push(`| busy RSS (peak during the ${thr.find((t) => t.peakKb != null)?.concurrency ?? "–"}-in-flight run, sampled every 50 ms) | ${mb(busyKb)} MiB |`, '');

    loadTable(L, m, sections);

    if (first) {
        L.push('## First run', '');
        L.push('`bench/firstrun.sh`: `./dev.sh run` in a fresh Debian 12 minbase container (the `code-sandbox/bash` image) from a fresh',
            'clone, with nothing installed: it installs the packages from the Debian mirror, starts a dockerd of its own inside (empty',
            'data root, no image cache), builds the python image while it builds the app, and answers its first call. Seconds',
            `from the start of \`./dev.sh run\` (load before ${first.loadBefore.toFixed(2)}, after ${first.loadAfter.toFixed(2)}):`, '');
        L.push('```', ...first.steps, '```', '');
        L.push(first.seconds !== null
            ? `**First answer after ${first.seconds.toFixed(1)} s** (${Math.floor(first.seconds / 60)} min ${String(Math.round(first.seconds % 60)).padStart(2, '0')} s).`
            : `**No answer**: ${first.detail}`, '');
    } else {
        // The heading stays (docs link to it), saying how to get the figure.
        L.push('## First run', '', 'Not measured in this run: `bench/run.sh --first-run` (or `bench/firstrun.sh` alone) measures',
            'the time from a fresh clone on a machine with nothing installed to the first answer; see `bench/README.md`.', '');
    }
    L.push('## Targets', '');
    L.push('| Target | Measured | |', '|---|---:|---|');
    L.push(`| issue 19: ${B2B_ROUND} back-to-back, p50 ≤ ${TARGETS.backToBackP50Ms} ms (after the pool has seen such a round) | ${ms(pooled.p50)} ms | ${mark(pooled.p50 <= TARGETS.backToBackP50Ms && pooled.failures === 0)} |`);
    L.push(`| issue 31: ${B2B_ROUND} back-to-back, p50 ≤ ${TARGETS.backToBackP50Ms} ms from the first round (pool at its base) | ${ms(byName.b2bFirst?.p50)} ms | ${mark(byName.b2bFirst && byName.b2bFirst.p50 <= TARGETS.backToBackP50Ms && byName.b2bFirst.failures === 0)} |`);
    L.push(`| issue 19: burst of ${BURST}, p50 ≤ ${TARGETS.burstP50Ms} ms (after the pool has seen one) | ${ms(burst?.p50)} ms | ${mark(burst && burst.p50 <= TARGETS.burstP50Ms && burst.failures === 0)} |`);
    const trials = burst?.trialP50 ?? [];
    L.push(`| issue 31: burst of ${BURST}, p50 ≤ ${TARGETS.burstP50Ms} ms in each of ${trials.length} trials (fresh servers, bursts after the first) | ${trials.map(ms).join(', ') || '–'} ms | ${mark(trials.length >= 3 && trials.every((v) => v <= TARGETS.burstP50Ms) && burst.failures === 0)} |`);
    L.push(`| issue 31: sustained at 4 in flight ≥ ${TARGETS.vsCeilingAt4}× the bare engine ceiling of the same run${of ? `, ${of.trim().slice(1, -1)} (${trialRatios('vsCeiling')})` : ''} | ${ratio(vsCeiling)} | ${mark(vsCeiling >= TARGETS.vsCeilingAt4 && trials4.every((t) => t.failures === 0))} |`);
    if (real?.latency) {
        const rr = real.latency.rows;
        L.push(`| issue 54: realistic programs, fresh sandbox p50 ≤ ${REALISTIC_TARGET.factor} × live session p50 + ${REALISTIC_TARGET.plusMs} ms, each of ${rr.length} | ` +
            `${rr.map((r) => `${ms(r.fresh.p50)} ≤ ${ms(r.limitMs)}`).join('; ')} | ${mark(rr.every((r) => r.met))} |`);
        const { printTrials, printRow } = realisticPrintSustained(real);
        if (printRow) {
            L.push(`| issue 54: realistic \`print(1)\` sustained at 4 in flight ≥ ${TARGETS.vsCeilingAt4}× the engine's ceiling of the same program` +
                `${printTrials.length > 1 ? `, the median of ${printTrials.length} trials (${printTrials.map((t) => ratio(t.vsCeiling)).join(', ')})` : ''} | ` +
                `${ratio(printRow.vsCeiling)} | ${mark(printRow.vsCeiling >= TARGETS.vsCeilingAt4 && printTrials.every((t) => t.failures === 0))} |`);
        }
    }
    L.push(`| issue 5: p50 \`print(1)\` ≤ ${TARGETS.p50Ms} ms (pooled, pool refilled before each call) | ${ms(paced.p50)} ms | ${mark(paced.p50 <= TARGETS.p50Ms && paced.failures === 0)} |`);
    L.push(`| issue 27: p50 \`print(1)\` in the allow-list mode ≤ ${TARGETS.p50Ms} ms (pooled, refilled, as the default mode) | ${ms(allowlist?.p50)} ms | ${mark(allowlist && allowlist.p50 <= TARGETS.p50Ms && allowlist.failures === 0)} |`);
    L.push(`| issue 27: an HTTPS request through the gateway adds ≤ ${TARGETS.gatewayAddsMs} ms p50 (against the bridge) | ${ms(gatewayRow?.addsMs)} ms | ${mark(gatewayRow && gatewayRow.addsMs <= TARGETS.gatewayAddsMs && gatewayRow.failures === 0)} |`);
    L.push(`| issue 5: ≤ ${TARGETS.vsExec}× exec into a running container (here over the Engine API, not the CLI; refilled) | ${ratio(paced.p50 / apiExec.p50)} | ${mark(paced.p50 / apiExec.p50 <= TARGETS.vsExec)} |`);
    L.push(`| issue 5: ≤ ${TARGETS.vsFlow}× the reproduced per-call flow (Engine API; refilled) | ${ratio(paced.p50 / flow.p50)} | ${mark(paced.p50 / flow.p50 <= TARGETS.vsFlow)} |`);
    L.push(`| issue 5: ≥ ${TARGETS.callsPerSecAt4} calls/s at concurrency 4, all correct | ${at4 ? at4Rate.toFixed(2) : '–'} calls/s, ${at4?.failures ?? '–'} failed | ${mark(at4 && at4.failures === 0 && at4Rate >= TARGETS.callsPerSecAt4)} |`);
    L.push(`| issue 5: initialize ≤ ${TARGETS.initMs} ms after launch (default, pooled) | ${ms(initPooled.p50)} ms | ${mark(initPooled.p50 <= TARGETS.initMs)} |`);
    if (first) L.push(`| issue 54: first answer from \`./dev.sh run\` on a fresh machine ≤ ${TARGETS.firstRunIssue54S / 60} min | ${first.seconds !== null ? `${first.seconds.toFixed(0)} s` : 'none'} | ${mark(first.seconds !== null && first.seconds <= TARGETS.firstRunIssue54S)} |`);
    if (first) L.push(`| issue 31: first answer from \`./dev.sh run\` on a fresh machine ≤ ${TARGETS.firstRunS / 60} min | ${first.seconds !== null ? `${first.seconds.toFixed(0)} s` : 'none'} | ${mark(first.seconds !== null && first.seconds <= TARGETS.firstRunS)} |`);
    L.push(`| idle RSS ≤ ${TARGETS.idleRssMb} MB (pool at its base) | ${(idleKb * 1024 / 1e6).toFixed(1)} MB | ${mark(idleKb * 1024 / 1e6 <= TARGETS.idleRssMb)} |`, '');
    if (b.busy) L.push(`Targets measured on a busy machine say little either way: ${busyWhy(b)}.`, '');

    if (eng) L.push(...enginesReport(opts, m, eng));

    if (problems.length) {
        L.push('## Problems in this run', '', ...problems.map((p) => `- ${p}`), '');
    }
    return { text: L.join('\n') };
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

/**
 * Stops the sampler and puts the other work measured on the run: m.preWork (the 10 s before the
 * start), each section's s.work, m.watchFailure (why it is not measured, or null).
 */
async function measureOtherWork(watch, pre, m, sections) {
    await watch.stop();
    m.watchFailure = watch.failure;
    m.preWork = otherWork(watch.samples, pre.startMs, pre.endMs);
    for (const s of sections) s.work = otherWork(watch.samples, s.startMs, s.endMs);
    const b = busyState(m, sections);
    log(`machine ${b.busy ? 'busy' : 'not busy'}: ${busyWhy(b)}`);
    const total = (k) => watch.samples.reduce((a, x) => a + x[k], 0);
    log(`over the whole run: other work ${(total('other') / Math.max(1, total('dt'))).toFixed(2)} cores, steal ` +
        `${(total('steal') / Math.max(1, total('dt'))).toFixed(2)}, ours ${(total('ours') / Math.max(1, total('dt'))).toFixed(2)}`);
}

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    const command = ['bench/run.sh', ...process.argv.slice(2)].map((a) => (/^[\w./=:-]+$/.test(a) ? a : `'${a}'`)).join(' ');
    if (!existsSync(opts.bin)) throw new Error(`no server binary at ${opts.bin} (build it, or pass --bin)`);
    if (opts.enginesEnv) readEnginesEnv(opts.enginesEnv);   // a wrong file fails now, not at the end
    await docker(['image', 'inspect', IMAGE]).catch(() => { throw new Error(`image ${IMAGE} is missing`); });
    await execFileP(PEERS_PYTHON, ['-c', 'import docker']).catch(() => {
        throw new Error(`${PEERS_PYTHON} cannot import docker: install python3-docker (Debian)`);
    });
    if (opts.check) return;
    // Other work, sampled from here to the end of the run (see busyState).
    const watch = startCpuWatch();
    await watch.ready();
    // A report is only worth publishing from a quiet machine: wait (up to 5 minutes) for the
    // 1-minute load to fall below the cores, e.g. after a build or an earlier run.
    if (!opts.smoke) {
        const cores = os.cpus().length;
        for (let waited = 0; load1() >= cores && waited < 300; waited += 10) {
            if (waited % 60 === 0) log(`waiting for the machine to be quiet (1-minute load ${load1().toFixed(2)}, ${cores} cores)`);
            await sleep(10_000);
        }
    }
    // Then other work is watched for 10 s with nothing of the benchmark running.
    const pre = { startMs: Date.now() };
    log(`watching other work for ${PRE_WINDOW_MS / 1000} s before the start`);
    await sleep(PRE_WINDOW_MS);
    pre.endMs = Date.now();
    const started = now();
    const m = await machine(opts.bin);
    log(`server ${opts.bin}, ${opts.calls} calls per latency variant, report to ${opts.out}`);

    const lat = [];
    const thr = [];
    const init = [];
    let idleKb = NaN;
    let busyKb = NaN;
    let gvisor = false; // the engine has runsc: the gVisor rows run
    let ceiling = null;
    let handoverCeiling = null;
    let requestsRow = null;
    let burstRows = [];
    let peerInfo = null;
    let gatewayRow = null;
    // { name, before, after, seconds, startMs, endMs }: the 1-minute load average around each
    // section, its duration and its epoch span (for the other work measured in it).
    const sections = [];
    const section = async (name, f) => {
        const before = load1();
        const t0 = now();
        const startMs = Date.now();
        try { return await f(); } finally {
            sections.push({ name, before, after: load1(), seconds: (now() - t0) / 1000, startMs, endMs: Date.now() });
        }
    };
    const real = { latency: null, sustained: null };   // the realistic programs' section

    if (opts.only === 'realistic') {
        const peers = startPeers();
        try {
            const hello = await peers.request('hello', { runId: RUN_ID, network: 'none' });
            if (!hello.ok) throw new Error(`peers.py: ${hello.detail}`);
            peerInfo = hello;
            real.latency = await section('realistic programs, latency', () => realisticLatency(opts, peers));
            real.sustained = await realisticSustained(opts, peers, section);
        } finally {
            await peers.close();
        }
        await ensureNoContainers(`${BENCH_LABEL}=${RUN_ID}`, 'peers.py');
        m.loadEnd = os.loadavg().map((v) => v.toFixed(2)).join(' ');
        m.loadEnd1 = load1();
        await measureOtherWork(watch, pre, m, sections);
        const { text } = realisticOnlyReport({ opts, m, real, peerInfo, sections, elapsedS: (now() - started) / 1000, command });
        writeFileSync(opts.out, text);
        console.log(text);
        log(`report written to ${opts.out}`);
        if (problems.length) {
            log(`${problems.length} problem(s): the run is not valid`);
            process.exitCode = 1;
        }
        return;
    }

    // Everything that is compared by latency runs side by side: both servers, the peers' flows
    // (peers.py), the container for exec, one call of each per round.
    const pooled = await startServer(opts.bin, []);
    const unpooled = await startServer(opts.bin, ['--pool', '0']);
    // The allow-list mode: its sandboxes join the egress gateway's network (made with the first
    // of them), and a call runs in one from the pool as in the default mode. The host is never
    // asked for: print(1) reaches nothing.
    // It also reaches the bench's own HTTPS server (named through the gateway's test-only name
    // map), for the row of what a request through the gateway adds.
    const world = await startWorld();
    const allowlisted = await startServer(opts.bin,
        ['--egress', 'registry.npmjs.org', '--egress', `${WORLD_HOST}:${world.port}`],
        { env: { CODE_SANDBOX_TEST_EGRESS_HOSTS: `${WORLD_HOST}=${world.address}` } });
    // gVisor beside runc, where the engine has runsc registered (README: "Stronger isolation").
    gvisor = await engineHasRunsc();
    if (!gvisor) log('gVisor rows: the engine has no "runsc" runtime registered; left out');
    const gvPooled = gvisor ? await startServer(opts.bin, ['--runtime', 'runsc']) : null;
    const gvUnpooled = gvisor ? await startServer(opts.bin, ['--runtime', 'runsc', '--pool', '0']) : null;
    const peers = startPeers();
    let execId = null;
    let sessionId = null;
    let peerSessionOpen = false;
    try {
        const hello = await peers.request('hello', { runId: RUN_ID, network: 'none' });
        if (!hello.ok) throw new Error(`peers.py: ${hello.detail}`);
        peerInfo = hello;
        await settle(pooled, { pooled: true });
        await settle(unpooled, { pooled: false });
        await settle(allowlisted, { pooled: true });
        if (gvPooled) await settle(gvPooled, { pooled: true });
        if (gvUnpooled) await settle(gvUnpooled, { pooled: false });
        idleKb = rssKb(pooled.pid);
        log(`pooled server pid ${pooled.pid}: idle RSS ${(idleKb / 1024).toFixed(1)} MiB`);
        execId = (await docker(['run', '-d', '--label', `${BENCH_LABEL}=${RUN_ID}`, '--network', 'none',
            IMAGE, 'sleep', 'infinity'])).trim();
        // A live Python session on the pooled server: its calls reuse one container on purpose.
        const created = await pooled.client.callTool({ name: 'create_session', arguments: { language: 'python' } });
        sessionId = created.structuredContent?.session_id;
        if (!sessionId) throw new Error(`create_session failed: ${JSON.stringify(created).slice(0, 300)}`);
        // An open llm-sandbox session (its set-up untimed), for their per-call cost in a session.
        const opened = await callPeer(peers, 'open');
        if (!opened.ok) throw new Error(`llm-sandbox session open failed: ${opened.detail}`);
        peerSessionOpen = true;
        peerInfo.sessionSetup = opened.setup;

        const flowEvery = Math.max(1, Math.ceil(opts.calls / opts.flowCalls));
        lat.push(...await section('interleaved latency', () => interleavedLatency([
            { key: 'paced', name: 'ours, pooled (default), pool refilled before each call',
                call: () => callOurs(pooled.client), before: () => settle(pooled, { pooled: true, quick: true }) },
            { key: 'unpooled', name: 'ours, `--pool 0`', call: () => callOurs(unpooled.client) },
            { key: 'allowlist', name: 'ours, pooled, allow-list mode (`--egress`: sandboxes on the egress gateway\'s network), pool refilled before each call',
                call: () => callOurs(allowlisted.client), before: () => settle(allowlisted, { pooled: true, quick: true }) },
            ...(gvisor ? [
                { key: 'gvisor', name: 'ours, pooled, under gVisor (`--runtime runsc`), pool refilled before each call',
                    call: () => callOurs(gvPooled.client), before: () => settle(gvPooled, { pooled: true, quick: true }) },
                { key: 'gvisorUnpooled', name: 'ours, `--pool 0`, under gVisor (`--runtime runsc`)', call: () => callOurs(gvUnpooled.client) },
            ] : []),
            { key: 'session', name: 'ours, a call in a live Python session (create_session; state kept, not a fresh sandbox)',
                call: () => callOurs(pooled.client, sessionId) },
            { key: 'flow', name: 'code-sandbox-mcp / llm-sandbox per call, Engine API (SDK): session open, venv, pip upgrade, run, stop (10 s grace), remove',
                call: () => callPeer(peers, 'flow'), every: flowEvery, warmup: 0 },
            { key: 'lean', name: 'lower bound of that flow, Engine API (SDK): create, start, put_archive, exec, remove',
                call: () => callPeer(peers, 'lean') },
            { key: 'peerSession', name: 'llm-sandbox: a call in an open session, Engine API (SDK): mkdir, put_archive, exec',
                call: () => callPeer(peers, 'run') },
            { key: 'apiExec', name: 'exec into a running container over the Engine API (create, start, inspect)', call: () => callEngineExec(execId) },
            { key: 'exec', context: true, name: 'context: `docker exec` (CLI) into a running container', call: () => callDockerExec(execId) },
            { key: 'cli', context: true, name: 'context: `docker --version` (CLI launch alone)', call: callCliLaunch },
        ], opts)));
        gatewayRow = await section('HTTPS through the gateway', () => gatewayHttps(allowlisted, world, opts.gateway));
        for (const d of gatewayRow.details) problem(`HTTPS row: ${d}`);
    } finally {
        await world.close();
        if (peerSessionOpen) await callPeer(peers, 'close');
        if (sessionId)
            await pooled.client.callTool({ name: 'close_session', arguments: { session_id: sessionId } }).catch(() => {});
        if (execId) await docker(['rm', '-f', execId]).catch(() => {});
        await unpooled.close();
        await allowlisted.close();
        await gvPooled?.close();
        await gvUnpooled?.close();
    }
    if (gvPooled) await ensureNoContainers(gvPooled.label, 'ours, under gVisor');
    if (gvUnpooled) await ensureNoContainers(gvUnpooled.label, 'ours, --pool 0 under gVisor');
    await ensureNoContainers(unpooled.label, 'ours, --pool 0');
    // With its gateway and the gateway's networks (containersWithLabel leaves the gateway out).
    await ensureNoContainers(allowlisted.label, 'ours, allow-list mode');
    const gateways = await docker(['ps', '-aq', '--filter', `label=code-sandbox.pid=${allowlisted.pid}`]);
    const networks = await docker(['network', 'ls', '-q', '--filter', `label=code-sandbox.pid=${allowlisted.pid}`]);
    if (gateways.trim() || networks.trim())
        problem(`the allow-list server left its gateway or networks behind: ${gateways.trim()} ${networks.trim()}`);
    await ensureNoContainers(`${BENCH_LABEL}=${RUN_ID}`, 'peers.py flows and the exec container');

    // The realistic programs, one call in flight as the rows above (so that its loads count
    // towards "busy"), while the machine is still quiet: their sustained rows come later, with
    // the other sustained rows.
    real.latency = await section('realistic programs, latency', () => realisticLatency(opts, peers));

    // The pooled server alone: rounds of back-to-back calls.
    try {
        lat.unshift(...await section('back-to-back rounds', () => backToBackRounds(pooled, opts.b2bRounds)));
    } finally {
        await pooled.close();
    }
    await ensureNoContainers(pooled.label, 'ours, pooled');

    // Sustained calls, each row on a fresh server that first serves an untimed warm-up at the same
    // concurrency (the pool learns the demand, as it would under any sustained load). The clock
    // then runs from the first call until the pool is back to what the row found (refilled, the
    // used sandboxes removed): the sandboxes made before the clock started do not count as speed,
    // and the row carries all the engine work of its calls, as the ceiling does. At 4 in flight
    // the engine's own ceiling is measured right before and right after ours, so that a change of
    // load during the three hits both sides alike; the ceiling is both halves together.
    const runCeiling = async (server, when, variant) => {
        await settle(server, { pooled: true, exact: true });
        // Containers made like ours: the settings are copied from one of its sandboxes.
        const mine = (await containersWithLabel(server.label)).find((x) => x.language === 'python');
        if (!mine) throw new Error('no python sandbox of the server to copy settings from');
        const r = await section(`engine ceiling (${variant}), 4 in flight (${when})`,
            () => peers.request('ceiling', { total: Math.ceil(opts.throughputCalls / 2), concurrency: 4, container: mine.id, variant }));
        if (!r.ok) problem(`engine ceiling (${variant}, ${when}): ${r.okCalls ?? 0} of ${r.total ?? '?'} containers ran correctly: ${r.detail}`);
        log(`engine ceiling (${variant}) at 4 (${when}): ${r.okCalls ?? 0} in ${ms(r.wallMs)} ms`);
        return r;
    };
    try {
        for (const c of [1, 4, 8]) {
            const server = await startServer(opts.bin, []);
            try {
                await settle(server, { pooled: true, exact: true });
                const warmup = await warmToSteady(server, c, `warm-up, ${c} in flight`, opts);
                // At 4 in flight, trials of bare, hand-over, ours, hand-over, bare one after the
                // other on the same server: the machine's speed drifts by more than the gap being
                // measured (one ceiling's two halves have differed by 8 %), so the ratio is each
                // trial's own and the report gives their median beside every trial.
                const trials = c === 4 ? opts.ceilingTrials : 1;
                const bareHalves = [];
                const handoverHalves = [];
                for (let k = 1; k <= trials; k++) {
                    const before = c === 4
                        ? { bare: await runCeiling(server, 'before ours', 'bare'), handover: await runCeiling(server, 'before ours', 'handover') }
                        : null;
                    const count = await settle(server, { pooled: true, exact: true });
                    const what = `sustained, ${c} in flight${trials > 1 ? `, trial ${k}` : ''}`;
                    const t = await section(what,
                        () => throughput(server.client, c, opts.throughputCalls, server.pid, c === 8, what, { server }));
                    t.poolAtStart = count;
                    // Later trials follow the one before at the same load: no warm-up of their own.
                    t.warmupCalls = k === 1 ? warmup.calls : 0;
                    t.gained = Math.max(0, poolTarget(server) - count);
                    if (trials > 1) t.trial = k;
                    thr.push(t);
                    if (c === 8) busyKb = t.peakKb;
                    if (c === 4) {
                        const afterHandover = await runCeiling(server, 'after ours', 'handover');
                        const afterBare = await runCeiling(server, 'after ours', 'bare');
                        t.ceiling = joinHalves([before.bare, afterBare]);
                        t.handover = joinHalves([before.handover, afterHandover]);
                        t.vsCeiling = (t.perSecSettled ?? t.perSec) / t.ceiling.perSec;
                        t.vsHandover = (t.perSecSettled ?? t.perSec) / t.handover.perSec;
                        bareHalves.push(before.bare, afterBare);
                        handoverHalves.push(before.handover, afterHandover);
                        log(`${what}: ${ratio(t.vsCeiling)} the bare ceiling (${t.ceiling.perSec.toFixed(2)}/s), ${ratio(t.vsHandover)} the hand-over one (${t.handover.perSec.toFixed(2)}/s)`);
                    }
                }
                if (c === 4) {
                    ceiling = joinHalves(bareHalves);
                    handoverCeiling = joinHalves(handoverHalves);
                    log(`engine ceiling at 4: ${ceiling.perSec.toFixed(2)} containers/s bare, ${handoverCeiling.perSec.toFixed(2)}/s with the hand-over (${(ceiling.hostConfig ?? []).join(', ')})`);
                }
            } finally {
                await server.close();
            }
            await ensureNoContainers(server.label, `ours, sustained ${c}`);
        }
        // What a call costs the engine in requests, counted on the way (a counting socket in
        // front of the engine's): a row of its own, so that the counting costs the timed rows
        // nothing. From the first call to the pool being back where it started, as the
        // sustained rows: a call's refill is part of its cost.
        requestsRow = await section('engine requests per call, 4 in flight', async () => {
            const counter = await startEngineCounter();
            const server = await startServer(opts.bin, [], { env: { DOCKER_HOST: counter.host } });
            try {
                await settle(server, { pooled: true, exact: true });
                const { count } = await warmToSteady(server, 4, 'warm-up, 4 in flight, counted', opts);
                const before = counter.snapshot();
                const t = await throughput(server.client, 4, opts.requestCalls, server.pid, false,
                    'engine requests counted, 4 in flight', { server });
                const after = counter.snapshot();
                // Warm sandboxes gained over the row are work done ahead (as in the sustained
                // rows): the requests that made them are not a call's.
                const gained = Math.max(0, poolTarget(server) - count);
                for (const kind of ['POST /containers/create', 'POST /containers/{id}/attach', 'POST /containers/{id}/start'])
                    if (after.has(kind)) after.set(kind, after.get(kind) - gained);
                const perCall = requestsPer(before, after, Math.max(1, t.ok));
                log(`engine requests per call: ${Object.values(perCall).reduce((a, b) => a + b, 0).toFixed(2)} (${Object.entries(perCall).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')})`);
                return { calls: t.ok, perCall, gained };
            } finally {
                await server.close();
                await counter.close();
            }
        });
        // The same sustained row under gVisor, on a fresh server of its own.
        if (gvisor) {
            const server = await startServer(opts.bin, ['--runtime', 'runsc']);
            try {
                await settle(server, { pooled: true, exact: true });
                const warmup = await warmToSteady(server, 4, 'warm-up, 4 in flight, gVisor', opts);
                const count = warmup.count;
                const t = await section('sustained, 4 in flight, gVisor',
                    () => throughput(server.client, 4, opts.throughputCalls, server.pid, false, 'sustained, 4 in flight, gVisor',
                        { server }));
                t.gvisor = true;
                t.poolAtStart = count;
                t.warmupCalls = warmup.calls;
                t.gained = Math.max(0, poolTarget(server) - count);
                thr.push(t);
            } finally {
                await server.close();
            }
            await ensureNoContainers(server.label, 'ours, sustained 4, gVisor');
        }
        // The realistic programs' sustained rows: print(1) and pandas against the ceiling of each.
        real.sustained = await realisticSustained(opts, peers, section);
    } finally {
        await peers.close();
    }
    await ensureNoContainers(`${BENCH_LABEL}=${RUN_ID}`, 'engine ceiling');

    // Bursts on fresh servers: the first burst finds the pool at its base, the later ones a pool
    // that has seen one.
    burstRows = await section('bursts', () => bursts(opts.bin, opts.burstServers, opts.burstsAfter));

    // Start-up: spawn → initialize answered, median of several launches each.
    const initBefore = load1();
    const initT0 = now();
    const initStartMs = Date.now();
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
    sections.push({ name: 'start-up', before: initBefore, after: load1(), seconds: (now() - initT0) / 1000,
        startMs: initStartMs, endMs: Date.now() });

    // Several engines: after everything else, which it does not change (the fixture's daemons
    // are idle until now).
    let eng = null;
    if (opts.enginesEnv) eng = await section('several engines', () => severalEngines(opts));

    // The first run last: it builds and runs a whole engine, which would disturb every other row.
    let first = null;
    if (opts.firstRun) {
        const cores = os.cpus().length;
        for (let waited = 0; load1() >= cores && waited < 300; waited += 10) {
            if (waited % 60 === 0) log(`first run: waiting for the machine to be quiet (1-minute load ${load1().toFixed(2)})`);
            await sleep(10_000);
        }
        first = await section('first run (bench/firstrun.sh)', () => firstRun());
    }

    m.loadEnd = os.loadavg().map((v) => v.toFixed(2)).join(' ');
    m.loadEnd1 = load1();
    await measureOtherWork(watch, pre, m, sections);
    const { text } = report({ opts, m, lat, thr, init, idleKb, busyKb, eng, first, ceiling, handoverCeiling, requestsRow, burstRows, peerInfo, gatewayRow, real, sections,
        elapsedS: (now() - started) / 1000, command });
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
