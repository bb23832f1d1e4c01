// One tools/call through the official MCP TypeScript SDK client, for tests written in other
// languages (the window's Qt tests, the desktop script). Prints one JSON line per event:
//   {"connected":true}            once the handshake is done
//   {"progress":"<message>"}      for each progress notification
//   {"result":{...}}              the call's result (isError included), or
//   {"error":"<message>"}         a protocol error, and exits 1.
//
//   node sdk-call.mjs (--stdio BIN [ARG...] -- | --http URL TOKEN)
//        --client NAME --tool TOOL [--args JSON] [--timeout-ms N]
//
// The stdio server gets only PATH, HOME, DOCKER_HOST, XDG_CONFIG_HOME, XDG_RUNTIME_DIR and
// CODE_SANDBOX_* of this process's environment.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const argv = process.argv.slice(2);
const opts = { client: 'sdk-call', args: '{}', timeoutMs: 600000 };
let transport;
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--stdio') {
        const command = argv[++i];
        const args = [];
        while (i + 1 < argv.length && argv[i + 1] !== '--') args.push(argv[++i]);
        ++i; // the --
        const env = {};
        for (const [k, v] of Object.entries(process.env)) {
            if (['PATH', 'HOME', 'DOCKER_HOST', 'KUBECONFIG', 'XDG_CONFIG_HOME', 'XDG_RUNTIME_DIR'].includes(k) ||
                k.startsWith('CODE_SANDBOX_'))
                env[k] = v;
        }
        transport = new StdioClientTransport({ command, args, env, stderr: 'inherit' });
    } else if (a === '--http') {
        const url = new URL(argv[++i]);
        const token = argv[++i];
        transport = new StreamableHTTPClientTransport(url, {
            requestInit: { headers: { Authorization: `Bearer ${token}` } },
        });
    } else if (a === '--client') {
        opts.client = argv[++i];
    } else if (a === '--tool') {
        opts.tool = argv[++i];
    } else if (a === '--args') {
        opts.args = argv[++i];
    } else if (a === '--timeout-ms') {
        opts.timeoutMs = Number(argv[++i]);
    } else {
        say({ error: `unknown argument ${a}` });
        process.exit(2);
    }
}
if (!transport || !opts.tool) {
    say({ error: 'give --stdio or --http, and --tool' });
    process.exit(2);
}

const client = new Client({ name: opts.client, version: '1.0.0' });
try {
    await client.connect(transport);
    say({ connected: true });
    const result = await client.callTool(
        { name: opts.tool, arguments: JSON.parse(opts.args) }, undefined,
        {
            timeout: opts.timeoutMs,
            resetTimeoutOnProgress: true,
            onprogress: (p) => say({ progress: p.message ?? '' }),
        });
    say({ result });
    await client.close();
    process.exit(0);
} catch (e) {
    say({ error: String(e?.message ?? e) });
    await client.close().catch(() => {});
    process.exit(1);
}
