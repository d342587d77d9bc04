import { randomUUID } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Accounts, PasswordHasher } from '@analytics/accounts';
import { Authenticator, KeyStore, OAuthStore, type SqlPort, hashSecret, migrateKeyStore } from '@analytics/auth';
import { IngestService } from '@analytics/ingest';
import { ApiError, type AuditEntry, type User } from '@analytics/schema';
import { keyStoreBackends, openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { REDIRECT_URI, authParams as consentParams, fieldOf, pkce } from './test-support/consent';

// The consent page of a signed-in person (issue 45): sign in, pick a project, the grant's key is bound to the user,
// every tool call is audited, and the grant ends with the membership. Real stores: the key store on PGlite (and on
// PostgreSQL with TEST_DATABASE_URL), chDB for the events the tools read.

const PASSWORD = 'correct horse battery';
const redirectUri = REDIRECT_URI;
const CLIENT_NAME = 'Test agent';

let events: Awaited<ReturnType<typeof openTestStores>>;
beforeAll(async () => {
  events = await openTestStores();
}, 120_000);
afterAll(() => events.close());

const authParams = (clientId: string, challenge: string) => consentParams(clientId, challenge, 'st-p');
let emails = 0;
const uniqueEmail = (what: string) => `${what}-${Date.now().toString(36)}-${emails++}@example.com`;
const alertOf = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

describe.each(keyStoreBackends())('MCP OAuth consent of a signed-in person on %s', (_name, open) => {
  let db: SqlPort;
  let accounts: Accounts;
  let keyStore: KeyStore;
  let http: HttpServer;
  let base: string;
  let orgId: string;
  let otherOrgId: string;
  let project: { id: string; name: string };
  let otherProject: { id: string; name: string };
  let viewer: User;

  const addMember = async (org: string, role: 'viewer' | 'editor' | 'admin' | 'owner', email = uniqueEmail(role)): Promise<User> => {
    const user = { id: randomUUID(), email, name: role };
    await db.query('INSERT INTO users (id, email, name, password_hash, created_at) VALUES ($1, $2, $3, $4, now())', [user.id, email, user.name, await accounts.ctx.hasher.hash(PASSWORD)]);
    await db.query('INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, now())', [org, user.id, role]);
    return user;
  };

  beforeAll(async () => {
    db = await open();
    await migrateKeyStore(db);
    keyStore = new KeyStore(db);
    accounts = new Accounts({ db, keyStore, throttleSecret: 'consent-tests', hasher: new PasswordHasher({ params: { N: 1024, r: 8, p: 1 } }) });
    const operator = { kind: 'operator' as const };
    orgId = (await accounts.orgs.create(operator, 'Acme')).id;
    otherOrgId = (await accounts.orgs.create(operator, 'Elsewhere')).id;
    await addMember(orgId, 'owner');
    project = (await keyStore.createProject({ name: 'Acme site', org_id: orgId })).project;
    await keyStore.createProject({ name: 'Acme shop', org_id: orgId });
    otherProject = (await keyStore.createProject({ name: 'Elsewhere site', org_id: otherOrgId })).project;
    viewer = await addMember(orgId, 'viewer');
    const authenticator = new Authenticator(keyStore);
    const ingest = new IngestService({ store: events.events, limiter: events.limiter });
    const app = buildApp({ logger: silentLogger, authenticator, ingest, events: events.events, ipHashSecret: 's', oauth: { store: new OAuthStore(db) }, consent: accounts.mcpConsent, audit: accounts.audit, trustProxy: true });
    http = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  }, 180_000);
  afterAll(async () => {
    if (http) await new Promise((r) => http.close(r));
    await db?.close();
  });

  const registered = async () => {
    const res = await fetch(`${base}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: CLIENT_NAME, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { client_id: string }).client_id;
  };
  /** A POST of the consent page's forms, from `address` (the throttle counts per account and per address). */
  const submit = (fields: Record<string, string>, address = '198.51.100.7') =>
    fetch(`${base}/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address }, body: new URLSearchParams(fields).toString() });
  const token = async (fields: Record<string, string>) => {
    const res = await fetch(`${base}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };
  const toolsList = (accessToken: string) =>
    fetch(`${base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  /** Signs `email` in on the consent page: the picker's HTML. */
  const signIn = async (params: Record<string, string>, email: string, password = PASSWORD) => {
    const res = await submit({ ...params, email, password });
    expect(res.status).toBe(200);
    return res.text();
  };
  const auditOf = async (org: string, action: string, until: (e: AuditEntry[]) => boolean = (e) => e.length > 0) => {
    for (let i = 0; i < 100; i++) {
      const entries = (await accounts.audit.list(org, { limit: 1000 })).filter((e) => e.action === action);
      if (until(entries)) return entries;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no ${action} entry in the audit log`);
  };

  it('signs a viewer in, offers their organization\'s projects only, mints a user-bound rk_ key for the pick, and the agent reads through the grant', async () => {
    const clientId = await registered();
    const { verifier, challenge } = pkce();
    const params = authParams(clientId, challenge);

    const page = await fetch(`${base}/authorize?${new URLSearchParams(params).toString()}`);
    const html = await page.text();
    expect(html.match(/<form /g)).toHaveLength(2);
    expect(html).toContain('<input id="email" name="email" type="email" autocomplete="username"');
    expect(html).toContain('<input id="password" name="password" type="password" autocomplete="current-password" required>');
    expect(html).toContain('name="api_key"');

    const picker = await signIn(params, viewer.email.toUpperCase());
    expect(picker).toContain(`Signed in as <strong>${viewer.email}</strong>`);
    expect(picker).toContain('<legend>Acme (viewer)</legend>');
    expect(picker).toContain(`value="${project.id}"`);
    expect(picker).toContain('Acme shop');
    expect(picker).not.toContain(otherProject.id);
    expect(picker).toContain("read this project's statistics");
    expect(picker).not.toMatch(/ses_|rk_live_/);
    const ticket = fieldOf(picker, 'ticket')!;
    expect(ticket).toMatch(/^oct_[0-9A-Za-z]{43}$/);
    for (const [name, value] of Object.entries(params)) expect(fieldOf(picker, name)).toBe(value);
    const stored = (await db.query<{ ticket_hash: string; user_id: string; expires_at: Date }>('SELECT ticket_hash, user_id, expires_at FROM oauth_consent_tickets WHERE client_id = $1', [clientId])).rows;
    expect(stored).toEqual([{ ticket_hash: hashSecret(ticket), user_id: viewer.id, expires_at: expect.anything() }]);
    expect(new Date(stored[0]!.expires_at).getTime() - Date.now()).toBeLessThanOrEqual(600_000);

    const picked = await submit({ ...params, ticket, project_id: project.id });
    expect(picked.status).toBe(302);
    const location = new URL(picked.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect(location.searchParams.get('state')).toBe('st-p');
    // One use: the ticket is spent.
    expect(alertOf(await (await submit({ ...params, ticket, project_id: project.id })).text())).toBe('This sign-in has expired or was already used: sign in again.');

    const keys = (await db.query<{ kind: string; user_id: string; session_id: string | null; expires_at: unknown; project_id: string }>('SELECT kind, user_id, session_id, expires_at, project_id FROM api_keys WHERE user_id = $1', [viewer.id])).rows;
    expect(keys).toEqual([{ kind: 'rk', user_id: viewer.id, session_id: null, expires_at: null, project_id: project.id }]);

    const tokens = await token({ grant_type: 'authorization_code', client_id: clientId, code: location.searchParams.get('code')!, code_verifier: verifier, redirect_uri: redirectUri });
    expect(tokens.status).toBe(200);
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.body['access_token']}` } } }));
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('track_event');
    const stats = await client.callTool({ name: 'get_stats', arguments: { from: '2026-01-01T00:00:00Z', to: '2026-01-08T00:00:00Z' } });
    expect(stats.isError).toBeFalsy();
    expect(stats.structuredContent).toMatchObject({ metric: 'count', rows: expect.any(Array) });
    const project2 = JSON.parse(((await client.readResource({ uri: 'analytics://project' })).contents[0] as { text: string }).text) as { id: string };
    expect(project2.id).toBe(project.id);
    await client.close();

    const [grant] = await auditOf(orgId, 'mcp.grant_created', (e) => e.some((x) => x.details['client'] && (x.details['client'] as { id: string }).id === clientId));
    expect(grant).toMatchObject({ actor: { type: 'user', id: viewer.id, name: viewer.email }, target: { type: 'project', id: project.id, name: project.name } });
    expect(grant!.details).toEqual({ client: { id: clientId, name: CLIENT_NAME }, key: expect.any(String), access: 'read' });
    const calls = await auditOf(orgId, 'mcp.tool_called', (e) => e.some((x) => (x.details['client'] as { id: string }).id === clientId));
    const mine = calls.filter((x) => (x.details['client'] as { id: string }).id === clientId);
    // tools/list and resources/read are not tool calls: one entry, for get_stats, and nothing but who, which client and which tool.
    expect(mine).toEqual([
      { at: expect.any(String), actor: { type: 'user', id: viewer.id, name: viewer.email }, action: 'mcp.tool_called', target: { type: 'project', id: project.id, name: project.name }, details: { client: { id: clientId, name: CLIENT_NAME }, tool: 'get_stats' } },
    ]);
    expect(await auditOf(otherOrgId, 'org.created')).toHaveLength(1);
    expect((await accounts.audit.list(otherOrgId, { limit: 100 })).filter((e) => e.action.startsWith('mcp.'))).toEqual([]);
  });

  it('ends the grant when the member is removed from the organization: the next MCP call is 401 invalid_token, the refresh is refused', async () => {
    const member = await addMember(orgId, 'editor');
    const clientId = await registered();
    const { verifier, challenge } = pkce();
    const params = authParams(clientId, challenge);
    const ticket = fieldOf(await signIn(params, member.email), 'ticket')!;
    const picked = await submit({ ...params, ticket, project_id: project.id });
    const code = new URL(picked.headers.get('location')!).searchParams.get('code')!;
    const tokens = (await token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri })).body;
    expect((await toolsList(tokens['access_token']!)).status).toBe(200);

    await accounts.orgs.remove({ kind: 'operator', org: { id: orgId, role: null } }, member.id);

    const refused = await toolsList(tokens['access_token']!);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refresh = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens['refresh_token']! });
    expect([refresh.status, refresh.body['error'], refresh.body['error_description']]).toEqual([400, 'invalid_grant', 'the API key behind this grant was revoked']);
  });

  it('ends the grant when its project is deleted, and audits no tool call of a grant made with a pasted key', async () => {
    const doomed = (await keyStore.createProject({ name: 'Doomed', org_id: orgId })).project;
    const clientId = await registered();
    const { verifier, challenge } = pkce();
    const params = authParams(clientId, challenge);
    const ticket = fieldOf(await signIn(params, viewer.email), 'ticket')!;
    const code = new URL((await submit({ ...params, ticket, project_id: doomed.id })).headers.get('location')!).searchParams.get('code')!;
    const tokens = (await token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri })).body;
    expect((await toolsList(tokens['access_token']!)).status).toBe(200);
    await keyStore.deleteProject(doomed.id);
    expect((await toolsList(tokens['access_token']!)).status).toBe(401);

    const pasted = pkce();
    const keyClient = await registered();
    const rk = (await keyStore.createKey(project.id, 'rk'))!.key;
    const keyParams = authParams(keyClient, pasted.challenge);
    const keyCode = new URL((await submit({ ...keyParams, api_key: rk })).headers.get('location')!).searchParams.get('code')!;
    const keyTokens = (await token({ grant_type: 'authorization_code', client_id: keyClient, code: keyCode, code_verifier: pasted.verifier, redirect_uri: redirectUri })).body;
    const call = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyTokens['access_token']}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_stats', arguments: { from: '2026-01-01T00:00:00Z', to: '2026-01-08T00:00:00Z' } } }),
    });
    expect(call.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    const entries = await accounts.audit.list(orgId, { limit: 1000 });
    expect(entries.filter((e) => (e.details['client'] as { id?: string } | undefined)?.id === keyClient)).toEqual([]);
  });

  it('refuses a project of another organization (checked server-side: the picker again, no code, no key), and a ticket given for another OAuth request', async () => {
    const clientId = await registered();
    const params = authParams(clientId, pkce().challenge);
    const ticket = fieldOf(await signIn(params, viewer.email), 'ticket')!;
    const keysBefore = (await db.query('SELECT prefix FROM api_keys WHERE user_id = $1', [viewer.id])).rows.length;
    for (const projectId of [otherProject.id, randomUUID(), 'not-a-uuid']) {
      const res = await submit({ ...params, ticket, project_id: projectId });
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(alertOf(html)).toBe('Pick one of the projects listed here.');
      expect(html).not.toContain(otherProject.id);
    }
    expect((await db.query('SELECT prefix FROM api_keys WHERE user_id = $1', [viewer.id])).rows.length).toBe(keysBefore);
    // The same ticket with another client's request, or another PKCE challenge: refused as unknown.
    const otherClient = await registered();
    for (const other of [authParams(otherClient, params.code_challenge), authParams(clientId, pkce().challenge)]) {
      const res = await submit({ ...other, ticket, project_id: project.id });
      expect([res.status, alertOf(await res.text())]).toEqual([200, 'This sign-in has expired or was already used: sign in again.']);
    }
    // Still good for its own request.
    expect((await submit({ ...params, ticket, project_id: project.id })).status).toBe(302);
  });

  it('answers a wrong password and an unknown email in the same words, and throttles after 10 failures as /auth/login does', async () => {
    const clientId = await registered();
    const params = authParams(clientId, pkce().challenge);
    const target = await addMember(orgId, 'viewer');
    const address = '198.51.100.99';
    const wrong = await submit({ ...params, email: target.email, password: 'not the password' }, address);
    const unknown = await submit({ ...params, email: uniqueEmail('nobody'), password: 'not the password' }, '198.51.100.98');
    const wrongHtml = await wrong.text();
    const unknownHtml = await unknown.text();
    expect([wrong.status, alertOf(wrongHtml)]).toEqual([200, 'Unknown email or wrong password.']);
    expect([unknown.status, alertOf(unknownHtml)]).toEqual([200, 'Unknown email or wrong password.']);
    expect(wrongHtml).not.toContain('name="ticket"');
    for (let i = 1; i < 10; i++) expect(alertOf(await (await submit({ ...params, email: target.email, password: `wrong ${i}` }, address)).text())).toBe('Unknown email or wrong password.');
    // The 11th try is refused before its password is checked, even the right one, here and at POST /auth/login.
    expect(alertOf(await (await submit({ ...params, email: target.email, password: PASSWORD }, address)).text())).toMatch(/^Too many failed sign-ins: try again in \d+ minutes?\.$/);
    await expect(accounts.signIn.login({ email: target.email, password: PASSWORD }, { address: '203.0.113.50', userAgent: undefined })).rejects.toEqual(new ApiError('rate_limited', { retry_after_s: expect.any(Number) }));
    expect((await db.query('SELECT 1 FROM oauth_consent_tickets WHERE user_id = $1', [target.id])).rows).toEqual([]);
  });
});
