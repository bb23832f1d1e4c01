// Sandbox containers are removed after every kind of run, when the client
// disconnects, and when the server is stopped with SIGTERM mid-run.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, test } from 'node:test';
import { promisify } from 'node:util';

import {
    DOCKER, rawInitialize, sandboxContainers, spawnRaw, startClient, testNoContainersLeft,
    textOf, waitForNoContainers, waitForSomeContainer,
} from './helpers.mjs';

const execFileP = promisify(execFile);
const started = [];
after(() => started.forEach((s) => s.kill()));

test('no container is left after normal, timed-out and failing runs once the client closes',
    { timeout: 90_000 }, async () => {
        const { client } = await startClient();
        try {
            const ok = await client.callTool({ name: 'run_python_code', arguments: { code: 'print("ok")' } });
            assert.equal(textOf(ok), 'ok\n');

            const slow = await client.callTool({ name: 'execute_code', arguments: { code: 'while True: pass', timeout: 2 } });
            assert.equal(slow.structuredContent.timed_out, true);

            const bad = await client.callTool({ name: 'run_javascript_code', arguments: { code: 'throw new Error("nope")' } });
            assert.equal(bad.isError, true);
            assert.match(bad.structuredContent.stderr, /Error: nope/);
        } finally {
            await client.close();
        }
        const left = await waitForNoContainers(10_000);
        assert.deepEqual(left, [], `containers left after the client closed: ${left.join(' ')}`);
    });

test('SIGTERM during a run stops the server within 10 s and removes the container',
    { timeout: 90_000 }, async () => {
        assert.deepEqual(await waitForNoContainers(30_000), [], 'precondition: no sandbox container (an earlier test\'s may still be being removed)');
        const server = spawnRaw();
        started.push(server);
        const init = await rawInitialize(server);
        assert.equal(init.result?.serverInfo?.name, 'code-sandbox', JSON.stringify(init));

        server.send({
            jsonrpc: '2.0', id: 2, method: 'tools/call',
            params: { name: 'run_python_code', arguments: { code: 'import time\ntime.sleep(60)\nprint("done")' } },
        });
        const running = await waitForSomeContainer(15_000);
        assert.notDeepEqual(running, [], `no sandbox container appeared; stderr:\n${server.stderr()}`);

        const sentAt = Date.now();
        server.child.kill('SIGTERM');
        const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 10_000).unref());
        const exit = await Promise.race([server.exited, timeout]);
        assert.ok(exit, `server still running 10 s after SIGTERM; stderr:\n${server.stderr()}`);
        assert.ok(exit.at - sentAt < 10_000, `took ${exit.at - sentAt} ms`);
        assert.equal(exit.signal, null, 'the server should handle SIGTERM, not die from it');
        assert.equal(exit.code, 0, `exit code; stderr:\n${server.stderr()}`);

        const left = await waitForNoContainers(10_000);
        assert.deepEqual(left, [], `containers left after SIGTERM: ${left.join(' ')}`);
    });

test('after kill -9 mid-run, the next server start removes what the dead one left',
    { timeout: 90_000 }, async () => {
        assert.deepEqual(await waitForNoContainers(30_000), [], 'precondition: no sandbox container (an earlier test\'s may still be being removed)');
        const victim = spawnRaw();
        started.push(victim);
        await rawInitialize(victim);
        victim.send({
            jsonrpc: '2.0', id: 2, method: 'tools/call',
            params: { name: 'run_python_code', arguments: { code: 'import time\ntime.sleep(60)' } },
        });
        let orphans = await waitForSomeContainer(15_000);
        assert.notDeepEqual(orphans, [], `no sandbox container appeared; stderr:\n${victim.stderr()}`);
        // One of its sandboxes removed from outside as `docker rm -f` does, without its volumes:
        // its work volume stays, labelled with the victim's pid, for the next instance to reap.
        const volumesOfVictim = async () => (await execFileP(DOCKER, ['volume', 'ls', '-q', '--filter',
            `label=code-sandbox.pid=${victim.child.pid}`])).stdout.split('\n').filter(Boolean);
        const volumesBefore = await volumesOfVictim();
        await execFileP(DOCKER, ['rm', '-f', orphans[0]]);
        orphans = orphans.slice(1);
        victim.child.kill('SIGKILL');
        const exit = await victim.exited;
        assert.equal(exit.signal, 'SIGKILL');
        // Nothing can clean up after SIGKILL: the containers are still there…
        const stillThere = await sandboxContainers();
        assert.ok(orphans.every((id) => stillThere.includes(id)),
            `expected the orphans to survive SIGKILL: ${orphans} vs ${stillThere}`);

        // …until the next instance starts and reaps them (without a pool, so that any container
        // seen afterwards would be a leftover).
        const next = spawnRaw({ args: ['--stdio', '--pool', '0'] });
        started.push(next);
        await rawInitialize(next);
        const left = await waitForNoContainers(15_000);
        assert.deepEqual(left, [], `orphans not reaped; stderr:\n${next.stderr()}`);
        assert.match(next.stderr(), /removed \d+ container\(s\) left behind/);
        assert.ok(volumesBefore.length > 0, 'precondition: the victim\'s sandboxes have work volumes');
        const deadline = Date.now() + 15_000;
        let volumesLeft = await volumesOfVictim();
        while (volumesLeft.length > 0 && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 250));
            volumesLeft = await volumesOfVictim();
        }
        assert.deepEqual(volumesLeft, [], `work volumes of the dead instance not reaped; stderr:\n${next.stderr()}`);
        assert.match(next.stderr(), /removed \d+ leftover\(s\) whose sandbox or server is gone \(work volumes/);
        next.child.stdin.end();
        const done = await next.exited;
        assert.equal(done.code, 0, next.stderr());
    });

testNoContainersLeft();
