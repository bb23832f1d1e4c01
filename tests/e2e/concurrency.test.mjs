// Parallel calls on one connection, and the container hardening seen from inside.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { startClient, testNoContainersLeft, textOf } from './helpers.mjs';

let client;
let closed = false;

async function close() {
    if (!closed) {
        closed = true;
        await client?.close();
    }
}

before(async () => {
    ({ client } = await startClient());
});
after(close);

// Job i prints its own token and i*i, writes its own stderr line and exits with status i.
function job(i) {
    if (i % 2 === 0) {
        return {
            tool: 'run_python_code',
            language: 'python',
            code: [
                'import sys, time',
                'time.sleep(1)',
                `print("job-${i}", ${i} * ${i})`,
                `print("err-${i}", file=sys.stderr)`,
                `sys.exit(${i})`,
            ].join('\n'),
        };
    }
    return {
        tool: 'run_javascript_code',
        language: 'javascript',
        code: `setTimeout(() => { console.log("job-${i}", ${i} * ${i}); console.error("err-${i}"); process.exitCode = ${i}; }, 1000);`,
    };
}

test('six parallel calls each get their own output', { timeout: 120_000 }, async () => {
    const jobs = [0, 1, 2, 3, 4, 5].map(job);
    const results = await Promise.all(jobs.map((j) => client.callTool({ name: j.tool, arguments: { code: j.code } })));
    results.forEach((r, i) => {
        const sc = r.structuredContent;
        assert.ok(sc, `job ${i}: no structuredContent: ${JSON.stringify(r)}`);
        assert.equal(sc.language, jobs[i].language, `job ${i} language`);
        assert.equal(sc.stdout, `job-${i} ${i * i}\n`, `job ${i} stdout`);
        assert.equal(sc.stderr, `err-${i}\n`, `job ${i} stderr`);
        assert.equal(sc.exit_code, i, `job ${i} exit code`);
        assert.equal(sc.timed_out, false, `job ${i} timed_out`);
        assert.equal(r.isError === true, i !== 0, `job ${i} isError`);
        const expectedText = `job-${i} ${i * i}\n[stderr]\nerr-${i}\n` + (i !== 0 ? `[exit code ${i}]` : '');
        assert.equal(textOf(r), expectedText, `job ${i} text`);
    });
});

const HARDENING_PROBE = `
import json, os
out = {"uid": os.getuid(), "net": sorted(os.listdir("/sys/class/net"))}
try:
    with open("/usr/e2e-probe", "w") as f:
        f.write("x")
    out["usr_write"] = "succeeded"
except OSError as e:
    out["usr_write"] = f"errno={e.errno} {e.strerror}"
with open("/proc/self/status") as f:
    out["capeff"] = [l.split()[1] for l in f if l.startswith("CapEff:")][0]
out["memory_limit"] = None
for p in ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max"):
    if os.path.exists(p):
        with open(p) as f:
            out["memory_limit"] = f.read().strip()
        break
print(json.dumps(out))
`;

test('the sandbox is hardened as seen from inside', { timeout: 60_000 }, async () => {
    const r = await client.callTool({ name: 'run_python_code', arguments: { code: HARDENING_PROBE } });
    assert.equal(r.structuredContent?.exit_code, 0, `probe failed: ${JSON.stringify(r)}`);
    const seen = JSON.parse(r.structuredContent.stdout);
    assert.equal(seen.uid, 1000, 'runs as uid 1000');
    assert.notEqual(seen.uid, 0, 'runs as root');
    assert.deepEqual(seen.net, ['lo'], 'network interfaces');
    assert.match(seen.usr_write, /Read-only file system/, '/usr must be read-only');
    assert.equal(seen.capeff, '0000000000000000', 'effective capabilities');
    assert.equal(seen.memory_limit, '536870912', 'memory limit (512 MiB)');
});

testNoContainersLeft(close);
