import request from 'supertest';
import { Builder, buildFunnel, buildRetention, readTablesOf } from '@analytics/event-store';
import { funnelBodySchema, retentionBodySchema } from '@analytics/schema';
import { expectedFunnel, expectedRetention } from './test-support/expected-conversions';
import { D0, DAY_MS, HOUR_MS } from './test-support/seeded-dataset';
import { seededSuite } from './test-support/seeded-service';

// The seeded data set of insights-correctness.spec.ts sent through the real ingest path, then POST /v1/funnel and
// POST /v1/retention compared, exactly, with answers computed in plain TypeScript (test-support/expected-conversions.ts):
// step orders and windows (seconds to the whole range), repeated steps, every count_by, breakdowns of each dimension
// kind, filters, retention by day, week and month over ranges cutting periods, start and return goals, two tenants.
// `d_daily`'s visitor ids start with `d_` (as the browser SDK's daily ids): its answers by visitor carry `notes`.

const SEED = 20261131;
const PROJECTS = { alpha: { visitors: 300 }, beta: { visitors: 60 }, d_daily: { visitors: 40 } } as const;
type Name = keyof typeof PROJECTS;

const seeded = seededSuite(PROJECTS, SEED);

const iso = (ms: number) => new Date(ms).toISOString();
const post = async (path: string, name: Name, body: Record<string, unknown>) => {
  const res = await request(seeded.readApp).post(path).set('authorization', `Bearer ${seeded.rk[name]}`).send(body);
  expect({ status: res.status, body, error: res.body.error }).toMatchObject({ status: 200 });
  return res.body;
};

const RANGES: Array<[number, number]> = [
  [D0, D0 + 14 * DAY_MS],
  [D0 + 5 * DAY_MS, D0 + 8 * DAY_MS],
  [D0 + DAY_MS + 6 * HOUR_MS, D0 + 10 * DAY_MS + 18 * HOUR_MS + 1234], // not on days nor weeks
];
const STEPS: unknown[][] = [
  [{ event: '$pageview' }, { event: 'signup' }],
  [{ event: '$pageview', path: '/pricing' }, { event: 'clicked_pricing' }, { event: 'signup' }, { event: 'purchase' }],
  [{ path: '/*' }, { event: '$pageview' }, { event: '$pageview' }], // repeated steps: one pageview may count for two
  [{ event: '$pageview', filters: [['is', 'channel', ['organic_search', 'paid_search', 'direct']]] }, { path: '/docs' }, { event: 'purchase' }],
  [{ event: 'clicked_pricing' }, { event: 'purchase', filters: [['not_contains', 'prop:amount', ['9']]] }],
  [{ path: '/blog/*' }, { event: 'signup' }, { event: 'clicked_pricing' }, { event: 'purchase' }, { event: '$pageview', path: '/' }],
];
const WINDOWS = [86_400, 1, 600, 3_600, 2_592_000];
const COUNT_BY = ['visitor', 'user', 'session'] as const;
const BREAKDOWNS = [undefined, 'country', 'source', 'prop:step', 'entry_path', 'device_type'];
const FILTERS: unknown[][] = [[], [['is_not', 'country', ['US']]], [['is', 'medium', ['organic', 'cpc', 'referral', 'direct']]], [['or', [['contains', 'browser', ['Chrome']], ['is', 'os', ['iOS']]]]]];

describe('POST /v1/funnel matches the events', () => {
  it.each([['alpha', 1], ['beta', 3], ['d_daily', 4]] as const)('for project %s: steps x windows x count_by x breakdowns x filters, exactly', async (name, every) => {
    let i = 0;
    let reachedLast = 0;
    for (const steps of STEPS) {
      for (const window_s of WINDOWS) {
        for (const count_by of COUNT_BY) {
          if (++i % every) continue;
          const [from, to] = RANGES[i % RANGES.length]!;
          const breakdown = BREAKDOWNS[i % BREAKDOWNS.length];
          const body = { from: iso(from), to: iso(to), steps, window_s, count_by, filters: FILTERS[i % FILTERS.length], ...(breakdown ? { breakdown } : {}), ...(i % 7 === 0 ? { include_bots: true } : {}) };
          const answer = await post('/v1/funnel', name, body);
          expect(answer).toEqual(expectedFunnel(seeded.rows, seeded.ids[name], funnelBodySchema.parse(body)));
          if (answer.steps.at(-1).count > 0) reachedLast++;
        }
      }
    }
    expect(reachedLast).toBeGreaterThan(0); // some funnels were completed, not only empty ones
  });

  it('the window counts: a longer window never reaches fewer entities, and the seeded funnels tell windows apart', async () => {
    const counts: number[] = [];
    for (const window_s of [1, 60, 600, 3600, 86_400]) {
      const body = { from: iso(D0), to: iso(D0 + 14 * DAY_MS), steps: STEPS[1], window_s };
      counts.push((await post('/v1/funnel', 'alpha', body)).steps.at(-1).count);
    }
    expect([...counts].sort((a, b) => a - b)).toEqual(counts);
    expect(new Set(counts).size).toBeGreaterThan(2);
  });
});

describe('POST /v1/funnel by a visit dimension over whole UTC days reads the visits aggregate', () => {
  // The kept chain's step-1 visit takes its value from the `visits` aggregate (no visit dimension elsewhere in the body).
  it.each(['alpha', 'beta', 'd_daily'] as const)('for project %s: every visit dimension x count_by x steps, exactly', async (name) => {
    let compared = 0;
    const dims = ['source', 'medium', 'channel', 'campaign', 'entry_path', 'exit_path'];
    for (const [k, breakdown] of dims.entries()) {
      for (const count_by of COUNT_BY) {
        const [from, to] = [[D0, D0 + 14 * DAY_MS], [D0 + 3 * DAY_MS, D0 + 30 * DAY_MS], [D0 + 5 * DAY_MS, D0 + 6 * DAY_MS]][k % 3]!;
        const steps = [STEPS[0], STEPS[1], STEPS[4]][(k + compared) % 3];
        const body = { from: iso(from!), to: iso(to!), steps, window_s: WINDOWS[k % WINDOWS.length], count_by, breakdown, filters: [[], [['is_not', 'country', ['US']]]][k % 2], ...(k % 2 ? { include_bots: true } : {}) };
        const q = funnelBodySchema.parse(body);
        expect(buildFunnel(readTablesOf(seeded.stores.events), seeded.ids[name], q).sql).toMatch(/FROM \w+\.visits WHERE/);
        expect(await post('/v1/funnel', name, body)).toEqual(expectedFunnel(seeded.rows, seeded.ids[name], q));
        compared++;
      }
    }
    expect(compared).toBe(18);
  });

  it('reads the events instead off midnight, with a visit-dimension filter or step filter, or an event-dimension breakdown', () => {
    const plan = (body: Record<string, unknown>) =>
      buildFunnel(readTablesOf(seeded.stores.events), seeded.ids.alpha, funnelBodySchema.parse({ from: iso(D0), to: iso(D0 + 7 * DAY_MS), steps: STEPS[0], breakdown: 'source', ...body })).sql;
    expect(plan({})).toMatch(/\.visits WHERE/);
    for (const body of [{ to: iso(D0 + 7 * DAY_MS + 1) }, { filters: [['is', 'medium', ['cpc']]] }, { steps: STEPS[3] }, { breakdown: 'country' }]) expect(plan(body)).not.toMatch(/\.visits\b/);
  });
});

describe('the funnel is ClickHouse\'s windowFunnel', () => {
  it('reaches, on every seeded funnel without visit dimensions, the levels windowFunnel(window) itself gives', async () => {
    let compared = 0;
    for (const steps of STEPS) {
      for (const window_s of [1, 600, 86_400]) {
        const body = { from: iso(D0), to: iso(D0 + 14 * DAY_MS), steps, window_s };
        const q = funnelBodySchema.parse(body);
        const b = new Builder();
        const conditions = q.steps.map((g) => b.goal(g));
        if (conditions.some((c) => /\bvd\d+\b/.test(c))) continue; // a visit dimension: needs the visit join
        const sql = [
          'SELECT level, count() AS n FROM (',
          `  SELECT anonymous_id AS ent, windowFunnel({window:UInt64})(toUInt64(toUnixTimestamp64Milli(timestamp)), ${conditions.join(', ')}) AS level`,
          `  FROM ${readTablesOf(seeded.stores.events).events}`,
          "  WHERE project_id = {project:UUID} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')} AND device_type != 'bot' AND anonymous_id != ''",
          '  GROUP BY ent) GROUP BY level',
        ].join('\n');
        const params = { ...b.params, window: window_s * 1000, project: seeded.ids.alpha, from: iso(q.from).replace('T', ' ').replace('Z', ''), to: iso(q.to).replace('T', ' ').replace('Z', '') };
        const levels = await seeded.stores.events.read<{ level: number | string; n: number | string }>(seeded.ids.alpha, sql, params);
        const reaching = q.steps.map((_, k) => levels.filter((r) => Number(r.level) >= k + 1).reduce((sum, r) => sum + Number(r.n), 0));
        const answer = await post('/v1/funnel', 'alpha', body);
        expect(answer.steps.map((x: { count: number }) => x.count)).toEqual(reaching);
        compared++;
      }
    }
    expect(compared).toBeGreaterThanOrEqual(12);
  });
});

describe('POST /v1/retention matches the events', () => {
  const GOALS: Array<Record<string, unknown>> = [
    {},
    { start: { event: '$pageview' } },
    { return: { event: 'purchase' } },
    { start: { path: '/pricing' }, return: { event: 'signup', filters: [['is_not', 'device_type', ['tablet']]] } },
    { start: { event: '$pageview', filters: [['is', 'channel', ['organic_search', 'direct', 'referral']]] } },
  ];
  it.each([['alpha', 1], ['beta', 2], ['d_daily', 3]] as const)('for project %s: periods x count_by x goals x filters over ranges cutting periods, exactly', async (name, every) => {
    let i = 0;
    let returnedLater = 0;
    for (const period of ['day', 'week', 'month'] as const) {
      for (const count_by of ['user', 'visitor'] as const) {
        for (const goals of GOALS) {
          for (const [from, to] of [...RANGES, [D0 + 3 * DAY_MS, D0 + 30 * DAY_MS] as [number, number]]) {
            if (++i % every) continue;
            const body = { from: iso(from), to: iso(to), period, count_by, ...goals, filters: FILTERS[i % FILTERS.length], ...(i % 5 === 0 ? { include_bots: true } : {}) };
            const answer = await post('/v1/retention', name, body);
            expect(answer).toEqual(expectedRetention(seeded.rows, seeded.ids[name], retentionBodySchema.parse(body)));
            returnedLater += answer.cohorts.filter((c: { returned: number[] }) => c.returned.slice(1).some((n) => n > 0)).length;
          }
        }
      }
    }
    expect(returnedLater).toBeGreaterThan(0);
  });

  // Any event, by visitor, no filter, whole UTC days: answered from the visits aggregate (who was active which day).
  it.each(['alpha', 'beta', 'd_daily'] as const)('for project %s from the visits aggregate: any event by visitor over whole days, exactly', async (name) => {
    let compared = 0;
    for (const period of ['day', 'week', 'month'] as const) {
      for (const [from, to] of [[D0, D0 + 14 * DAY_MS], [D0 + 3 * DAY_MS, D0 + 30 * DAY_MS], [D0 + 5 * DAY_MS, D0 + 6 * DAY_MS]] as Array<[number, number]>) {
        for (const include_bots of [false, true]) {
          const body = { from: iso(from), to: iso(to), period, count_by: 'visitor', ...(include_bots ? { include_bots } : {}) };
          const parsed = retentionBodySchema.parse(body);
          expect(buildRetention(readTablesOf(seeded.stores.events), seeded.ids[name], parsed).sql).toMatch(/FROM \w+\.visits\n/);
          expect(await post('/v1/retention', name, body)).toEqual(expectedRetention(seeded.rows, seeded.ids[name], parsed));
          compared++;
        }
      }
    }
    expect(compared).toBe(18);
    // a goal, a filter, count_by user or a range off midnight read the events
    const plan = (body: Record<string, unknown>) => buildRetention(readTablesOf(seeded.stores.events), seeded.ids.alpha, retentionBodySchema.parse({ from: iso(D0), to: iso(D0 + 7 * DAY_MS), period: 'day', count_by: 'visitor', ...body })).sql;
    for (const body of [{ start: { event: 'signup' } }, { return: { event: 'signup' } }, { filters: [['is', 'source', ['google']]] }, { count_by: 'user' }, { to: iso(D0 + 7 * DAY_MS + 1) }]) {
      expect(plan(body)).not.toMatch(/\.visits\n/);
    }
  });
});
