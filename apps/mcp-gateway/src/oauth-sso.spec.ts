import { randomBytes, randomUUID } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { buildApp as buildAdminApp } from '@analytics/admin-api';
import { Accounts, OIDC_HANDOFF_TTL_MS, PasswordHasher, bindingOf } from '@analytics/accounts';
import { Authenticator, KeyStore, OAuthStore, type SqlPort, migrateKeyStore } from '@analytics/auth';
import { IngestService } from '@analytics/ingest';
import { TestOidcProvider, keyStoreBackends, openTestStores, pathOf, silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { REDIRECT_URI, authParams as consentParams, fieldOf, pkce } from './test-support/consent';

// Single sign-on on the MCP OAuth consent page (issue 45): an SSO-only person (no password) connects an agent. A real
// OpenID provider in this process (libs/testing's TestOidcProvider), admin-api serving the callback and mcp-gateway
// the consent page, each on its own server over one key store (PGlite, and PostgreSQL with TEST_DATABASE_URL), as the
// split deployment runs them. Nothing of ours is mocked.

const PUBLIC_URL = 'http://localhost:3998';
const ADMIN_TOKEN = 'admin-token-sso-consent-tests-0123456789';
const redirectUri = REDIRECT_URI;

let events: Awaited<ReturnType<typeof openTestStores>>;
beforeAll(async () => {
  events = await openTestStores();
}, 120_000);
afterAll(() => events.close());

const authParams = (clientId: string, challenge: string) => consentParams(clientId, challenge, 'st-sso');
const alertOf = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
const REFUSED = 'This sign-in with Acme ID has expired, was already used, or was started for another connection: sign in again.';

const listen = (app: Express) =>
  new Promise<{ server: HttpServer; base: string }>((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });

describe.each(keyStoreBackends())('single sign-on on the MCP OAuth consent page, on %s', (_name, open) => {
  const op = new TestOidcProvider(PUBLIC_URL);
  const domain = `sso-consent-${Date.now().toString(36)}.example.com`;
  const clock = { now: Date.now() };
  let db: SqlPort;
  let accounts: Accounts;
  let gateway: { server: HttpServer; base: string };
  let admin: { server: HttpServer; base: string };
  let orgId: string;
  let project: { id: string; name: string };

  const account = (id: string, email = `${id}@${domain}`) => {
    op.accounts.set(id, { email, email_verified: true, name: `Person ${id}` });
    return email;
  };

  beforeAll(async () => {
    await op.start();
    db = await open();
    await migrateKeyStore(db);
    const keyStore = new KeyStore(db);
    accounts = new Accounts({
      db,
      keyStore,
      throttleSecret: 'sso-consent-tests',
      hasher: new PasswordHasher({ params: { N: 1024, r: 8, p: 1 } }),
      oidc: op.settings({ name: 'Acme ID', org: 'Acme SSO', defaultRole: 'viewer' as const, allowedDomains: [domain] }),
      now: () => clock.now,
      onError: () => {},
    });
    // An owner exists (single sign-on does not make the first user), and OIDC_ORG with a project.
    const operator = { kind: 'operator' as const };
    orgId = (await accounts.orgs.create(operator, 'Acme SSO')).id;
    await db.query('INSERT INTO users (id, email, name, password_hash, created_at) VALUES ($1, $2, $3, NULL, now())', [randomUUID(), `owner@${domain}`, 'Owner']);
    project = (await keyStore.createProject({ name: 'Acme SSO site', org_id: orgId })).project;
    admin = await listen(buildAdminApp({ logger: silentLogger, keyStore, accounts, adminToken: ADMIN_TOKEN }));
    const ingest = new IngestService({ store: events.events, limiter: events.limiter });
    gateway = await listen(
      buildApp({ logger: silentLogger, authenticator: new Authenticator(keyStore), ingest, events: events.events, ipHashSecret: 's', oauth: { store: new OAuthStore(db) }, consent: accounts.mcpConsent, audit: accounts.audit, trustProxy: true }),
    );
  }, 180_000);
  afterAll(async () => {
    for (const s of [gateway?.server, admin?.server]) if (s) await new Promise((r) => s.close(r));
    await db?.close();
    await op.stop();
  });

  const registered = async () => {
    const res = await fetch(`${gateway.base}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'SSO agent', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { client_id: string }).client_id;
  };
  const submit = (fields: Record<string, string>) =>
    fetch(`${gateway.base}/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  /** GET of the consent page at an address under PUBLIC_URL (where the callback sends the browser). */
  const consentPage = async (url: string) => {
    const res = await fetch(`${gateway.base}${pathOf(url)}`, { redirect: 'manual' });
    expect({ status: res.status, cookie: res.headers.get('set-cookie') }).toEqual({ status: 200, cookie: null }); // the service sets no cookie
    return res.text();
  };
  /** "Sign in with Acme ID" pressed on the page of `params`, the provider's sign-in as `accountId`, then admin-api's callback: where it sends the browser. */
  const signInWithSso = async (params: Record<string, string>, accountId: string) => {
    const start = await submit({ ...params, sso_start: '1' });
    expect(start.status).toBe(303);
    expect(start.headers.get('referrer-policy')).toBe('no-referrer');
    expect(start.headers.get('set-cookie')).toBeNull();
    const providerUrl = start.headers.get('location')!;
    expect(providerUrl.startsWith(`${op.issuer}/auth?`)).toBe(true);
    const back = await op.authorize(providerUrl, accountId);
    const callback = await fetch(`${admin.base}${pathOf(back)}`, { redirect: 'manual' });
    expect(callback.status).toBe(302);
    expect(callback.headers.get('set-cookie')).toBeNull();
    return new URL(callback.headers.get('location')!);
  };

  it('connects an agent for an SSO-only person: the button, the provider, back to the picker with a one-time code, the pick, tokens that work on /mcp', async () => {
    const email = account('ada');
    const clientId = await registered();
    const { verifier, challenge } = pkce();
    const params = authParams(clientId, challenge);

    const page = await consentPage(`${PUBLIC_URL}/authorize?${new URLSearchParams(params).toString()}`);
    expect(page).toContain('<input type="hidden" name="sso_start" value="1">\n<button type="submit">Sign in with Acme ID</button>');
    expect(page.match(/<form /g)).toHaveLength(3);
    expect(page).not.toMatch(/<script/i);

    const back = await signInWithSso(params, 'ada');
    expect(`${back.origin}${back.pathname}`).toBe(`${PUBLIC_URL}/authorize`);
    const handoff = back.searchParams.get('sso')!;
    expect(handoff).toMatch(/^sso_[0-9A-Za-z]{43}$/);
    // The OAuth request as it was started, and nothing else but the one-time code.
    expect(Object.fromEntries([...back.searchParams].filter(([k]) => k !== 'sso'))).toEqual(params);
    const user = (await db.query<{ id: string; password_hash: string | null }>('SELECT id, password_hash FROM users WHERE email = $1', [email])).rows[0]!;
    expect(user.password_hash).toBeNull();

    // Not a dashboard sign-in: POST /auth/oidc/complete refuses the code (and does not spend it).
    const complete = await fetch(`${admin.base}/auth/oidc/complete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: handoff, secret: randomBytes(32).toString('base64url') }) });
    expect(complete.status).toBe(401);
    // With another OAuth request's parameters (another PKCE challenge): refused, no picker, and the code is not spent.
    const other = await consentPage(`${PUBLIC_URL}/authorize?${new URLSearchParams({ ...params, code_challenge: pkce().challenge, sso: handoff }).toString()}`);
    expect(alertOf(other)).toBe(REFUSED);
    expect(other).not.toContain('name="ticket"');

    const picker = await consentPage(back.href);
    expect(picker).toContain(`Signed in as <strong>${email}</strong>`);
    expect(picker).toContain('<legend>Acme SSO (viewer)</legend>');
    expect(picker).toContain(`value="${project.id}"`);
    expect(picker).not.toContain(handoff);
    const ticket = fieldOf(picker, 'ticket')!;
    expect(ticket).toMatch(/^oct_[0-9A-Za-z]{43}$/);
    // One use: the same address again shows the refusal and no picker.
    const reused = await consentPage(back.href);
    expect(alertOf(reused)).toBe(REFUSED);
    expect(reused).not.toContain('name="ticket"');

    const picked = await submit({ ...params, ticket, project_id: project.id });
    expect(picked.status).toBe(302);
    expect(picked.headers.get('set-cookie')).toBeNull();
    const location = new URL(picked.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect(location.searchParams.get('state')).toBe('st-sso');
    const tokens = await fetch(`${gateway.base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code: location.searchParams.get('code')!, code_verifier: verifier, redirect_uri: redirectUri }).toString(),
    });
    expect(tokens.status).toBe(200);
    const { access_token: accessToken } = (await tokens.json()) as { access_token: string };
    const list = await fetch(`${gateway.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('"get_stats"');

    // The grant is the person's: a key bound to them, and mcp.grant_created in the organization's audit log.
    expect((await db.query('SELECT kind, project_id FROM api_keys WHERE user_id = $1', [user.id])).rows).toEqual([{ kind: 'rk', project_id: project.id }]);
    const grants = (await accounts.audit.list(orgId, { limit: 100 })).filter((e) => e.action === 'mcp.grant_created');
    expect(grants).toEqual([expect.objectContaining({ actor: { type: 'user', id: user.id, name: email }, target: { type: 'project', id: project.id, name: project.name } })]);
  });

  it('refuses an expired code, a dashboard sign-in\'s code and a made-up one, and shows the provider\'s refusal in words: the page again, no picker', async () => {
    account('grace');
    const clientId = await registered();
    const params = authParams(clientId, pkce().challenge);
    const query = (extra: Record<string, string>) => `${PUBLIC_URL}/authorize?${new URLSearchParams({ ...params, ...extra }).toString()}`;

    const late = await signInWithSso(params, 'grace');
    clock.now += OIDC_HANDOFF_TTL_MS + 1;
    try {
      expect(alertOf(await consentPage(late.href))).toBe(REFUSED);
    } finally {
      clock.now -= OIDC_HANDOFF_TTL_MS + 1;
    }

    // A sign-in started by the dashboard (bound to its secret) is no use here.
    const start = await fetch(`${admin.base}/auth/oidc/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ binding: bindingOf(randomBytes(32).toString('base64url')) }) });
    const dashboard = await fetch(`${admin.base}${pathOf(await op.authorize(((await start.json()) as { url: string }).url, 'grace'))}`, { redirect: 'manual' });
    const code = new URLSearchParams(new URL(dashboard.headers.get('location')!).hash.slice(1)).get('sso')!;
    expect(code).toMatch(/^sso_/);
    for (const sso of [code, 'sso_not-a-code', 'x'.repeat(500)]) {
      const html = await consentPage(query({ sso }));
      expect(alertOf(html)).toBe(REFUSED);
      expect(html).not.toContain('name="ticket"');
    }

    // The provider's answers that fail a check come back to this page, with the reason in words.
    account('mallory', `mallory-${Date.now().toString(36)}@elsewhere.example.org`);
    const refused = await signInWithSso(params, 'mallory');
    expect(Object.fromEntries(refused.searchParams)).toEqual({ ...params, sso_error: 'domain_not_allowed' });
    const html = await consentPage(refused.href);
    expect(alertOf(html)).toBe("Your email&#39;s domain may not sign in here.");
    expect(html).toContain('Sign in with Acme ID');
    expect(alertOf(await consentPage(query({ sso_error: 'anything else' })))).toBe('Acme ID did not sign you in: try again.');
  });
});
