import { rmSync } from 'node:fs';
import request from 'supertest';
import type { Express } from 'express';
import { openTestStores, silentLogger, type ContractCheck, answerOf, contractChecked } from '@analytics/testing';
import { Accounts, PasswordHasher } from '@analytics/accounts';
import { API_ROUTES, routes } from '@analytics/schema';
import { buildApp } from './app';
import { sdkBuildFixture } from './test-service';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
const SECRETS = { ADMIN_TOKEN: 'admin-token-standalone-tests', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' };
const RANGE = 'from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z';
let stores: Stores;
let app: Express;
let contract: ContractCheck;
const sdk = sdkBuildFixture();
let accounts: Accounts;

beforeAll(async () => {
  stores = await openTestStores();
  accounts = new Accounts({ db: stores.keyDb, keyStore: stores.keyStore, throttleSecret: 'standalone', hasher: new PasswordHasher({ params: { N: 1024, r: 8, p: 1 } }) });
  contract = contractChecked(buildApp({ stores, secrets: SECRETS, logger: silentLogger, trustProxy: ['loopback'], accounts, sdkDir: sdk.dir }));
  app = contract.app;
});
afterAll(async () => {
  await stores.close();
  rmSync(sdk.dir, { recursive: true, force: true });
});

const createProject = async (name: string) => {
  const res = await request(app).post('/admin/projects').set('authorization', `Bearer ${SECRETS.ADMIN_TOKEN}`).send({ name, allowed_origins: ['https://shop.example.com'] });
  expect(res.status).toBe(201);
  return res.body as { project: { id: string }; keys: { pk: string; sk: string; rk: string } };
};
const post = (path: string, key: string, body: unknown) => request(app).post(path).set('authorization', `Bearer ${key}`).send(body as object);
const queryRows = async (rk: string, qs: string) => {
  const res = await request(app).get(`/v1/query?${RANGE}&${qs}`).set('authorization', `Bearer ${rk}`);
  expect(res.status).toBe(200);
  return res.body.rows as Array<Record<string, unknown>>;
};

describe('standalone: every app on one port', () => {
  it('answers /healthz and mounts ingest, read, admin, mcp and retention routes', async () => {
    expect((await request(app).get('/healthz')).body).toEqual({ ok: true, service: 'standalone' });
    expect((await request(app).post('/v1/track')).body.error).toBe('missing_bearer_token');
    expect((await request(app).get('/v1/stats')).body.error).toBe('missing_bearer_token');
    expect((await request(app).get('/admin/projects')).body.error).toBe('invalid_session');
    expect((await request(app).post('/mcp').send({})).body.error).toBe('missing_bearer_token');
    expect((await request(app).post('/internal/retention/run')).body.error).toBe('unauthorized');
    expect((await request(app).post('/internal/retention/run').set('x-internal-secret', SECRETS.INTERNAL_SECRET)).status).toBe(200);
  });

  it('forget: /v1/query?user_id reaches zero rows within 30 s; other projects and anonymous pre-identify events stay', async () => {
    const a = await createProject('a');
    const b = await createProject('b');
    const ts = '2026-06-01T12:00:00Z';
    expect((await post('/v1/track', a.keys.sk, { event: 'browse', anonymous_id: 'anon-x', timestamp: ts })).status).toBe(202);
    expect((await post('/v1/identify', a.keys.sk, { anonymous_id: 'anon-x', user_id: 'gone' })).status).toBe(200);
    expect((await post('/v1/batch', a.keys.sk, { events: [{ event: 'buy', anonymous_id: 'anon-x', user_id: 'gone', timestamp: ts }, { event: 'pay', user_id: 'gone', timestamp: ts }] })).status).toBe(202);
    expect((await post('/v1/track', b.keys.sk, { event: 'elsewhere', user_id: 'gone', timestamp: ts })).status).toBe(202);
    // buy, pay and the $identify event carry the user_id
    expect(await queryRows(a.keys.rk, 'user_id=gone')).toHaveLength(3);

    const res = await post('/v1/forget', a.keys.sk, { user_id: 'gone' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ ok: true, queued: true });

    const deadline = Date.now() + 30_000;
    let left = await queryRows(a.keys.rk, 'user_id=gone');
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      left = await queryRows(a.keys.rk, 'user_id=gone');
    }
    expect(left).toEqual([]);
    expect((await queryRows(b.keys.rk, 'user_id=gone')).map((r) => r.event_name)).toEqual(['elsewhere']);
    expect((await queryRows(a.keys.rk, 'event=browse')).map((r) => [r.anonymous_id, r.user_id])).toEqual([['anon-x', null]]);
  });

  it('a key revoked through the admin API stops at once on this instance', async () => {
    const p = await createProject('revoke');
    expect((await post('/v1/track', p.keys.sk, { event: 'x' })).status).toBe(202);
    const prefix = p.keys.sk.split('_')[2];
    expect((await request(app).delete(`/admin/keys/${prefix}`).set('authorization', `Bearer ${SECRETS.ADMIN_TOKEN}`)).status).toBe(204);
    expect((await post('/v1/track', p.keys.sk, { event: 'x' })).body.error).toBe('invalid_api_key');
  });
});

describe('the declarations (libs/schema routes)', () => {
  it('serves every declared route at its declared method and path: none answers the routing 404 or 405', async () => {
    const p = await createProject('declared');
    const admin = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
    const setup = await request(app).post('/auth/setup').set(admin).send({ email: 'declared@example.com', password: 'a long passphrase' });
    const orgId = (await request(app).get('/auth/me').set('authorization', `Bearer ${setup.body.token}`)).body.organizations[0].id as string;
    const invited = await accounts.orgs.invite({ kind: 'operator', org: { id: orgId, role: null } }, { email: 'invited@example.com', role: 'viewer' }, 'http://localhost');
    const session = (await accounts.sessions.create(setup.body.user, 'tests')).token.split('_')[1]!;
    const share = await accounts.shares.create(p.project.id, {}, { createdBy: null, baseUrl: 'http://localhost' });
    // Ids that exist, so that a handler's own 404 cannot pass for a missing route.
    const params = (path: string): Record<string, string> => ({
      id: path.startsWith('/admin/orgs') ? orgId : path.startsWith('/auth/sessions') ? session : path.startsWith('/admin/projects/{id}/alerts') ? alerted.project.id : path.includes('/reports') ? reported.project.id : p.project.id,
      prefix: p.keys.rk.split('_')[2]!,
      version: sdk.version,
      user_id: setup.body.user.id,
      invitation_id: invited.invitation.id,
      ...saved,
      share_id: share.share.id,
      alert_id: alert.id,
      report_id: report.id,
      token: unsubscribeToken,
      annotation_id: annotationId,
    });
    // One saved definition of each kind (the routes that take its id; their DELETE comes last of each kind's).
    const saved: Record<string, string> = {};
    for (const kind of ['goal', 'funnel', 'segment'] as const) {
      const definition = { goal: { event: 'x', filters: [] }, funnel: { steps: [{ event: 'a', filters: [] }, { event: 'b', filters: [] }], window_s: 60, count_by: 'visitor', filters: [] }, segment: { filters: [['is', 'country', ['FR']]] } }[kind];
      saved[`${kind}_id`] = (await stores.keyStore.saved.create(p.project.id, kind, { name: kind, definition }))!.id;
    }
    const alerted = await createProject('declared alerts');
    const alert = (await stores.keyStore.alerts.create(alerted.project.id, { name: 'declared', definition: { metric: 'pageviews', window: '1h', condition: { below: 1 } }, channels: [{ email: ['ops@example.com'] }] }))!;
    // A report (its routes; its DELETE comes last of its own) and an unsubscribe link of another one, in a project of
    // their own (DELETE /admin/projects/{id} comes before them).
    const reported = await createProject('reported');
    const report = (await stores.keyStore.reports.create(reported.project.id, { frequency: 'weekly', recipients: ['declared@example.com'] }))!;
    const other = (await stores.keyStore.reports.create(reported.project.id, { frequency: 'monthly', recipients: ['declared@example.com'] }))!;
    const unsubscribeToken = await stores.keyStore.reports.mintUnsubscribeToken(other.id, 'declared@example.com');
    // An annotation the project's sk_ key made (its DELETE is the key's own; the members' route may delete any).
    const annotationId = (await stores.keyStore.annotations.create(p.project.id, { at: Date.UTC(2026, 2, 4), text: 'x', kind: 'note', created_by: `key:${p.keys.sk.split('_')[2]!}` }))!.id;
    const doomed = await createProject('deleted by the walk');
    const unserved: string[] = [];
    const ssoOff: string[] = [];
    for (const route of API_ROUTES) {
      // A credential the route takes, so that the admin router's own 401 for unknown /admin paths cannot hide a missing
      // route: the operator's, or a fresh user token where only a user's will do.
      const auth = route.auth;
      const session = typeof auth === 'object' && 'session' in auth ? auth.session : undefined;
      const headers =
        auth === 'admin_token' || session === 'any' ? admin : session ? { authorization: `Bearer ${(await accounts.sessions.create(setup.body.user, 'tests')).token}` } : {};
      // DELETE /admin/projects/{id} takes a project of its own: the routes declared after it still find the walk's.
      const values = route === routes.deleteProject ? { ...params(route.path), id: doomed.project.id } : params(route.path);
      const res = await request(app)[route.method](route.path.replace(/\{([^}]+)\}/g, (_m, name: string) => values[name]!)).set(headers);
      // Single sign-on's routes answer 404 not_found while it is not configured (docs/accounts.md): served, but off here.
      if (route.path.startsWith('/auth/oidc/') && res.status === 404) {
        ssoOff.push(route.path);
        continue;
      }
      if (['not_found', 'method_not_allowed'].includes(res.body?.error)) unserved.push(`${route.method} ${route.path}: ${res.status}`);
    }
    expect(unserved).toEqual([]);
    expect((await request(app).get('/auth/config')).body.sso).toBeNull();
    expect(ssoOff).toContain('/auth/oidc/callback');
  });
});

describe('the contract (libs/schema API_ROUTES)', () => {
  it("parses every answer of this suite with its route's response schema, with only the error codes the route declares", () => {
    expect(contract.violations).toEqual([]);
    expect([...contract.checked.keys()]).toEqual(expect.arrayContaining([answerOf(routes.healthz, 200), answerOf(routes.track, 202), answerOf(routes.stats, 401), answerOf(routes.createProject, 201), answerOf(routes.runRetention, 200)]));
  });
});

describe('MCP OAuth on the standalone app (npm start turns it on)', () => {
  it('serves the OAuth metadata and names it in the /mcp 401 with mcp.oauth, and neither without it', async () => {
    const withOAuth = buildApp({ stores, secrets: SECRETS, logger: silentLogger, mcp: { oauth: true } });
    const meta = await request(withOAuth).get('/.well-known/oauth-authorization-server').set('host', 'localhost:8080');
    expect(meta.status).toBe(200);
    expect(meta.body).toMatchObject({ issuer: 'http://localhost:8080/', registration_endpoint: 'http://localhost:8080/register', code_challenge_methods_supported: ['S256'] });
    const refused = await request(withOAuth).post('/mcp').set('host', 'localhost:8080').send({});
    expect(refused.headers['www-authenticate']).toBe('Bearer resource_metadata="http://localhost:8080/.well-known/oauth-protected-resource"');

    const without = buildApp({ stores, secrets: SECRETS, logger: silentLogger });
    expect((await request(without).get('/.well-known/oauth-authorization-server').set('host', 'localhost:8080')).status).toBe(404);
    expect((await request(without).post('/mcp').send({})).headers['www-authenticate']).toBe('Bearer');
  });

  it('names PUBLIC_URL (mcp.publicUrl) in the metadata and the /mcp 401 whatever the Host', async () => {
    const app = buildApp({ stores, secrets: SECRETS, logger: silentLogger, mcp: { oauth: true, publicUrl: 'https://analytics.example.com' } });
    const meta = await request(app).get('/.well-known/oauth-authorization-server').set('host', 'evil.example');
    expect(meta.body).toMatchObject({ issuer: 'https://analytics.example.com/', token_endpoint: 'https://analytics.example.com/token' });
    const refused = await request(app).post('/mcp').set('host', 'evil.example').send({});
    expect(refused.headers['www-authenticate']).toBe('Bearer resource_metadata="https://analytics.example.com/.well-known/oauth-protected-resource"');
  });
});
