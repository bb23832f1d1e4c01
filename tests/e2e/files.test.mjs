// Plots, output files, input files and libraries through the SDK client.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { DOCKER, sharedClient, startClient, testNoContainersLeft, textOf } from './helpers.mjs';

const execFileP = promisify(execFile);

const shared = sharedClient();

const python = (code) => shared.client.callTool({ name: 'run_python_code', arguments: { code } });
const execute = (args) => shared.client.callTool({ name: 'execute_code', arguments: args });
const images = (r) => r.content.filter((c) => c.type === 'image');
const resources = (r) => r.content.filter((c) => c.type === 'resource');

/** Width and height from a PNG's IHDR chunk (asserting it is a PNG). */
function pngSize(image) {
    assert.equal(image.mimeType, 'image/png');
    const bytes = Buffer.from(image.data, 'base64');
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
    return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

// Figures of different sizes (inches × 100 dpi) tell which image is which.
const figure = (w, h) => `plt.figure(figsize=(${w}, ${h}), dpi=100); plt.plot([1, 2, 3])`;

test('two figures shown with plt.show() come back as two PNG images, in creation order', { timeout: 60_000 }, async () => {
    const r = await python(`import matplotlib.pyplot as plt\n${figure(2, 2)}\n${figure(4, 2)}\nplt.show()\nprint("done")`);
    assert.notEqual(r.isError, true, textOf(r));
    assert.match(textOf(r), /^done\n/);
    assert.deepEqual(images(r).map(pngSize), [[200, 200], [400, 200]]);
    assert.deepEqual(r.structuredContent.files.map((f) => [f.kind, f.included]), [['plot', true], ['plot', true]]);
});

test('figures never shown are returned at exit', { timeout: 60_000 }, async () => {
    const r = await python(`import matplotlib.pyplot as plt\n${figure(3, 2)}`);
    assert.deepEqual(images(r).map(pngSize), [[300, 200]]);
    assert.doesNotMatch(textOf(r), /No output/, 'a figure is output');
});

test('figures saved to image files in the working directory come back as those files, each once', { timeout: 60_000 }, async () => {
    const r = await python([
        'import matplotlib.pyplot as plt',
        figure(2, 3), 'plt.savefig("a.png")', 'plt.close()',
        figure(5, 1), 'plt.savefig("b.png")',
        figure(1, 1), 'plt.show()',
    ].join('\n'));
    // Figures first, then files by name.
    assert.deepEqual(images(r).map(pngSize), [[100, 100], [200, 300], [500, 100]]);
    assert.deepEqual(r.structuredContent.files.map((f) => [f.name, f.kind]),
        [['figure-0003.png', 'plot'], ['a.png', 'output'], ['b.png', 'output']]);
});

// Assistants' plotting code picks a backend itself more often than not; the figures must come
// back whichever it picks (the sandbox has no display, so an interactive one draws nothing
// either), and the program sees the backend it asked for.
test('figures come back whichever backend matplotlib.use() selects', { timeout: 120_000 }, async () => {
    // [asked for, as matplotlib names it]
    const backends = [['Agg', 'agg'], ['agg', 'agg'], ['pdf', 'pdf'], ['svg', 'svg'], ['cairo', 'cairo'], ['tkagg', 'TkAgg'],
        ['module://matplotlib_inline.backend_inline', 'module://matplotlib_inline.backend_inline']];
    for (const [backend, name] of backends) {
        const r = await python(`import matplotlib\nmatplotlib.use(${JSON.stringify(backend)})\nimport matplotlib.pyplot as plt\n${figure(2, 1)}\nplt.show()\nprint(matplotlib.get_backend())`);
        assert.notEqual(r.isError, true, `${backend}: ${textOf(r)}`);
        assert.deepEqual(images(r).map(pngSize), [[200, 100]], backend);
        assert.equal(r.structuredContent.stdout, `${name}\n`, backend);
    }
});

test('matplotlib.use("Agg") and savefig("chart.png"): exactly one image, named chart.png', { timeout: 60_000 }, async () => {
    const r = await python(`import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n${figure(3, 2)}\nplt.savefig('chart.png')\nplt.show()`);
    assert.notEqual(r.isError, true, textOf(r));
    assert.deepEqual(images(r).map(pngSize), [[300, 200]]);
    assert.deepEqual(r.structuredContent.files.map((f) => [f.name, f.kind, f.mime_type, f.included]),
        [['chart.png', 'output', 'image/png', true]]);
    assert.match(textOf(r), /\[returned: chart\.png\]/);
});

test('after plt.switch_backend("agg") the figure comes back', { timeout: 60_000 }, async () => {
    const r = await python(`import matplotlib.pyplot as plt\nplt.switch_backend('agg')\n${figure(2, 2)}`);
    assert.notEqual(r.isError, true, textOf(r));
    assert.deepEqual(images(r).map(pngSize), [[200, 200]]);
});

test('with MPLBACKEND set by the program before the import the figure comes back', { timeout: 60_000 }, async () => {
    const r = await python(`import os\nos.environ['MPLBACKEND'] = 'pdf'\nimport matplotlib\nimport matplotlib.pyplot as plt\n${figure(2, 2)}\nplt.show()\nprint(matplotlib.get_backend())`);
    assert.notEqual(r.isError, true, textOf(r));
    assert.deepEqual(images(r).map(pngSize), [[200, 200]]);
    assert.equal(r.structuredContent.stdout, 'pdf\n');
});

test('with rcParams["backend"] set by the program the figure comes back', { timeout: 60_000 }, async () => {
    const r = await python(`import matplotlib\nmatplotlib.rcParams['backend'] = 'svg'\nimport matplotlib.pyplot as plt\n${figure(2, 2)}\nplt.show()`);
    assert.notEqual(r.isError, true, textOf(r));
    assert.deepEqual(images(r).map(pngSize), [[200, 200]]);
});

test('a pandas plot after matplotlib.use("Agg"), left open without show(), comes back', { timeout: 60_000 }, async () => {
    const r = await python('import matplotlib\nmatplotlib.use("Agg")\nimport pandas as pd\n'
        + 'pd.DataFrame({"y": [1, 4, 2]}).plot(figsize=(4, 3))');
    assert.notEqual(r.isError, true, textOf(r));
    assert.deepEqual(images(r).map(pngSize), [[400, 300]]);
    assert.equal(r.structuredContent.files[0].kind, 'plot');
});

test('a figure left open after matplotlib.use("agg") comes back at exit', { timeout: 60_000 }, async () => {
    const r = await python(`import matplotlib\nmatplotlib.use("agg")\nimport matplotlib.pyplot as plt\n${figure(3, 1)}\nprint("drawn")`);
    assert.equal(r.structuredContent.stdout, 'drawn\n');
    assert.deepEqual(images(r).map(pngSize), [[300, 100]]);
});

test('images PIL saves in the working directory come back as images', { timeout: 60_000 }, async () => {
    const r = await python('from PIL import Image\nImage.new("RGB", (7, 5), "red").save("out.png")\n'
        + 'Image.new("RGB", (3, 2), "blue").save("photo.JPG")');
    assert.notEqual(r.isError, true, textOf(r));
    assert.deepEqual(r.structuredContent.files.map((f) => [f.name, f.mime_type]), [['out.png', 'image/png'], ['photo.JPG', 'image/jpeg']]);
    assert.deepEqual(images(r).map((i) => i.mimeType), ['image/png', 'image/jpeg']);
    assert.deepEqual(pngSize(images(r)[0]), [7, 5]);
});

test('a figure saved as SVG or PDF comes back as that file and as a PNG figure', { timeout: 60_000 }, async () => {
    const r = await python(`import matplotlib.pyplot as plt\n${figure(2, 1)}\nplt.savefig("chart.svg")\nplt.savefig("chart.pdf")\nplt.show()`);
    assert.notEqual(r.isError, true, textOf(r));
    assert.deepEqual(images(r).map(pngSize), [[200, 100]]);
    assert.deepEqual(r.structuredContent.files.map((f) => [f.name, f.kind, f.mime_type]),
        [['figure-0001.png', 'plot', 'image/png'], ['chart.pdf', 'output', 'application/pdf'], ['chart.svg', 'output', 'image/svg+xml']]);
    const byUri = Object.fromEntries(resources(r).map((c) => [c.resource.uri, c.resource]));
    assert.match(byUri['sandbox://outputs/chart.svg'].text, /<svg/);
    assert.equal(Buffer.from(byUri['sandbox://outputs/chart.pdf'].blob, 'base64').subarray(0, 5).toString(), '%PDF-');
});

test('input images, hidden files, files in subfolders and other files of the working directory do not come back', { timeout: 60_000 }, async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
    const r = await execute({
        code: 'import os\nfrom PIL import Image\nprint(Image.open("in.png").size)\nos.makedirs("sub")\n'
            + 'Image.new("RGB", (4, 4)).save("sub/x.png")\nImage.new("RGB", (4, 4)).save(".hidden.png")\n'
            + 'open("notes.txt", "w").write("x")',
        files: [{ path: 'in.png', content: png, encoding: 'base64' }, { path: 'pics/in2.png', content: png, encoding: 'base64' }],
    });
    assert.notEqual(r.isError, true, textOf(r));
    assert.equal(r.structuredContent.stdout, '(1, 1)\n');
    assert.deepEqual(r.structuredContent.files, []);
});

test('a figure saved outside the returned places still comes back as a figure', { timeout: 60_000 }, async () => {
    const r = await python(`import os\nimport matplotlib.pyplot as plt\nos.makedirs("plots")\n${figure(1, 2)}\nplt.savefig("plots/a.png")\nplt.savefig("/tmp/b.png")\nplt.show()`);
    assert.deepEqual(r.structuredContent.files.map((f) => f.name), ['figure-0001.png']);
    assert.deepEqual(images(r).map(pngSize), [[100, 200]]);
});

test('image files other languages write in the working directory come back too', { timeout: 60_000 }, async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2"/>';
    const sh = await execute({ language: 'bash', code: `printf '%s' '${svg}' > pic.svg; echo made > made.txt` });
    assert.notEqual(sh.isError, true, textOf(sh));
    assert.deepEqual(resources(sh).map((c) => [c.resource.uri, c.resource.mimeType, c.resource.text]),
        [['sandbox://outputs/pic.svg', 'image/svg+xml', svg]]);
    const js = await execute({ language: 'javascript', code: `require("fs").writeFileSync("pic.svg", '${svg}')` });
    assert.deepEqual(js.structuredContent.files.map((f) => f.name), ['pic.svg']);
});

test('separate show() calls keep creation order', { timeout: 60_000 }, async () => {
    const r = await python(`import matplotlib.pyplot as plt\n${figure(1, 2)}\nplt.show()\n${figure(2, 1)}\nplt.show()`);
    assert.deepEqual(images(r).map(pngSize), [[100, 200], [200, 100]]);
});

test('a run without figures, and a plain run after one with figures, get no images', { timeout: 60_000 }, async () => {
    const none = await python('import matplotlib.pyplot as plt\nprint("no figure")');
    assert.deepEqual(images(none), []);
    await python(`import matplotlib.pyplot as plt\n${figure(2, 2)}`);
    const later = await python('print("plain")');
    assert.equal(textOf(later), 'plain\n');
    assert.equal(later.content.length, 1, 'nothing stale from the run before');
    assert.deepEqual(later.structuredContent.files, []);
});

test('a subprocess using matplotlib is not broken by the capture', { timeout: 60_000 }, async () => {
    const r = await python('import subprocess, sys\nprint(subprocess.run([sys.executable, "-c", "import matplotlib.pyplot as plt; plt.plot([1]); plt.savefig(\'x.png\'); print(\'child ok\')"], capture_output=True, text=True).stdout)');
    assert.match(textOf(r), /child ok/);
});

test('a file written to OUTPUT_DIR comes back as an embedded resource', { timeout: 60_000 }, async () => {
    const r = await execute({ code: 'import os\nwith open(os.path.join(os.environ["OUTPUT_DIR"], "table.csv"), "w") as f:\n    f.write("x,y\\n1,2\\n")\nprint("written")' });
    assert.notEqual(r.isError, true, textOf(r));
    const [res] = resources(r);
    assert.ok(res, JSON.stringify(r.content));
    assert.equal(res.resource.uri, 'sandbox://outputs/table.csv');
    assert.equal(res.resource.mimeType, 'text/csv');
    assert.equal(res.resource.text, 'x,y\n1,2\n');
    assert.deepEqual(r.structuredContent.files, [{ name: 'table.csv', kind: 'output', size: 8, mime_type: 'text/csv', included: true }]);
});

test('binary, image and nested output files, from other languages too', { timeout: 60_000 }, async () => {
    const r = await execute({
        language: 'bash',
        code: 'mkdir -p "$OUTPUT_DIR/sub" && printf "\\0\\1\\2" > "$OUTPUT_DIR/data.bin" && echo nested > "$OUTPUT_DIR/sub/note.txt"',
    });
    assert.notEqual(r.isError, true, textOf(r));
    const byName = Object.fromEntries(resources(r).map((c) => [c.resource.uri, c.resource]));
    assert.equal(Buffer.from(byName['sandbox://outputs/data.bin'].blob, 'base64').toString('hex'), '000102');
    assert.equal(byName['sandbox://outputs/sub/note.txt'].text, 'nested\n');

    const img = await execute({
        language: 'python',
        code: 'from PIL import Image\nImage.new("RGB", (7, 5), "red").save("outputs/red.png")',
    });
    assert.deepEqual(images(img).map(pngSize), [[7, 5]]);

    const js = await execute({ language: 'javascript', code: 'require("fs").writeFileSync(process.env.OUTPUT_DIR + "/out.json", JSON.stringify({ a: 1 }))' });
    assert.equal(resources(js)[0]?.resource.text, '{"a":1}', JSON.stringify(js.content));
});

test('a file over the size cap is listed, not returned, with a note', { timeout: 60_000 }, async () => {
    const r = await execute({ code: 'import os\nopen(os.environ["OUTPUT_DIR"] + "/big.bin", "wb").write(os.urandom(6 * 1024 * 1024))\nopen(os.environ["OUTPUT_DIR"] + "/small.txt", "w").write("ok")' });
    const files = Object.fromEntries(r.structuredContent.files.map((f) => [f.name, f]));
    assert.equal(files['big.bin'].included, false);
    assert.equal(files['big.bin'].size, 6 * 1024 * 1024);
    assert.equal(files['small.txt'].included, true);
    assert.match(r.structuredContent.notes.join('\n'), /big\.bin .*not returned/);
    assert.deepEqual(resources(r).map((c) => c.resource.uri), ['sandbox://outputs/small.txt']);
});

test('input files are placed in the workdir before the program starts', { timeout: 60_000 }, async () => {
    const r = await execute({
        code: 'print(open("data/in.txt").read(), open("/sandbox/raw.bin", "rb").read().hex(), open("data/deep/x.csv").read())',
        files: [
            { path: 'data/in.txt', content: 'héllo' },
            { path: '/sandbox/raw.bin', content: Buffer.from([0, 255, 16]).toString('base64'), encoding: 'base64' },
            { path: './data/deep/../deep/x.csv', content: 'a,b' },
        ],
    });
    assert.notEqual(r.isError, true, textOf(r));
    assert.equal(r.structuredContent.stdout, 'héllo 00ff10 a,b\n');
    // Input files are not output files.
    assert.deepEqual(r.structuredContent.files, []);

    const other = await execute({ language: 'ruby', code: 'puts File.read("in.txt")', files: [{ path: 'in.txt', content: 'from ruby' }] });
    assert.equal(other.structuredContent.stdout, 'from ruby\n');
});

test('input paths that escape the workdir are refused, and nothing runs', { timeout: 60_000 }, async () => {
    for (const path of ['../escape.txt', '/etc/passwd', '/sandbox/../etc/x', 'a/../../b', '/sandboxed/x', '', '.', 'main.py']) {
        const r = await execute({ code: 'print("ran")', files: [{ path, content: 'x' }] });
        assert.equal(r.isError, true, `path ${JSON.stringify(path)}`);
        assert.match(textOf(r), /Invalid files/, `path ${JSON.stringify(path)}`);
        assert.doesNotMatch(textOf(r), /ran/);
    }
    const bad = await execute({ code: 'print(1)', files: [{ path: 'x.bin', content: '***', encoding: 'base64' }] });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /not valid base64/);
    const twice = await execute({ code: 'print(1)', files: [{ path: 'a', content: '1' }, { path: './a', content: '2' }] });
    assert.match(textOf(twice), /given twice/);
});

test('libraries are refused without --allow-network-for-install, for every language', { timeout: 30_000 }, async () => {
    for (const language of ['python', 'javascript', 'ruby', 'r', 'go']) {
        const r = await execute({ language, code: '1', libraries: ['something'] });
        assert.equal(r.isError, true, language);
        assert.match(textOf(r), /--allow-network-for-install|no package manager/, language);
    }
});

// The library volumes that exist now: a developer's cache, which a test must leave alone.
async function libraryVolumes() {
    const { stdout } = await execFileP(DOCKER, ['volume', 'ls', '-q', '--filter', 'label=code-sandbox.libraries=javascript']);
    return new Set(stdout.split('\n').filter(Boolean));
}

test('with --allow-network-for-install a library is installed once, used without network, and only where asked', { timeout: 240_000 }, async () => {
    const existing = await libraryVolumes();
    const { client: c } = await startClient({ args: ['--stdio', '--allow-network-for-install'] });
    try {
        const code = 'const leftPad = require("left-pad"); console.log(leftPad("42", 5, "0")); require("dns").lookup("registry.npmjs.org", (e) => console.log(e ? "no network" : "network"))';
        const first = await c.callTool({ name: 'execute_code', arguments: { language: 'javascript', code, libraries: ['left-pad@1.3.0'] } });
        assert.notEqual(first.isError, true, textOf(first));
        assert.equal(first.structuredContent.stdout, '00042\nno network\n');
        const again = await c.callTool({ name: 'execute_code', arguments: { language: 'javascript', code, libraries: ['left-pad@1.3.0'] } });
        assert.equal(again.structuredContent.stdout, '00042\nno network\n');
        const without = await c.callTool({ name: 'execute_code', arguments: { language: 'javascript', code: 'require("left-pad")' } });
        assert.equal(without.isError, true, 'a run without libraries does not see them');
        assert.match(without.structuredContent.stderr, /Cannot find module 'left-pad'/);
        const refused = await c.callTool({ name: 'execute_code', arguments: { language: 'python', code: '1', libraries: ['--index-url=http://x'] } });
        assert.match(textOf(refused), /options are not accepted/);
    } finally {
        await c.close();
        // Only what this test installed goes.
        const created = [...(await libraryVolumes())].filter((v) => !existing.has(v));
        if (created.length) await execFileP(DOCKER, ['volume', 'rm', ...created]);
    }
});

testNoContainersLeft(shared.close);
