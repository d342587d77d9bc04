import request from 'supertest';
import type { Express } from 'express';
import { API_ROUTES, STATS_GROUP_BY, routes } from '@analytics/schema';
import { type ContractCheck, answerOf } from '@analytics/testing';
import { type Keys, ORIGIN, type Stores, UA, openCheckedReadService, sendBatch } from './test-support/seeded-service';

const D0 = Date.UTC(2026, 2, 2);
const DAY = 86_400_000;
const FROM = new Date(D0).toISOString();
const TO = new Date(D0 + 7 * DAY).toISOString();
const ENDPOINTS = ['/v1/query', '/v1/stats', '/v1/sources'] as const;

let stores: Stores, app: Express, contract: ContractCheck, ingestApp: Express;
let a: Keys, b: Keys;

beforeAll(async () => {
  ({ stores, ingestApp, contract, app, keys: { a, b } } = await openCheckedReadService('a', 'b'));
  const at = (h: number) => new Date(D0 + h * 3_600_000).toISOString();
  await batch(a.sk, [
    { event: '$pageview', anonymous_id: 'a-1', session_id: 'a-1-s', timestamp: at(1), url: `${ORIGIN}/?utm_source=newsletter&utm_medium=email` },
    { event: 'signup', anonymous_id: 'a-1', user_id: 'a-user', session_id: 'a-1-s', timestamp: at(2), url: `${ORIGIN}/signup` },
    { event: '$pageview', anonymous_id: 'a-2', timestamp: at(30), referrer: 'https://www.google.com/' },
    // forgotten later: aggregates keep it
    { event: 'purchase', anonymous_id: 'a-3', user_id: 'a-forget', session_id: 'a-3-s', timestamp: at(50), referrer: 'https://www.google.com/' },
    { event: 'purchase', anonymous_id: 'a-3', user_id: 'a-forget', session_id: 'a-3-s', timestamp: at(50.5) },
  ], '81.2.69.160');
  // Project B: every value distinct from A's, so any leak shows.
  await batch(b.sk, [
    { event: 'b_only_event', anonymous_id: 'b-anon', user_id: 'b-user', timestamp: at(1), url: `${ORIGIN}/b-path?gclid=x`, properties: { secret: 'b' } },
    { event: 'b_only_event', anonymous_id: 'b-anon', user_id: 'a-user', timestamp: at(3), referrer: 'https://t.co/x' },
    { event: 'signup', anonymous_id: 'a-1', timestamp: at(2), url: `${ORIGIN}/signup?utm_source=newsletter&utm_medium=email` },
  ], '133.242.0.1', UA.googlebot);
});
afterAll(() => stores.close());

const batch = (sk: string, events: object[], ip: string, ua?: string) => sendBatch(ingestApp, sk, events, { ip, ua });

const get = (path: string, key: string | undefined, query: Record<string, unknown> = {}) => {
  const req = request(app).get(path).query(query);
  if (key) req.set('authorization', `Bearer ${key}`);
  return req;
};

describe('authentication and scope', () => {
  it.each(ENDPOINTS)('%s refuses pk and sk keys with 403 insufficient_scope', async (path) => {
    for (const key of [a.pk, a.sk]) {
      const res = await get(path, key, { from: FROM, to: TO }).set('origin', ORIGIN);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'insufficient_scope' });
    }
  });

  it.each(ENDPOINTS)('%s answers 401 missing_bearer_token without a key, before validating', async (path) => {
    const res = await get(path, undefined);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('missing_bearer_token');
  });

  it('checks the scope before the parameters', async () => {
    expect((await get('/v1/stats', a.sk, { metric: 'nope' })).body.error).toBe('insufficient_scope');
  });
});

describe('400 invalid_params', () => {
  const range = { from: FROM, to: TO };
  const cases: Array<[string, (typeof ENDPOINTS)[number], Record<string, unknown>, string]> = [];
  for (const path of ENDPOINTS) {
    cases.push(
      [path, path, { to: TO }, 'from missing'],
      [path, path, { from: FROM }, 'to missing'],
      [path, path, {}, 'both missing'],
      [path, path, { from: 'yesterday', to: TO }, 'from not ISO 8601'],
      [path, path, { from: FROM, to: '2026-02-30' }, 'to an impossible date'],
      [path, path, { from: TO, to: FROM }, 'to before from'],
      [path, path, { from: FROM, to: FROM }, 'to equal to from'],
      [path, path, { ...range, limit: 0 }, 'limit 0'],
      [path, path, { ...range, limit: 'ten' }, 'limit not a number'],
      [path, path, { ...range, limit: 2.5 }, 'limit not an integer'],
      [path, path, { from: [FROM, FROM], to: TO }, 'from repeated'],
    );
  }
  cases.push(
    ['/v1/query', '/v1/query', { ...range, limit: 1001 }, 'limit over 1000'],
    ['/v1/stats', '/v1/stats', { ...range, limit: 1001 }, 'limit over 1000'],
    ['/v1/sources', '/v1/sources', { ...range, limit: 201 }, 'limit over 200'],
    ['/v1/stats', '/v1/stats', { ...range, metric: 'sum' }, 'metric not count/uniques'],
    ['/v1/stats', '/v1/stats', { ...range, interval: 'month' }, 'interval not hour/day/week'],
    ['/v1/sources', '/v1/sources', { ...range, breakdown: 'medium' }, 'breakdown not source_medium/source'],
    ['/v1/query', '/v1/query', { ...range, event: '' }, 'empty event'],
  );

  it.each(cases)('%s: %s -> 400 invalid_params with details', async (_label, path, query) => {
    const res = await get(path, a.rk, query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_params', details: expect.objectContaining({ fieldErrors: expect.any(Object) }) });
  });

  it('names the failing field in details', async () => {
    const res = await get('/v1/stats', a.rk, { from: FROM, metric: 'sum' });
    expect(Object.keys(res.body.details.fieldErrors).sort()).toEqual(['metric', 'to']);
  });

  it.each([
    ['/v1/query', 1000],
    ['/v1/stats', 1000],
    ['/v1/sources', 200],
    ['/v1/query', 1],
  ] as const)('%s accepts limit %i', async (path, limit) => {
    expect((await get(path, a.rk, { ...range, limit })).status).toBe(200);
  });

  it.each(ENDPOINTS)('%s: a + left unencoded in from or to (it arrives as a space) -> 400 invalid_params saying to encode it as %%2B', async (path) => {
    for (const [query, field] of [[`from=2026-03-02T00:00:00+02:00&to=${TO}`, 'from'], [`from=${FROM}&to=2026-03-09T00:00:00.000+0530`, 'to']] as const) {
      const res = await request(app).get(`${path}?${query}`).set('authorization', `Bearer ${a.rk}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_params');
      expect(res.body.details.fieldErrors).toEqual({ [field]: [expect.stringContaining('must be URL-encoded as %2B')] });
    }
    const encoded = await request(app).get(`${path}?from=2026-03-02T00:00:00%2B02:00&to=${TO}`).set('authorization', `Bearer ${a.rk}`);
    expect(encoded.status).toBe(200);
  });

  it.each(ENDPOINTS)('%s: from/to outside 2000..2099 are cut to the accepted timestamps, never a 500 or a wrapped date', async (path) => {
    const inside = await get(path, a.rk, { from: '2000-01-01', to: '2100-01-01', limit: 100 });
    expect(inside.status).toBe(200);
    expect(inside.body.rows.length).toBeGreaterThan(0);
    for (const range of [{ from: '0001-01-01', to: '9999-12-31T23:59:59Z' }, { from: '1970-01-01', to: '2200-01-01' }]) {
      const wide = await get(path, a.rk, { ...range, limit: 100 });
      expect(wide.status).toBe(200);
      expect(wide.body).toEqual(inside.body);
    }
    for (const range of [{ from: '1970-01-01', to: '1999-12-31' }, { from: '2150-01-01', to: '2200-01-01' }]) {
      const outside = await get(path, a.rk, range);
      expect(outside.status).toBe(200);
      expect(outside.body.rows).toEqual(path === '/v1/stats' ? [{ value: 0 }] : []);
    }
  });

  it('ignores unknown parameters, including an attempt to pick another project', async () => {
    const res = await get('/v1/query', a.rk, { ...range, project_id: 'whatever', foo: 'bar' });
    expect(res.status).toBe(200);
    expect(res.body.rows.length).toBeGreaterThan(0);
  });
});

describe('400 invalid_group_by', () => {
  it.each(['user_id', 'ip_hash', 'source,nope', 'source;DROP TABLE events', 'SOURCE'])('rejects group_by=%j and lists the allowed columns', async (group_by) => {
    const res = await get('/v1/stats', a.rk, { from: FROM, to: TO, group_by });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_group_by', allowed: [...STATS_GROUP_BY], details: expect.objectContaining({ unknown: expect.any(Array) }) });
  });

  it('reports invalid_params first when both the parameters and group_by are wrong', async () => {
    expect((await get('/v1/stats', a.rk, { from: FROM, group_by: 'nope' })).body.error).toBe('invalid_params');
  });

  it('trims items, ignores empty ones and repeats', async () => {
    const res = await get('/v1/stats', a.rk, { from: FROM, to: TO, group_by: ' source ,, source,medium,' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.rows[0]).sort()).toEqual(['medium', 'source', 'value']);
  });
});

describe('response shapes', () => {
  it('/v1/query: newest first, ISO timestamps, properties as a JSON string, no ip_hash', async () => {
    const res = await get('/v1/query', a.rk, { from: FROM, to: TO, limit: 2 });
    expect(res.body.rows).toHaveLength(2);
    expect(res.body.rows[0]).toMatchObject({ event_name: 'purchase', timestamp: '2026-03-04T02:30:00.000Z', user_id: 'a-forget', country: 'GB', properties: '{}' });
    expect(JSON.stringify(res.body)).not.toContain('ip_hash');
  });

  it('/v1/stats: { metric, rows } with numeric values; count is the default metric', async () => {
    const res = await get('/v1/stats', a.rk, { from: FROM, to: TO, group_by: 'event_name', interval: 'day' });
    expect(res.body).toEqual({
      metric: 'count',
      rows: [
        { bucket: '2026-03-02 00:00:00', event_name: '$pageview', value: 1 },
        { bucket: '2026-03-02 00:00:00', event_name: 'signup', value: 1 },
        { bucket: '2026-03-03 00:00:00', event_name: '$pageview', value: 1 },
        { bucket: '2026-03-04 00:00:00', event_name: 'purchase', value: 2 },
      ],
    });
  });

  it('/v1/sources: { breakdown, rows } with source_medium by default', async () => {
    const res = await get('/v1/sources', a.rk, { from: FROM, to: TO });
    expect(res.body).toEqual({
      breakdown: 'source_medium',
      rows: [
        { source: 'google', medium: 'organic', events: 3, uniques: 2, paid_share: 0 },
        { source: 'newsletter', medium: 'email', events: 2, uniques: 1, paid_share: 0 },
      ],
    });
  });
});

describe('tenant isolation', () => {
  const B_VALUES = ['b_only_event', 'b-anon', 'b-user', '/b-path', 'JP', 'bot', 'twitter', '"secret"'];

  it('never shows project B rows to a key of project A, through any endpoint or parameter', async () => {
    const bodies: unknown[] = [];
    const range = { from: new Date(0).toISOString(), to: '2199-01-01T00:00:00Z' };
    for (const q of [{}, { event: 'b_only_event' }, { user_id: 'b-user' }, { user_id: 'a-user' }, { source: 'google', medium: 'paid' }, { source: 'twitter' }]) {
      bodies.push((await get('/v1/query', a.rk, { ...range, ...q, limit: 1000 })).body);
    }
    for (const group_by of [...STATS_GROUP_BY, STATS_GROUP_BY.join(',')]) {
      for (const metric of ['count', 'uniques']) {
        bodies.push((await get('/v1/stats', a.rk, { ...range, group_by, metric, limit: 1000 })).body);
        bodies.push((await get('/v1/stats', a.rk, { from: FROM, to: TO, group_by, metric, interval: 'day', event: 'b_only_event' })).body);
      }
    }
    for (const breakdown of ['source_medium', 'source']) bodies.push((await get('/v1/sources', a.rk, { ...range, breakdown, limit: 200 })).body);
    const text = JSON.stringify(bodies);
    for (const v of B_VALUES) expect(text).not.toContain(v);
    // A's user id also used in project B: only A's one event with it
    expect((await get('/v1/query', a.rk, { ...range, user_id: 'a-user' })).body.rows).toHaveLength(1);
    // the same event name in both projects counts A's only
    expect((await get('/v1/stats', a.rk, { ...range, event: 'signup' })).body.rows).toEqual([{ value: 1 }]);
  });

  it('answers project B its own rows', async () => {
    const res = await get('/v1/stats', b.rk, { from: FROM, to: TO, group_by: 'event_name,country,device_type' });
    expect(res.body.rows).toEqual([
      { event_name: 'b_only_event', country: 'JP', device_type: 'bot', value: 2 },
      { event_name: 'signup', country: 'JP', device_type: 'bot', value: 1 },
    ]);
  });
});

describe('aggregates survive deletes', () => {
  it('keeps /v1/stats (rollup, quarter_hours) and /v1/sources after a forget; raw-event answers drop the rows', async () => {
    const rollupShaped = { from: FROM, to: TO, group_by: 'source,medium' };
    const eventsShaped = { ...rollupShaped, to: new Date(D0 + 7 * DAY - 1).toISOString() };
    // buckets with no group_by, in a zone: from quarter_hours, an aggregate too
    const quartersShaped = { from: FROM, to: TO, interval: 'hour', tz: 'Asia/Kolkata' };
    const before = {
      rollup: (await get('/v1/stats', a.rk, rollupShaped)).body,
      quarters: (await get('/v1/stats', a.rk, quartersShaped)).body,
      events: (await get('/v1/stats', a.rk, eventsShaped)).body,
      sources: (await get('/v1/sources', a.rk, { from: FROM, to: TO })).body,
    };
    expect(before.rollup).toEqual(before.events);
    const forget = await request(ingestApp).post('/v1/forget').set('authorization', `Bearer ${a.sk}`).send({ user_id: 'a-forget' });
    expect(forget.status).toBe(202);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await get('/v1/query', a.rk, { from: FROM, to: TO, user_id: 'a-forget' })).body.rows.length > 0) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await get('/v1/query', a.rk, { from: FROM, to: TO, user_id: 'a-forget' })).body.rows).toEqual([]);
    expect((await get('/v1/stats', a.rk, rollupShaped)).body).toEqual(before.rollup);
    expect((await get('/v1/stats', a.rk, quartersShaped)).body).toEqual(before.quarters);
    expect(before.quarters.rows.reduce((n: number, r: { value: number }) => n + r.value, 0)).toBe(5);
    expect((await get('/v1/sources', a.rk, { from: FROM, to: TO })).body).toEqual(before.sources);
    const after = (await get('/v1/stats', a.rk, eventsShaped)).body;
    expect(after.rows.find((r: { source: string }) => r.source === 'google').value).toBe(
      before.events.rows.find((r: { source: string }) => r.source === 'google').value - 1,
    );
  });
});

describe('the contract (libs/schema API_ROUTES)', () => {
  it("parses every answer of this suite with its route's response schema, with only the error codes the route declares", () => {
    expect(contract.violations).toEqual([]);
    expect([...contract.checked.keys()]).toEqual(expect.arrayContaining([answerOf(routes.query, 200), answerOf(routes.stats, 200), answerOf(routes.sources, 200), answerOf(routes.stats, 400), answerOf(routes.query, 403)]));
  });
});

describe('GET /openapi.json', () => {
  it('answers without a key with the read routes only (and the probes and /metrics every app serves)', async () => {
    const res = await request(app).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.paths).sort()).toEqual([...new Set(API_ROUTES.filter((r) => r.app === 'read-api' || r.app === 'service').map((r) => r.path))].sort());
  });
});

describe('concurrent reads', () => {
  it('answers a burst of 60 concurrent reads of one project, every one 200 (reads have no rate limit; the fair gate queues them)', async () => {
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => get(ENDPOINTS[i % 3]!, a.rk, { from: FROM, to: TO })));
    expect(answers.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
  });
});

describe('GET /v1/sources include_bots', () => {
  // One session (same session_id and anonymous_id) a crawler entered from a search engine, then a person from a
  // newsletter: a day after every other event of these specs, in project B.
  const day = D0 + 8 * DAY;
  const range = { from: new Date(day).toISOString(), to: new Date(day + DAY).toISOString() };
  beforeAll(async () => {
    const at = (min: number) => new Date(day + 3_600_000 + min * 60_000).toISOString();
    await batch(b.sk, [{ event: '$pageview', anonymous_id: 'mix-1', session_id: 'mix-s', timestamp: at(0), referrer: 'https://www.bing.com/' }], '133.242.0.1', UA.googlebot);
    await batch(b.sk, [
      { event: '$pageview', anonymous_id: 'mix-1', session_id: 'mix-s', timestamp: at(1), url: `${ORIGIN}/?utm_source=newsletter&utm_medium=email` },
      { event: 'signup', anonymous_id: 'mix-1', session_id: 'mix-s', timestamp: at(2), url: `${ORIGIN}/signup` },
    ], '81.2.69.160');
  });

  it('counts every event by default (true); false leaves the bot event out and the session is entered by its first other event', async () => {
    const all = { breakdown: 'source_medium', rows: [{ source: 'bing', medium: 'organic', events: 3, uniques: 1, paid_share: 0 }] };
    expect((await get('/v1/sources', b.rk, range)).body).toEqual(all);
    expect((await get('/v1/sources', b.rk, { ...range, include_bots: 'true' })).body).toEqual(all);
    expect((await get('/v1/sources', b.rk, { ...range, include_bots: 'false' })).body).toEqual({
      breakdown: 'source_medium',
      rows: [{ source: 'newsletter', medium: 'email', events: 2, uniques: 1, paid_share: 0 }],
    });
    // the same on a sub-day range (sessions read directly, not sources_daily)
    const sub = { from: new Date(day + 3_600_000).toISOString(), to: new Date(day + 2 * 3_600_000).toISOString() };
    expect((await get('/v1/sources', b.rk, { ...sub, include_bots: 'false', breakdown: 'source' })).body.rows).toEqual([{ source: 'newsletter', events: 2, uniques: 1, paid_share: 0 }]);
  });

  it.each(['yes', '1', '', 'FALSE'])('include_bots=%j -> 400 invalid_params naming include_bots', async (value) => {
    const res = await get('/v1/sources', b.rk, { ...range, include_bots: value });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_params');
    expect(res.body.details.fieldErrors).toEqual({ include_bots: ['true or false expected'] });
  });
});
