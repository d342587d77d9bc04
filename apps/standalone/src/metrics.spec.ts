import request from 'supertest';
import type { Express } from 'express';
import { ByteBudget } from '@analytics/service-kit';
import { openTestStores, silentLogger } from '@analytics/testing';
import { buildApp } from './app';

// GET /metrics on the whole service (real embedded stores, the apps' wiring): after real requests the contract's
// metric names and labels are there, a route label is the declared pattern (never the path a request arrived with),
// and nothing that identifies a project, key, client or user appears anywhere in the output.
type Stores = Awaited<ReturnType<typeof openTestStores>>;
const SECRETS = { ADMIN_TOKEN: 'admin-token-metrics', IP_HASH_SECRET: 'ip', INTERNAL_SECRET: 'internal-metrics' };
const RANGE = { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' };
const CLIENT_IP = '198.51.100.201';
const USER_ID = 'user-metrics-7d1e';

let stores: Stores;

beforeAll(async () => {
  // The builder's own tick a minute apart: it builds when a read (or the test) asks it to catch up, so its lag is observable.
  stores = await openTestStores({ AGGREGATE_INTERVAL_MS: '60000' });
});
afterAll(() => stores.close());

const build = (metricsToken?: string): Express =>
  buildApp({
    stores,
    secrets: SECRETS,
    logger: silentLogger,
    trustProxy: ['loopback'],
    metricsToken,
    // A track bucket of 2: the third track is a 429.
    rateRules: { track: { ratePerS: 0.001, burst: 2 }, batch: { ratePerS: 0.001, burst: 10 } },
  });

/** `name{labels} value` lines of a metric, labels parsed. */
function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

const valueOf = (text: string, name: string, labels: Record<string, string> = {}) =>
  samples(text, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

describe('GET /metrics', () => {
  it('counts real requests by method, route pattern and status, events acknowledged and refusals by reason, with no id, key, IP or user id anywhere', async () => {
    const app = build();
    const admin = { authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };
    const created = await request(app).post('/admin/projects').set(admin).send({ name: 'metrics' });
    expect(created.status).toBe(201);
    const projectId: string = created.body.project.id;
    const keys: { sk: string; rk: string; pk: string } = created.body.keys;
    const sk = { authorization: `Bearer ${keys.sk}`, 'x-forwarded-for': CLIENT_IP };

    expect((await request(app).post('/v1/track').set(sk).send({ event: 'signup', anonymous_id: 'a-1' })).status).toBe(202);
    expect((await request(app).post('/v1/batch').set(sk).send({ events: [{ event: 'a', anonymous_id: 'a-1' }, { event: 'b', anonymous_id: 'a-1' }, { event: 'c', anonymous_id: 'a-1' }] })).status).toBe(202);
    expect((await request(app).post('/v1/identify').set(sk).send({ anonymous_id: 'a-1', user_id: USER_ID })).status).toBe(200);
    const mcp = await request(app)
      .post('/mcp')
      .set({ ...sk, accept: 'application/json, text/event-stream' })
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'track_event', arguments: { event: 'agent', anonymous_id: 'a-1' } } });
    expect(mcp.status).toBe(200);
    expect(mcp.body.result.structuredContent).toEqual({ ok: true, event_id: expect.any(String) });
    // The track bucket (2, shared with MCP's track_event) is empty: rate limited.
    expect((await request(app).post('/v1/track').set(sk).send({ event: 'third', anonymous_id: 'a-1' })).status).toBe(429);
    const stats = await request(app).get('/v1/stats').set({ authorization: `Bearer ${keys.rk}`, 'x-forwarded-for': CLIENT_IP }).query(RANGE);
    expect(stats.status).toBe(200);
    // A wrong key: 401. A project by its id: the route pattern, not the id. An unknown path: `unmatched`.
    expect((await request(app).post('/v1/track').set({ authorization: 'Bearer sk_live_nope', 'x-forwarded-for': CLIENT_IP }).send({ event: 'x' })).status).toBe(401);
    expect((await request(app).get(`/admin/projects/${projectId}`).set(admin)).status).toBe(200);
    expect((await request(app).get(`/nowhere/${projectId}/${USER_ID}`)).status).toBe(404);
    expect((await request(app).get('/v1/track')).status).toBe(405);

    const res = await request(app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.text;

    const requests = (labels: Record<string, string>) => valueOf(text, 'analytics_http_requests_total', labels);
    expect(requests({ method: 'POST', route: '/v1/track', status: '202' })).toBe(1);
    expect(requests({ method: 'POST', route: '/mcp', status: '200' })).toBe(1);
    expect(requests({ method: 'POST', route: '/v1/track', status: '429' })).toBe(1);
    expect(requests({ method: 'POST', route: '/v1/track', status: '401' })).toBe(1);
    expect(requests({ method: 'POST', route: '/v1/batch', status: '202' })).toBe(1);
    expect(requests({ method: 'GET', route: '/v1/stats', status: '200' })).toBe(1);
    expect(requests({ method: 'POST', route: '/admin/projects', status: '201' })).toBe(1);
    expect(requests({ method: 'GET', route: '/admin/projects/:id', status: '200' })).toBe(1);
    expect(requests({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(requests({ method: 'GET', route: '/v1/track', status: '405' })).toBe(1);
    // Every route label is a pattern: a declared path, `unmatched`, or the probes.
    const routesSeen = new Set(samples(text, 'analytics_http_requests_total').map((s) => s.labels['route']));
    expect([...routesSeen].sort()).toEqual(['/admin/projects', '/admin/projects/:id', '/mcp', '/v1/batch', '/v1/identify', '/v1/stats', '/v1/track', 'unmatched'].sort());

    const durations = samples(text, 'analytics_http_request_duration_seconds_count');
    expect(durations.find((s) => s.labels['route'] === '/v1/stats' && s.labels['method'] === 'GET')?.value).toBe(1);
    expect(Object.keys(durations[0]!.labels).sort()).toEqual(['method', 'route']);
    expect(samples(text, 'analytics_http_request_duration_seconds_bucket').length).toBeGreaterThan(0);

    // 1 track + 3 batch + 1 identify + 1 MCP track_event: the 429 and the 401 acknowledged nothing.
    expect(valueOf(text, 'analytics_events_ingested_total')).toBe(6);
    expect(valueOf(text, 'analytics_refusals_total', { reason: 'rate_limited' })).toBe(1);
    expect(valueOf(text, 'analytics_refusals_total', { reason: 'failed_auth' })).toBe(1);
    expect(samples(text, 'analytics_refusals_total').map((s) => s.labels['reason']).sort()).toEqual(['failed_auth', 'rate_limited', 'server_busy']);
    // The read waited for the builder: nothing acknowledged is unbuilt, no read waits, no body in flight.
    expect(samples(text, 'analytics_aggregate_lag_seconds')).toEqual([{ labels: {}, value: 0 }]);
    expect(samples(text, 'analytics_read_queue_depth')).toEqual([{ labels: {}, value: 0 }]);
    expect(samples(text, 'analytics_body_budget_bytes_in_use')).toEqual([{ labels: {}, value: 0 }]);
    // Default process and Node metrics.
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);

    for (const secret of [projectId, keys.sk, keys.rk, keys.pk, keys.sk.split('_')[2]!, CLIENT_IP, USER_ID, 'a-1', SECRETS.ADMIN_TOKEN, 'sk_live_nope']) {
      expect(text).not.toContain(secret);
    }
  });

  it('reports the aggregate builder behind the oldest acknowledged insert it has not built, and 0 once it caught up', async () => {
    const app = build();
    const { keys } = await stores.keyStore.createProject({ name: 'lag' });
    const lagOf = async () => valueOf((await request(app).get('/metrics')).text, 'analytics_aggregate_lag_seconds');
    await stores.events.aggregatesCaughtUp();
    expect(await lagOf()).toBe(0);
    expect(stores.events.buildsAggregates).toBe(true);
    expect((await request(app).post('/v1/track').set('authorization', `Bearer ${keys.sk}`).send({ event: 'lagging', anonymous_id: 'a-2' })).status).toBe(202);
    await stores.events.writer.drain();
    // Acknowledged and not built yet: 50 ms from now it is at least 50 ms behind, and the scrape shows it behind.
    expect(stores.events.aggregateLagSeconds(Date.now() + 50)).toBeGreaterThanOrEqual(0.05);
    await new Promise((r) => setTimeout(r, 20));
    expect(await lagOf()).toBeGreaterThanOrEqual(0.02);
    await stores.events.aggregatesCaughtUp();
    expect(stores.events.aggregateLagSeconds(Date.now() + 50)).toBe(0);
    expect(await lagOf()).toBe(0);
  });

  it('counts a body refused for a full budget as server_busy, and shows the budget in use', async () => {
    const budget = new ByteBudget(1024 * 1024);
    const app = buildApp({ stores, secrets: SECRETS, logger: silentLogger, limits: { body: { budget, waitMs: 0, readTimeoutMs: 10_000 } } });
    const { keys } = await stores.keyStore.createProject({ name: 'busy' });
    const release = (await budget.acquire(budget.capacity, 0))!;
    try {
      const busy = await request(app).post('/v1/track').set('authorization', `Bearer ${keys.sk}`).send({ event: 'x', anonymous_id: 'a-3' });
      expect(busy.status).toBe(503);
      expect(busy.body.error).toBe('server_busy');
      const text = (await request(app).get('/metrics')).text;
      expect(valueOf(text, 'analytics_refusals_total', { reason: 'server_busy' })).toBe(1);
      expect(valueOf(text, 'analytics_body_budget_bytes_in_use')).toBe(1024 * 1024);
      expect(valueOf(text, 'analytics_http_requests_total', { route: '/v1/track', status: '503' })).toBe(1);
    } finally {
      release();
    }
  });

  it('requires `Authorization: Bearer <METRICS_TOKEN>` when METRICS_TOKEN is set', async () => {
    const app = build('metrics-token-7f3a');
    const missing = await request(app).get('/metrics');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: 'unauthorized' });
    expect((await request(app).get('/metrics').set('authorization', 'Bearer metrics-token-wrong')).status).toBe(401);
    expect((await request(app).get('/metrics').set('authorization', `Bearer ${SECRETS.ADMIN_TOKEN}`)).status).toBe(401);
    const ok = await request(app).get('/metrics').set('authorization', 'Bearer metrics-token-7f3a');
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('analytics_http_requests_total{method="GET",route="/metrics",status="401"} 3');
    expect(ok.text).not.toContain('metrics-token-7f3a');
  });

  it('keeps one registry per app: two apps in one process count their own requests', async () => {
    const a = build();
    const b = build();
    await request(a).get('/healthz');
    await request(a).get('/healthz');
    await request(b).get('/healthz');
    const count = async (app: Express) => valueOf((await request(app).get('/metrics')).text, 'analytics_http_requests_total', { route: '/healthz' });
    expect(await count(a)).toBe(2);
    expect(await count(b)).toBe(1);
  });
});
