// The CPU other work takes while the benchmark runs, sampled every 2 s from /proc by a process of
// its own (bench.mjs spawns it, so that reading every process's stat never holds up the event
// loop of a timed call). Usage: node bench/cpuwatch.mjs BENCH_PID [FILE]
//
// Each process is "ours" or "other". Ours: BENCH_PID and all its descendants (the servers it
// launches, peers.py, the docker CLI, this sampler); the container engines (comm dockerd,
// containerd, containerd-shim*, runc, docker-proxy, conmon, podman, runsc*) and all their
// descendants, which include every container's processes (they descend from containerd-shim).
// Kernel threads (pid 2, kthreadd, and its children) are neither: they are left out. Everything
// else is other work: a build, a test run, another user's program, the machine's daemons.
//
// The first line, {"t", "start": true, "hz", "procs"}, says the sampler is up. Then one JSON line
// per sample, to stdout or to FILE:
//   {"t": epoch ms, "dt": s since the previous sample, "other": CPU s of other processes in that
//    interval, "steal": steal s (all CPUs, /proc/stat), "ours": CPU s of ours,
//    "top": [{"comm", "s"}, ...]: the 3 other commands that used the most CPU in it}
// CPU s of a process in an interval: the growth of its utime+stime+cutime+cstime (cutime and
// cstime: its children that it reaped, so a build's short compilers count through their make);
// the whole of them for a process that appeared since the previous sample. A process that ended
// in the interval has its last-seen times taken off the cutime growth of the one that reaped it
// (they were counted already, and come back there), and the rest of that growth goes to the
// ended process's class: pid 1 reaping the engine's shims is not other work. The sampler exits
// when BENCH_PID is gone.
import { execFileSync } from 'node:child_process';
import { createWriteStream, readFileSync, readdirSync } from 'node:fs';

const INTERVAL_MS = 2000;
const TOP = 3;
// The container engines, by /proc comm (at most 15 characters: containerd-shim-runc-v2 reads
// "containerd-shim"; gVisor's are runsc, runsc-gofer, runsc-sandbox).
const ENGINE_COMM = /^(dockerd|containerd|containerd-shim.*|runc|docker-proxy|conmon|podman|runsc.*)$/;

const benchPid = Number(process.argv[2]);
if (!Number.isInteger(benchPid) || benchPid < 1) {
    console.error('usage: node bench/cpuwatch.mjs BENCH_PID [FILE]');
    process.exit(2);
}
const out = process.argv[3] ? createWriteStream(process.argv[3], { flags: 'a' }) : process.stdout;
// The reader gone (bench.mjs ended): nothing left to do.
out.on('error', () => process.exit(0));

// Clock ticks per second, the unit of /proc's times (normally 100).
let hz = 100;
try { hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100; } catch { /* 100 */ }

/**
 * One process's /proc/PID/stat, or null when it is gone. comm may hold spaces and parentheses:
 * it runs from the first '(' to the last ')', and the numbered fields follow that.
 */
function readStat(pid) {
    let s;
    try { s = readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return null; }
    const close = s.lastIndexOf(')');
    const f = s.slice(close + 2).split(' ');   // f[0] is field 3 (state)
    const n = (field) => Number(f[field - 3]);
    return {
        pid, comm: s.slice(s.indexOf('(') + 1, close), ppid: n(4),
        own: n(14) + n(15), kids: n(16) + n(17),   // utime+stime, cutime+cstime
        // pid and start time together: a pid used again is another process.
        key: `${pid}:${n(22)}`,
    };
}

/** Every process now: pid -> its stat. */
function snapshot() {
    const procs = new Map();
    for (const name of readdirSync('/proc')) {
        if (!/^\d+$/.test(name)) continue;
        const p = readStat(Number(name));
        if (p) procs.set(p.pid, p);
    }
    return procs;
}

// A process's class, kept by key once ours: a descendant of ours whose parent ended (it is
// then the child of pid 1 or of a subreaper) stays ours.
const oursKeys = new Set();

/** Sets p.cls to 'ours', 'other' or 'kernel' for every process, from its ancestors. */
function classify(procs) {
    const of = (p) => {
        if (p.cls) return p.cls;
        if (p.pid === 2 || p.ppid === 2) p.cls = 'kernel';
        else if (p.pid === benchPid || oursKeys.has(p.key) || ENGINE_COMM.test(p.comm)) p.cls = 'ours';
        else {
            const parent = procs.get(p.ppid);
            p.cls = parent && parent.pid !== p.pid ? of(parent) : 'other';
        }
        if (p.cls === 'ours') oursKeys.add(p.key);
        return p.cls;
    };
    for (const p of procs.values()) of(p);
    // Forget the ended ones.
    const alive = new Set([...procs.values()].map((p) => p.key));
    for (const k of oursKeys) if (!alive.has(k)) oursKeys.delete(k);
}

/**
 * The ticks used between two snapshots, by class ({ ours, other, kernel }) and, for other work,
 * by command (see the head of the file).
 */
function usage(prev, cur) {
    // Ended processes by who reaped them, their nearest ancestor still there (normally the
    // parent; pid 1 or a subreaper for orphans: the engine's shims are children of pid 1).
    const reaped = new Map();   // reaper key -> { ticks: their last-seen times, classes }
    for (const d of prev.values()) {
        if (cur.get(d.pid)?.key === d.key) continue;
        for (let a = prev.get(d.ppid), hops = 0; a && hops < 64; a = prev.get(a.ppid), hops++) {
            if (cur.get(a.pid)?.key !== a.key) continue;
            const r = reaped.get(a.key) ?? { ticks: 0, classes: new Set() };
            r.ticks += d.own + d.kids;
            r.classes.add(d.cls);
            reaped.set(a.key, r);
            break;
        }
    }
    const sum = { ours: 0, other: 0, kernel: 0 };
    const byComm = new Map();
    const add = (cls, comm, ticks) => {
        sum[cls] += ticks;
        if (cls === 'other' && ticks > 0) byComm.set(comm, (byComm.get(comm) ?? 0) + ticks);
    };
    for (const p of cur.values()) {
        const q = prev.get(p.pid);
        if (q?.key !== p.key) { add(p.cls, p.comm, p.own + p.kids); continue; }
        add(p.cls, p.comm, p.own - q.own);
        // Its cutime's growth, less what its reaped descendants were seen to use (counted then):
        // what they used since is theirs. So pid 1 reaping a shim adds the shim's last seconds
        // and its container's to ours, not to pid 1. Mixed classes: other (never hide other
        // work); never below 0 (one not waited for, or reaped elsewhere).
        const r = reaped.get(p.key);
        const cls = !r ? p.cls : r.classes.has('other') ? 'other' : r.classes.has('ours') ? 'ours' : p.cls;
        add(cls, p.comm, Math.max(0, p.kids - q.kids - (r?.ticks ?? 0)));
    }
    return { sum, byComm };
}

/** The steal ticks so far, all CPUs (/proc/stat "cpu" line, the 8th value). */
function stealTicks() {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    return Number(line[8]) || 0;
}

const round = (v) => Math.round(v * 1000) / 1000;

let prev = snapshot();
classify(prev);
let prevSteal = stealTicks();
let prevAt = performance.now();
out.write(`${JSON.stringify({ t: Date.now(), start: true, hz, procs: prev.size })}\n`);

setInterval(() => {
    try { process.kill(benchPid, 0); } catch { process.exit(0); }
    const cur = snapshot();
    classify(cur);
    const steal = stealTicks();
    const at = performance.now();
    const { sum, byComm } = usage(prev, cur);
    const top = [...byComm].sort((a, b) => b[1] - a[1]).slice(0, TOP)
        .map(([comm, ticks]) => ({ comm, s: round(ticks / hz) }));
    out.write(`${JSON.stringify({ t: Date.now(), dt: round((at - prevAt) / 1000), other: round(sum.other / hz),
        steal: round((steal - prevSteal) / hz), ours: round(sum.ours / hz), top })}\n`);
    prev = cur;
    prevSteal = steal;
    prevAt = at;
}, INTERVAL_MS);
