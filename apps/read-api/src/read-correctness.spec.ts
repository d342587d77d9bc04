import request from 'supertest';
import { planSourceDays, planStats, readTablesOf, runStatsPlan } from '@analytics/event-store';
import { type StatsGroupBy, type StatsParams, queryParamsSchema, sourcesParamsSchema, statsParamsSchema } from '@analytics/schema';
import { type ExpectedStatsRow, expectedQuery, expectedSources, expectedStats } from './test-support/expected-answers';
import { D0, DAY_MS, HOUR_MS } from './test-support/seeded-dataset';
import { seededSuite } from './test-support/seeded-service';

// A seeded data set sent through the real ingest path, then every read endpoint compared with answers computed in
// plain TypeScript from the same events. `alpha` and `beta` stay within uniqCombined's exact range (4,096 distinct),
// so every figure must match exactly; `big` has ~12,000 visitors, where uniques are estimates.

const SEED = 20260302;
const PROJECTS = { alpha: { visitors: 250 }, beta: { visitors: 80 }, big: { visitors: 40, crowd: 12_000 } } as const;
type Name = keyof typeof PROJECTS;

const seeded = seededSuite(PROJECTS, SEED);

const get = async (path: string, name: Name, query: Record<string, string | number | undefined>) => {
  const res = await request(seeded.readApp).get(path).set('authorization', `Bearer ${seeded.rk[name]}`).query(Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)));
  expect(res.status).toBe(200);
  return res.body;
};
const iso = (ms: number) => new Date(ms).toISOString();

const RANGES: Array<[string, number, number]> = [
  ['the whole data set (whole days)', D0, D0 + 14 * DAY_MS],
  ['three whole days', D0 + 2 * DAY_MS, D0 + 5 * DAY_MS],
  ['a sub-day range', D0 + DAY_MS + 6 * HOUR_MS, D0 + 3 * DAY_MS + 18 * HOUR_MS + 1234],
  ['an hour across midnight', D0 + 4 * DAY_MS - 30 * 60_000, D0 + 4 * DAY_MS + 30 * 60_000],
  ['wider than the data (whole days)', D0 - DAY_MS, D0 + 20 * DAY_MS],
];
const GROUP_BYS = ['', 'source', 'source,medium', 'country', 'device_type', 'event_name, country', 'browser', 'os', 'path', 'channel', 'channel,device_type', 'medium,device_type,os', 'event_name,source,medium,country,device_type'];
const INTERVALS = [undefined, 'hour', 'day', 'week'] as const;

describe('the seeded data set', () => {
  it('covers what the read path must tell apart', () => {
    const alpha = seeded.rows.filter((r) => r.project_id === seeded.ids.alpha);
    const pairs = new Set(alpha.map((r) => `${r.source}/${r.medium}`));
    for (const p of ['facebook/paid', 'facebook/social', 'google/organic', 'google/paid', 'newsletter/email', 'direct/direct', 'internal/direct']) expect(pairs).toContain(p);
    expect(new Set(alpha.map((r) => r.country)).size).toBeGreaterThanOrEqual(6);
    expect(new Set(alpha.map((r) => r.device_type))).toEqual(new Set(['desktop', 'mobile', 'tablet', 'bot']));
    expect(alpha.some((r) => r.path === null) && alpha.some((r) => r.anonymous_id === '')).toBe(true);
    const days = new Map<string, Set<string>>();
    for (const r of alpha) days.set(r.session_id, (days.get(r.session_id) ?? new Set()).add(r.timestamp.slice(0, 10)));
    expect([...days.values()].filter((d) => d.size > 1).length).toBeGreaterThan(5); // sessions across midnight
    expect(new Set(seeded.rows.filter((r) => r.project_id === seeded.ids.big).map((r) => r.anonymous_id)).size).toBeGreaterThan(12_000);
  });
});

describe('GET /v1/query matches the events', () => {
  const FILTERS: Array<Record<string, string>> = [{}, { event: 'signup' }, { source: 'facebook' }, { medium: 'paid' }, { source: 'google', medium: 'organic' }];
  it.each(['alpha', 'beta'] as const)('for project %s over every range, filter and limit', async (name) => {
    const someUser = seeded.rows.find((r) => r.project_id === seeded.ids[name] && r.user_id)!.user_id!;
    for (const [, from, to] of RANGES) {
      for (const filter of [...FILTERS, { user_id: someUser }]) {
        for (const limit of [1000, 7]) {
          const q = { from: iso(from), to: iso(to), limit, ...filter };
          expect(await get('/v1/query', name, q)).toEqual({ rows: expectedQuery(seeded.rows, seeded.ids[name], queryParamsSchema.parse(q)) });
        }
      }
    }
  });
});

describe('GET /v1/stats matches the events', () => {
  // alpha: every combination; beta (a second tenant) every third, to keep the suite quick.
  it.each([['alpha', 1], ['beta', 3]] as const)('for project %s over ranges x group_by x interval, both metrics, exactly', async (name, every) => {
    let i = 0;
    for (const [, from, to] of RANGES) {
      for (const group_by of GROUP_BYS) {
        for (const interval of INTERVALS) {
          if (++i % every) continue;
          const q = { from: iso(from), to: iso(to), group_by, interval, metric: i % 2 ? 'count' : 'uniques', event: i % 3 ? undefined : '$pageview', limit: i % 5 ? 1000 : 5 };
          const params = statsParamsSchema.parse(q);
          const expected = expectedStats(seeded.rows, seeded.ids[name], params, group_by.split(',').map((s) => s.trim()).filter(Boolean) as StatsGroupBy[]);
          expect(await get('/v1/stats', name, q)).toEqual(expected);
        }
      }
    }
  });

  it('for the big project: counts exact, uniques within the sketch error (exact up to 4,096 distinct, else 2%)', async () => {
    for (const [, from, to] of RANGES) {
      for (const group_by of ['', 'source,medium', 'country', 'device_type', 'browser']) {
        for (const interval of [undefined, 'week'] as const) {
          for (const metric of ['count', 'uniques'] as const) {
            const q = { from: iso(from), to: iso(to), group_by, interval, metric, limit: 1000 };
            const expected = expectedStats(seeded.rows, seeded.ids.big, statsParamsSchema.parse(q), group_by.split(',').filter(Boolean) as StatsGroupBy[]);
            const actual = await get('/v1/stats', 'big', q);
            if (metric === 'count') expect(actual).toEqual(expected);
            else expectWithinSketchError(actual.rows, expected.rows);
          }
        }
      }
    }
  });
});

/** The sketch's stated error: exact up to 4,096 distinct ids, else within 2%. */
const sketchTolerance = (exact: number) => (exact <= 4096 ? 0 : Math.ceil(exact * 0.02));

/** Same groups, each value within the sketch error. */
function expectWithinSketchError(actual: ExpectedStatsRow[], expected: ExpectedStatsRow[]) {
  const keyOf = ({ value: _v, ...cells }: ExpectedStatsRow) => JSON.stringify(cells);
  const want = new Map(expected.map((r) => [keyOf(r), r.value as number]));
  expect(new Set(actual.map(keyOf))).toEqual(new Set(want.keys()));
  for (const r of actual) {
    const exact = want.get(keyOf(r))!;
    expect(Math.abs((r.value as number) - exact)).toBeLessThanOrEqual(sketchTolerance(exact));
  }
}

describe.each(['as the builder ticks', 'every day refreshed'] as const)('GET /v1/sources matches the sessions of the events (sources_daily %s)', (via) => {
  // First as the builder's 1 s ticks leave sources_daily (days it has not refreshed yet, up to 8 a tick, are read
  // from sessions), then with every day refreshed (whole days are read from it; a range off midnights reads its whole days
  // from it and the rest of a day at each end from sessions; a range within a day reads sessions alone).
  beforeAll(async () => {
    if (via === 'as the builder ticks') return;
    await seeded.stores.events.refreshSources(true);
    for (const name of Object.keys(PROJECTS) as Name[]) {
      const days = await planSourceDays(seeded.stores.events, readTablesOf(seeded.stores.events), seeded.ids[name], sourcesParamsSchema.parse({ from: iso(D0 - DAY_MS), to: iso(D0 + 20 * DAY_MS) }));
      expect(days.stale).toEqual([]);
      // The data set's two ISO weeks are read merged from sources_weekly, its other days from sources_daily.
      expect(days.weeks).toEqual(['2026-03-02', '2026-03-09']);
      expect(days.unmerged).toEqual([]);
      expect(days.fresh.length).toBeGreaterThanOrEqual(1);
    }
  });

  it.each(['alpha', 'beta'] as const)('for project %s over every range, both breakdowns and limits, exactly', async (name) => {
    // Plus whole days that hold one whole ISO week and the end of another (sources_weekly beside sources_daily).
    for (const [, from, to] of [...RANGES, ['a week and a half', D0 + 3 * DAY_MS, D0 + 14 * DAY_MS] as const]) {
      for (const breakdown of ['source_medium', 'source']) {
        for (const limit of [200, 3]) {
          const q = { from: iso(from), to: iso(to), breakdown, limit };
          expect(await get('/v1/sources', name, q)).toEqual(expectedSources(seeded.rows, seeded.ids[name], sourcesParamsSchema.parse(q)));
        }
      }
    }
  });

  it.each(['alpha', 'beta'] as const)('for project %s with include_bots=false (bots left out), over every range and both breakdowns, exactly', async (name) => {
    for (const [, from, to] of RANGES) {
      for (const breakdown of ['source_medium', 'source']) {
        const q = { from: iso(from), to: iso(to), breakdown, limit: 200, include_bots: 'false' };
        expect(await get('/v1/sources', name, q)).toEqual(expectedSources(seeded.rows, seeded.ids[name], sourcesParamsSchema.parse(q)));
      }
    }
  });

  it('include_bots=true is the default (every stored event, bots included) and differs where bots came in', async () => {
    const q = { from: iso(D0 - DAY_MS), to: iso(D0 + 20 * DAY_MS), breakdown: 'source', limit: 200 };
    const byDefault = await get('/v1/sources', 'alpha', q);
    expect(await get('/v1/sources', 'alpha', { ...q, include_bots: 'true' })).toEqual(byDefault);
    const withoutBots = await get('/v1/sources', 'alpha', { ...q, include_bots: 'false' });
    const events = (b: { rows: Array<{ events: number }> }) => b.rows.reduce((n, r) => n + r.events, 0);
    const bots = seeded.rows.filter((r) => r.project_id === seeded.ids.alpha && r.device_type === 'bot').length;
    expect(bots).toBeGreaterThan(0);
    expect(events(byDefault) - events(withoutBots)).toBe(bots);
  });

  it('include_bots=false answers what the dashboard shows: its Sources list (insights visitors by source) and events by source', async () => {
    // The dashboard's question (apps/dashboard/src/main.ts, LISTS: list-sources), over a range holding every session
    // whole (a session crossing `from` or `to` counts whole here, cut to the range in insights).
    const range = { from: iso(D0 - DAY_MS), to: iso(D0 + 20 * DAY_MS) };
    for (const name of ['alpha', 'beta'] as const) {
      const res = await request(seeded.readApp).post('/v1/insights').set('authorization', `Bearer ${seeded.rk[name]}`)
        .send({ ...range, metrics: ['visitors', 'events'], dimensions: ['source'], limit: 1000 });
      expect(res.status).toBe(200);
      const dashboard = new Map<string, { visitors: number; events: number }>(
        res.body.rows.map((r: { source: string; visitors: number; events: number }) => [r.source, { visitors: r.visitors, events: r.events }]),
      );
      const sources = await get('/v1/sources', name, { ...range, breakdown: 'source', limit: 200, include_bots: 'false' });
      expect(new Map(sources.rows.map((r: { source: string; uniques: number; events: number }) => [r.source, { visitors: r.uniques, events: r.events }]))).toEqual(dashboard);
      // With bots (the default) the counts are not the dashboard's: the seeded bots arrive from sources of their own.
      const withBots = await get('/v1/sources', name, { ...range, breakdown: 'source', limit: 200 });
      expect(new Map(withBots.rows.map((r: { source: string; uniques: number; events: number }) => [r.source, { visitors: r.uniques, events: r.events }]))).not.toEqual(dashboard);
    }
  });

  it('keeps a network paid and social traffic in separate rows (paid_share 1 and 0)', async () => {
    const body = await get('/v1/sources', 'alpha', { from: iso(D0), to: iso(D0 + 14 * DAY_MS) });
    expect(body.rows).toEqual(expect.arrayContaining([
      expect.objectContaining({ source: 'facebook', medium: 'paid', paid_share: 1 }),
      expect.objectContaining({ source: 'facebook', medium: 'social', paid_share: 0 }),
    ]));
    const bySource = await get('/v1/sources', 'alpha', { from: iso(D0), to: iso(D0 + 14 * DAY_MS), breakdown: 'source' });
    const fb = bySource.rows.find((r: { source: string }) => r.source === 'facebook');
    expect(fb.paid_share).toBeGreaterThan(0);
    expect(fb.paid_share).toBeLessThan(1);
    expect(fb).not.toHaveProperty('medium');
  });

  it('for the big project: events exact, uniques within the sketch error', async () => {
    for (const breakdown of ['source_medium', 'source'] as const) {
      const q = { from: iso(D0), to: iso(D0 + 14 * DAY_MS), breakdown, limit: 200 };
      const expected = expectedSources(seeded.rows, seeded.ids.big, sourcesParamsSchema.parse(q));
      const actual = await get('/v1/sources', 'big', q);
      expect(actual.rows.map(({ uniques: _u, ...r }: Record<string, unknown>) => r)).toEqual(expected.rows.map(({ uniques: _u, ...r }) => r));
      actual.rows.forEach((r: { uniques: number }, i: number) => {
        const exact = expected.rows[i]!.uniques;
        expect(Math.abs(r.uniques - exact)).toBeLessThanOrEqual(sketchTolerance(exact));
      });
    }
  });
});

describe('stats planner: daily_uniques_by, daily_uniques, daily_rollup and raw events agree', () => {
  const fitting: Array<Omit<Partial<StatsParams>, 'group_by'> & { group_by?: string }> = [];
  // the rollup-shaped ranges within the data (the wider one adds nothing here and costs time)
  for (const [, from, to] of RANGES.slice(0, 2)) {
    for (const group_by of ['', 'event_name', 'source', 'source,medium', 'medium', 'country', 'device_type', 'event_name,country', 'event_name,source,medium,country,device_type']) {
      for (const interval of [undefined, 'day', 'week'] as const) fitting.push({ from, to, group_by, interval });
    }
  }

  const checked = { uniques: 0, uniquesBy: 0 };
  it.each(['alpha', 'big'] as const)('gives identical answers on every path for every rollup-shaped request (%s)', async (name) => {
    const tables = readTablesOf(seeded.stores.events);
    for (const shape of fitting) {
      for (const metric of ['count', 'uniques'] as const) {
        for (const event of [undefined, 'signup']) {
          const params: StatsParams = { from: shape.from!, to: shape.to!, interval: shape.interval, metric, event, limit: 1000 };
          const groupBy = (shape.group_by ?? '').split(',').filter(Boolean) as StatsGroupBy[];
          const planned = planStats(tables, seeded.ids[name], params, groupBy);
          const events = await runStatsPlan(seeded.stores.events, planStats(tables, seeded.ids[name], params, groupBy, 'events'));
          const rollup = await runStatsPlan(seeded.stores.events, planStats(tables, seeded.ids[name], params, groupBy, 'rollup'));
          // daily_uniques_by answers uniques for all events without grouping, or by one of its columns; daily_uniques
          // without grouping (event filter) or by event_name only; daily_rollup the rest
          const viaUniquesBy = metric === 'uniques' && (groupBy.length === 0 ? event === undefined : groupBy.length === 1 && ['source', 'medium', 'country', 'device_type'].includes(groupBy[0]!));
          const viaUniques = !viaUniquesBy && metric === 'uniques' && groupBy.every((g) => g === 'event_name');
          expect(planned.source).toBe(viaUniquesBy ? 'uniques_by' : viaUniques ? 'uniques' : 'rollup');
          expect(rollup).toEqual(events);
          if (viaUniquesBy) {
            checked.uniquesBy++;
            expect(await runStatsPlan(seeded.stores.events, planned)).toEqual(events);
          } else {
            expect(() => planStats(tables, seeded.ids[name], params, groupBy, 'uniques_by')).toThrow(/does not fit daily_uniques_by/);
          }
          // daily_uniques, planned or forced, wherever it fits (also where daily_uniques_by is preferred)
          if (metric === 'uniques' && groupBy.every((g) => g === 'event_name')) {
            checked.uniques++;
            expect(await runStatsPlan(seeded.stores.events, planStats(tables, seeded.ids[name], params, groupBy, 'uniques'))).toEqual(events);
          } else {
            expect(() => planStats(tables, seeded.ids[name], params, groupBy, 'uniques')).toThrow(/does not fit daily_uniques/);
          }
        }
      }
    }
  });

  it('compared daily_uniques and daily_uniques_by with raw events on every uniques request they answer', () => {
    // daily_uniques: group_by '' and event_name, with and without the event filter (2 ranges x 3 intervals x 2 projects)
    expect(checked.uniques).toBe(48);
    // daily_uniques_by: '' without the filter, and source, medium, country, device_type with both
    expect(checked.uniquesBy).toBe(2 * 3 * 2 * (1 + 4 * 2));
  });

  it('answers uniques with a finer grouping from daily_rollup, and from raw events for hour buckets or sub-day ranges', () => {
    const tables = readTablesOf(seeded.stores.events);
    const base: StatsParams = { from: D0, to: D0 + 7 * DAY_MS, metric: 'uniques', limit: 100 };
    expect(planStats(tables, seeded.ids.alpha, base, []).source).toBe('uniques_by');
    expect(planStats(tables, seeded.ids.alpha, { ...base, event: 'signup' }, []).source).toBe('uniques');
    expect(planStats(tables, seeded.ids.alpha, base, ['country']).source).toBe('uniques_by');
    expect(planStats(tables, seeded.ids.alpha, base, ['source', 'medium']).source).toBe('rollup');
    expect(planStats(tables, seeded.ids.alpha, base, ['event_name', 'country']).source).toBe('rollup');
    expect(planStats(tables, seeded.ids.alpha, { ...base, interval: 'hour' }, ['event_name']).source).toBe('events');
    expect(planStats(tables, seeded.ids.alpha, { ...base, to: D0 + 7 * DAY_MS - 1 }, []).source).toBe('events');
  });

  it('answers from raw events for browser, os, path, hour buckets and sub-day ranges', () => {
    const tables = readTablesOf(seeded.stores.events);
    const base: StatsParams = { from: D0, to: D0 + 7 * DAY_MS, metric: 'count', limit: 100 };
    expect(planStats(tables, seeded.ids.alpha, base, ['browser']).source).toBe('events');
    expect(planStats(tables, seeded.ids.alpha, base, ['os']).source).toBe('events');
    expect(planStats(tables, seeded.ids.alpha, base, ['path']).source).toBe('events');
    expect(planStats(tables, seeded.ids.alpha, { ...base, from: D0 + HOUR_MS }, []).source).toBe('events');
    // ... but buckets without group_by in quarter_hours' shape: an hour, a zone off UTC, a range on quarter hours
    expect(planStats(tables, seeded.ids.alpha, { ...base, interval: 'hour' }, []).source).toBe('quarters');
    expect(planStats(tables, seeded.ids.alpha, { ...base, interval: 'day', tz: 'Europe/Berlin' }, []).source).toBe('quarters');
    expect(planStats(tables, seeded.ids.alpha, { ...base, interval: 'day', from: D0 + 15 * 60_000, event: '$pageview' }, []).source).toBe('quarters');
    expect(planStats(tables, seeded.ids.alpha, { ...base, interval: 'day', from: D0 + 1 }, []).source).toBe('events');
    expect(planStats(tables, seeded.ids.alpha, { ...base, interval: 'hour', event: 'signup' }, []).source).toBe('events');
    expect(planStats(tables, seeded.ids.alpha, { ...base, interval: 'hour' }, ['source']).source).toBe('events');
  });

  it('answers buckets from quarter_hours as from raw events, in UTC and in zones off it, with and without $pageview', async () => {
    const tables = readTablesOf(seeded.stores.events);
    for (const name of ['alpha', 'big'] as const) {
      for (const [, from, to] of RANGES.slice(0, 2)) {
        for (const tz of [undefined, 'Europe/Berlin', 'Asia/Kolkata', 'America/Los_Angeles']) {
          for (const interval of ['hour', 'day', 'week'] as const) {
            for (const [metric, event] of [['count', undefined], ['uniques', undefined], ['count', '$pageview']] as const) {
              const params: StatsParams = { from: from! + 45 * 60_000, to: to!, interval, metric, event, tz, limit: 10_000 };
              const events = await runStatsPlan(seeded.stores.events, planStats(tables, seeded.ids[name], params, [], 'events'));
              const plan = planStats(tables, seeded.ids[name], params, []);
              expect(plan.source).toBe('quarters');
              expect({ params, rows: await runStatsPlan(seeded.stores.events, plan) }).toEqual({ params, rows: events });
            }
          }
        }
      }
    }
  });
});
