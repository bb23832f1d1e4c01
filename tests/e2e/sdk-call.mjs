// One tools/call through the official MCP TypeScript SDK client, for tests written in other
// languages (the window's Qt tests, the desktop script). Prints one JSON line per event:
//   {"connected":true}            once the handshake is done
//   {"progress":"<message>"}      for each progress notification
//   {"result":{...}}              the call's result (isError included), or
//   {"error":"<message>"}         a protocol error, and exits 1.
//
//   node sdk-call.mjs (--stdio BIN [ARG...] -- | --http URL TOKEN | --sign-in URL)
//        --client NAME --tool TOOL [--args JSON] [--timeout-ms N] [--metadata-url URL]
//
// --sign-in: no token; the SDK's OAuth client signs in (registering as NAME, or naming itself by
// the client ID metadata document at --metadata-url). The test is the browser: it opens the
// sign-in page, prints {"signIn":"<id>","page":"<its text>"} and waits (two minutes at most)
// until a person's answer sends it back, then the SDK exchanges the code and calls.
//
// The stdio server gets only PATH, HOME, DOCKER_HOST, XDG_CONFIG_HOME, XDG_RUNTIME_DIR and
// CODE_SANDBOX_* of this process's environment.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

import { OAuthProvider } from './oauthprovider.mjs';

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
    } else if (a === '--sign-in') {
        opts.signIn = new URL(argv[++i]);
    } else if (a === '--metadata-url') {
        opts.metadataUrl = argv[++i];
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
if ((!transport && !opts.signIn) || !opts.tool) {
    say({ error: 'give --stdio, --http or --sign-in, and --tool' });
    process.exit(2);
}

/** Signs in as a browser and a person would: the 401, the page, the answer, the exchange. */
async function signIn() {
    const provider = new OAuthProvider(opts.client, opts.metadataUrl);
    const first = new StreamableHTTPClientTransport(opts.signIn, { authProvider: provider });
    try {
        await new Client({ name: opts.client, version: '1.0.0' }).connect(first);
        throw new Error('the endpoint let the client in without signing in');
    } catch (e) {
        if (!(e instanceof UnauthorizedError) || !provider.authUrl)
            throw e;
    }
    const page = await fetch(provider.authUrl, { redirect: 'manual' });
    const id = page.headers.get('x-code-sandbox-sign-in');
    const text = await page.text();
    if (!id)
        throw new Error(`no sign-in page (${page.status}): ${text}`);
    say({ signIn: id, page: text });
    const wait = new URL(`/oauth/authorize/wait?request=${id}`, opts.signIn);
    for (const end = Date.now() + 120_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
        const answer = await fetch(wait, { redirect: 'manual' });
        await answer.text();
        if (answer.status !== 302)
            continue;
        const back = new URL(answer.headers.get('location'));
        if (!back.searchParams.get('code'))
            throw new Error(`the sign-in was not allowed: ${back.searchParams.get('error')}`);
        await first.finishAuth(back.searchParams.get('code'), back.searchParams.get('iss') ?? undefined);
        return new StreamableHTTPClientTransport(opts.signIn, { authProvider: provider });
    }
    throw new Error('nobody answered the sign-in within two minutes');
}

const client = new Client({ name: opts.client, version: '1.0.0' });
try {
    if (opts.signIn)
        transport = await signIn();
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
