// The run view in a real host in a real browser: headless Chromium plays the chat client. Its page
// embeds the view (the server's ui://code-sandbox/run.html, read over MCP) in a sandboxed frame
// and talks to it through the official host bridge of @modelcontextprotocol/ext-apps; the view's
// tools/call requests reach the server through the SDK client here, which forwards only the tools
// that the view may call. Five runs, each in light and in dark: a plot with an output file, a
// long run stopped from the view's own Stop button, a run that fails, a run's workspaces, and a
// session's call with the snapshot kept after it. Screenshots of each go
// to $CS_VIEW_SCREENSHOTS (a temporary folder otherwise).
//
// This file lives in a folder of its own so that e2e_stdio, which takes tests/e2e/*.test.mjs,
// leaves it to its own ctest, e2e_view_browser.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { BIN, MINIMAL_PATH, testNoContainersLeft } from '../helpers.mjs';

const CHROMIUM = '/usr/bin/chromium';
const HERE = dirname(fileURLToPath(import.meta.url));
const VIEW = 'ui://code-sandbox/run.html';
const MIME = 'text/html;profile=mcp-app';
const STOPPED = "stopped by the user from the run's view in the chat";

const PLOT_CODE = [
    'import os',
    'import matplotlib.pyplot as plt',
    'plt.plot([1, 3, 2]); plt.title("demo"); plt.show()',
    'with open(os.path.join(os.environ["OUTPUT_DIR"], "table.csv"), "w") as f:',
    '    f.write("x,y\\n1,1\\n2,3\\n3,2\\n")',
    'print("plotted")',
].join('\n');
const STREAM_CODE = 'import time\nfor i in range(600):\n    print("line", i, flush=True)\n    time.sleep(0.1)';
const FAIL_CODE = 'def f():\n    raise ValueError("boom")\n\nprint("about to fail")\nf()';

// The host page: a chat column with a slot for the view. Only the bundle is served beside it; the
// view itself arrives as srcdoc, so it loads nothing at all.
const HOST_PAGE = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>view host</title>
<style>
body { margin: 0; padding: 16px; background: #faf9f5; font: 14px system-ui, sans-serif; }
body[data-theme="dark"] { background: #1a1a18; }
#slot { width: 720px; }
#slot iframe { display: block; width: 100%; height: 120px; border: 1px solid #dedcd4; border-radius: 10px; }
body[data-theme="dark"] #slot iframe { border-color: #3e3e38; }
</style></head>
<body><div id="slot"></div><script type="module" src="/host.js"></script></body></html>`;

const skip = existsSync(CHROMIUM) ? false
    : `${CHROMIUM} is missing (Debian's chromium package; ./dev.sh test installs it)`;

describe('the run view in Chromium, hosted with the ext-apps AppBridge', { skip }, () => {
    let client;
    let browser;
    let page;
    let http;
    let html;
    let screenshots;
    const tools = new Map();
    // Every tools/call the view made through the host, and the ones the host refused.
    const forwarded = [];
    const refused = [];
    // While set, the answer to the view's stop_run waits for it: see the stopped run.
    let stopAnswerHeld = null;

    before(async () => {
        // Imported here so that a machine without the browser skips before needing them.
        const { build } = await import('esbuild');
        const { default: puppeteer } = await import('puppeteer-core');

        const transport = new StdioClientTransport({
            command: BIN, args: ['--stdio'], env: { PATH: MINIMAL_PATH }, stderr: 'pipe' });
        client = new Client({ name: 'code-sandbox-view-host', version: '1.0.0' },
            { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [MIME] } } } });
        await client.connect(transport);
        for (const t of (await client.listTools()).tools) tools.set(t.name, t);
        assert.equal(tools.get('run_python_code')?._meta?.ui?.resourceUri, VIEW,
            'the server offers the view to a client that declares the extension');
        const { contents: [resource] } = await client.readResource({ uri: VIEW });
        assert.equal(resource.mimeType, MIME);
        html = resource.text;

        const bundle = await build({
            entryPoints: [join(HERE, '..', 'browser', 'host-entry.mjs')],
            bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent',
        });
        const hostJs = bundle.outputFiles[0].text;
        // Served over loopback rather than from file:// because Chromium loads no module script
        // from a file URL.
        http = createServer((req, res) => {
            if (req.url === '/host.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(hostJs);
            else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(HOST_PAGE);
            else res.writeHead(404).end();
        });
        await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));

        browser = await puppeteer.launch({
            executablePath: CHROMIUM,
            headless: true, // --headless=new
            // As root: Chromium's own sandbox refuses to start; and there is no GPU to use.
            args: ['--no-sandbox', '--disable-gpu'],
        });
        page = await browser.newPage();
        await page.setViewport({ width: 760, height: 900 });
        // The spec has hosts pass on only the tools whose visibility includes "app" (the default
        // when a tool says nothing), and only tools the server listed.
        await page.exposeFunction('hostCallTool', async (params) => {
            const tool = tools.get(params.name);
            const visibility = tool?._meta?.ui?.visibility ?? ['model', 'app'];
            if (!tool || !visibility.includes('app')) {
                refused.push(params.name);
                throw new Error(`the view may not call ${params.name}`);
            }
            forwarded.push(params.name);
            const result = await client.callTool(params, undefined, { timeout: 60_000 });
            if (params.name === 'stop_run') await stopAnswerHeld;
            return result;
        });
        await page.goto(`http://127.0.0.1:${http.address().port}/`);
        screenshots = process.env.CS_VIEW_SCREENSHOTS || mkdtempSync(join(tmpdir(), 'cs-view-'));
        mkdirSync(screenshots, { recursive: true });
    });

    after(async () => {
        await browser?.close();
        http?.close();
        await client?.close();
    });

    /** The frame the view runs in, once its page is there. */
    async function viewFrame() {
        const element = await page.waitForSelector('#slot iframe');
        const frame = await element.contentFrame();
        await frame.waitForSelector('#status');
        return frame;
    }

    /**
     * As a chat client does with a tool call: starts it, and meanwhile embeds the view and hands
     * it the call's arguments. Returns the pending call and the view's frame.
     */
    async function startRun(name, args, theme) {
        const call = client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
        await page.evaluate((view) => window.mountView(view),
            { html, tool: tools.get(name), args, theme });
        return { call, frame: await viewFrame() };
    }

    async function showResult(result) {
        await page.evaluate((r) => window.showToolResult(r), result);
    }

    const text = (frame, selector) => frame.$eval(selector, (e) => e.textContent);

    /** Screenshot of the view as it sits in the page, once its height has settled. */
    async function shoot(name) {
        await page.evaluate(() => window.settled());
        const element = await page.$('#slot');
        const path = join(screenshots, `view-${name}.png`);
        await element.screenshot({ path });
        return path;
    }

    /**
     * Both themes: the one the view started in (from ui/initialize), then the other by
     * ui/notifications/host-context-changed. Names the files in the test's output.
     */
    async function shootBoth(t, frame, name, first) {
        const second = first === 'light' ? 'dark' : 'light';
        const background = () => frame.$eval('body', (e) => getComputedStyle(e).backgroundColor);
        assert.equal(await frame.$eval('html', (e) => e.dataset.theme), first);
        const firstBackground = await background();
        const paths = [await shoot(`${name}-${first}`)];
        await page.evaluate((theme) => window.switchTheme(theme), second);
        await frame.waitForFunction((theme) => document.documentElement.dataset.theme === theme, {}, second);
        assert.notEqual(await background(), firstBackground, 'the view repaints in the new theme');
        paths.push(await shoot(`${name}-${second}`));
        t.diagnostic(`screenshots: ${paths.join(' ')}`);
    }

    test('a plot and an output file', { timeout: 90_000 }, async (t) => {
        const { call, frame } = await startRun('run_python_code', { code: PLOT_CODE }, 'light');
        // run_python_code's arguments name no language: the view takes it from toolInfo.
        await frame.waitForFunction(() => document.getElementById('language').textContent === 'python');
        const result = await call;
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        await showResult(result);

        await frame.waitForFunction(() => document.getElementById('status').textContent === 'Exit 0');
        assert.equal(await frame.$eval('#status', (e) => e.className), 'status ok');
        assert.match(await text(frame, '#output'), /^plotted\n?$/);
        assert.match(await text(frame, '#figures'), /^\d+ ms · peak \d+(\.\d)? MiB\b/);
        assert.match(await text(frame, '#code'), /plt\.title\("demo"\)/);

        // The figure arrived as a PNG the browser could decode.
        await frame.waitForFunction(() => [...document.querySelectorAll('#plots img')]
            .every((img) => img.complete && img.naturalWidth > 0));
        const sizes = await frame.$$eval('#plots img', (imgs) => imgs.map((i) => [i.naturalWidth, i.naturalHeight]));
        assert.equal(sizes.length, 1, 'one figure');
        assert.ok(sizes[0][0] > 100 && sizes[0][1] > 100, `figure of ${sizes[0]}`);
        assert.equal(await frame.$eval('#plots-section', (e) => e.hidden), false);

        // The file's row: name and size; Download asks the host, which declared downloadFile.
        const rows = await frame.$$eval('#files tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
        assert.deepEqual(rows, [['table.csv', '16 B', 'Download']]);
        await frame.click('#files a.dl');
        await page.waitForFunction(() => window.downloads().length > 0);
        const [download] = await page.evaluate(() => window.downloads());
        assert.equal(download.contents[0].resource.uri, 'sandbox://outputs/table.csv');
        assert.equal(download.contents[0].resource.text, 'x,y\n1,1\n2,3\n3,2\n');
        assert.equal(await frame.$eval('#network-section', (e) => e.hidden), true);

        await shootBoth(t, frame, 'plot', 'light');
    });

    test('a long run that prints as it goes, stopped from the view', { timeout: 120_000 }, async (t) => {
        forwarded.length = 0;
        const { call, frame } = await startRun('run_python_code', { code: STREAM_CODE }, 'dark');
        // The output streams in through read_run_output while the call is still open.
        await frame.waitForFunction(() => document.getElementById('output').textContent.includes('line 5\n'),
            { timeout: 60_000 });
        assert.match(await text(frame, '#output'), /^line 0\nline 1\nline 2\nline 3\nline 4\nline 5\n/);
        assert.equal(await text(frame, '#status'), 'Running…');
        assert.equal(await frame.$eval('#stop', (e) => !e.hidden && !e.disabled), true, 'Stop is offered');
        assert.ok(forwarded.includes('read_run_output'), `the view followed the run: ${forwarded}`);

        // The server answers stop_run and ends the call at about the same moment, and a host may
        // hand the view the call's result first: this one always does, so that the final status
        // must survive the late answer to the Stop button.
        let release;
        stopAnswerHeld = new Promise((resolve) => { release = resolve; });
        await frame.click('#stop');
        const result = await call;
        assert.equal(result.structuredContent.cancelled, true, JSON.stringify(result.structuredContent));
        assert.equal(result.structuredContent.cancel_reason, STOPPED);
        assert.equal(forwarded.filter((n) => n === 'stop_run').length, 1, `one stop_run: ${forwarded}`);
        await showResult(result);
        release();
        await page.waitForFunction(() => window.answered().includes('stop_run'));
        await page.evaluate(() => window.roundTrip());
        stopAnswerHeld = null;

        assert.equal(await text(frame, '#status'), `Cancelled (${STOPPED})`);
        assert.equal(await frame.$eval('#status', (e) => e.className), 'status bad');
        assert.equal(await frame.$eval('#stop', (e) => e.hidden), true, 'no Stop once it ended');
        assert.match(await text(frame, '#output'), /^line 0\n(line \d+\n)*line 5\n/);

        await shootBoth(t, frame, 'stopped', 'dark');
    });

    test('a run that fails', { timeout: 90_000 }, async (t) => {
        const { call, frame } = await startRun('run_python_code', { code: FAIL_CODE }, 'light');
        const result = await call;
        assert.equal(result.structuredContent.exit_code, 1, JSON.stringify(result.structuredContent));
        await showResult(result);

        await frame.waitForFunction(() => document.getElementById('status').textContent === 'Exit 1');
        assert.equal(await frame.$eval('#status', (e) => e.className), 'status bad');
        // stdout as it is, the traceback in the danger colour.
        const pieces = await frame.$$eval('#output span', (spans) => spans.map((s) => [s.className, s.textContent]));
        assert.deepEqual(pieces.map(([cls]) => cls), ['', 'err']);
        assert.equal(pieces[0][1], 'about to fail\n');
        assert.match(pieces[1][1], /^Traceback \(most recent call last\):\n[\s\S]*ValueError: boom\n?$/);
        const [errColour, statusColour] = await frame.evaluate(() => [
            getComputedStyle(document.querySelector('#output .err')).color,
            getComputedStyle(document.getElementById('status')).color]);
        assert.equal(errColour, statusColour, 'the traceback is in the same red as the status');
        assert.match(errColour, /^rgb\((\d+), (\d+), (\d+)\)$/);
        const [r, g, b] = errColour.match(/\d+/g).map(Number);
        assert.ok(r > 150 && r > 2 * g && r > 2 * b, `red, not ${errColour}`);
        assert.equal(await frame.$eval('#plots-section', (e) => e.hidden), true);
        assert.equal(await frame.$eval('#files-section', (e) => e.hidden), true);

        await shootBoth(t, frame, 'failed', 'light');
        await page.evaluate(() => window.unmountView());
    });

    test("a run's workspaces", { timeout: 90_000 }, async (t) => {
        // This server has no workspaces: the result is given the ones a server with a read-only
        // and a copy-on-write workspace returns (structuredContent.workspaces, as
        // WorkspaceRun::toJson writes them), first with the change set waiting, then applied.
        const { call, frame } = await startRun('run_python_code', { code: 'print("edited")' }, 'light');
        const result = await call;
        const repo = {
            name: 'repo', mode: 'copy-on-write', path: '/workspace/repo', files: 12, bytes: 40960,
            excluded: 1, apply: 'ask',
            changes: {
                workspace: 'repo', bytes: 180, refused: ['escape: is a symbolic link'], refused_count: 1,
                added: [{ path: 'src/test_stats.py', size: 74 }],
                modified: [{ path: 'src/stats.py', size: 102, lines_added: 2, lines_removed: 0 }],
                deleted: [{ path: 'old.csv', old_size: 8 }], renamed: [],
            },
        };
        const data = { name: 'data', mode: 'read-only', path: '/workspace/data', files: 3, bytes: 2048, excluded: 0 };
        result.structuredContent.workspaces = [data, repo];
        await showResult(result);
        await frame.waitForFunction(() => !document.getElementById('workspaces-section').hidden);
        const rows = () => frame.$$eval('#workspaces tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
        assert.deepEqual(await rows(), [
            ['data', 'read-only', '3 files, 2.0 KiB'],
            ['repo', 'copy-on-write', '1 added, 1 modified, 1 deleted, 1 refused · not applied yet: the user decides in the Code Sandbox window'],
        ]);
        assert.doesNotMatch(await text(frame, '#workspaces'), /\/home|\/tmp/, 'no host path');
        await shootBoth(t, frame, 'workspaces', 'light');

        repo.applied = { files: ['src/test_stats.py', 'old.csv'], conflicts: ['src/stats.py: the folder\'s file changed since the run started'], failed: [] };
        await showResult(result);
        await frame.waitForFunction(() => document.getElementById('workspaces').textContent.includes('applied:'));
        assert.equal((await rows())[1][2],
            '1 added, 1 modified, 1 deleted, 1 refused · applied: 2 written, 1 left alone (changed in the folder since the run started)');
        await page.evaluate(() => window.unmountView());
    });

    test("a session's call, and the snapshot kept after it", { timeout: 90_000 }, async (t) => {
        const created = await client.callTool({ name: 'create_session', arguments: { language: 'python' } },
            undefined, { timeout: 120_000 });
        assert.notEqual(created.isError, true, JSON.stringify(created.content));
        const session = created.structuredContent.session_id;
        try {
            const code = 'import socket\nx = 41\nconn = socket.socket()\nprint("x is", x)';
            const { call, frame } = await startRun('execute_code', { language: 'python', code, session_id: session }, 'light');
            const result = await call;
            assert.notEqual(result.isError, true, JSON.stringify(result.content));
            assert.equal(result._meta['code-sandbox/run'].snapshot_of.session_id, session);
            await showResult(result);
            // The view asks list_snapshots for the one that followed this very run.
            await frame.waitForFunction(() => !document.getElementById('snapshot-section').hidden, { timeout: 30_000 });
            const { structuredContent: { snapshots } } = await client.callTool(
                { name: 'list_snapshots', arguments: { session_id: session } });
            assert.equal(snapshots.length, 1);
            const [kept] = snapshots;
            assert.equal(kept.after_run, result._meta['code-sandbox/run'].snapshot_of.after_run);
            const line = await text(frame, '#snapshot');
            assert.match(line, new RegExp(`^Snapshot ${kept.snapshot_id.replace(/\./g, '\\.')} kept after call 1 · \\d`));
            assert.match(line, /the interpreter's state and the files · not kept: conn \(socket\)$/);
            await shootBoth(t, frame, 'session-snapshot', 'light');
            await page.evaluate(() => window.unmountView());
        } finally {
            await client.callTool({ name: 'close_session', arguments: { session_id: session } });
        }
        // A call outside a session is followed by no snapshot, and its result says of none.
        const plain = await client.callTool({ name: 'run_python_code', arguments: { code: 'print(1)' } },
            undefined, { timeout: 120_000 });
        assert.equal(plain._meta?.['code-sandbox/run']?.snapshot_of, undefined);
    });

    test('the host passed on only what the view may call', () => {
        assert.deepEqual(refused, []);
        assert.deepEqual([...new Set(forwarded)].sort(), ['list_snapshots', 'read_run_output', 'stop_run']);
    });

    testNoContainersLeft(async () => {
        await browser?.close();
        await client?.close();
    });
});
