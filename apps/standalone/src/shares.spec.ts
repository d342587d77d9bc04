import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { Accounts, PasswordHasher } from '@analytics/accounts';
import { SavedDefinitions } from '@analytics/auth';
import { API_ROUTES, type ApiRoute, routes } from '@analytics/schema';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';
import { DASHBOARD_CSP } from './dashboard.route';

type Stores = Awaited<ReturnType<typeof openTestStores>>;
const SECRETS = { ADMIN_TOKEN: 'admin-token-shares-tests', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal' };
const admin = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const NOW = Date.now();
const RANGE = { from: day(NOW - 6 * DAY), to: day(NOW + DAY) };
const SEGMENT_FILTERS = [['is', 'prop:plan', ['pro']]];

let stores: Stores;
let app: Express;
let dashboardDir: string;
let project: { id: string };
let rk: string;

/** A valid request of each read a share link may make (`share: true` in its declaration). */
const READS: Record<string, { query?: Record<string, string>; body?: Record<string, unknown> }> = {
  stats: { query: { ...RANGE, group_by: 'event_name' } },
  sources: { query: RANGE },
  properties: { query: RANGE },
  insights: { body: { ...RANGE, metrics: ['visitors', 'pageviews', 'events'], dimensions: ['path'] } },
  funnel: { body: { ...RANGE, steps: [{ event: '$pageview' }, { event: 'signup' }] } },
  retention: { body: { ...RANGE, period: 'day', count_by: 'visitor' } },
  // The saved lists the shared page shows (goals and funnels); segments too, as an rk_ key reads them.
  goals: {},
  funnels: {},
  segments: {},
  // The shared page counts days in the project's time zone (issue 47).
  project: {},
  // The shared page draws the project's annotations on its chart (issue 48); their writes refuse the link.
  annotations: { query: RANGE },
};
const SHARE_ROUTES = Object.entries(routes as Record<string, ApiRoute>).filter(([, r]) => typeof r.auth === 'object' && 'api_key' in r.auth && r.auth.share === true);

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'x');
function call(route: ApiRoute, token: string, input: { query?: Record<string, string>; body?: Record<string, unknown> } = {}) {
  const req = request(app)[route.method](concrete(route.path)).set(bearer(token));
  if (input.query) req.query(input.query);
  return route.method === 'get' || route.method === 'delete' ? req : req.send(input.body ?? {});
}

async function makeShare(body: object = {}) {
  const res = await request(app).post(`/admin/projects/${project.id}/shares`).set(admin).send(body);
  expect(res.status).toBe(201);
  return { id: res.body.share.id as string, token: (res.body.url as string).split('/share/')[1]! };
}

beforeAll(async () => {
  stores = await openTestStores();
  dashboardDir = mkdtempSync(join(tmpdir(), 'shares-dashboard-'));
  mkdirSync(join(dashboardDir, 'assets'));
  writeFileSync(join(dashboardDir, 'index.html'), '<!doctype html><script src="assets/dashboard.js"></script>');
  writeFileSync(join(dashboardDir, 'assets/dashboard.js'), 'void 0;');
  // As openAccounts wires them (libs/runtime): a revocation advances the epoch and goes out on the bus.
  const accounts = new Accounts({
    db: stores.keyDb,
    keyStore: stores.keyStore,
    throttleSecret: 'shares',
    hasher: new PasswordHasher({ params: { N: 1024, r: 8, p: 1 } }),
    onKeysRevoked: async (prefix) => {
      await stores.epoch.advance();
      void stores.bus.keyRevoked(prefix);
    },
  });
  app = buildApp({ stores, secrets: SECRETS, logger: silentLogger, trustProxy: ['loopback'], accounts, dashboardDir });
  const created = await request(app).post('/admin/projects').set(admin).send({ name: 'Shared shop' });
  expect(created.status).toBe(201);
  project = created.body.project;
  rk = created.body.keys.rk;
  // Twelve visitors over the week, half on the pro plan; some sign up.
  const events = Array.from({ length: 12 }, (_, v) => [
    { event: '$pageview', anonymous_id: `v-${v}`, timestamp: new Date(NOW - (v % 5) * DAY - 3_600_000).toISOString(), url: `https://shop.example.com/${v % 3 ? 'pricing' : ''}?utm_source=${v % 2 ? 'newsletter' : 'google'}`, properties: { plan: v % 2 ? 'pro' : 'free' } },
    ...(v % 3 === 0 ? [{ event: 'signup', anonymous_id: `v-${v}`, timestamp: new Date(NOW - (v % 5) * DAY - 1_800_000).toISOString(), properties: { plan: v % 2 ? 'pro' : 'free' } }] : []),
    { event: '$pageview', anonymous_id: `v-${v}`, timestamp: new Date(NOW - (v % 2) * DAY - 600_000).toISOString(), url: 'https://shop.example.com/docs', properties: { plan: v % 2 ? 'pro' : 'free' } },
  ]).flat();
  const sent = await request(app).post('/v1/batch').set(bearer(created.body.keys.sk)).send({ events });
  expect(sent.status).toBe(202);
}, 120_000);

afterAll(async () => {
  await stores?.close();
  rmSync(dashboardDir, { recursive: true, force: true });
});

describe('a share credential on every route', () => {
  it('the reads the shared dashboard makes are the only routes declared to take it', () => {
    expect(SHARE_ROUTES.map(([name]) => name).sort()).toEqual(Object.keys(READS).sort());
  });

  it('is refused with 403 insufficient_scope on every route not declared share: true (a new route is covered by its declaration)', async () => {
    const { token } = await makeShare({ name: 'probe' });
    const unlocked = await makeShare({ name: 'locked probe', password: 'a share password' });
    const credential = (await request(app).post('/v1/share/unlock').send({ token: unlocked.token, password: 'a share password' })).body.token as string;
    const refused: string[] = [];
    for (const route of API_ROUTES) {
      // Routes without a credential take none: a bearer token there is not read (the unlock's token is its body's).
      if (route.auth === 'none') continue;
      const share = typeof route.auth === 'object' && 'api_key' in route.auth && route.auth.share === true;
      for (const presented of [token, credential]) {
        const res = await call(route, presented, READS[Object.entries(routes).find(([, r]) => r === route)![0]]);
        if (share) expect({ path: route.path, status: res.status }).toEqual({ path: route.path, status: 200 });
        else {
          expect({ path: route.path, status: res.status, body: res.body }).toEqual({ path: route.path, status: 403, body: { error: 'insufficient_scope', required: expect.any(String), got: 'share' } });
          refused.push(route.path);
        }
      }
    }
    // The ones the issue names among them.
    expect(refused).toEqual(expect.arrayContaining(['/v1/query', '/v1/export', '/v1/track', '/v1/batch', '/v1/forget', '/mcp', '/admin/projects', '/auth/me', '/admin/projects/{id}/shares', '/v1/annotations', '/v1/annotations/{annotation_id}']));
  });

  it('a project is not reachable through another project\'s link: reads are pinned to the link\'s project', async () => {
    const other = await request(app).post('/admin/projects').set(admin).send({ name: 'Other shop' });
    const otherShare = await request(app).post(`/admin/projects/${other.body.project.id}/shares`).set(admin).send({});
    const token = (otherShare.body.url as string).split('/share/')[1]!;
    const res = await request(app).post('/v1/insights').set(bearer(token)).send({ ...RANGE, metrics: ['events'] });
    expect(res.status).toBe(200);
    expect(res.body.rows[0]?.events ?? 0).toBe(0);
    const mine = await request(app).post('/v1/insights').set(bearer(rk)).send({ ...RANGE, metrics: ['events'] });
    expect(mine.body.rows[0].events).toBeGreaterThan(0);
  });
});

describe('what a share link reads', () => {
  it('without a segment: every allowed read answers what the project\'s rk_ key answers', async () => {
    const { token } = await makeShare({ name: 'plain' });
    for (const [name, route] of SHARE_ROUTES) {
      const [shared, direct] = await Promise.all([call(route, token, READS[name]), call(route, rk, READS[name])]);
      expect({ name, status: shared.status, body: shared.body }).toEqual({ name, status: 200, body: direct.body });
    }
  });

  it("with a segment: insights, funnel and retention answer the rk_ key's answer with the segment's filters ANDed, which the caller cannot remove", async () => {
    const segment = (await new SavedDefinitions(stores.keyDb).create(project.id, 'segment', { name: 'Pro plan', definition: { filters: SEGMENT_FILTERS } }))!;
    const { token } = await makeShare({ name: 'pro only', segment: segment.id });
    const own = [['contains', 'path', ['/']]];
    for (const name of ['insights', 'funnel', 'retention'] as const) {
      const route = routes[name];
      const body = READS[name]!.body!;
      const shared = await call(route, token, { body: { ...body, filters: own } });
      const direct = await call(route, rk, { body: { ...body, filters: [...own, ...SEGMENT_FILTERS] } });
      const unsegmented = await call(route, rk, { body: { ...body, filters: own } });
      expect({ name, status: shared.status, body: shared.body }).toEqual({ name, status: 200, body: direct.body });
      // The segment changes the answer: the data has visitors outside it.
      expect({ name, differs: JSON.stringify(direct.body) !== JSON.stringify(unsegmented.body) }).toEqual({ name, differs: true });
      // Filters that contradict the segment narrow further; they never widen it.
      const widened = await call(route, token, { body: { ...body, filters: [['is_not', 'prop:plan', ['pro']]] } });
      const empty = await call(route, rk, { body: { ...body, filters: [['is_not', 'prop:plan', ['pro']], ...SEGMENT_FILTERS] } });
      expect({ name, body: widened.body }).toEqual({ name, body: empty.body });
    }
    // A saved funnel or goal by id, or another segment named in the request, only narrows: the link's segment still holds.
    const saved = new SavedDefinitions(stores.keyDb);
    const funnel = (await saved.create(project.id, 'funnel', { name: 'Signup', definition: { steps: [{ event: '$pageview', filters: [] }, { event: 'signup', filters: [] }], window_s: 86_400, count_by: 'visitor', filters: [] } }))!;
    const byId = await call(routes.funnel, token, { body: { ...RANGE, id: funnel.id } });
    const byIdDirect = await call(routes.funnel, rk, { body: { ...RANGE, id: funnel.id, filters: SEGMENT_FILTERS } });
    expect({ status: byId.status, body: byId.body }).toEqual({ status: 200, body: byIdDirect.body });
    const everyone = (await saved.create(project.id, 'segment', { name: 'Everyone', definition: { filters: [['contains', 'path', ['/']]] } }))!;
    const named = await call(routes.insights, token, { body: { ...READS.insights!.body!, segment: everyone.id } });
    const namedDirect = await call(routes.insights, rk, { body: { ...READS.insights!.body!, segment: everyone.id, filters: SEGMENT_FILTERS } });
    expect({ status: named.status, body: named.body }).toEqual({ status: 200, body: namedDirect.body });
    // The reads that cannot apply filters are refused to a link with a segment.
    for (const name of ['stats', 'sources', 'properties'] as const) {
      const res = await call(routes[name], token, READS[name]);
      expect({ name, status: res.status, error: res.body.error, got: res.body.got }).toEqual({ name, status: 403, error: 'insufficient_scope', got: 'share' });
    }
    // The reads of no event (the saved lists, the project's name and time zone) answer as for the rk_ key.
    for (const name of ['goals', 'project'] as const) {
      const [viaLink, direct] = [await call(routes[name], token, READS[name]), await call(routes[name], rk, READS[name])];
      expect({ name, status: viaLink.status, body: viaLink.body }).toEqual({ name, status: 200, body: direct.body });
    }
  });

  it('revoking a link ends its reads at once (its credential was cached by the read that came before)', async () => {
    const { id, token } = await makeShare({ name: 'revoked soon' });
    expect((await call(routes.insights, token, READS.insights)).status).toBe(200);
    expect((await request(app).delete(`/admin/projects/${project.id}/shares/${id}`).set(admin)).status).toBe(204);
    const after = await call(routes.insights, token, READS.insights);
    expect({ status: after.status, body: after.body }).toEqual({ status: 401, body: { error: 'invalid_api_key' } });
    expect((await request(app).post('/v1/share/unlock').send({ token })).status).toBe(404);
  });
});

describe('the page of a link: GET /share/<token>', () => {
  it("serves the dashboard's page with its CSP: framing refused unless ?embed=1 on a live link that lists origins", async () => {
    const plain = await makeShare({ name: 'page' });
    const embeddable = await makeShare({ name: 'embed', embed_origins: ['https://agency.example.com', 'http://localhost:8080'] });
    const csp = async (path: string) => {
      const res = await request(app).get(path);
      expect({ path, status: res.status, type: res.headers['content-type'] }).toEqual({ path, status: 200, type: expect.stringMatching(/^text\/html/) });
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['set-cookie']).toBeUndefined();
      return res.headers['content-security-policy'];
    };
    expect(await csp(`/share/${plain.token}`)).toBe(DASHBOARD_CSP);
    expect(await csp(`/share/${plain.token}?embed=1`)).toBe(DASHBOARD_CSP);
    expect(await csp(`/share/${embeddable.token}`)).toBe(DASHBOARD_CSP);
    const framed = DASHBOARD_CSP.replace("frame-ancestors 'none'", 'frame-ancestors https://agency.example.com http://localhost:8080');
    expect(await csp(`/share/${embeddable.token}?embed=1`)).toBe(framed);
    // A wrong secret, an unknown link, a revoked one: the page (it says the link is not valid), never framed.
    expect(await csp(`/share/${embeddable.token.slice(0, -1)}${embeddable.token.endsWith('x') ? 'y' : 'x'}?embed=1`)).toBe(DASHBOARD_CSP);
    expect(await csp('/share/shr_unknown_unknown?embed=1')).toBe(DASHBOARD_CSP);
    await request(app).delete(`/admin/projects/${project.id}/shares/${embeddable.id}`).set(admin);
    expect(await csp(`/share/${embeddable.token}?embed=1`)).toBe(DASHBOARD_CSP);
    // Its relative assets.
    const js = await request(app).get('/share/assets/dashboard.js');
    expect({ status: js.status, csp: js.headers['content-security-policy'] }).toEqual({ status: 200, csp: DASHBOARD_CSP });
  });
});
