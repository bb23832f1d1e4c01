// Signing in (the MCP authorization flow, OAuth 2.1) against the real binary with the official
// SDK clients' OAuth support (OAuthClientProvider), in both MCP eras: discovery from the 401,
// dynamic registration or a client ID metadata document (served over TLS by a fixture here), the
// sign-in page that waits for a person, the approval given with --approve-client (no window
// here), the code exchange with PKCE, then calls that run under the approved assistant's policy.
// And what must be refused: a revoked grant, a token for another resource, PKCE missing or
// plain, a replayed code (whose grant is then revoked), an old refresh token once rotated,
// documents that are not what they must be, bad input on every endpoint.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

import { BIN, MINIMAL_PATH, sleep, textOf } from './helpers.mjs';
import { startHttpServer } from './httpserver.mjs';
import { OAuthProvider as Provider, REDIRECT } from './oauthprovider.mjs';

const execFileP = promisify(execFile);
const home = mkdtempSync(path.join(os.tmpdir(), 'cs-oauth-'));
const config = path.join(home, 'config');
const env = { HOME: home, XDG_CONFIG_HOME: config, XDG_DATA_HOME: path.join(home, 'data') };
const TOKEN_LIFE = 5; // seconds: the test waits one out to see a refresh

let server;
let other; // a second server of the same user: same signing key, another resource
let documents; // the https fixture that serves client ID metadata documents
before(async () => {
    documents = await startDocuments();
    mkdirSync(path.join(config, 'code-sandbox'), { recursive: true });
    // Signed-in 'oauth-bot' may run JavaScript; everyone else Python only.
    const policies = JSON.stringify({
        default: { action: 'run', languages: ['python'] },
        assistants: [{ client: 'oauth-bot', action: 'run' }],
    });
    writeFileSync(path.join(config, 'code-sandbox', 'code-sandbox.conf'),
        `[assistants]\npolicies="${policies.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"\n`);
    // The fixture's documents are on loopback with a certificate of their own: this server is
    // told to trust both; `other` is not.
    server = await startHttpServer({ args: ['--no-monitor', '--oauth-token-lifetime', String(TOKEN_LIFE), '--client-metadata-ca', documents.caFile, '--client-metadata-private'], env });
    other = await startHttpServer({ args: ['--no-monitor'], env });
});
after(async () => {
    await server?.stop();
    await other?.stop();
    documents?.close();
    rmSync(home, { recursive: true, force: true });
});

/**
 * An https server (a certificate made for localhost here) with client ID metadata documents: a
 * good one and ones that are not what they must be. `hits` counts the requests of each path.
 */
async function startDocuments() {
    const dir = path.join(home, 'tls');
    mkdirSync(dir, { recursive: true });
    const key = path.join(dir, 'key.pem');
    const caFile = path.join(dir, 'cert.pem');
    await execFileP('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', caFile,
        '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
    const hits = {};
    let base;
    const doc = (p, extra = {}) => JSON.stringify({ client_id: base + p, client_name: 'Claude Code', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...extra });
    const routes = {
        '/claude.json': () => [200, { 'Cache-Control': 'max-age=60' }, doc('/claude.json')],
        '/mismatch.json': () => [200, {}, doc('/mismatch.json', { client_id: base + '/claude.json' })],
        '/secret.json': () => [200, {}, doc('/secret.json', { client_secret: 'x' })],
        '/evil-redirect.json': () => [200, {}, doc('/evil-redirect.json', { redirect_uris: ['http://evil.example/cb'] })],
        '/big.json': () => [200, {}, doc('/big.json', { logo_uri: 'https://x.example/' + 'a'.repeat(6000) })],
        '/moved.json': () => [302, { Location: base + '/claude.json' }, ''],
        '/not-json.json': () => [200, {}, '<html>hello</html>'],
    };
    const srv = https.createServer({ key: readFileSync(key), cert: readFileSync(caFile) }, (req, res) => {
        hits[req.url] = (hits[req.url] ?? 0) + 1;
        if (req.url === '/slow.json') return; // never answers
        if (req.url === '/close-delimited.json') { // no length, not chunked: it ends with the connection
            res.useChunkedEncodingByDefault = false;
            res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' });
            res.write(doc('/close-delimited.json'));
            return res.end();
        }
        const route = routes[req.url];
        const [status, headers, body] = route ? route() : [404, {}, 'no'];
        res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
        res.end(body);
    });
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
    base = `https://localhost:${srv.address().port}`;
    return { base, caFile, hits, close: () => srv.close() };
}

async function cli(args, extraEnv = {}) {
    try {
        const { stdout, stderr } = await execFileP(BIN, args, { env: { PATH: MINIMAL_PATH, ...env, ...extraEnv }, timeout: 20_000 });
        return { code: 0, stdout, stderr };
    } catch (e) {
        return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
}

/** Opens the sign-in page as a browser would; resolves with its status, sign-in id and text. */
async function openPage(url) {
    const res = await fetch(url, { redirect: 'manual' });
    return { status: res.status, id: res.headers.get('x-code-sandbox-sign-in'), location: res.headers.get('location'), text: await res.text() };
}

/** The page, answered with the command line, until it sends the browser back. */
async function approve(target, authUrl, { as = 'oauth-bot', allow = true, namedBy = /as named by its registration/ } = {}) {
    const page = await openPage(authUrl);
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, namedBy);
    assert.match(page.text, /Waiting for approval in Code Sandbox/);
    assert.match(page.text, new RegExp(`--approve-client ${page.id} --port ${target.port}`), 'the page says how to approve without a window');
    // Nothing is approved by itself: the page still waits.
    const again = await openPage(new URL(`/oauth/authorize/wait?request=${page.id}`, target.url));
    assert.equal(again.status, 200);
    const answered = await cli([allow ? '--approve-client' : '--deny-client', page.id, '--port', String(target.port), ...(allow ? ['--as', as] : [])],
        { CODE_SANDBOX_TOKEN: target.token });
    assert.equal(answered.code, 0, answered.stderr);
    const back = await openPage(new URL(`/oauth/authorize/wait?request=${page.id}`, target.url));
    assert.equal(back.status, 302);
    return new URL(back.location);
}

/** The whole sign-in with the SDK: 401, discovery, registration, page, approval, exchange. */
async function signIn(provider, { modern = false, target = server, namedBy } = {}) {
    const make = () => modern
        ? new ModernHttpTransport(new URL(target.url), { authProvider: provider })
        : new StreamableHTTPClientTransport(new URL(target.url), { authProvider: provider });
    const makeClient = () => modern
        ? new ModernClient({ name: 'claims-anything', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
        : new Client({ name: 'claims-anything', version: '1' });
    const first = make();
    await assert.rejects(makeClient().connect(first), (e) => e instanceof UnauthorizedError || /nauthorized/.test(String(e)));
    assert.ok(provider.authUrl, 'the client was sent to sign in');
    assert.equal(provider.authUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(provider.authUrl.searchParams.get('resource'), target.url);
    const back = await approve(target, provider.authUrl, { namedBy });
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.equal(back.searchParams.get('iss'), new URL(target.url).origin);
    await first.finishAuth(back.searchParams.get('code'), back.searchParams.get('iss'));
    const client = makeClient();
    await client.connect(make());
    return client;
}

const js = { name: 'run_javascript_code', arguments: { code: 'console.log(6 * 7)' } };

test('the SDK client signs in, is approved from the command line, and runs under its policy', { timeout: 120_000 }, async () => {
    const provider = new Provider('Claude Code');
    const client = await signIn(provider);
    try {
        const r = await client.callTool(js);
        assert.ok(!r.isError && /42/.test(textOf(r)), `oauth-bot's policy runs JavaScript: ${textOf(r)}`);
        const listed = await cli(['--list-credentials']);
        assert.match(listed.stdout, /c-[0-9a-f]{8}\s+oauth-bot/);
        assert.match(provider.saved.tokens.access_token, /^csa_/);
        assert.match(provider.saved.tokens.refresh_token, /^csr_/);
    } finally {
        await client.close();
    }
});

test('2026-07-28: the v2 client signs in the same way', { timeout: 120_000 }, async () => {
    const client = await signIn(new Provider('Gemini CLI'), { modern: true });
    try {
        assert.equal(client.getProtocolEra(), 'modern');
        const r = await client.callTool(js);
        assert.ok(!r.isError && /42/.test(textOf(r)), textOf(r));
        // A sandbox session belongs to the grant, not to one access token: it is still the
        // client's after the token expired and was refreshed.
        const s = await client.callTool({ name: 'create_session', arguments: { language: 'python' } });
        const id = s.structuredContent?.session_id;
        assert.ok(id, textOf(s));
        await client.callTool({ name: 'run_python_code', arguments: { session_id: id, code: 'x = 41' } });
        await sleep((TOKEN_LIFE + 1) * 1000);
        const later = await client.callTool({ name: 'run_python_code', arguments: { session_id: id, code: 'print(x + 1)' } });
        assert.ok(!later.isError && /42/.test(textOf(later)), textOf(later));
        await client.callTool({ name: 'close_session', arguments: { session_id: id } });
    } finally {
        await client.close();
    }
});

test('a client named by its metadata document signs in without registering, in both eras', { timeout: 120_000 }, async () => {
    const url = documents.base + '/claude.json';
    for (const modern of [false, true]) {
        const provider = new Provider('not this name', url);
        const client = await signIn(provider, {
            modern,
            namedBy: /<b>Claude Code<\/b> \(as named by its metadata document at localhost, which any program on this computer can present\)/,
        });
        try {
            assert.equal(provider.saved.client.client_id, url, 'the URL is the client_id: nothing was registered');
            const r = await client.callTool(js);
            assert.ok(!r.isError && /42/.test(textOf(r)), `runs as oauth-bot: ${textOf(r)}`);
        } finally {
            await client.close();
        }
    }
    assert.equal(documents.hits['/claude.json'], 1, 'fetched once, then kept as its Cache-Control allows');
});

test('documents that are not what they must be are refused with a reason; nothing is fetched elsewhere', { timeout: 120_000 }, async () => {
    const pkce = { code_challenge: CHALLENGE, code_challenge_method: 'S256' };
    const refused = async (clientId, reason, target = server) => {
        const page = await openPage(authorizeUrl({ client_id: clientId }, pkce, target));
        assert.equal(page.status, 400, `${clientId}: ${page.text}`);
        assert.equal(page.location, null, 'no redirect for a client that is not known');
        assert.match(page.text, /This client cannot sign in/);
        assert.match(page.text, reason, clientId);
    };
    const at = (p) => documents.base + p;
    await refused(at('/mismatch.json'), /client_id is &quot;https:\/\/localhost:\d+\/claude\.json&quot;, not the URL it was fetched from/);
    await refused(at('/secret.json'), /holds a client secret/);
    await refused(at('/evil-redirect.json'), /not a redirect URI this server sends clients to/);
    await refused(at('/big.json'), /larger than 5120 bytes/);
    await refused(at('/moved.json'), /answered 302, a redirect, which is not followed/);
    await refused(at('/not-json.json'), /not a JSON object/);
    await refused(at('/gone.json'), /answered 404/);
    await refused('http://localhost/client.json', /must be https/);
    await refused(documents.base + '/', /has no path/);
    await refused(at('/a/../claude.json'), /segment/);
    await refused('https://user:pw@localhost/claude.json', /user name or password/);
    // A document that does not answer is given up on; the server serves meanwhile.
    const slow = refused(at('/slow.json'), /no document from localhost within 5 s/);
    assert.equal((await mcpStatus(server, server.token)).status, 200, 'serving while a document is fetched');
    await slow;
    // A body that ends with the connection is whole; a loopback redirect may name another port
    // (a native app listens where it can), nothing else may differ.
    const closeDelimited = await openPage(authorizeUrl({ client_id: at('/close-delimited.json') }, { ...pkce, redirect_uri: 'http://127.0.0.1:40123/callback' }));
    assert.equal(closeDelimited.status, 200, closeDelimited.text);
    assert.match(closeDelimited.text, /Waiting for approval in Code Sandbox/);
    // Its own document, but a redirect it does not list: refused before anything is sent there.
    const elsewhere = await openPage(authorizeUrl({ client_id: at('/claude.json') }, { ...pkce, redirect_uri: 'http://127.0.0.1:9/other' }));
    assert.equal(elsewhere.status, 400);
    assert.equal(elsewhere.location, null);
    assert.match(elsewhere.text, /Unknown redirect/);
    // A server not told otherwise fetches from public addresses only: localhost is not one.
    const before = documents.hits['/claude.json'];
    await refused(at('/claude.json'), /localhost leads to (127\.0\.0\.1|::1), which is not a public address/, other);
    await refused('https://10.1.2.3/client.json', /10\.1\.2\.3 leads to 10\.1\.2\.3, which is not a public address/, other);
    assert.equal(documents.hits['/claude.json'], before, 'nothing was fetched');
    assert.equal((await mcpStatus(other, other.token)).status, 200);
});

async function mcpStatus(target, bearer) {
    const res = await fetch(target.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: 'Bearer ' + bearer },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    await res.text();
    return { status: res.status, challenge: res.headers.get('www-authenticate') };
}

async function tokenRequest(target, params) {
    const res = await fetch(new URL('/oauth/token', target.url), { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) });
    return { status: res.status, body: await res.json().catch(() => null) };
}

test('an expired access token is refreshed once; the old refresh token then fails', { timeout: 120_000 }, async () => {
    const provider = new Provider('Refresher');
    const client = await signIn(provider);
    try {
        const before = { ...provider.saved.tokens };
        await sleep((TOKEN_LIFE + 1) * 1000);
        assert.equal((await mcpStatus(server, before.access_token)).status, 401, 'expired');
        const r = await client.callTool(js); // the SDK refreshes on the 401 and retries
        assert.ok(!r.isError && /42/.test(textOf(r)), textOf(r));
        assert.notEqual(provider.saved.tokens.refresh_token, before.refresh_token, 'rotated');
        const old = await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: before.refresh_token, client_id: provider.saved.client.client_id });
        assert.equal(old.status, 400);
        assert.equal(old.body.error, 'invalid_grant');
        // A rotated refresh token used again means a copy is in other hands: the grant is revoked,
        // its current tokens with it (RFC 9700 4.14.2).
        const current = await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: provider.saved.tokens.refresh_token, client_id: provider.saved.client.client_id });
        assert.equal(current.body?.error, 'invalid_grant', JSON.stringify(current.body));
        assert.equal((await mcpStatus(server, provider.saved.tokens.access_token)).status, 401);
    } finally {
        await client.close();
    }
});

test('a revoked grant gets 401 on its next request; a token for another resource is refused', { timeout: 120_000 }, async () => {
    const provider = new Provider('Revoked');
    const client = await signIn(provider);
    await client.close();
    const access = provider.saved.tokens.access_token;
    assert.equal((await mcpStatus(server, access)).status, 200);
    // The other server shares the key, and refuses a token whose audience is not its endpoint.
    const elsewhere = await mcpStatus(other, access);
    assert.equal(elsewhere.status, 401);
    assert.match(elsewhere.challenge, /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"/);
    // Asked for another resource, the token endpoint refuses.
    const wrong = await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: provider.saved.tokens.refresh_token, client_id: provider.saved.client.client_id, resource: other.url });
    assert.equal(wrong.body.error, 'invalid_target');
    const listed = await cli(['--list-credentials']);
    const id = /(c-[0-9a-f]{8})\s+oauth-bot/.exec(listed.stdout.split('\n').reverse().join('\n'))[1];
    assert.equal((await cli(['--revoke-credential', id])).code, 0);
    assert.equal((await mcpStatus(server, access)).status, 401);
    const refreshed = await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: provider.saved.tokens.refresh_token, client_id: provider.saved.client.client_id });
    assert.equal(refreshed.body.error, 'invalid_grant');
});

async function register(body, target = server) {
    const res = await fetch(new URL('/oauth/register', target.url), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, body: await res.json().catch(() => null) };
}

function authorizeUrl(client, params, target = server) {
    const url = new URL('/oauth/authorize', target.url);
    const all = { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, state: 's1', ...params };
    for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.set(k, v);
    return url;
}

const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

test('PKCE missing or plain is refused, and a replayed code revokes what it gave', { timeout: 120_000 }, async () => {
    const { body: client } = await register({ client_name: 'raw', redirect_uris: [REDIRECT] });
    for (const params of [{}, { code_challenge: CHALLENGE }, { code_challenge: CHALLENGE, code_challenge_method: 'plain' }]) {
        const page = await openPage(authorizeUrl(client, params));
        assert.equal(page.status, 302, JSON.stringify(params));
        const back = new URL(page.location);
        assert.equal(back.searchParams.get('error'), 'invalid_request');
        assert.equal(back.searchParams.get('state'), 's1');
    }
    const back = await approve(server, authorizeUrl(client, { code_challenge: CHALLENGE, code_challenge_method: 'S256' }));
    const code = back.searchParams.get('code');
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: VERIFIER };
    const wrongVerifier = await tokenRequest(server, { ...exchange, code_verifier: (VERIFIER[0] === 'a' ? 'b' : 'a') + VERIFIER.slice(1) });
    assert.equal(wrongVerifier.body.error, 'invalid_grant');
    const first = await tokenRequest(server, exchange);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal((await mcpStatus(server, first.body.access_token)).status, 200);
    const replay = await tokenRequest(server, exchange);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, 'invalid_grant');
    assert.equal((await mcpStatus(server, first.body.access_token)).status, 401, 'the replay revoked the grant');
});

test('a denied sign-in sends the browser back with access_denied and issues nothing', { timeout: 60_000 }, async () => {
    const { body: client } = await register({ client_name: 'denied', redirect_uris: [REDIRECT] });
    const back = await approve(server, authorizeUrl(client, { code_challenge: CHALLENGE, code_challenge_method: 'S256' }), { allow: false });
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('code'), null);
});

test('no sign-in on a server bound beyond loopback, and none without --as in a name a client chose', { timeout: 60_000 }, async () => {
    const wide = await startHttpServer({ args: ['--no-monitor', '--host', '0.0.0.0'], env });
    try {
        assert.equal((await fetch(new URL('/.well-known/oauth-authorization-server', wide.url))).status, 404);
        const refused = await mcpStatus(wide, 'nothing');
        assert.equal(refused.status, 401);
        assert.doesNotMatch(refused.challenge, /resource_metadata/);
    } finally {
        await wide.stop();
    }
    // Approved without --as, a client that calls itself 'oauth-bot' does not become oauth-bot.
    const { body: client } = await register({ client_name: 'oauth-bot', redirect_uris: [REDIRECT] });
    const page = await openPage(authorizeUrl(client, { code_challenge: CHALLENGE, code_challenge_method: 'S256' }));
    const answered = await cli(['--approve-client', page.id, '--port', String(server.port)], { CODE_SANDBOX_TOKEN: server.token });
    assert.equal(answered.code, 0, answered.stderr);
    assert.match(answered.stdout, new RegExp(`runs as the assistant 'OAuth client ${client.client_id.slice(-8)}'`));
});

test('bad input on every endpoint: a clear error, nothing issued, the server goes on', { timeout: 60_000 }, async () => {
    const prm = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', server.url));
    assert.deepEqual((await prm.json()).authorization_servers, [new URL(server.url).origin]);
    const as = await (await fetch(new URL('/.well-known/oauth-authorization-server', server.url))).json();
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.equal((await fetch(new URL('/.well-known/oauth-authorization-server', server.url), { method: 'POST' })).status, 405);
    assert.equal((await fetch(new URL('/oauth/token', server.url))).status, 405);

    assert.equal((await register('{not json')).body.error, 'invalid_client_metadata');
    assert.equal((await register({ redirect_uris: [] })).body.error, 'invalid_redirect_uri');
    for (const uri of ['http://evil.example/cb', 'javascript:alert(1)', 'data:text/html,x', 'file:///etc/passwd', 'not a uri'])
        assert.equal((await register({ redirect_uris: [uri] })).body.error, 'invalid_redirect_uri', uri);
    assert.equal((await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' })).body.error, 'invalid_client_metadata');
    const big = await register({ redirect_uris: [REDIRECT], client_name: 'x'.repeat(100_000) });
    assert.equal(big.status, 413);

    const unknown = await openPage(authorizeUrl({ client_id: 'cs-client-nope' }, { code_challenge: CHALLENGE, code_challenge_method: 'S256' }));
    assert.equal(unknown.status, 400, 'no redirect for an unknown client');
    assert.equal(unknown.location, null);
    const { body: client } = await register({ redirect_uris: [REDIRECT] });
    const elsewhere = await openPage(authorizeUrl(client, { redirect_uri: 'http://127.0.0.1:9/other', code_challenge: CHALLENGE, code_challenge_method: 'S256' }));
    assert.equal(elsewhere.status, 400, 'never sent to an unregistered redirect');
    assert.equal(elsewhere.location, null);

    assert.equal((await tokenRequest(server, { grant_type: 'authorization_code', code: 'nope', client_id: client.client_id })).body.error, 'invalid_grant');
    assert.equal((await tokenRequest(server, { grant_type: 'password' })).body.error, 'unsupported_grant_type');
    const raw = await fetch(new URL('/oauth/token', server.url), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(raw.status, 400);
    // Answering a sign-in needs the shared token.
    const decide = await fetch(new URL('/oauth/decide', server.url), { method: 'POST', body: JSON.stringify({ request: 'x', allow: true }) });
    assert.equal(decide.status, 401);
    assert.equal((await cli(['--approve-client', 'ffffffff', '--port', String(server.port)], { CODE_SANDBOX_TOKEN: server.token })).code, 2);
    // Still serving.
    assert.equal((await mcpStatus(server, server.token)).status, 200);
});
