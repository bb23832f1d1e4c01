// What a bound secret costs a request: an HTTPS request through the egress gateway (cs-gateway)
// to a host a secret is bound to (the gateway terminates the sandbox's TLS with a certificate
// from its authority, puts the value in place of the placeholder, opens its own TLS to the host
// and masks the value in the answer) against the same request to a host no secret is bound to
// (a plain CONNECT tunnel: the gateway checks the CONNECT and the TLS server name, then passes
// bytes). Both on this machine, in one run, by one clock; no engine, no container.
//   node bench/secrets.mjs [--gateway PATH] [--requests N] [--warmup N] [--smoke] [--wait-quiet]
// Prints a Markdown section (the report's "Bound secrets") and, last, one JSON line. Exit status:
// 0, 1 when an answer was wrong (the run is not valid), 2 when a step failed. See README.md.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { summarize } from './stats.mjs';

const execFileP = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const BOUND = 'bound.test';   // the secret is bound to this host (and the origin's port)
const PLAIN = 'plain.test';   // the same origin by another name: no secret, a plain tunnel
const CREDENTIAL = 'bench';
const NAME = 'API_KEY';
// As the server makes them (EgressLease's form): the sandbox holds the placeholder.
const PLACEHOLDER = `csb-secret-${NAME}-${randomBytes(16).toString('hex')}`;
const VALUE = `sk-bench-${randomBytes(12).toString('hex')}`;
const TIMEOUT_MS = 15_000;   // one request, from the connection to the answer's end

const now = () => performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message) => console.error(`secrets: ${message}`);
const load1 = () => os.loadavg()[0];

function usage() {
    return `Usage: node bench/secrets.mjs [--gateway PATH] [--requests N] [--warmup N] [--smoke] [--wait-quiet]

  --gateway PATH  the cs-gateway program (default build/bin/cs-gateway in the repo)
  --requests N    timed requests of each kind, interleaved (default 200; --smoke: 10); as many
                  again of each kind, in a phase of its own, for the gateway's CPU time
  --warmup N      untimed requests of each kind first (default 10; --smoke: 2)
  --smoke         tiny counts: checks that both kinds run and answer correctly
  --wait-quiet    first wait (up to 5 minutes) for the 1-minute load to fall below the cores
Prints a Markdown section and a JSON line. Exit status 1 when an answer was wrong, 2 when a
step failed.`;
}

function parseArgs(argv) {
    const o = { gateway: path.join(ROOT, 'build/bin/cs-gateway'), requests: null, warmup: null, smoke: false, waitQuiet: false };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const value = () => {
            if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
            return argv[++i];
        };
        if (a === '--gateway') o.gateway = path.resolve(value());
        else if (a === '--requests') o.requests = Number(value());
        else if (a === '--warmup') o.warmup = Number(value());
        else if (a === '--smoke') o.smoke = true;
        else if (a === '--wait-quiet') o.waitQuiet = true;
        else if (a === '-h' || a === '--help') { console.log(usage()); process.exit(0); }
        else throw new Error(`unknown argument ${a}\n${usage()}`);
    }
    o.requests ??= o.smoke ? 10 : 200;
    o.warmup ??= o.smoke ? 2 : 10;
    if (!Number.isInteger(o.requests) || o.requests < 1) throw new Error('--requests needs a positive integer');
    if (!Number.isInteger(o.warmup) || o.warmup < 0) throw new Error('--warmup needs a whole number');
    return o;
}

const ms = (v, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
const signed = (v) => (Number.isFinite(v) ? `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(2)}` : '–');
const ratio = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '–');
const round = (v, digits = 3) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : null);

// ---------------------------------------------------------------- certificates

/**
 * With the openssl program, as tests/unit/tst_gateway.cpp makes them: a CA for the origin and the
 * origin's certificate from it (for both names), as a real host has; and the authority the
 * gateway signs with (CA:TRUE, keyCertSign, a subject key identifier), which the sandbox trusts.
 */
async function makeCertificates(dir) {
    const openssl = (args) => execFileP('openssl', args, { cwd: dir });
    writeFileSync(path.join(dir, 'ext'), `subjectAltName=DNS:${BOUND},DNS:${PLAIN}\n`);
    const root = ['req', '-x509', '-nodes', '-days', '2'];
    await Promise.all([
        (async () => {
            await openssl([...root, '-newkey', 'rsa:2048', '-keyout', 'ca.key', '-out', 'ca.pem',
                '-subj', '/CN=code-sandbox bench origin CA']);
            await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr',
                '-subj', `/CN=${BOUND}`]);
            await openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
                '-out', 'server.pem', '-days', '2', '-extfile', 'ext']);
        })(),
        openssl([...root, '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-keyout', 'authority.key',
            '-out', 'authority.pem', '-subj', '/CN=code-sandbox bench authority',
            '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign',
            '-addext', 'subjectKeyIdentifier=hash']),
    ]);
    const read = (f) => readFileSync(path.join(dir, f));
    return { ca: read('ca.pem'), key: read('server.key'), cert: read('server.pem'),
        authority: read('authority.pem'), authorityKey: read('authority.key') };
}

// ---------------------------------------------------------------- the origin

/**
 * An HTTPS server on loopback for both names: keeps the Authorization each request brought (by
 * its path, one per request) and answers a small JSON body that echoes it, as an API that echoes
 * a key would.
 */
async function startOrigin(certs) {
    const seen = new Map();   // request path -> the Authorization the origin got
    const server = https.createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
        const authorization = req.headers.authorization ?? null;
        seen.set(req.url, authorization);
        const body = JSON.stringify({ path: req.url, authorization });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
        res.end(body);
    });
    await new Promise((resolve, reject) => server.listen(0, '127.0.0.1', resolve).once('error', reject));
    return { seen, port: server.address().port, close: () => new Promise((r) => { server.close(r); server.closeAllConnections?.(); }) };
}

// ---------------------------------------------------------------- the gateway

/** cs-gateway on loopback, both names mapped to 127.0.0.1; its control channel and events. */
async function startGateway(bin) {
    const child = spawn(bin, ['--listen', '127.0.0.1:0', '--control-timeout-ms', '0',
        '--hosts', `${BOUND}=127.0.0.1,${PLAIN}=127.0.0.1`], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => { stderr += c.toString(); });
    const counts = new Map();   // event kind -> how many
    const refused = [];         // conn events whose verdict is not allow
    let leaked = false;         // the value on its stdout (it never may be)
    const replies = [];         // ok/error/ready, in order, for the control lines
    const waiting = [];
    const deliver = (event) => {
        const w = waiting.shift();
        if (w) w.resolve(event); else replies.push(event);
    };
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.includes(VALUE) || line.includes(Buffer.from(VALUE).toString('base64'))) leaked = true;
        let event;
        try { event = JSON.parse(line); } catch { event = { ev: 'unreadable', line }; }
        counts.set(event.ev, (counts.get(event.ev) ?? 0) + 1);
        if (event.ev === 'conn' && event.verdict !== 'allow') refused.push(event);
        if (['ready', 'ok', 'error', 'unreadable'].includes(event.ev)) deliver(event);
    });
    // 'close': after its stdout ended, so that every event line has been read.
    const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    exited.then(() => {
        for (const w of waiting.splice(0)) w.reject(new Error(`cs-gateway exited: ${stderr.trim().slice(-400)}`));
    });
    const next = () => (replies.length ? Promise.resolve(replies.shift())
        : new Promise((resolve, reject) => waiting.push({ resolve, reject })));
    const withTimeout = (p, what) => Promise.race([p, sleep(10_000).then(() => { throw new Error(`cs-gateway: no answer to ${what}`); })]);
    child.once('error', (e) => deliver({ ev: 'error', why: String(e.message ?? e) }));
    const ready = await withTimeout(next(), 'its start');
    if (ready.ev !== 'ready' || !(ready.port > 0)) throw new Error(`cs-gateway did not start: ${JSON.stringify(ready)} ${stderr.trim()}`);
    return {
        pid: child.pid, port: ready.port, counts, refused, leaked: () => leaked,
        /** One control line; resolves to its answer, throws on an error. */
        async control(fields, what) {
            child.stdin.write(`${fields.join('\t')}\n`);
            const answer = await withTimeout(next(), what);
            if (answer.ev !== 'ok') throw new Error(`cs-gateway refused ${what}: ${JSON.stringify(answer)}`);
            return answer;
        },
        /** Its CPU time so far (user + system, every thread, the ended ones too), in ms. */
        cpuMs(tick) {
            const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
            const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            return (Number(f[11]) + Number(f[12])) * tick;   // utime, stime (fields 14, 15)
        },
        /** Ends its control channel, which ends it. */
        async close() {
            if (child.exitCode !== null || child.signalCode !== null) return exited;
            child.stdin.end();
            const t = setTimeout(() => child.kill('SIGKILL'), 5000);
            const r = await exited;
            clearTimeout(t);
            return r;
        },
        kill: () => { if (child.exitCode === null) child.kill('SIGKILL'); },
    };
}

// ---------------------------------------------------------------- one request, as a sandbox

/**
 * As a program in a sandbox does it through HTTPS_PROXY: a new connection to the gateway,
 * `CONNECT host:port` with the sandbox's credential, TLS through the tunnel (trusting `ca` alone,
 * with the server name), `GET /r/<id>` with the placeholder in Authorization, the answer to the
 * connection's end (an intercepted answer has no length: its body ends with the connection).
 * Resolves to { ms, status, head, body } or rejects.
 */
function request({ gatewayPort, host, port, ca, id }) {
    return new Promise((resolve, reject) => {
        const t0 = now();
        const target = `${host}:${port}`;
        let done = false;
        let raw = null;
        let secure = null;
        const fail = (e) => {
            if (done) return;
            done = true;
            clearTimeout(timer);
            secure?.destroy();
            raw?.destroy();
            reject(e instanceof Error ? e : new Error(String(e)));
        };
        const timer = setTimeout(() => fail(new Error(`no whole answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
        raw = net.connect({ port: gatewayPort, host: '127.0.0.1', noDelay: true });
        raw.once('error', fail);
        raw.once('connect', () => {
            raw.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n` +
                `Proxy-Authorization: Basic ${Buffer.from(`sandbox:${CREDENTIAL}`).toString('base64')}\r\n\r\n`);
        });
        let head = Buffer.alloc(0);
        const onHead = (chunk) => {
            head = Buffer.concat([head, chunk]);
            const end = head.indexOf('\r\n\r\n');
            if (end < 0) return;
            raw.removeListener('data', onHead);
            raw.removeListener('close', early);
            raw.pause();
            const answer = head.subarray(0, end).toString('latin1');
            if (!/^HTTP\/1\.[01] 200 /.test(answer)) return fail(new Error(`CONNECT answered: ${head.toString('latin1').slice(0, 300)}`));
            if (head.length > end + 4) return fail(new Error('bytes after the CONNECT answer, before TLS'));
            secure = tls.connect({ socket: raw, servername: host, ca });
            secure.once('error', fail);
            const chunks = [];
            secure.on('data', (c) => chunks.push(c));
            secure.once('secureConnect', () => {
                secure.write(`GET /r/${id} HTTP/1.1\r\nHost: ${target}\r\nAuthorization: Bearer ${PLACEHOLDER}\r\n` +
                    'Accept: application/json\r\nConnection: close\r\n\r\n');
            });
            secure.once('end', () => {
                if (done) return;
                const elapsed = now() - t0;
                done = true;
                clearTimeout(timer);
                secure.destroy();
                const all = Buffer.concat(chunks).toString('utf8');
                const split = all.indexOf('\r\n\r\n');
                resolve({ ms: elapsed, all, status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(all)?.[1] ?? NaN),
                    head: split < 0 ? all : all.slice(0, split), body: split < 0 ? '' : all.slice(split + 4) });
            });
        };
        const early = () => fail(new Error(`the gateway closed before answering the CONNECT: ${head.toString('latin1').slice(0, 300)}`));
        raw.on('data', onHead);
        raw.once('close', early);
    });
}

/** A request of `kind` checked; resolves to { ok, ms, detail }. */
async function checked(kind, ctx, id) {
    const injected = kind === 'injected';
    const path_ = `/r/${id}`;
    try {
        const r = await request({ gatewayPort: ctx.gateway.port, host: injected ? BOUND : PLAIN, port: ctx.origin.port,
            ca: injected ? ctx.certs.authority : ctx.certs.ca, id });
        const got = ctx.origin.seen.get(path_);
        ctx.origin.seen.delete(path_);
        let echoed = null;
        try { echoed = JSON.parse(r.body).authorization; } catch { /* checked below */ }
        const wrong = [];
        if (r.status !== 200) wrong.push(`status ${r.status}`);
        // The origin got the value where the sandbox wrote the placeholder, or the placeholder.
        if (got !== `Bearer ${injected ? VALUE : PLACEHOLDER}`)
            wrong.push(`the origin got ${got === undefined ? 'no request' : got === `Bearer ${VALUE}` ? 'the value' : got === `Bearer ${PLACEHOLDER}` ? 'the placeholder' : JSON.stringify(got)}`);
        // The answer the sandbox sees: the placeholder echoed, never the value.
        if (echoed !== `Bearer ${PLACEHOLDER}`) wrong.push(`the body echoes ${echoed === `Bearer ${VALUE}` ? 'the value' : JSON.stringify(r.body.slice(0, 200))}`);
        if (r.all.includes(VALUE)) wrong.push('the value is in the answer the sandbox got');
        return { ok: wrong.length === 0, ms: r.ms, detail: wrong.join('; ') };
    } catch (e) {
        ctx.origin.seen.delete(path_);
        return { ok: false, ms: NaN, detail: String(e.message ?? e).slice(0, 300) };
    }
}

// ---------------------------------------------------------------- main

const KINDS = ['plain', 'injected'];

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    if (opts.waitQuiet) {
        const cores = os.cpus().length;
        for (let waited = 0; load1() >= cores && waited < 300; waited += 10) {
            if (waited % 60 === 0) log(`waiting for the machine to be quiet (1-minute load ${load1().toFixed(2)}, ${cores} cores)`);
            await sleep(10_000);
        }
    }
    let tick = 10;   // ms per clock tick of /proc/<pid>/stat
    try { tick = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 10; } catch { /* USER_HZ 100 */ }

    const dir = mkdtempSync(path.join(os.tmpdir(), 'code-sandbox-bench-secrets-'));
    let origin = null;
    let gateway = null;
    const problems = [];
    const problem = (m) => { problems.push(m); log(`PROBLEM: ${m}`); };
    const stop = () => { gateway?.kill(); rmSync(dir, { recursive: true, force: true }); };
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) process.once(signal, () => { stop(); process.exit(code); });
    let result;
    try {
        const certs = await makeCertificates(dir);
        origin = await startOrigin(certs);
        gateway = await startGateway(opts.gateway);
        const p = origin.port;
        await gateway.control(['authority', certs.authority.toString('base64'), certs.authorityKey.toString('base64')], 'authority');
        await gateway.control(['trust', certs.ca.toString('base64')], 'trust');
        await gateway.control(['grant', CREDENTIAL, '127.0.0.1', 'refuse', `${BOUND}:${p},${PLAIN}:${p}`], 'grant');
        await gateway.control(['secret', CREDENTIAL, NAME, PLACEHOLDER, Buffer.from(VALUE).toString('base64'), `${BOUND}:${p}`], 'secret');
        log(`cs-gateway pid ${gateway.pid} on 127.0.0.1:${gateway.port}, origin 127.0.0.1:${p}; ` +
            `${opts.warmup} warm-up, ${opts.requests} timed and ${opts.requests} CPU-phase requests of each kind`);
        const ctx = { gateway, origin, certs };
        const made = { plain: 0, injected: 0 };
        const failures = { plain: 0, injected: 0 };
        let id = 0;
        const one = async (kind, what) => {
            const r = await checked(kind, ctx, ++id);
            made[kind]++;
            if (!r.ok) {
                failures[kind]++;
                if (failures[kind] <= 3) problem(`${kind}, ${what}: ${r.detail}`);
            }
            return r;
        };

        const loadBefore = load1();
        for (let i = 0; i < opts.warmup; i++) for (const k of KINDS) await one(k, 'warm-up');
        // Interleaved, the first of each pair alternating (ABBA…), so that a change of load hits
        // both alike.
        const samples = { plain: [], injected: [] };
        const t0 = now();
        for (let i = 0; i < opts.requests; i++) {
            for (const k of i % 2 === 0 ? KINDS : [...KINDS].reverse()) {
                const r = await one(k, `request ${i}`);
                if (r.ok) samples[k].push(r.ms);
            }
        }
        const interleavedS = (now() - t0) / 1000;
        // The gateway's CPU per request: each kind in a phase of its own, so that its time is the
        // kind's alone. Also this process's (the client and the origin), for scale.
        const cpu = {};
        for (const k of KINDS) {
            const g0 = gateway.cpuMs(tick);
            const n0 = process.cpuUsage();
            const w0 = now();
            for (let i = 0; i < opts.requests; i++) await one(k, `CPU phase, request ${i}`);
            const n1 = process.cpuUsage(n0);
            cpu[k] = { gatewayMs: (gateway.cpuMs(tick) - g0) / opts.requests, nodeMs: (n1.user + n1.system) / 1000 / opts.requests,
                wallMs: (now() - w0) / opts.requests };
        }
        const loadAfter = load1();

        // Its whole output, to its end: one "secret" event per injected request, every
        // connection allowed, and the value never printed.
        const exit = await gateway.close();
        if (exit.code !== 0) problem(`cs-gateway ended with ${exit.code ?? exit.signal}`);
        const secretEvents = gateway.counts.get('secret') ?? 0;
        if (failures.injected === 0 && secretEvents !== made.injected)
            problem(`cs-gateway reported ${secretEvents} request(s) with a secret added, for ${made.injected} injected request(s)`);
        if (gateway.refused.length) problem(`cs-gateway refused ${gateway.refused.length} connection(s): ${JSON.stringify(gateway.refused[0]).slice(0, 300)}`);
        if (gateway.leaked()) problem('the secret\'s value appeared on cs-gateway\'s stdout');

        const stats = Object.fromEntries(KINDS.map((k) => [k, { ...summarize(samples[k]), failures: failures[k], made: made[k], ...cpu[k] }]));
        result = { opts, stats, tick, loadBefore, loadAfter, interleavedS, secretEvents, cores: os.cpus().length };
    } finally {
        await gateway?.close().catch(() => {});
        await origin?.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
    }
    const { text, json } = report(result, problems);
    console.log(text);
    console.log(JSON.stringify(json));
    if (problems.length) {
        log(`${problems.length} problem(s): the run is not valid`);
        process.exitCode = 1;
    }
}

function report({ opts, stats, tick, loadBefore, loadAfter, interleavedS, secretEvents, cores }, problems) {
    const { plain, injected } = stats;
    const diff = { p50: injected.p50 - plain.p50, p95: injected.p95 - plain.p95, mean: injected.mean - plain.mean,
        gatewayCpuMs: injected.gatewayMs - plain.gatewayMs };
    const ratios = { p50: injected.p50 / plain.p50, p95: injected.p95 / plain.p95, mean: injected.mean / plain.mean };
    const busy = Math.max(loadBefore, loadAfter) > cores;
    const L = [];
    L.push('## Bound secrets: a request with injection against a plain CONNECT', '');
    if (opts.smoke) L.push('> **Smoke run** (tiny counts): the numbers below are not meaningful.', '');
    if (busy) L.push(`> **Busy machine**: the 1-minute load was ${Math.max(loadBefore, loadAfter).toFixed(2)}, above the ${cores} cores; these figures are inflated by an unknown amount.`, '');
    L.push('`bench/secrets.mjs`: the egress gateway program (`cs-gateway`) on loopback, no engine and no container, and an',
        'HTTPS origin of the bench (Node) on loopback with a certificate for two names from a CA made for the run. Each',
        'request is what a sandbox\'s program does through `HTTPS_PROXY`, on a new connection: `CONNECT` with the sandbox\'s',
        'credential, TLS through the tunnel, `GET` with a placeholder in `Authorization`, the answer to the connection\'s end.',
        `**injected**: to \`${BOUND}\`, where a secret is bound: the gateway terminates the TLS with a certificate from its`,
        'authority (which the client trusts), puts the value in place of the placeholder, opens its own TLS to the origin',
        '(checked against the run\'s CA) and masks the value in the answer. **plain**: the same origin as',
        `\`${PLAIN}\`, no secret bound to it: the gateway checks the \`CONNECT\` and the TLS server name and passes bytes; the`,
        'client\'s TLS reaches the origin. Every answer is checked (the origin got the value, or the placeholder; the client',
        `sees the placeholder echoed, never the value). ${opts.requests} requests of each kind, interleaved (${opts.warmup} untimed`,
        `of each first; ${interleavedS.toFixed(1)} s), by one clock (Node \`performance.now()\`).`, '');
    L.push('| Request | ok | failed | min | p50 | mean | p95 | max | gateway CPU per request | client + origin CPU per request |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const [name, s] of [[`plain: \`CONNECT ${PLAIN}\`, a tunnel`, plain], [`injected: \`CONNECT ${BOUND}\`, secret added and masked`, injected]]) {
        L.push(`| ${name} | ${s.n} | ${s.failures} | ${ms(s.min)} | **${ms(s.p50)}** | ${ms(s.mean)} | ${ms(s.p95)} | ${ms(s.max)} | ${ms(s.gatewayMs)} | ${ms(s.nodeMs)} |`);
    }
    L.push(`| **injected − plain** | | | | **${signed(diff.p50)}** | ${signed(diff.mean)} | ${signed(diff.p95)} | | ${signed(diff.gatewayCpuMs)} | ${signed(injected.nodeMs - plain.nodeMs)} |`);
    L.push(`| injected / plain | | | | **${ratio(ratios.p50)}** | ${ratio(ratios.mean)} | ${ratio(ratios.p95)} | | | |`, '');
    L.push(`Times in ms. A bound secret adds **${ms(diff.p50)} ms** to a request at p50 (${ratio(ratios.p50)} the plain tunnel's), ${ms(diff.mean)} ms in the mean.`,
        `CPU: each kind again in a phase of its own (${opts.requests} requests each, one after the other); the gateway's from`,
        `\`/proc/<pid>/stat\` (user + system, every thread; ${tick} ms ticks, so ±${ms(tick / opts.requests, 3)} ms per request), the client's and`,
        'the origin\'s from this Node process (`process.cpuUsage()`). The gateway reported a secret added on',
        `${secretEvents} requests (every injected one). 1-minute load ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after (${cores} cores).`, '');
    if (problems.length) L.push('Problems in this part:', '', ...problems.map((p) => `- ${p}`), '');
    const side = (s) => ({ n: s.n, failures: s.failures, min: round(s.min), p50: round(s.p50), p95: round(s.p95),
        mean: round(s.mean), max: round(s.max), gatewayCpuMs: round(s.gatewayMs), clientOriginCpuMs: round(s.nodeMs) });
    const json = {
        section: 'secrets', ok: problems.length === 0, smoke: opts.smoke, requests: opts.requests, warmup: opts.warmup,
        plain: side(plain), injected: side(injected),
        diffMs: { p50: round(diff.p50), p95: round(diff.p95), mean: round(diff.mean), gatewayCpu: round(diff.gatewayCpuMs) },
        ratio: { p50: round(ratios.p50), p95: round(ratios.p95), mean: round(ratios.mean) },
        cpuTickMs: tick, load: { before: round(loadBefore, 2), after: round(loadAfter, 2), cores }, problems,
    };
    return { text: L.join('\n'), json };
}

main().catch((e) => {
    console.error(`secrets: ERROR: ${e.stack ?? e}`);
    process.exit(2);
});
