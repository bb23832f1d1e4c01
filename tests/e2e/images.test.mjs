// Which images are ready, through get_supported_languages: the engine's answer for the real
// images, and for images it does not have, what containers/build-images.sh's status files say
// (one being built, one whose builder is gone, one that nothing builds).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { startClient } from './helpers.mjs';

const ENGINE = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
const statusDir = mkdtempSync(join(tmpdir(), 'cs-image-status-'));

// A status file as build-images.sh writes it.
function writeStatus(image, fields) {
    const now = Math.floor(Date.now() / 1000);
    const all = { state: 'building', image, engine: ENGINE, pid: process.pid, started: now,
                  expected: now + 120, log: `/var/cache/code-sandbox/logs/e2e-${image}.log`,
                  ...fields };
    writeFileSync(join(statusDir, `${image}.status`),
        Object.entries(all).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
}

let server;
before(async () => {
    writeStatus('cse2ebuilding', {});
    // A builder that was killed outright: its pid is gone, so its "building" is not believed.
    writeStatus('cse2estale', { pid: spawnSync('true').pid });
    // Another engine's build says nothing about this one.
    writeStatus('cse2eelsewhere', { engine: 'unix:///nonexistent/docker.sock' });
    server = await startClient({
        args: ['--stdio', '--pool', '0', '--no-history', '--no-monitor',
               '--image', 'go=code-sandbox/cse2ebuilding:latest',
               '--image', 'ruby=code-sandbox/cse2estale:latest',
               '--image', 'java=code-sandbox/cse2eelsewhere:latest',
               '--image', 'rust=code-sandbox/cse2emissing:latest'],
        env: { DOCKER_HOST: ENGINE, CODE_SANDBOX_IMAGE_STATUS: statusDir },
    });
});
after(async () => {
    await server?.client.close();
    rmSync(statusDir, { recursive: true, force: true });
});

test('get_supported_languages says which images are ready, being built or missing', async () => {
    const r = await server.client.callTool({ name: 'get_supported_languages', arguments: {} });
    assert.notEqual(r.isError, true, JSON.stringify(r));
    const images = Object.fromEntries(r.structuredContent.images.map((i) => [i.language, i]));
    assert.deepEqual(Object.keys(images), r.structuredContent.languages);

    // The images of this machine are all there (the other tests need them).
    for (const language of ['python', 'javascript', 'typescript', 'bash', 'c', 'cpp', 'r']) {
        assert.equal(images[language].state, 'ready', JSON.stringify(images[language]));
        assert.equal(images[language].message, undefined);
    }
    assert.equal(images.python.image, 'code-sandbox/python:latest');

    const go = images.go;
    assert.equal(go.image, 'code-sandbox/cse2ebuilding:latest');
    assert.equal(go.state, 'building', JSON.stringify(go));
    assert.ok(go.seconds_left > 100 && go.seconds_left <= 120, JSON.stringify(go));
    assert.match(go.message, /^the image for go is being built \(about \d+ s left\); try again shortly$/);

    for (const [language, image] of [['ruby', 'cse2estale'], ['java', 'cse2eelsewhere'],
                                     ['rust', 'cse2emissing']]) {
        const i = images[language];
        assert.equal(i.state, 'missing', JSON.stringify(i));
        assert.equal(i.seconds_left, undefined);
        assert.match(i.message, new RegExp(`does not have code-sandbox/${image}:latest; build it with containers/build-images\\.sh`));
    }

    // In words, after the language list and the engines.
    assert.equal(r.content.length, 3);
    const text = r.content[2].text;
    assert.match(text, /^Images ready: python, javascript, typescript, bash, c, cpp, r\.\nNot ready:\n/);
    assert.match(text, /\n- go: the image for go is being built \(about \d+ s left\)/);
    assert.match(text, /\n- rust: the engine does not have code-sandbox\/cse2emissing:latest/);
});

test('a call for a language whose image is being built says so', async () => {
    writeStatus('cse2ebuilding', {});
    const r = await server.client.callTool({ name: 'execute_code',
        arguments: { language: 'go', code: 'package main\nfunc main() {}' } });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(r.content[0].text,
        /The image for go is being built \(about \d+ s left\); try again shortly\./);
});

test('a failed build is reported with its log', async () => {
    writeStatus('cse2ebuilding', { state: 'failed' });
    // The engine's answer is kept 3 s; the builder's status is read afresh each time.
    const r = await server.client.callTool({ name: 'get_supported_languages', arguments: {} });
    const go = r.structuredContent.images.find((i) => i.language === 'go');
    assert.equal(go.state, 'failed', JSON.stringify(go));
    assert.equal(go.message,
        'the last build of the image for go failed (log: /var/cache/code-sandbox/logs/e2e-cse2ebuilding.log)');
});
