import request from 'supertest';
import type { Express } from 'express';
import { insightsBodySchema, routes } from '@analytics/schema';
import { type ContractCheck, answerOf } from '@analytics/testing';
import { type Keys, ORIGIN, type Stores, UA, openCheckedReadService, sendBatch } from './test-support/seeded-service';

// POST /v1/insights and GET /v1/properties: the contract (scope, 400s with the allowed values) and each meaning of the
// docs/insights.md pinned on a small hand-made data set. insights-correctness.spec.ts checks every combination.

const D0 = Date.UTC(2026, 2, 2);
const HOUR = 3_600_000;
const at = (h: number) => new Date(D0 + h * HOUR).toISOString();
const RANGE = { from: at(0), to: at(48) };

let stores: Stores, app: Express, contract: ContractCheck, ingestApp: Express;
let a: Keys, b: Keys;

const batch = (sk: string, events: object[], ua: string = UA.chrome, ip?: string) => sendBatch(ingestApp, sk, events, { ua, ip });

beforeAll(async () => {
  ({ stores, ingestApp, contract, app, keys: { a, b } } = await openCheckedReadService('a', 'b'));
  await batch(a.sk, [
    // v1: from google, 3 pageviews and a signup over 10 minutes; entry /, exit /pricing
    { event: '$pageview', anonymous_id: 'u1', session_id: 's1', timestamp: at(1), url: `${ORIGIN}/`, referrer: 'https://www.google.com/', properties: { plan: 'pro', n: 3 } },
    { event: '$pageview', anonymous_id: 'u1', session_id: 's1', timestamp: at(1 + 2 / 60), url: `${ORIGIN}/docs`, properties: { plan: 'free' } },
    { event: 'signup', anonymous_id: 'u1', session_id: 's1', timestamp: at(1 + 5 / 60), url: `${ORIGIN}/signup`, properties: { plan: 'pro' } },
    { event: '$pageview', anonymous_id: 'u1', session_id: 's1', timestamp: at(1 + 10 / 60), url: `${ORIGIN}/pricing` },
    // v2: a bounce from the newsletter (one pageview)
    { event: '$pageview', anonymous_id: 'u2', session_id: 's2', timestamp: at(3), url: `${ORIGIN}/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=march` },
    // v3: u1 again, direct, one pageview and a click (not a bounce), next day
    { event: '$pageview', anonymous_id: 'u1', session_id: 's3', timestamp: at(26), url: `${ORIGIN}/docs` },
    { event: 'clicked', anonymous_id: 'u1', session_id: 's3', timestamp: at(26.5), url: `${ORIGIN}/docs`, properties: { plan: 'pro' } },
  ]);
  // a crawler: left out unless include_bots
  await batch(a.sk, [{ event: '$pageview', anonymous_id: 'bot1', session_id: 'sb', timestamp: at(5), url: `${ORIGIN}/` }], UA.googlebot);
  // the previous period (48 h before): one bounce
  await batch(a.sk, [{ event: '$pageview', anonymous_id: 'u9', session_id: 's9', timestamp: at(-20), url: `${ORIGIN}/` }]);
  await batch(b.sk, [{ event: '$pageview', anonymous_id: 'b1', timestamp: at(2), url: `${ORIGIN}/b`, properties: { secret: 'b' } }]);
});
afterAll(() => stores.close());

const insights = (body: object, key = a.rk) => request(app).post('/v1/insights').set('authorization', `Bearer ${key}`).send(body);
const ok = async (body: object) => {
  const res = await insights({ ...RANGE, ...body });
  expect(res.status).toBe(200);
  return res.body.rows as Array<Record<string, unknown>>;
};

describe('POST /v1/insights: scope and validation', () => {
  it('refuses pk and sk keys with 403 insufficient_scope, and no key with 401', async () => {
    for (const key of [a.pk, a.sk]) {
      const res = await insights(RANGE, key).set('origin', ORIGIN);
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('insufficient_scope');
    }
    expect((await request(app).post('/v1/insights').send(RANGE)).status).toBe(401);
  });

  const bad: Array<[string, object, string]> = [
    ['an unknown metric', { metrics: ['visitors', 'sessions'] }, 'allowed are events, pageviews, visitors, visits, bounce_rate, visit_duration, views_per_visit, conversions, conversion_rate'],
    ['an unknown dimension', { dimensions: ['referrer'] }, 'allowed are event_name, source, medium, campaign, channel, country, device_type, browser, os, path, entry_path, exit_path, prop:<key>, time:hour'],
    ['more than 3 dimensions', { dimensions: ['source', 'country', 'os', 'browser'] }, 'at most 3 dimensions'],
    ['an unknown operator', { filters: [['equals', 'country', ['GB']]] }, 'allowed are is, is_not, contains, not_contains, or'],
    ['a time dimension in a filter', { filters: [['is', 'time:day', ['2026-03-02']]] }, 'unknown filter dimension: allowed are event_name'],
    ['a condition without values', { filters: [['is', 'country', []]] }, 'values: an array of 1 to 100 strings'],
    ['a malformed "or"', { filters: [['or', ['is', 'country', ['GB']]]] }, 'a condition is [op, dimension, [values...]]'],
    ['an order_by not requested', { order_by: [['visits', 'desc']] }, 'allowed are visitors'],
    ['a limit over 10000', { limit: 10_001 }, 'Too big'],
    ['an unknown compare', { compare: 'last_year' }, 'allowed is previous_period'],
    ['to before from', { from: RANGE.to, to: RANGE.from }, '`to` must be after `from`'],
    ['an unknown field', { group_by: 'source' }, 'Unrecognized key'],
  ];
  it.each(bad)('answers 400 invalid_payload for %s, details saying what is allowed', async (_, body, message) => {
    const res = await insights({ ...RANGE, ...body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_payload');
    expect(JSON.stringify(res.body.details)).toContain(message);
  });

  it('answers 400 invalid_payload without from or to', async () => {
    expect((await insights({ from: RANGE.from })).body.error).toBe('invalid_payload');
  });
});

describe('POST /v1/insights: meanings', () => {
  it('defaults to visitors, one row of totals, bots left out', async () => {
    expect(await ok({})).toEqual([{ visitors: 2 }]);
    expect(await ok({ include_bots: true })).toEqual([{ visitors: 3 }]);
  });

  it('totals of every metric: bounce = one-pageview visits, duration = mean(last - first) in s, views per visit', async () => {
    const all = ['events', 'pageviews', 'visitors', 'visits', 'bounce_rate', 'visit_duration', 'views_per_visit'];
    expect(await ok({ metrics: all })).toEqual([{ events: 7, pageviews: 5, visitors: 2, visits: 3, bounce_rate: 1 / 3, visit_duration: (600 + 0 + 1800) / 3, views_per_visit: 5 / 3 }]);
  });

  it('one totals row over no events, zero for every ratio', async () => {
    const rows = await ok({ from: at(100), to: at(101), metrics: ['events', 'visits', 'bounce_rate', 'visit_duration', 'views_per_visit'] });
    expect(rows).toEqual([{ events: 0, visits: 0, bounce_rate: 0, visit_duration: 0, views_per_visit: 0 }]);
  });

  it('visit dimensions: entry source/campaign and entry/exit path, one value per visit', async () => {
    expect(await ok({ metrics: ['visits', 'events'], dimensions: ['source'] })).toEqual([
      { source: 'direct', visits: 1, events: 2 },
      { source: 'google', visits: 1, events: 4 },
      { source: 'newsletter', visits: 1, events: 1 },
    ]);
    expect(await ok({ metrics: ['visits'], dimensions: ['campaign', 'medium'], order_by: [['campaign', 'asc']] })).toEqual([
      { campaign: 'march', medium: 'email', visits: 1 },
      { campaign: null, medium: 'direct', visits: 1 },
      { campaign: null, medium: 'organic', visits: 1 },
    ]);
    expect(await ok({ metrics: ['visits'], dimensions: ['entry_path', 'exit_path'], order_by: [['entry_path', 'asc']] })).toEqual([
      { entry_path: '/', exit_path: '/pricing', visits: 1 },
      { entry_path: '/docs', exit_path: '/docs', visits: 1 },
      { entry_path: '/pricing', exit_path: '/pricing', visits: 1 },
    ]);
  });

  it('event dimensions: a visit counts in each group it has an event in; its bounce and duration are the whole visit\'s', async () => {
    expect(await ok({ metrics: ['visits', 'pageviews', 'visit_duration'], dimensions: ['path'], order_by: [['path', 'asc']] })).toEqual([
      { path: '/', visits: 1, pageviews: 1, visit_duration: 600 },
      { path: '/docs', visits: 2, pageviews: 2, visit_duration: 1200 },
      { path: '/pricing', visits: 2, pageviews: 2, visit_duration: 300 },
      { path: '/signup', visits: 1, pageviews: 0, visit_duration: 600 },
    ]);
  });

  it('prop:<key> values as strings, absent as null; time buckets as /v1/stats writes them', async () => {
    expect(await ok({ metrics: ['events'], dimensions: ['prop:plan'] })).toEqual([
      { 'prop:plan': 'pro', events: 3 },
      { 'prop:plan': null, events: 3 },
      { 'prop:plan': 'free', events: 1 },
    ]);
    expect(await ok({ metrics: ['events'], dimensions: ['prop:n'], filters: [['is', 'prop:n', ['3']]] })).toEqual([{ 'prop:n': '3', events: 1 }]);
    expect(await ok({ metrics: ['visits'], dimensions: ['time:day'], order_by: [['time:day', 'asc']] })).toEqual([
      { 'time:day': '2026-03-02 00:00:00', visits: 2 },
      { 'time:day': '2026-03-03 00:00:00', visits: 1 },
    ]);
    expect(await ok({ metrics: ['events'], dimensions: ['time:month'] })).toEqual([{ 'time:month': '2026-03-01 00:00:00', events: 7 }]);
  });

  it('an event-dimension filter: events that match, visit metrics over the visits that contain one', async () => {
    expect(await ok({ metrics: ['events', 'visits', 'bounce_rate', 'views_per_visit'], filters: [['is', 'event_name', ['signup']]] })).toEqual([
      { events: 1, visits: 1, bounce_rate: 0, views_per_visit: 3 },
    ]);
  });

  it('a visit-dimension filter keeps every event of the matching visits', async () => {
    expect(await ok({ metrics: ['events', 'visits'], filters: [['is_not', 'source', ['google']]] })).toEqual([{ events: 3, visits: 2 }]);
    expect(await ok({ metrics: ['events'], filters: [['contains', 'exit_path', ['pric']]] })).toEqual([{ events: 5 }]);
  });

  it('is_not and not_contains hold for an absent value; contains is case-sensitive; "or" of conditions', async () => {
    expect(await ok({ metrics: ['events'], filters: [['is_not', 'prop:plan', ['pro']]] })).toEqual([{ events: 4 }]);
    expect(await ok({ metrics: ['events'], filters: [['not_contains', 'prop:plan', ['r']]] })).toEqual([{ events: 3 }]);
    expect(await ok({ metrics: ['events'], filters: [['contains', 'path', ['/Pricing']]] })).toEqual([{ events: 0 }]);
    expect(await ok({ metrics: ['events'], filters: [['or', [['is', 'prop:plan', ['free']], ['is', 'source', ['newsletter']]]]] })).toEqual([{ events: 2 }]);
  });

  it('compare: the previous period of the same length, rows matched by dimension values (absent: 0)', async () => {
    expect(await ok({ metrics: ['visits', 'bounce_rate'], compare: 'previous_period' })).toEqual([{ visits: 3, bounce_rate: 1 / 3, comparison: { visits: 1, bounce_rate: 1 } }]);
    expect(await ok({ metrics: ['visits'], dimensions: ['source'], compare: 'previous_period', order_by: [['source', 'asc']] })).toEqual([
      { source: 'direct', visits: 1, comparison: { visits: 1 } },
      { source: 'google', visits: 1, comparison: { visits: 0 } },
      { source: 'newsletter', visits: 1, comparison: { visits: 0 } },
    ]);
    // time buckets: the previous period's events shifted forward by the period's length
    expect(await ok({ metrics: ['visits'], dimensions: ['time:day'], compare: 'previous_period', order_by: [['time:day', 'asc']] })).toEqual([
      { 'time:day': '2026-03-02 00:00:00', visits: 2, comparison: { visits: 0 } },
      { 'time:day': '2026-03-03 00:00:00', visits: 1, comparison: { visits: 1 } },
    ]);
  });

  it('order_by and limit', async () => {
    expect(await ok({ metrics: ['events'], dimensions: ['path'], order_by: [['events', 'asc']], limit: 2 })).toEqual([
      { path: '/', events: 1 },
      { path: '/signup', events: 1 },
    ]);
    expect(await ok({ metrics: ['events'], dimensions: ['path'], limit: 1 })).toEqual([{ path: '/docs', events: 3 }]);
  });

  it('reads the key\'s project only', async () => {
    const res = await insights({ ...RANGE, metrics: ['events'], dimensions: ['path'] }, b.rk);
    expect(res.body).toEqual({ rows: [{ path: '/b', events: 1 }] });
  });
});

// SPEC, Aggregates: "Aggregate rows are not rewritten when events are deleted". Insights with visit dimensions only
// read a range's whole UTC days from the visits aggregate, so they keep counting a forgotten user's visit there; the
// part of a range off whole UTC days (its edges) is read from the events and no longer does (docs/insights.md and the
// forget example).
describe('after a forget', () => {
  it("whole-day visit answers (the visits aggregate) keep counting the deleted events; a range's edges (read from the events) drop them", async () => {
    const c = (await stores.keyStore.createProject({ name: 'c', allowed_origins: [ORIGIN] })).keys;
    await batch(c.sk, [
      { event: '$pageview', anonymous_id: 'f1', user_id: 'gone', session_id: 'sf', timestamp: at(2), url: `${ORIGIN}/` },
      { event: '$pageview', anonymous_id: 'f1', user_id: 'gone', session_id: 'sf', timestamp: at(2.1), url: `${ORIGIN}/docs` },
      { event: '$pageview', anonymous_id: 'k1', session_id: 'sk', timestamp: at(3), url: `${ORIGIN}/` },
    ]);
    const wholeDays = { ...RANGE, metrics: ['visits', 'pageviews'], dimensions: ['entry_path'] };
    // from 01:00: the events (02:00 to 03:00 of the first day) are on the range's edge, not in a whole day of it
    const offMidnight = { ...wholeDays, from: at(1) };
    const answer = async (body: object) => {
      const res = await insights(body, c.rk);
      expect(res.status).toBe(200);
      return res.body.rows;
    };
    const both = [{ entry_path: '/', visits: 2, pageviews: 3 }];
    expect(await answer(wholeDays)).toEqual(both);
    expect(await answer(offMidnight)).toEqual(both);

    expect((await request(ingestApp).post('/v1/forget').set('authorization', `Bearer ${c.sk}`).send({ user_id: 'gone' })).status).toBe(202);
    const remaining = async () => (await request(app).get('/v1/query').set('authorization', `Bearer ${c.rk}`).query(RANGE)).body.rows.length;
    for (let deadline = Date.now() + 30_000; Date.now() < deadline && (await remaining()) > 1; ) await new Promise((r) => setTimeout(r, 100));
    expect(await remaining()).toBe(1);

    expect(await answer(wholeDays)).toEqual(both);
    expect(await answer(offMidnight)).toEqual([{ entry_path: '/', visits: 1, pageviews: 1 }]);
  });
});

describe('GET /v1/properties', () => {
  const get = (query: object, key = a.rk) => request(app).get('/v1/properties').set('authorization', `Bearer ${key}`).query({ ...RANGE, ...query });

  it('lists keys most used first, or one key\'s values; filtered by event; project-scoped', async () => {
    expect((await get({})).body).toEqual({ rows: [{ key: 'plan', events: 4 }, { key: 'n', events: 1 }] });
    expect((await get({ key: 'plan' })).body).toEqual({ rows: [{ value: 'pro', events: 3 }, { value: 'free', events: 1 }] });
    expect((await get({ event: 'signup' })).body).toEqual({ rows: [{ key: 'plan', events: 1 }] });
    expect((await get({}, b.rk)).body).toEqual({ rows: [{ key: 'secret', events: 1 }] });
  });

  it('refuses sk keys (403) and a bad range (400 invalid_params)', async () => {
    expect((await get({}, a.sk)).status).toBe(403);
    const res = await get({ from: 'yesterday' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_params');
  });
});

describe('the OpenAPI document', () => {
  it('documents POST /v1/insights with its body schema and an example that the schema accepts, and GET /v1/properties', async () => {
    const doc = (await request(app).get('/openapi.json')).body;
    const post = doc.paths['/v1/insights'].post;
    const body = post.requestBody.content['application/json'];
    expect(body.example).toEqual(routes.insights.example);
    expect(insightsBodySchema.safeParse(body.example).success).toBe(true);
    expect(JSON.stringify(body.schema)).toContain('bounce_rate');
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['200', '400', '403']));
    expect(doc.paths['/v1/properties'].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['from', 'to', 'event', 'key']));
  });
});

describe('the contract', () => {
  it('every answer matched its declared schema', () => {
    expect(contract.violations).toEqual([]);
    expect([...contract.checked.keys()]).toEqual(
      expect.arrayContaining([answerOf(routes.insights, 200), answerOf(routes.insights, 400), answerOf(routes.insights, 403), answerOf(routes.properties, 200), answerOf(routes.properties, 400)]),
    );
  });
});
