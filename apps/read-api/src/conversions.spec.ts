import request from 'supertest';
import type { Express } from 'express';
import { DAILY_IDS_NOTE, FUNNEL_MAX_EVENTS_PER_ENTITY } from '@analytics/event-store';
import { routes } from '@analytics/schema';
import { type ContractCheck, answerOf } from '@analytics/testing';
import { type Keys, ORIGIN, type Stores, UA, openCheckedReadService, sendBatch } from './test-support/seeded-service';

// POST /v1/funnel, POST /v1/retention and goals in POST /v1/insights: the contract (scope, 400s saying what is
// allowed) and docs/conversions.md meanings pinned on a small hand-made data set: step order, equal
// timestamps, repeated steps, the window's edge, daily-id notes, cohorts. conversions-correctness.spec.ts checks
// every combination against plain TypeScript answers.

const D0 = Date.UTC(2026, 2, 2);
const HOUR = 3_600_000;
const at = (h: number, s = 0) => new Date(D0 + h * HOUR + s * 1000).toISOString();
const RANGE = { from: at(0), to: at(48) };

let stores: Stores, app: Express, contract: ContractCheck, ingestApp: Express;
let a: Keys, b: Keys, d: Keys;

const batch = (sk: string, events: object[], ua: string = UA.chrome) => sendBatch(ingestApp, sk, events, { ua });
const pv = (anon: string, h: number, s: number, path = '/', extra: object = {}) => ({ event: '$pageview', anonymous_id: anon, timestamp: at(h, s), url: `${ORIGIN}${path}`, ...extra });
const ev = (event: string, anon: string, h: number, s: number, extra: object = {}) => ({ event, anonymous_id: anon, timestamp: at(h, s), url: `${ORIGIN}/app`, ...extra });

beforeAll(async () => {
  ({ stores, ingestApp, contract, app, keys: { a, b, d } } = await openCheckedReadService('a', 'b', 'd'));
  await batch(a.sk, [
    // u1: pageview, signup 10 s later, purchase 100 s after the pageview; user U1, back on day 2
    pv('u1', 1, 0, '/pricing', { user_id: 'U1' }),
    ev('signup', 'u1', 1, 10, { user_id: 'U1' }),
    ev('purchase', 'u1', 1, 100, { user_id: 'U1' }),
    pv('u1', 25, 0, '/', { user_id: 'U1' }),
    // u2: signup sent before a pageview of the same millisecond (equal timestamps)
    ev('signup', 'u2', 2, 0, { user_id: 'U2' }),
    pv('u2', 2, 0, '/blog/launch', { user_id: 'U2' }),
    // u3: purchase, then a pageview a second later (the wrong order)
    ev('purchase', 'u3', 3, 0),
    pv('u3', 3, 1, '/blog/other'),
    // u4: one pageview, on day 2
    pv('u4', 30, 0, '/docs', { user_id: 'U4' }),
  ]);
  await batch(a.sk, [pv('bot', 4, 0), ev('signup', 'bot', 4, 1)], UA.googlebot);
  await batch(b.sk, [pv('b1', 1, 0), ev('signup', 'b1', 1, 1), ev('purchase', 'b1', 1, 2)]);
  // project d: the browser SDK's daily ids (d_ + 32 hex), one per day
  await batch(d.sk, [pv(`d_${'a'.repeat(32)}`, 1, 0), ev('signup', `d_${'a'.repeat(32)}`, 1, 5), pv(`d_${'b'.repeat(32)}`, 25, 0)]);
});
afterAll(() => stores.close());

const call = (path: string, body: object, key = a.rk) => request(app).post(path).set('authorization', `Bearer ${key}`).send(body);
const ok = async (path: string, body: object, key = a.rk) => {
  const res = await call(path, { ...RANGE, ...body }, key);
  expect({ status: res.status, error: res.body.error, details: res.body.details }).toMatchObject({ status: 200 });
  return res.body;
};
const FUNNEL = [{ event: '$pageview' }, { event: 'signup' }, { event: 'purchase' }];

describe('scope and validation', () => {
  it.each(['/v1/funnel', '/v1/retention'])('%s refuses pk and sk keys with 403 insufficient_scope, and no key with 401', async (path) => {
    for (const key of [a.pk, a.sk]) {
      const res = await call(path, { ...RANGE, steps: FUNNEL, period: 'day' }, key).set('origin', ORIGIN);
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('insufficient_scope');
    }
    expect((await request(app).post(path).send(RANGE)).status).toBe(401);
  });

  const bad: Array<[string, string, object, string]> = [
    ['one step', '/v1/funnel', { steps: [{ event: 'signup' }] }, 'a funnel has 2 to 10 steps'],
    ['eleven steps', '/v1/funnel', { steps: Array.from({ length: 11 }, () => ({ event: 'signup' })) }, 'a funnel has 2 to 10 steps'],
    ['a step naming neither event nor path', '/v1/funnel', { steps: [{ event: 'a' }, { filters: [] }] }, 'a goal names an event, a path, or both'],
    ['a step with a bad filter', '/v1/funnel', { steps: [{ event: 'a' }, { event: 'b', filters: [['is', 'time:day', ['x']]] }] }, 'unknown filter dimension'],
    ['a window of 0', '/v1/funnel', { steps: FUNNEL, window_s: 0 }, 'Too small'],
    ['a window over 30 days', '/v1/funnel', { steps: FUNNEL, window_s: 2_592_001 }, 'Too big'],
    ['an unknown count_by', '/v1/funnel', { steps: FUNNEL, count_by: 'device' }, 'count_by: allowed are visitor, user, session'],
    ['a time breakdown', '/v1/funnel', { steps: FUNNEL, breakdown: 'time:day' }, 'unknown breakdown'],
    ['an unknown period', '/v1/retention', { period: 'year' }, 'period: allowed are day, week, month'],
    ['count_by session', '/v1/retention', { period: 'day', count_by: 'session' }, 'count_by: allowed are user, visitor'],
    ['a start goal of "*"', '/v1/retention', { period: 'day', start: { path: '*' } }, 'matches every path: give a prefix'],
    ['over 370 days by day', '/v1/retention', { period: 'day', from: '2026-01-01', to: '2027-01-07' }, 'at most 370 periods between from and to'],
    ['a century by month', '/v1/retention', { period: 'month', from: '1970-01-01', to: '2099-01-01' }, 'at most 370 periods'],
    ['to before from', '/v1/retention', { period: 'day', from: RANGE.to, to: RANGE.from }, '`to` must be after `from`'],
    ['conversions without a goal', '/v1/insights', { metrics: ['conversions'] }, 'conversions and conversion_rate need a `goal`'],
    ['a goal with an unknown field', '/v1/insights', { metrics: ['conversions'], goal: { event: 'signup', url: '/x' } }, 'Unrecognized key'],
    ['an empty goal', '/v1/insights', { metrics: ['conversion_rate'], goal: {} }, 'a goal names an event, a path, or both'],
  ];
  it.each(bad)('answers 400 invalid_payload for %s (%s), details saying what is allowed', async (_, path, body, message) => {
    const res = await call(path, { ...RANGE, ...body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_payload');
    expect(JSON.stringify(res.body.details)).toContain(message);
  });
});

describe('POST /v1/funnel: meanings', () => {
  it('counts entities reaching each step in order: equal timestamps count as in order, the wrong order does not', async () => {
    // u1: 3 steps; u2: pageview and signup at the same ms: 2; u3 (purchase before its pageview) and u4: 1; the bot left out
    expect(await ok('/v1/funnel', { steps: FUNNEL })).toEqual({
      steps: [
        { index: 1, count: 4, conversion_rate: 1, drop_off: 0, median_time_to_convert_s: null },
        { index: 2, count: 2, conversion_rate: 0.5, drop_off: 2, median_time_to_convert_s: 5 }, // median of 10 s (u1) and 0 s (u2)
        { index: 3, count: 1, conversion_rate: 0.25, drop_off: 1, median_time_to_convert_s: 90 },
      ],
    });
    expect((await ok('/v1/funnel', { steps: FUNNEL, include_bots: true })).steps.map((s: { count: number }) => s.count)).toEqual([5, 3, 1]);
  });

  it('a step is reached no later than window_s after step 1, the edge included', async () => {
    const steps = [{ event: '$pageview' }, { event: 'purchase' }];
    expect((await ok('/v1/funnel', { steps, window_s: 100 })).steps[1].count).toBe(1);
    expect((await ok('/v1/funnel', { steps, window_s: 99 })).steps[1].count).toBe(0);
  });

  it('a repeated step may be reached by the same event (windowFunnel); paths or filters tell the steps apart', async () => {
    expect((await ok('/v1/funnel', { steps: [{ event: '$pageview' }, { event: '$pageview' }] })).steps.map((s: { count: number }) => s.count)).toEqual([4, 4]);
    expect((await ok('/v1/funnel', { steps: [{ path: '/blog/*' }, { path: '/blog/other' }] })).steps.map((s: { count: number }) => s.count)).toEqual([2, 1]);
  });

  it('counts by user and by session; breaks down by the step-1 event\'s value; scoped to the key\'s project', async () => {
    expect((await ok('/v1/funnel', { steps: FUNNEL, count_by: 'user' })).steps.map((s: { count: number }) => s.count)).toEqual([3, 2, 1]);
    expect((await ok('/v1/funnel', { steps: FUNNEL, count_by: 'session' })).steps.map((s: { count: number }) => s.count)).toEqual([5, 2, 1]); // u1's day-2 visit is a session of its own
    const byPath = await ok('/v1/funnel', { steps: FUNNEL, breakdown: 'path' });
    // each entity under the value of its kept chain's step-1 event: u1's /pricing chain (3 steps), not its later '/'
    expect(byPath.breakdown).toEqual([
      { value: '/blog/launch', steps: [expect.objectContaining({ count: 1 }), expect.objectContaining({ count: 1 }), expect.objectContaining({ count: 0 })] },
      { value: '/blog/other', steps: [expect.objectContaining({ count: 1 }), expect.objectContaining({ count: 0 }), expect.objectContaining({ count: 0 })] },
      { value: '/docs', steps: [expect.objectContaining({ count: 1 }), expect.objectContaining({ count: 0 }), expect.objectContaining({ count: 0 })] },
      { value: '/pricing', steps: [expect.objectContaining({ count: 1 }), expect.objectContaining({ count: 1 }), expect.objectContaining({ count: 1 })] },
    ]);
    expect((await ok('/v1/funnel', { steps: FUNNEL }, b.rk)).steps.map((s: { count: number }) => s.count)).toEqual([1, 1, 1]);
  });

  it('walks every chain of a visitor with 2,000 events: the latest start reaching the highest level is kept, the window cuts at its edge', async () => {
    // a at even minutes, b at odd ones; steps a b a b ... (10): the chain from the i-th a ends 9 minutes later, so the
    // latest start reaching step 10 is minute 1990 (its event's path /p/0), every gap 60 s.
    const e = (await stores.keyStore.createProject({ name: 'e', allowed_origins: [ORIGIN] })).keys;
    const events = Array.from({ length: 2000 }, (_, m) => ({ ...ev(m % 2 ? 'b' : 'a', 'heavy', 0, m * 60), url: `${ORIGIN}/p/${m % 5}` }));
    for (let i = 0; i < events.length; i += 1000) await batch(e.sk, events.slice(i, i + 1000));
    const steps = Array.from({ length: 10 }, (_, i) => ({ event: i % 2 ? 'b' : 'a' }));
    const step = (index: number, count: number) => ({ index, count, conversion_rate: count, drop_off: index === 1 ? 0 : 1 - count, median_time_to_convert_s: index === 1 || !count ? null : 60 });
    const all = await ok('/v1/funnel', { steps, window_s: 540, breakdown: 'path' }, e.rk);
    expect(all.steps).toEqual(Array.from({ length: 10 }, (_, i) => step(i + 1, 1)));
    expect(all.breakdown).toEqual([{ value: '/p/0', steps: all.steps }]);
    expect((await ok('/v1/funnel', { steps, window_s: 539 }, e.rk)).steps).toEqual(Array.from({ length: 10 }, (_, i) => step(i + 1, i < 9 ? 1 : 0)));
  });

  it(`refuses a funnel where one entity has more than ${FUNNEL_MAX_EVENTS_PER_ENTITY} events of its steps with 400 query_too_expensive, saying what to do`, async () => {
    const f = (await stores.keyStore.createProject({ name: 'f', allowed_origins: [ORIGIN] })).keys;
    const events = Array.from({ length: FUNNEL_MAX_EVENTS_PER_ENTITY + 2 }, (_, s) => ev(s % 2 ? 'b' : 'a', 'bot-like', 0, s));
    for (let i = 0; i < events.length; i += 1000) await batch(f.sk, events.slice(i, i + 1000));
    const res = await call('/v1/funnel', { ...RANGE, steps: [{ event: 'a' }, { event: 'b' }] }, f.rk);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { error: 'query_too_expensive', details: { limit: 'events_per_entity', bound: `${FUNNEL_MAX_EVENTS_PER_ENTITY} events`, message: expect.stringMatching(/^a visitor has more than .* narrow the range or add filters$/) } },
    });
    // Its a events alone are within the bound.
    expect((await ok('/v1/funnel', { steps: [{ event: 'a' }, { event: 'a' }] }, f.rk)).steps.map((s: { count: number }) => s.count)).toEqual([1, 1]);
  });

  it('says when visitors are daily ids over more than a day; not by user, not within a day', async () => {
    expect((await ok('/v1/funnel', { steps: FUNNEL }, d.rk)).notes).toEqual([DAILY_IDS_NOTE]);
    expect((await ok('/v1/funnel', { steps: FUNNEL, count_by: 'user' }, d.rk)).notes).toBeUndefined();
    expect((await ok('/v1/funnel', { steps: FUNNEL, to: at(24) }, d.rk)).notes).toBeUndefined();
    expect((await ok('/v1/funnel', { steps: FUNNEL })).notes).toBeUndefined();
  });
});

describe('POST /v1/retention: meanings', () => {
  it('cohorts by the first event\'s period; returned[k] = active in period cohort + k, for periods starting before `to`', async () => {
    // by user: U1 and U2 start on day 1, U1 back on day 2; U4 starts on day 2
    expect(await ok('/v1/retention', { period: 'day', count_by: 'user' })).toEqual({
      cohorts: [
        { cohort: '2026-03-02', size: 2, returned: [2, 1] },
        { cohort: '2026-03-03', size: 1, returned: [1] },
      ],
    });
    expect(await ok('/v1/retention', { period: 'week', count_by: 'user' })).toEqual({ cohorts: [{ cohort: '2026-03-02', size: 3, returned: [3] }] });
    // start: a signup; return: a pageview (both have one on their start day, U1 on day 2 too; U4 never signs up)
    expect(await ok('/v1/retention', { period: 'day', count_by: 'user', start: { event: 'signup' }, return: { event: '$pageview' } })).toEqual({
      cohorts: [{ cohort: '2026-03-02', size: 2, returned: [2, 1] }],
    });
  });

  it('says when visitors are daily ids over more than a day', async () => {
    expect(await ok('/v1/retention', { period: 'day', count_by: 'visitor' }, d.rk)).toEqual({
      cohorts: [
        { cohort: '2026-03-02', size: 1, returned: [1, 0] },
        { cohort: '2026-03-03', size: 1, returned: [1] },
      ],
      notes: [DAILY_IDS_NOTE],
    });
  });
});

describe('goals in POST /v1/insights', () => {
  it('conversions = visitors with a goal event (exact), conversion_rate = conversions / visitors, by any dimension', async () => {
    const goal = { event: 'signup' };
    expect((await ok('/v1/insights', { metrics: ['visitors', 'conversions', 'conversion_rate'], goal })).rows).toEqual([{ visitors: 4, conversions: 2, conversion_rate: 0.5 }]);
    expect((await ok('/v1/insights', { metrics: ['conversions', 'conversion_rate'], goal: { path: '/blog/*' }, dimensions: ['time:day'] })).rows).toEqual([
      { 'time:day': '2026-03-02 00:00:00', conversions: 2, conversion_rate: 2 / 3 },
      { 'time:day': '2026-03-03 00:00:00', conversions: 0, conversion_rate: 0 },
    ]);
    expect((await ok('/v1/insights', { metrics: ['conversions'], goal: { event: '$pageview', path: '/pricing' }, dimensions: ['entry_path'], order_by: [['entry_path', 'asc']] })).rows).toEqual([
      { entry_path: '/', conversions: 0 },
      { entry_path: '/blog/launch', conversions: 0 },
      { entry_path: '/blog/other', conversions: 0 },
      { entry_path: '/docs', conversions: 0 },
      { entry_path: '/pricing', conversions: 1 },
    ]);
  });
});

describe('the contract', () => {
  it('every answer matches the declared schemas', () => {
    expect(contract.violations).toEqual([]);
    expect([...contract.checked.keys()]).toEqual(
      expect.arrayContaining([answerOf(routes.funnel, 200), answerOf(routes.funnel, 400), answerOf(routes.funnel, 403), answerOf(routes.retention, 200), answerOf(routes.retention, 400), answerOf(routes.retention, 403)]),
    );
  });
});
