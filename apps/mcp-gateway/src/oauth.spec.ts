import { createHash, randomBytes } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import request from 'supertest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthStore, hashSecret } from '@analytics/auth';
import { OAUTH_ROUTES } from '@analytics/schema';
import { IngestService } from '@analytics/ingest';
import { Writable } from 'node:stream';
import { type Logger, type RateLimiter, RedisRateLimiter, createLogger, createRedis, redisReady } from '@analytics/service-kit';
import { REDIS, openTestStores, silentLogger, systemServer } from '@analytics/testing';
import { buildApp } from './app';
import { TOOLS } from './tools';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
type Keys = { pk: string; sk: string; rk: string };
type TokenBody = { access_token?: string; refresh_token?: string; token_type?: string; expires_in?: number; error?: string; error_description?: string };

let stores: Stores;
beforeAll(async () => {
  stores = await openTestStores();
});
afterAll(() => stores.close());

const redirectUri = 'http://127.0.0.1:33418/callback';
const prefixOf = (key: string) => key.split('_')[2]!;
const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};
const authParams = (clientId: string, challenge: string) => ({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', state: 'st-1' });

/**
 * A gateway with MCP_OAUTH=on on a loopback port (each describe its own: the OAuth routes share one rate bucket per
 * caller, and registrations are counted per address under each gateway's own IP-hash secret).
 */
function gateway(options: { publicUrl?: string; logger?: Logger; store?: ConstructorParameters<typeof OAuthStore>[1]; limiter?: RateLimiter; ipHashSecret?: string } = {}) {
  const g = { base: '', keys: {} as Keys, http: undefined as HttpServer | undefined, app: undefined as unknown as Express };
  beforeAll(async () => {
    const ingest = new IngestService({ store: stores.events, limiter: stores.limiter });
    const ipHashSecret = options.ipHashSecret ?? randomBytes(8).toString('hex');
    const oauth = { store: new OAuthStore(stores.keyDb, options.store), limiter: options.limiter };
    g.app = buildApp({ logger: options.logger ?? silentLogger, authenticator: stores.authenticator, ingest, events: stores.events, ipHashSecret, oauth, publicUrl: options.publicUrl });
    g.keys = (await stores.keyStore.createProject({ name: 'connector' })).keys;
    g.http = await new Promise((resolve) => {
      const s = g.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    g.base = `http://127.0.0.1:${(g.http!.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => g.http!.close(r)));

  const register = (metadata: Record<string, unknown>) =>
    fetch(`${g.base}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
  const registered = async (metadata: Record<string, unknown> = {}) => {
    const res = await register({ client_name: 'Test connector', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], ...metadata });
    expect(res.status).toBe(201);
    return (await res.json()) as { client_id: string; client_secret?: string };
  };
  const submit = (fields: Record<string, string>) =>
    fetch(`${g.base}/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  const token = async (fields: Record<string, string>) => {
    const res = await fetch(`${g.base}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    return { status: res.status, body: (await res.json()) as TokenBody };
  };
  /** A code for `key`, through the consent form. */
  const codeFor = async (clientId: string, key: string) => {
    const { verifier, challenge } = pkce();
    const res = await submit({ ...authParams(clientId, challenge), api_key: key });
    expect(res.status).toBe(302);
    return { code: new URL(res.headers.get('location')!).searchParams.get('code')!, verifier };
  };
  const exchange = (clientId: string, code: string, verifier: string, extra: Record<string, string> = {}) =>
    token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri, ...extra });
  /** Tokens for `key` through the whole flow. */
  const tokensFor = async (clientId: string, key: string) => {
    const { code, verifier } = await codeFor(clientId, key);
    const t = await exchange(clientId, code, verifier);
    expect(t.status).toBe(200);
    return t.body as Required<Pick<TokenBody, 'access_token' | 'refresh_token'>>;
  };
  const refresh = (clientId: string, refreshToken: string) => token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: refreshToken });
  const toolsList = (accessToken: string) =>
    fetch(`${g.base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  return { g, register, registered, submit, token, codeFor, exchange, tokensFor, refresh, toolsList };
}

describe('OAuth 2.1 for connector UIs (MCP_OAUTH=on)', () => {
  const { g, registered, submit, exchange, token } = gateway();

  it('publishes protected-resource (RFC 9728) and authorization-server (RFC 8414, PKCE S256, registration) metadata', async () => {
    const prm = (await (await fetch(`${g.base}/.well-known/oauth-protected-resource`)).json()) as { resource: string; authorization_servers: string[] };
    expect(prm.resource).toBe(`${g.base}/mcp`);
    const asUrl = prm.authorization_servers[0]!;
    const asm = (await (await fetch(new URL('/.well-known/oauth-authorization-server', asUrl))).json()) as Record<string, unknown>;
    expect(asm).toMatchObject({ authorization_endpoint: `${g.base}/authorize`, token_endpoint: `${g.base}/token`, registration_endpoint: `${g.base}/register`, code_challenge_methods_supported: ['S256'] });
  });

  it("serves the endpoints libs/schema's OAUTH_ROUTES declares (what the proxy routes here), and every endpoint its metadata names is one of them", async () => {
    const declared: readonly string[] = OAUTH_ROUTES.map((r) => r.path);
    const prm = (await (await fetch(`${g.base}/.well-known/oauth-protected-resource`)).json()) as { resource: string; authorization_servers: string[] };
    const asm = (await (await fetch(`${g.base}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
    const named = [new URL(prm.resource).pathname, ...['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'].map((k) => new URL(asm[k]!).pathname)];
    expect(named.filter((p) => p !== '/mcp' && !declared.includes(p))).toEqual([]);
    for (const { path, methods } of OAUTH_ROUTES) {
      for (const method of methods) {
        const res = await fetch(`${g.base}${path}`, { method: method.toUpperCase(), ...(method === 'post' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}) });
        // Not the app's 404 (or 405): the OAuth router answered, with metadata or the protocol's refusal of an empty request.
        expect({ method, path, status: res.status < 500 && ![404, 405].includes(res.status) }).toEqual({ method, path, status: true });
      }
    }
    for (const path of ['/.well-known/oauth-protected-resource/other', '/authorize/x', '/tokens']) expect({ path, status: (await fetch(`${g.base}${path}`)).status }).toEqual({ path, status: 404 });
  });

  it('admits loopback origins on any port when MCP_ALLOWED_ORIGINS is unset, and still refuses foreign ones', async () => {
    const post = (origin: string) =>
      fetch(`${g.base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${g.keys.sk}`, 'content-type': 'application/json', origin }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:9', 'http://[::1]:6274']) expect([origin, (await post(origin)).status]).toEqual([origin, 200]);
    for (const origin of ['https://evil.example', 'http://localhost.evil.example']) expect([origin, (await post(origin)).status]).toEqual([origin, 403]);
  });

  it('puts resource_metadata in every 401 of /mcp', async () => {
    const res = await fetch(`${g.base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${g.base}/.well-known/oauth-protected-resource"`);
  });

  it('registers, authorizes with PKCE through the key form, exchanges the code, serves tools/list with the token, and refuses it once the key is revoked', async () => {
    const keys = (await stores.keyStore.createProject({ name: 'revoked-later' })).keys;
    const { client_id: clientId } = await registered();
    const { verifier, challenge } = pkce();
    const params = authParams(clientId, challenge);

    const page = await fetch(`${g.base}/authorize?${new URLSearchParams(params).toString()}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html.match(/<form method="post"/g)).toHaveLength(1);
    expect(html).toContain('name="api_key"');
    for (const [name, value] of Object.entries(params)) expect(html).toContain(`name="${name}" value="${value}"`);

    const wrong = await submit({ ...params, api_key: keys.rk.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')) });
    expect(wrong.status).toBe(200);
    const wrongHtml = await wrong.text();
    expect(wrongHtml).toContain('name="api_key"');
    expect(wrongHtml).toMatch(/unknown or revoked/);

    const ok = await submit({ ...params, api_key: keys.rk });
    expect(ok.status).toBe(302);
    const location = new URL(ok.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect(location.searchParams.get('state')).toBe('st-1');
    const code = location.searchParams.get('code')!;

    const tokens = await exchange(clientId, code, verifier);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'bearer', expires_in: 3600, access_token: expect.stringMatching(/^mcp_at_/), refresh_token: expect.stringMatching(/^mcp_rt_/) });
    const replay = await exchange(clientId, code, verifier);
    expect(replay.status).toBe(400);

    const { rows } = await stores.keyDb.query<{ token_hash: string }>('SELECT token_hash FROM oauth_tokens');
    expect(rows.map((r) => r.token_hash)).not.toContain(tokens.body.access_token);

    const client = new Client({ name: 'connector', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${g.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.body.access_token}` } } }));
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOLS.filter((t) => t.access === 'read').map((t) => t.name).sort());
    await client.close();

    const refreshed = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens.body.refresh_token! });
    expect(refreshed.body.access_token).toMatch(/^mcp_at_/);

    await stores.keyStore.revokeKey(prefixOf(keys.rk));
    stores.authenticator.invalidateKey(prefixOf(keys.rk));
    for (const t of [tokens.body.access_token!, refreshed.body.access_token!]) {
      const res = await fetch(`${g.base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });

  it('shows the form again in words for a pk_ key and never redirects with a code', async () => {
    const { client_id: clientId } = await registered();
    const res = await submit({ ...authParams(clientId, pkce().challenge), api_key: g.keys.pk });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/pk_ key is the public browser key/);
  });
});

describe('OAuth clients: the consent page and registration rules', () => {
  const { g, register, registered } = gateway();
  const clientCount = async () => Number((await stores.keyDb.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_clients')).rows[0]!.n);

  it('shows the redirect host and marks the self-registered client unverified beside its name', async () => {
    const { client_id: clientId } = await registered({ client_name: 'Claude <b>', redirect_uris: ['https://claude.ai/api/mcp/auth_callback'] });
    const params = { ...authParams(clientId, pkce().challenge), redirect_uri: 'https://claude.ai/api/mcp/auth_callback' };
    const html = await (await fetch(`${g.base}/authorize?${new URLSearchParams(params).toString()}`)).text();
    expect(html).toContain('<h1>Connect Claude &#60;b&#62; <span class="unverified">unverified</span></h1>');
    expect(html).toContain('it is <strong>unverified</strong>');
    expect(html).toContain('The access is sent to <strong class="target">claude.ai</strong>.');
  });

  it.each([
    ['plain http to a public host', 'http://evil.example/cb', /plain http/],
    ['a fragment', 'https://app.example/cb#code', /fragment/],
    ['file:', 'file:///tmp/cb', /file: scheme/],
    ['blob:', 'blob:https://app.example/1', /blob: scheme/],
    ['data:', 'data:text/html,hi', /data: scheme/],
    ['javascript:', 'javascript:alert(1)', /javascript: scheme/],
  ])('refuses to register a redirect URI with %s: 400 invalid_redirect_uri, nothing stored', async (_name, uri, description) => {
    const before = await clientCount();
    const res = await register({ client_name: 'x', redirect_uris: ['https://app.example/cb', uri], token_endpoint_auth_method: 'none' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_redirect_uri');
    expect(body.error_description).toMatch(/^redirect_uris\[1\] /);
    expect(body.error_description).toMatch(description);
    expect(await clientCount()).toBe(before);
  });

  it('registers loopback http on any port, https and a private-use scheme', async () => {
    const uris = ['http://127.0.0.1:1/cb', 'http://[::1]:65535/cb', 'http://localhost/cb', 'https://app.example/cb', 'com.example.app:/oauth2redirect'];
    const res = await register({ client_name: 'native', redirect_uris: uris, token_endpoint_auth_method: 'none' });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { redirect_uris: string[] }).redirect_uris).toEqual(uris);
  });

  it.each([
    ['a client_name of 201 characters', { client_name: 'n'.repeat(201) }, /client_name is 201 characters; at most 200/],
    ['11 redirect URIs', { redirect_uris: Array.from({ length: 11 }, (_, i) => `http://127.0.0.1:${4000 + i}/cb`) }, /redirect_uris has 11 entries; at most 10/],
    ['a redirect URI of 2049 characters', { redirect_uris: [`https://app.example/${'p'.repeat(2049 - 20)}`] }, /redirect_uris holds a string longer than 2048/],
    ['a body over 8 KB', { software_statement: 's'.repeat(2000), policy_uri: 'https://app.example/p', jwks: { keys: Array.from({ length: 7 }, () => ({ n: 'x'.repeat(1000) })) } }, /over 8192 bytes/],
  ])('refuses %s with 400 invalid_client_metadata, nothing stored', async (_name, extra, description) => {
    const before = await clientCount();
    const res = await register({ client_name: 'x', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', ...extra });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; error_description: string };
    expect([body.error, body.error_description]).toEqual(['invalid_client_metadata', expect.stringMatching(description)]);
    expect(await clientCount()).toBe(before);
  });

  it('refuses /authorize to a client stored before the rules whose redirect URI breaks them: 400, and no redirect', async () => {
    await new OAuthStore(stores.keyDb).saveClient('legacy-http', { client_id: 'legacy-http', client_name: 'Old', redirect_uris: ['http://evil.example/cb'], token_endpoint_auth_method: 'none' });
    const params = { ...authParams('legacy-http', pkce().challenge), redirect_uri: 'http://evil.example/cb' };
    for (const res of [
      await fetch(`${g.base}/authorize?${new URLSearchParams(params).toString()}`, { redirect: 'manual' }),
      await fetch(`${g.base}/authorize?${new URLSearchParams({ ...params, redirect_uri: '' }).toString().replace('&redirect_uri=', '')}`, { redirect: 'manual' }),
      await fetch(`${g.base}/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...params, api_key: g.keys.rk }).toString() }),
    ]) {
      expect([res.status, res.headers.get('location')]).toEqual([400, null]);
      expect(await res.json()).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/^redirect_uri uses plain http/) });
    }
  });
});

const capped = { client_name: 'capped', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' };
const clientCount = async () => Number((await stores.keyDb.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_clients')).rows[0]!.n);
/** 429 rate_limited with Retry-After of the per-address bucket (10 an hour: one more every 6 minutes). */
const expectAddressCapped = async (res: Response) => {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(360);
  expect(await res.json()).toEqual({ error: 'rate_limited', retry_after_s: retryAfter, details: 'at most 10 client registrations per 60 minutes from one address' });
};

describe('OAuth registrations capped per client address', () => {
  const { register } = gateway();

  it('answers 429 rate_limited with Retry-After past 10 an hour from one address, and stores nothing more', async () => {
    for (let i = 0; i < 10; i++) expect((await register(capped)).status).toBe(201);
    const before = await clientCount();
    await expectAddressCapped(await register(capped));
    expect(await clientCount()).toBe(before);
  });
});

// The cap holds across instances where Redis carries the buckets (TEST_REDIS_URL, set by .ci/run).
const REDIS_SERVER = systemServer(REDIS);
REDIS_SERVER.describe('OAuth registrations capped per client address across two instances sharing Redis', () => {
  let client: ReturnType<typeof createRedis> | undefined;
  let shared: RedisRateLimiter;
  // Made in beforeAll (before the gateways' own), used by both gateways: the buckets of one deployment.
  const limiter: RateLimiter = { take: (key, rule, cost) => shared.take(key, rule, cost) };
  beforeAll(async () => {
    client = createRedis(REDIS_SERVER.url!, silentLogger);
    expect(await redisReady(client, 5_000)).toBe(true);
    shared = new RedisRateLimiter(client, silentLogger, `analytics:test-oauth:${randomBytes(6).toString('hex')}:`);
  });
  afterAll(() => client?.disconnect());
  const ipHashSecret = randomBytes(8).toString('hex');
  const a = gateway({ limiter, ipHashSecret });
  const b = gateway({ limiter, ipHashSecret });

  it('refuses the 11th registration of an address on the other instance', async () => {
    for (let i = 0; i < 10; i++) expect((await (i % 2 ? a : b).register(capped)).status).toBe(201);
    await expectAddressCapped(await a.register(capped));
    await expectAddressCapped(await b.register(capped));
  });
});

describe('OAuth registrations past the total', () => {
  const { register } = gateway({ store: { maxClients: 0 } });

  it('answers 503 temporarily_unavailable with Retry-After, saying why', async () => {
    const before = await clientCount();
    const res = await register({ client_name: 'one too many', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.stringMatching(/^this server holds its maximum of 0 registered clients; a registration never used is deleted a day after it was made/) });
    expect(await clientCount()).toBe(before);
  });
});

describe('OAuth confidential clients: the secret is kept hashed', () => {
  const { registered, codeFor, exchange, g } = gateway();

  it('answers the secret once at registration, stores only its SHA-256, and authenticates /token and /revoke against it', async () => {
    const { client_id: clientId, client_secret: secret } = await registered({ token_endpoint_auth_method: 'client_secret_post' });
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const { rows } = await stores.keyDb.query<{ metadata: unknown; client_secret_hash: string }>('SELECT metadata, client_secret_hash FROM oauth_clients WHERE client_id = $1', [clientId]);
    expect(rows[0]!.client_secret_hash).toBe(hashSecret(secret!));
    expect(JSON.stringify(rows[0]!.metadata)).not.toContain(secret!);

    const { code, verifier } = await codeFor(clientId, g.keys.rk);
    const missing = await exchange(clientId, code, verifier);
    expect([missing.status, missing.body.error, missing.body.error_description]).toEqual([400, 'invalid_client', 'Client secret is required']);
    const wrong = await exchange(clientId, code, verifier, { client_secret: secret!.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) });
    expect([wrong.status, wrong.body.error, wrong.body.error_description]).toEqual([400, 'invalid_client', 'Invalid client_secret']);
    const ok = await exchange(clientId, code, verifier, { client_secret: secret! });
    expect(ok.status).toBe(200);

    const revoke = (fields: Record<string, string>) =>
      fetch(`${g.base}/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: clientId, token: ok.body.refresh_token!, ...fields }).toString() });
    const refused = await revoke({ client_secret: 'f'.repeat(64) });
    expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([400, 'invalid_client']);
    expect((await revoke({ client_secret: secret! })).status).toBe(200);
    expect(await new OAuthStore(stores.keyDb).resolveAccessToken(ok.body.access_token!)).toBeNull();
  });
});

describe('OAuth codes and refresh tokens', () => {
  const { g, registered, codeFor, exchange, tokensFor, refresh, toolsList } = gateway();

  it('burns a code after one wrong code_verifier: the right verifier then gets invalid_grant too', async () => {
    const { client_id: clientId } = await registered();
    const { code, verifier } = await codeFor(clientId, g.keys.rk);
    const wrong = await exchange(clientId, code, pkce().verifier);
    expect([wrong.status, wrong.body.error, wrong.body.error_description]).toEqual([400, 'invalid_grant', 'code_verifier does not match the challenge; the code is spent']);
    const right = await exchange(clientId, code, verifier);
    expect([right.status, right.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('revokes the whole grant when a rotated refresh token is presented again, and leaves other grants alone', async () => {
    const { client_id: clientId } = await registered();
    const first = await tokensFor(clientId, g.keys.rk);
    const other = await tokensFor(clientId, g.keys.rk);
    const second = (await refresh(clientId, first.refresh_token)).body;
    expect(second.access_token).toMatch(/^mcp_at_/);
    expect((await toolsList(second.access_token!)).status).toBe(200);

    const reuse = await refresh(clientId, first.refresh_token);
    expect([reuse.status, reuse.body.error, reuse.body.error_description]).toEqual([400, 'invalid_grant', 'refresh token already used: every token of this grant is revoked']);
    for (const access of [first.access_token, second.access_token!]) expect((await toolsList(access)).status).toBe(401);
    expect((await refresh(clientId, second.refresh_token!)).body.error).toBe('invalid_grant');
    expect((await toolsList(other.access_token)).status).toBe(200);
    expect((await refresh(clientId, other.refresh_token)).status).toBe(200);
  });

  it('refuses a refresh with invalid_grant once the API key behind the grant is revoked', async () => {
    const keys = (await stores.keyStore.createProject({ name: 'refresh-then-revoke' })).keys;
    const { client_id: clientId } = await registered();
    const tokens = await tokensFor(clientId, keys.rk);
    await stores.keyStore.revokeKey(prefixOf(keys.rk));
    const res = await refresh(clientId, tokens.refresh_token);
    expect([res.status, res.body.error, res.body.error_description]).toEqual([400, 'invalid_grant', 'the API key behind this grant was revoked']);
  });

  it('refuses to exchange a code with invalid_grant once the API key it was made with is revoked', async () => {
    const keys = (await stores.keyStore.createProject({ name: 'code-then-revoke' })).keys;
    const { client_id: clientId } = await registered();
    const { code, verifier } = await codeFor(clientId, keys.rk);
    await stores.keyStore.revokeKey(prefixOf(keys.rk));
    const res = await exchange(clientId, code, verifier);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
  });
});

describe('OAuth metadata and WWW-Authenticate without PUBLIC_URL: a validated Host, else localhost', () => {
  const { g } = gateway();
  const challengeFor = async (host: string) => (await request(g.app).post('/mcp').set('Host', host).set('content-type', 'application/json').send('{}')).headers['www-authenticate'];

  it('names the request\'s Host when it is a valid host[:port], normalised', async () => {
    expect(await challengeFor('LocalHost:8080')).toBe('Bearer resource_metadata="http://localhost:8080/.well-known/oauth-protected-resource"');
  });

  it.each([
    ['a quote and markup', 'evil.example"><script>'],
    ['a space', 'evil.example x="1"'],
    ['a comma', 'a.example,evil.example'],
    ['a path', 'evil.example/.well-known'],
    ['an overly long value', `${'a'.repeat(60)}.`.repeat(5)],
  ])('falls back to localhost for a Host with %s, in WWW-Authenticate and in the metadata', async (_name, host) => {
    expect(await challengeFor(host)).toBe('Bearer resource_metadata="http://localhost/.well-known/oauth-protected-resource"');
    const asm = await request(g.app).get('/.well-known/oauth-authorization-server').set('Host', host);
    expect(asm.status).toBe(200);
    expect(asm.body).toMatchObject({ issuer: 'http://localhost/', authorization_endpoint: 'http://localhost/authorize', token_endpoint: 'http://localhost/token' });
    expect(JSON.stringify(asm.body)).not.toContain('evil');
  });
});

describe('OAuth metadata and WWW-Authenticate with PUBLIC_URL', () => {
  const PUBLIC = 'https://analytics.example.com';
  const { g } = gateway({ publicUrl: PUBLIC });

  it.each([['the listening address', undefined], ['a forged one', 'evil.example']])('names PUBLIC_URL whatever the Host (%s)', async (_name, host) => {
    const get = (path: string) => (host ? request(g.app).get(path).set('Host', host) : request(g.app).get(path).set('Host', new URL(g.base).host));
    const prm = await get('/.well-known/oauth-protected-resource');
    expect(prm.body).toMatchObject({ resource: `${PUBLIC}/mcp`, authorization_servers: [`${PUBLIC}/`] });
    const asm = await get('/.well-known/oauth-authorization-server');
    expect(asm.body).toMatchObject({ issuer: `${PUBLIC}/`, authorization_endpoint: `${PUBLIC}/authorize`, token_endpoint: `${PUBLIC}/token`, registration_endpoint: `${PUBLIC}/register`, revocation_endpoint: `${PUBLIC}/revoke` });
    const unauthorized = await (host ? request(g.app).post('/mcp').set('Host', host) : request(g.app).post('/mcp')).set('content-type', 'application/json').send('{}');
    expect(unauthorized.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource"`);
  });
});

describe('request logs of the OAuth routes', () => {
  const lines: Array<{ msg?: string; method?: string; path?: string; status?: number }> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
      done();
    },
  });
  const { g, registered, submit, exchange, refresh } = gateway({ logger: createLogger({ level: 'debug', format: 'json', destination }) });

  it('logs /authorize, /token, /register, /revoke and the well-known paths as those fixed paths, with no query string, code or token', async () => {
    const { client_id: clientId } = await registered();
    const { verifier, challenge } = pkce();
    const params = { ...authParams(clientId, challenge), state: 'state-value-9f2c' };
    await fetch(`${g.base}/authorize?${new URLSearchParams(params).toString()}`);
    const consent = await submit({ ...params, api_key: g.keys.rk });
    const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
    const tokens = (await exchange(clientId, code, verifier)).body;
    const next = (await refresh(clientId, tokens.refresh_token!)).body;
    await fetch(`${g.base}/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: clientId, token: next.access_token! }).toString() });
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server']) await fetch(`${g.base}${path}?x=${code}`);
    await new Promise((r) => setImmediate(r));

    const logged = lines.filter((l) => l.msg === 'request').map((l) => `${l.method} ${l.path} ${l.status}`);
    expect(logged).toEqual([
      'POST /register 201',
      'GET /authorize 200',
      'POST /authorize 302',
      'POST /token 200',
      'POST /token 200',
      'POST /revoke 200',
      'GET /.well-known/oauth-protected-resource 200',
      'GET /.well-known/oauth-protected-resource/mcp 200',
      'GET /.well-known/oauth-authorization-server 200',
    ]);
    const text = JSON.stringify(lines);
    for (const secret of [code, verifier, challenge, 'state-value-9f2c', g.keys.rk.split('_')[3]!, tokens.access_token!, tokens.refresh_token!, next.access_token!, next.refresh_token!]) expect(text).not.toContain(secret);
  });
});
