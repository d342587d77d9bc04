import request from 'supertest';
import { buildInsights, freshVisitDays, queryInsights, readTablesOf } from '@analytics/event-store';
import { INSIGHT_METRICS, type InsightDimension, dimensionKind, insightsBodySchema } from '@analytics/schema';
import { expectedInsights, expectedProperties } from './test-support/expected-insights';
import { D0, DAY_MS, HOUR_MS } from './test-support/seeded-dataset';
import { seededSuite } from './test-support/seeded-service';

// The seeded data set of read-correctness.spec.ts sent through the real ingest path, then POST /v1/insights compared
// with answers computed in plain TypeScript (test-support/expected-insights.ts) for every metric x a dimension of
// each kind (event, visit, prop, time) and pairs x filters (each op, or, negation, event and visit dimensions) x
// compare, over several ranges. alpha and beta stay far below 4,096 visitors, where uniqCombined is exact: every
// figure must match exactly (visitors included); `big` has ~8,000 visitors, where visitors is the sketch's estimate
// (within 2%, as /v1/stats) and every other figure stays exact.

const SEED = 20261124;
const PROJECTS = { alpha: { visitors: 300 }, beta: { visitors: 60 }, big: { visitors: 30, crowd: 8_000 } } as const;
type Name = keyof typeof PROJECTS;

const seeded = seededSuite(PROJECTS, SEED);

const iso = (ms: number) => new Date(ms).toISOString();
const post = async (name: Name, body: Record<string, unknown>) => {
  const res = await request(seeded.readApp).post('/v1/insights').set('authorization', `Bearer ${seeded.rk[name]}`).send(body);
  expect({ status: res.status, body, error: res.body.error }).toMatchObject({ status: 200 });
  return res.body;
};

const RANGES: Array<[number, number]> = [
  [D0, D0 + 14 * DAY_MS], // the whole data set
  [D0 + 5 * DAY_MS, D0 + 8 * DAY_MS], // three days; its previous period is three days of data too
  [D0 + DAY_MS + 6 * HOUR_MS, D0 + 3 * DAY_MS + 18 * HOUR_MS + 1234], // not on hours
];
const DIMENSIONS: string[][] = [
  [],
  ['country'],
  ['path'],
  ['event_name', 'device_type'],
  ['source'],
  ['channel'],
  ['medium', 'campaign'],
  ['entry_path'],
  ['exit_path', 'browser'],
  ['prop:step'],
  ['prop:amount', 'os'],
  ['time:hour'],
  ['time:day', 'source'],
  ['time:week'],
  ['time:month', 'prop:step', 'medium'],
];
const FILTERS: unknown[][] = [
  [],
  [['is', 'event_name', ['$pageview']]],
  [['is_not', 'country', ['GB', 'US']]],
  [['contains', 'path', ['pric', 'doc']]],
  [['not_contains', 'prop:step', ['1']]],
  [['is', 'source', ['google', 'facebook']]],
  [['is', 'channel', ['ai_assistant', 'organic_social']]],
  [['is_not', 'channel', ['direct']], ['is', 'event_name', ['$pageview']]],
  [['is_not', 'medium', ['direct']], ['is', 'device_type', ['mobile', 'desktop']]],
  [['contains', 'entry_path', ['/']], ['not_contains', 'exit_path', ['sign']]],
  [['or', [['is', 'event_name', ['signup', 'purchase']], ['is', 'campaign', ['spring']]]]],
  [['or', [['is', 'prop:step', ['0']], ['or', [['contains', 'browser', ['Fire']], ['is_not', 'os', ['iOS']]]]]]],
];

// Goals (issue 31) for the conversions metrics: by event, by path (exact, prefix), with filters on event and visit dimensions.
const GOALS: unknown[] = [
  { event: 'signup' },
  { path: '/pricing' },
  { event: '$pageview', path: '/blog/*' },
  { event: 'purchase', filters: [['is', 'channel', ['direct', 'organic_search', 'paid_search']]] },
  { path: '/*', filters: [['not_contains', 'prop:step', ['0']], ['is', 'device_type', ['desktop', 'mobile']]] },
];

describe('the seeded data set', () => {
  it('covers what insights must tell apart', () => {
    const alpha = seeded.rows.filter((r) => r.project_id === seeded.ids.alpha);
    expect(alpha.some((r) => r.device_type === 'bot') && alpha.some((r) => r.campaign === null) && alpha.some((r) => r.campaign !== null)).toBe(true);
    expect(alpha.some((r) => r.path === null) && alpha.some((r) => r.properties.includes('amount'))).toBe(true);
    expect(new Set(alpha.map((r) => r.channel))).toEqual(new Set(['direct', 'internal', 'organic_search', 'paid_search', 'organic_social', 'paid_social', 'email', 'ai_assistant', 'referral']));
    const sizes = new Map<string, number>();
    for (const r of alpha) sizes.set(`${r.session_id}/${r.anonymous_id}`, (sizes.get(`${r.session_id}/${r.anonymous_id}`) ?? 0) + 1);
    expect([...sizes.values()].filter((n) => n === 1).length).toBeGreaterThan(10); // bounces, if pageviews
    expect([...sizes.values()].filter((n) => n > 3).length).toBeGreaterThan(10);
    // sessions crossing midnight: a visit of a whole-days range is its rows of several days of the visits aggregate
    const days = new Map<string, Set<number>>();
    for (const r of alpha) days.set(`${r.session_id}/${r.anonymous_id}`, (days.get(`${r.session_id}/${r.anonymous_id}`) ?? new Set()).add(Math.floor(Date.parse(`${r.timestamp.replace(" ", "T")}Z`) / DAY_MS)));
    expect([...days.values()].filter((d) => d.size > 1).length).toBeGreaterThan(0);
    // ... among them visits on an id of the server's form (`<id>-<bucket>`, a visit by inactivity past midnight): the
    // visit_spans aggregate (migration 014) lists them by their rows off their home day, so the days' other visits
    // are read whole and these grouped
    expect([...days].filter(([key, d]) => d.size > 1 && /-\d+\//.test(key)).length).toBeGreaterThan(0);
  });
});

describe('POST /v1/insights matches the events', () => {
  // alpha: every dimension x filter, ranges and compare in turn; beta (a second tenant) every third.
  it.each([['alpha', 1], ['beta', 3]] as const)('for project %s: every metric x dimensions x filters x compare, exactly', async (name, every) => {
    let i = 0;
    for (const dimensions of DIMENSIONS) {
      for (const filters of FILTERS) {
        if (++i % every) continue;
        const [from, to] = RANGES[i % RANGES.length]!;
        const body = {
          from: iso(from),
          to: iso(to),
          metrics: [...INSIGHT_METRICS],
          goal: GOALS[i % GOALS.length],
          dimensions,
          filters,
          ...(i % 2 ? { compare: 'previous_period' } : {}),
          ...(i % 4 === 1 ? { include_bots: true } : {}),
          limit: 10_000,
        };
        expect(await post(name, body)).toEqual(expectedInsights(seeded.rows, seeded.ids[name], insightsBodySchema.parse(body)));
      }
    }
  });

  it('orders by any metric or dimension, either way, and cuts at the limit', async () => {
    const cases: Array<Record<string, unknown>> = [
      { metrics: ['visits', 'bounce_rate'], dimensions: ['source', 'medium'], order_by: [['bounce_rate', 'asc'], ['visits', 'desc']], limit: 5 },
      { metrics: ['events', 'visit_duration'], dimensions: ['path'], order_by: [['path', 'desc']], limit: 3 },
      { metrics: ['views_per_visit'], dimensions: ['prop:step'], order_by: [['prop:step', 'asc']], limit: 4 },
      { metrics: ['pageviews', 'visitors'], dimensions: ['time:day'], order_by: [['time:day', 'asc']], limit: 7, compare: 'previous_period' },
      { metrics: ['visitors'], dimensions: ['country', 'device_type'], limit: 1 },
    ];
    for (const c of cases) {
      const body = { from: iso(D0 + 3 * DAY_MS), to: iso(D0 + 10 * DAY_MS), ...c };
      expect(await post('alpha', body)).toEqual(expectedInsights(seeded.rows, seeded.ids.alpha, insightsBodySchema.parse(body)));
    }
  });

  // Whole UTC days with visit dimensions only (grouped and filtered) and no goal are answered from the visits
  // aggregate (migration 010), not the events: the same answers, sessions crossing midnight and the range's edges
  // included.
  it.each([['alpha', 1], ['beta', 2]] as const)('for project %s from the visits aggregate: whole days, visit dimensions and filters, exactly', async (name, every) => {
    const visitOnly = (dims: unknown[]) => dims.every((d) => dimensionKind(d as InsightDimension) === 'visit');
    const dimensionsOf = (c: unknown): unknown[] => ((c as unknown[])[0] === 'or' ? ((c as unknown[])[1] as unknown[]).flatMap(dimensionsOf) : [(c as unknown[])[1]]);
    const dimensionSets = [...DIMENSIONS.filter(visitOnly), ['source', 'entry_path', 'exit_path'], ['campaign', 'channel']];
    const filterSets = FILTERS.filter((f) => visitOnly(f.flatMap(dimensionsOf)));
    const metricSets = [['visitors', 'visits', 'pageviews', 'events', 'bounce_rate', 'visit_duration', 'views_per_visit'], ['visitors'], ['events', 'pageviews']];
    const ranges: Array<[number, number]> = [[D0, D0 + 14 * DAY_MS], [D0 + 5 * DAY_MS, D0 + 8 * DAY_MS], [D0 + 2 * DAY_MS, D0 + 3 * DAY_MS]];
    let i = 0;
    for (const dimensions of dimensionSets) {
      for (const filters of filterSets) {
        if (++i % every) continue;
        const [from, to] = ranges[i % ranges.length]!;
        const body = {
          from: iso(from),
          to: iso(to),
          metrics: metricSets[i % metricSets.length],
          dimensions,
          filters,
          ...(i % 2 ? { compare: 'previous_period' } : {}),
          ...(i % 3 === 1 ? { include_bots: true } : {}),
          limit: 10_000,
        };
        const parsed = insightsBodySchema.parse(body);
        // (event metrics alone with neither dimension nor filter are daily_dims')
        expect(buildInsights(readTablesOf(seeded.stores.events), seeded.ids[name], parsed).sql).toMatch(/FROM \w+\.(visits|daily_dims)\n/);
        expect(await post(name, body)).toEqual(expectedInsights(seeded.rows, seeded.ids[name], parsed));
      }
    }
    expect(i).toBeGreaterThan(20);
  });

  // visit_dims (migration 018): the fresh whole days' visits summed per value, beside the per-visit rows of the other
  // days and the edges. Every day refreshed first, so each read below takes its whole days from there.
  it.each([['alpha', 1], ['beta', 2]] as const)('for project %s from visit_dims on its fresh days: visit metrics by one visit dimension or none, filtered on it, and beside channel, exactly', async (name, every) => {
    await seeded.stores.events.refreshSources(true);
    const dims = ['source', 'medium', 'campaign', 'channel', 'entry_path', 'exit_path'];
    const filtersOn = (d: string): unknown[][] =>
      d === 'channel'
        ? [[], [['is', d, ['direct', 'organic_search']]], [['is_not', d, ['direct', 'referral']]]]
        : [[], [['is', d, ['google', '/', '/pricing', 'cpc', 'spring']]], [['is_not', d, ['direct', '/docs']]], [['contains', d, ['o']], ['not_contains', d, ['x']]]];
    const metricSets = [['visitors', 'visits', 'pageviews', 'events', 'bounce_rate', 'visit_duration', 'views_per_visit'], ['visits', 'bounce_rate'], ['visitors', 'visit_duration']];
    const ranges: Array<[number, number]> = [[D0, D0 + 14 * DAY_MS], [D0 + 5 * DAY_MS, D0 + 8 * DAY_MS], [D0 + DAY_MS + 6 * HOUR_MS, D0 + 3 * DAY_MS + 18 * HOUR_MS + 1234]];
    const cases: Array<Record<string, unknown>> = [];
    for (const d of [undefined, ...dims]) for (const filters of d ? filtersOn(d) : [[], ...filtersOn('channel')]) cases.push({ dimensions: d ? [d] : [], filters });
    // A dimension's rows split by channel: filtered on channel (the dashboard's AI assistants), on both, grouped by both.
    for (const d of dims.filter((x) => x !== 'channel')) {
      cases.push({ dimensions: [d], filters: filtersOn('channel')[1] }, { dimensions: ['channel'], filters: filtersOn(d)[2] }, { dimensions: [d, 'channel'], filters: [...filtersOn(d)[1]!, ...filtersOn('channel')[2]!] });
    }
    let i = 0;
    for (const c of cases) {
      for (const [from, to] of ranges) {
        if (++i % every) continue;
        const body = { from: iso(from), to: iso(to), metrics: metricSets[i % metricSets.length], ...c, ...(i % 2 ? { compare: 'previous_period' } : {}), limit: 10_000 };
        const parsed = insightsBodySchema.parse(body);
        const visitDays = await freshVisitDays(seeded.stores.events, seeded.ids[name], parsed);
        expect(visitDays!.length).toBeGreaterThan(0);
        expect(buildInsights(readTablesOf(seeded.stores.events), seeded.ids[name], parsed, { visitDays }).sql).toMatch(/FROM \w+\.visit_dims FINAL/);
        expect({ body, answer: await post(name, body) }).toEqual({ body, answer: expectedInsights(seeded.rows, seeded.ids[name], parsed) });
      }
    }
    expect(i).toBeGreaterThan(120);
    // Any subset of the fresh days read from visit_dims gives the statement's answer without it, row for row.
    const q = insightsBodySchema.parse({ from: iso(D0), to: iso(D0 + 14 * DAY_MS), metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration', 'views_per_visit', 'events'], dimensions: ['source'], compare: 'previous_period', limit: 10_000 });
    const all = (await freshVisitDays(seeded.stores.events, seeded.ids[name], q))!;
    const read = (visitDays?: string[]) => {
      const { sql, params } = buildInsights(readTablesOf(seeded.stores.events), seeded.ids[name], q, { visitDays });
      return seeded.stores.events.select<Record<string, unknown>>(sql, params);
    };
    const without = await read();
    for (const subset of [all, all.filter((_, k) => k % 2 === 0), all.slice(3, 5)]) expect(await read(subset)).toEqual(without);
  });

  // A goal over visit dimensions on whole days: the visit rows of the aggregate, each flagged when one of its events of
  // the period completes the goal.
  it.each([['alpha', 1], ['beta', 2]] as const)('for project %s from the visits aggregate: goals by visit dimensions, exactly', async (name, every) => {
    const goals = [GOALS[0], GOALS[1], GOALS[2], { path: '/*', filters: [['not_contains', 'prop:step', ['0']], ['is', 'device_type', ['desktop', 'mobile']]] }];
    const cases: Array<[unknown[], unknown[]]> = [[['source'], []], [['channel', 'entry_path'], [['is_not', 'channel', ['direct']]]], [[], [['is', 'source', ['google', 'facebook']]]], [['campaign'], []], [['exit_path', 'medium'], []]];
    const ranges: Array<[number, number]> = [[D0, D0 + 14 * DAY_MS], [D0 + 5 * DAY_MS, D0 + 8 * DAY_MS], [D0 + 2 * DAY_MS, D0 + 3 * DAY_MS]];
    let i = 0;
    for (const [dimensions, filters] of cases) {
      for (const goal of goals) {
        if (++i % every) continue;
        const [from, to] = ranges[i % ranges.length]!;
        const metrics = i % 2 ? ['visitors', 'visits', 'conversions', 'conversion_rate', 'bounce_rate'] : ['conversions', 'conversion_rate', 'visit_duration'];
        const body = { from: iso(from), to: iso(to), metrics, goal, dimensions, filters, ...(i % 3 ? { compare: 'previous_period' } : {}), ...(i % 4 === 1 ? { include_bots: true } : {}), limit: 10_000 };
        const parsed = insightsBodySchema.parse(body);
        const { sql } = buildInsights(readTablesOf(seeded.stores.events), seeded.ids[name], parsed);
        expect(sql).toMatch(/FROM \w+\.visits\n/);
        expect(sql).not.toMatch(/\.events\n/);
        expect(await post(name, body)).toEqual(expectedInsights(seeded.rows, seeded.ids[name], parsed));
      }
    }
    expect(i).toBe(20);
  });

  // Event metrics over whole days by at most one of daily_dims' dimensions and a UTC day, week or month bucket
  // (migration 016): its rows of those days alone, the counts summed and the sketches merged; with no such dimension,
  // device_type's rows (each event once). The seeded data has events without a path: NULL is a value there too.
  it.each([['alpha', 1], ['beta', 2]] as const)('for project %s from daily_dims: event metrics by path, browser, os, country, device type or none, and by day, week or month, bots alone or left out, exactly', async (name, every) => {
    const cases: Array<[string[], unknown[], true?]> = [
      [['path'], []],
      [['path'], [['contains', 'path', ['pric', 'doc']]]],
      [['browser'], []],
      [['browser'], [['is_not', 'browser', ['Chrome']]]],
      [['os'], []],
      [['country'], [['is', 'country', ['GB', 'DE']]]],
      [['time:day', 'country'], []],
      [['device_type'], []],
      [['device_type'], [['is', 'device_type', ['bot', 'mobile']]]],
      [[], []],
      [['time:day'], []],
      [['time:week'], [['is_not', 'device_type', ['tablet']]]],
      [['path', 'time:month'], []],
      // A filter the bot flag decides, beside another dimension (the dashboard's AI crawlers), bots included.
      [['browser'], [['is', 'device_type', ['bot']]], true],
      [['path'], [['is_not', 'device_type', ['bot']], ['contains', 'path', ['pric', 'doc']]], true],
      [['time:day', 'os'], [['is', 'device_type', ['bot']]], true],
    ];
    const metricSets = [['visitors'], ['events', 'pageviews'], ['pageviews', 'visitors', 'events']];
    const ranges: Array<[number, number]> = [[D0, D0 + 14 * DAY_MS], [D0 + 5 * DAY_MS, D0 + 8 * DAY_MS], [D0 + 2 * DAY_MS, D0 + 3 * DAY_MS]];
    let i = 0;
    for (const [dimensions, filters, bots] of cases) {
      for (const metrics of metricSets) {
        if (++i % every) continue;
        const [from, to] = ranges[i % ranges.length]!;
        const body = { from: iso(from), to: iso(to), metrics, dimensions, filters, ...(i % 2 ? { compare: 'previous_period' } : {}), ...(bots || i % 3 === 1 ? { include_bots: true } : {}), limit: 10_000 };
        const parsed = insightsBodySchema.parse(body);
        const { sql } = buildInsights(readTablesOf(seeded.stores.events), seeded.ids[name], parsed);
        expect(sql).toMatch(/FROM \w+\.daily_dims\n/);
        expect(sql).not.toMatch(/\.events\n/);
        expect(await post(name, body)).toEqual(expectedInsights(seeded.rows, seeded.ids[name], parsed));
      }
    }
    expect(i).toBe(48);
  });

  // Event metrics by one time bucket not answered by daily_dims (time:hour; any bucket in a zone off UTC:
  // time-zones.spec.ts): quarter_hours' rows (migration 017) of the whole days and the edges' events folded, ranges off
  // quarter hours included (an edge cuts a quarter hour: its events still fall in that quarter's bucket).
  it.each([['alpha', 1], ['beta', 2]] as const)('for project %s from quarter_hours: event metrics by hour, exactly', async (name, every) => {
    const ranges: Array<[number, number]> = [
      [D0 + 5 * DAY_MS, D0 + 8 * DAY_MS],
      [D0 + DAY_MS + 6 * HOUR_MS + 7 * 60_000, D0 + 3 * DAY_MS + 18 * HOUR_MS + 1234],
      [D0 + 9 * DAY_MS + 30 * 60_000, D0 + 9 * DAY_MS + 20 * HOUR_MS + 45 * 60_000],
    ];
    const metricSets = [['visitors'], ['events', 'pageviews'], ['pageviews', 'visitors', 'events']];
    let i = 0;
    for (const [from, to] of ranges) {
      for (const metrics of metricSets) {
        for (const extra of [{}, { compare: 'previous_period' }, { include_bots: true, compare: 'previous_period' }]) {
          if (++i % every) continue;
          const body = { from: iso(from), to: iso(to), metrics, dimensions: ['time:hour'], limit: 10_000, ...extra };
          const parsed = insightsBodySchema.parse(body);
          const { sql } = buildInsights(readTablesOf(seeded.stores.events), seeded.ids[name], parsed);
          // the span of the second range is no number of quarter hours: its compare reads the events
          const quarters = !('compare' in extra) || (to - from) % (15 * 60_000) === 0;
          expect({ body, quarters: /FROM \w+\.quarter_hours\n/.test(sql) }).toEqual({ body, quarters });
          expect(await post(name, body)).toEqual(expectedInsights(seeded.rows, seeded.ids[name], parsed));
        }
      }
    }
    expect(i).toBe(27);
  });

  // A range that ends later today, within its UTC day (a zone east of UTC: Berlin's today ends at 23:00 UTC): that
  // day's aggregate rows are read when it has no event from `to` on (checked by the read), its events up to `to`
  // folded otherwise. A day's last event stands for now: no event after it that day, then events after `to` on it.
  it.each(['alpha', 'beta'] as const)('for project %s with a range ending after now within its last UTC day: that day from the aggregates when nothing follows `to` on it, exactly', async (name) => {
    // the last event of the data's second-to-last day (its later days are after `to`, outside the range)
    const day = D0 + 12 * DAY_MS;
    const last = Math.max(...seeded.rows.filter((r) => r.project_id === seeded.ids[name]).map((r) => Date.parse(`${r.timestamp.replace(' ', 'T')}Z`)).filter((t) => t >= day && t < day + DAY_MS));
    expect(last % DAY_MS).toBeGreaterThan(4 * HOUR_MS);
    const calls: Array<Record<string, unknown>> = [
      { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'], compare: 'previous_period' },
      { metrics: ['visitors', 'visits'], dimensions: ['source'] },
      { metrics: ['visits', 'bounce_rate'], dimensions: ['entry_path'], include_bots: true },
      { metrics: ['visitors', 'pageviews'], dimensions: ['path'], compare: 'previous_period' },
      { metrics: ['events', 'visitors'], dimensions: ['time:hour'] },
      { metrics: ['visits', 'conversions'], goal: { event: 'signup' }, dimensions: ['channel'] },
    ];
    // [to, now]: nothing follows `to` on its day (the aggregate's rows of that day), then events do (their fold)
    for (const [to, now] of [[last + 1, last], [last - 3 * HOUR_MS, last - 4 * HOUR_MS]] as const) {
      for (const call of calls) {
        const q = insightsBodySchema.parse({ from: iso(to - 5 * DAY_MS - 90 * 60_000), to: iso(to), limit: 10_000, ...call });
        const { sql, params } = buildInsights(readTablesOf(seeded.stores.events), seeded.ids[name], q, { now });
        expect({ call, tail: params.tail_day, reads: /FROM \w+\.(visits|daily_dims|quarter_hours)\b/.test(sql) }).toEqual({ call, tail: new Date(to - (to % DAY_MS)).toISOString().slice(0, 10), reads: true });
        const answer = await queryInsights(seeded.stores.events, seeded.ids[name], q, { now });
        expect({ call, to, rows: answer.rows }).toEqual({ call, to, rows: expectedInsights(seeded.rows, seeded.ids[name], q, now).rows });
      }
    }
  });

  // Issue 47 and 49: a project's local days are not UTC days. The aggregates answer them: each period's whole UTC days
  // from their rows, its other events (the edges) folded at read time (insights.query.ts, splitDays). The dashboard's
  // calls over local weeks and a local day of Berlin (+01:00), Los Angeles (-08:00, then -07:00 after 2026-03-08) and
  // Kolkata (+05:30), with compare: read from the aggregates and exact.
  it.each([['alpha', 1], ['beta', 3]] as const)('for project %s over local days of Berlin, Los Angeles and Kolkata: the dashboard\'s calls from the aggregates and their edges, exactly', async (name, every) => {
    const ranges: Array<[string, number, number]> = [
      ['Berlin, a week', D0 + 3 * DAY_MS - HOUR_MS, D0 + 10 * DAY_MS - HOUR_MS],
      ['Los Angeles, a week across the DST change', D0 + 3 * DAY_MS + 8 * HOUR_MS, D0 + 10 * DAY_MS + 7 * HOUR_MS],
      ['Kolkata, a week', D0 + 6 * DAY_MS - 5.5 * HOUR_MS, D0 + 13 * DAY_MS - 5.5 * HOUR_MS],
      ['Kolkata, one day (no whole UTC day)', D0 + 9 * DAY_MS - 5.5 * HOUR_MS, D0 + 10 * DAY_MS - 5.5 * HOUR_MS],
    ];
    const list = (dimension: string, metric: string) => ({ metrics: [metric], dimensions: [dimension] });
    const calls: Array<Record<string, unknown>> = [
      { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration', 'events'], compare: 'previous_period' },
      { metrics: ['visitors', 'pageviews'], dimensions: ['time:day'] },
      list('source', 'visitors'),
      list('channel', 'visitors'),
      list('path', 'visitors'),
      list('entry_path', 'visits'),
      { metrics: ['visits', 'bounce_rate', 'views_per_visit'], dimensions: ['exit_path'], compare: 'previous_period' },
      list('country', 'visitors'),
      { ...list('device_type', 'visitors'), include_bots: true },
      { ...list('browser', 'events'), filters: [['is_not', 'browser', ['Chrome']]], compare: 'previous_period' },
      list('os', 'pageviews'),
      { metrics: ['visits'], dimensions: ['source'], filters: [['is', 'channel', ['ai_assistant', 'organic_search']]] },
      { metrics: ['visits', 'conversions', 'conversion_rate'], goal: { event: 'signup' }, dimensions: ['channel'], compare: 'previous_period' },
      // the event names (daily_rollup's), and two of its columns with a filter
      { metrics: ['visitors', 'events'], dimensions: ['event_name'], compare: 'previous_period' },
      { metrics: ['events'], dimensions: ['country', 'device_type'], filters: [['is_not', 'event_name', ['$pageview']]], include_bots: true },
    ];
    let i = 0;
    for (const [label, from, to] of ranges) {
      for (const call of calls) {
        if (++i % every) continue;
        const body = { from: iso(from), to: iso(to), limit: 10_000, ...call };
        const parsed = insightsBodySchema.parse(body);
        const { sql } = buildInsights(readTablesOf(seeded.stores.events), seeded.ids[name], parsed);
        expect({ label, call, aggregate: /FROM \w+\.(visits|daily_dims|daily_rollup)\b/.test(sql), events: /\.events\n/.test(sql) }).toEqual({ label, call, aggregate: true, events: false });
        expect({ label, call, rows: (await post(name, body)).rows }).toEqual({ label, call, rows: expectedInsights(seeded.rows, seeded.ids[name], parsed).rows });
      }
    }
    expect(i).toBe(60);
  });

  it('reads the visits aggregate alone, joined to the events, daily_rollup, daily_dims, or the events alone, by the range and what is asked', () => {
    const plan = (body: Record<string, unknown>) => {
      const { sql } = buildInsights(readTablesOf(seeded.stores.events), seeded.ids.alpha, insightsBodySchema.parse({ from: iso(D0), to: iso(D0 + DAY_MS), metrics: ['visits'], ...body }));
      return { visits: /\.visits\b/.test(sql), events: /\.events\n/.test(sql), ...(/\.daily_rollup\n/.test(sql) ? { rollup: true } : {}), ...(/\.daily_dims\n/.test(sql) ? { dims: true } : {}), ...(/\.quarter_hours\n/.test(sql) ? { quarters: true } : {}) };
    };
    const alone = { visits: true, events: false };
    const joined = { visits: true, events: true };
    const events = { visits: false, events: true };
    const rollup = { visits: false, events: false, rollup: true };
    const dims = { visits: false, events: false, dims: true };
    const quarters = { visits: false, events: false, quarters: true };
    // event metrics by event_name, country, device_type and UTC day buckets over whole days: daily_rollup's rows
    expect(plan({ metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], filters: [['is', 'event_name', ['$pageview']]] })).toEqual(rollup);
    expect(plan({ metrics: ['events'], dimensions: ['event_name'], filters: [['is_not', 'device_type', ['mobile']]] })).toEqual(rollup);
    // one time bucket daily_dims cannot answer (time:hour; a zone's days): quarter_hours' rows
    expect(plan({ metrics: ['visitors'], dimensions: ['time:hour'] })).toEqual(quarters);
    expect(plan({ metrics: ['visitors'], dimensions: ['time:hour'], filters: [['is', 'path', ['/']]] })).toEqual(events);
    // event metrics by at most one of path, browser, os, country, device_type and a UTC day bucket, filtered on that
    // dimension or not: daily_dims' rows (the dashboard's chart and headline counts: device_type's)
    expect(plan({ metrics: ['visitors', 'pageviews'], dimensions: ['time:day'], compare: 'previous_period' })).toEqual(dims);
    expect(plan({ metrics: ['visitors', 'pageviews', 'events'] })).toEqual(dims);
    expect(plan({ metrics: ['visitors'], dimensions: ['path'] })).toEqual(dims);
    expect(plan({ metrics: ['visitors', 'events'], dimensions: ['browser'], filters: [['is_not', 'browser', ['Chrome']]], compare: 'previous_period' })).toEqual(dims);
    expect(plan({ metrics: ['visitors'], dimensions: ['path'], filters: [['is', 'country', ['GB']]] })).toEqual(events);
    expect(plan({ metrics: ['visitors'], dimensions: ['path', 'os'] })).toEqual(events);
    // beside a filter the bot flag decides (device_type is or is not exactly bot: the dashboard's AI crawlers), not another
    expect(plan({ metrics: ['events'], dimensions: ['browser'], filters: [['is', 'device_type', ['bot']]], include_bots: true })).toEqual(dims);
    expect(plan({ metrics: ['events'], dimensions: ['browser'], filters: [['is', 'device_type', ['bot', 'mobile']]], include_bots: true })).toEqual(events);
    expect(plan({ metrics: ['visitors'], dimensions: ['country', 'device_type'] })).toEqual(rollup);
    // a range off UTC midnights: the whole days' rows and the edges' events folded (no raw events read per se)
    expect(plan({ metrics: ['visitors'], dimensions: ['path'], from: iso(D0 + HOUR_MS) })).toEqual(dims);
    expect(plan({ metrics: ['visitors'], dimensions: ['time:day'], from: iso(D0 + HOUR_MS), to: iso(D0 + 3 * DAY_MS + HOUR_MS), compare: 'previous_period' })).toEqual(dims);
    // ... but a day bucket of compare shifted by a span of no whole days would cut an aggregate day: quarter_hours,
    // and the events when the span is no number of quarter hours either
    expect(plan({ metrics: ['visitors'], dimensions: ['time:day'], from: iso(D0 + HOUR_MS), to: iso(D0 + 3 * DAY_MS), compare: 'previous_period' })).toEqual(quarters);
    expect(plan({ metrics: ['visitors'], dimensions: ['time:day'], from: iso(D0 + HOUR_MS + 1), to: iso(D0 + 3 * DAY_MS), compare: 'previous_period' })).toEqual(events);
    expect(plan({ metrics: ['visitors'], filters: [['is', 'prop:plan', ['pro']]] })).toEqual(events);
    expect(plan({ dimensions: ['source'] })).toEqual(alone);
    expect(plan({ metrics: ['visitors', 'pageviews'], filters: [['is', 'channel', ['direct']]] })).toEqual(alone);
    expect(plan({ dimensions: ['country'] })).toEqual(joined);
    expect(plan({ filters: [['is', 'path', ['/']]] })).toEqual(joined);
    expect(plan({ dimensions: ['time:day'] })).toEqual(joined);
    expect(plan({ metrics: ['visits', 'conversions'], goal: { event: 'signup' }, dimensions: ['source'] })).toEqual(alone);
    expect(plan({ metrics: ['visits', 'conversions'], goal: { event: 'signup', filters: [['is', 'medium', ['cpc']]] }, dimensions: ['source'] })).toEqual(joined);
    expect(plan({ metrics: ['visits', 'conversions'], goal: { event: 'signup' }, dimensions: ['source', 'country'] })).toEqual(joined);
    expect(plan({ metrics: ['conversions'], goal: { event: 'signup' } })).toEqual(events);
    expect(plan({ metrics: ['visitors'], dimensions: ['country'] })).toEqual(dims);
    expect(plan({ metrics: ['visitors'], dimensions: ['country'], filters: [['is', 'event_name', ['signup']]] })).toEqual(rollup);
    expect(plan({ metrics: ['visitors'], dimensions: ['country'], from: iso(D0 + HOUR_MS) })).toEqual(dims);
    expect(plan({ metrics: ['visitors'], dimensions: ['country', 'device_type'], from: iso(D0 + HOUR_MS) })).toEqual(rollup);
    expect(plan({ metrics: ['visitors'], dimensions: ['event_name'], from: iso(D0 + HOUR_MS), to: iso(D0 + 3 * DAY_MS + HOUR_MS), compare: 'previous_period' })).toEqual(rollup);
    // ... a day bucket beside them shifted by a span of no whole days: the events
    expect(plan({ metrics: ['visitors'], dimensions: ['event_name', 'time:day'], from: iso(D0 + HOUR_MS), to: iso(D0 + 3 * DAY_MS), compare: 'previous_period' })).toEqual(events);
    expect(plan({ from: iso(D0 + HOUR_MS) })).toEqual(alone);
    expect(plan({ from: iso(D0 + HOUR_MS), dimensions: ['source', 'country'] })).toEqual(joined);
  });

  it('with a range that includes now (an injected clock): the previous period cut within a day, from the visits aggregate or daily_dims and that day\'s events, exactly', async () => {
    // The cut falls at several times of a day; the aggregate holds the previous period's whole days and the cut day's
    // events up to the cut are folded at read time (insights.query.ts, `partial`).
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ metrics: ['visitors', 'visits', 'pageviews', 'events', 'bounce_rate', 'visit_duration', 'views_per_visit'] }, 14 * HOUR_MS + 5 * 60_000],
      [{ metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['source'] }, 23 * HOUR_MS + 59 * 60_000],
      [{ metrics: ['visits', 'visit_duration'], dimensions: ['entry_path'], include_bots: true }, 30 * 60_000],
      [{ metrics: ['visits', 'bounce_rate'], dimensions: ['exit_path'], filters: [['is_not', 'channel', ['direct']]] }, 6 * DAY_MS + 9 * HOUR_MS],
      [{ metrics: ['visits', 'conversions', 'conversion_rate'], goal: { event: 'signup' }, dimensions: ['channel'] }, 3 * DAY_MS + 12 * HOUR_MS],
      [{ metrics: ['bounce_rate', 'visitors'], dimensions: ['country'] }, 2 * DAY_MS + 1],
      // event metrics from daily_dims, its cut day folded from the events likewise
      [{ metrics: ['visitors', 'pageviews'], dimensions: ['time:day'] }, 14 * HOUR_MS + 5 * 60_000],
      [{ metrics: ['events', 'visitors'], dimensions: ['path'], include_bots: true }, 4 * DAY_MS + 23 * HOUR_MS],
      [{ metrics: ['events', 'pageviews', 'visitors'] }, 30 * 60_000],
    ];
    for (const name of ['alpha', 'beta'] as const) {
      for (const [body, elapsed] of cases) {
        const q = insightsBodySchema.parse({ from: iso(D0 + 7 * DAY_MS), to: iso(D0 + 14 * DAY_MS), compare: 'previous_period', limit: 10_000, ...body });
        const now = D0 + 7 * DAY_MS + elapsed;
        expect(buildInsights(readTablesOf(seeded.stores.events), seeded.ids[name], q, { now }).sql).toMatch(/FROM \w+\.(visits|daily_dims)\b/);
        const answer = await queryInsights(seeded.stores.events, seeded.ids[name], q, { now });
        expect({ name, body, rows: answer.rows }).toEqual({ name, body, rows: expectedInsights(seeded.rows, seeded.ids[name], q, now).rows });
      }
    }
  });

  it('for the big project: visitors within the sketch error (exact up to 4,096 distinct, else 2%), the rest exact', async () => {
    const tolerance = (exact: number) => (exact <= 4096 ? 0 : Math.ceil(exact * 0.02));
    let checked = 0;
    for (const dimensions of [[], ['source'], ['country'], ['time:week']]) {
      for (const compare of [false, true]) {
        const [from, to] = compare ? [D0 + 7 * DAY_MS, D0 + 14 * DAY_MS] : [D0, D0 + 14 * DAY_MS];
        const body = { from: iso(from), to: iso(to), metrics: ['events', 'visitors', 'visits', 'bounce_rate'], dimensions, ...(compare ? { compare: 'previous_period' } : {}), limit: 10_000 };
        const expected = expectedInsights(seeded.rows, seeded.ids.big, insightsBodySchema.parse(body)).rows;
        const actual = (await post('big', body)).rows as typeof expected;
        const strip = ({ visitors: _v, comparison, ...rest }: Record<string, unknown>) => ({ ...rest, comparison: comparison && { ...(comparison as object), visitors: 0 } });
        expect(actual.map(strip)).toEqual(expected.map(strip));
        actual.forEach((row, i) => {
          const want = expected[i]!;
          expect(Math.abs((row.visitors as number) - (want.visitors as number))).toBeLessThanOrEqual(tolerance(want.visitors as number));
          if (compare) {
            const [got, exact] = [(row.comparison as Record<string, number>).visitors!, (want.comparison as Record<string, number>).visitors!];
            expect(Math.abs(got - exact)).toBeLessThanOrEqual(tolerance(exact));
          }
          if ((want.visitors as number) > 4096) checked++;
        });
      }
    }
    expect(checked).toBeGreaterThan(0); // some answers were past the exact range
  });

  it('for the big project: beside conversion_rate, visitors is the exact count the rate divides by', async () => {
    let past = 0;
    for (const dimensions of [[], ['source'], ['country']]) {
      const body = { from: iso(D0), to: iso(D0 + 14 * DAY_MS), metrics: ['visitors', 'conversions', 'conversion_rate'], goal: { event: '$pageview' }, dimensions, limit: 10_000 };
      const parsed = insightsBodySchema.parse(body);
      const actual = (await post('big', body)).rows as Array<Record<string, number>>;
      expect(actual).toEqual(expectedInsights(seeded.rows, seeded.ids.big, parsed).rows);
      for (const row of actual) {
        expect(row.conversion_rate).toBeCloseTo(row.visitors === 0 ? 0 : row.conversions! / row.visitors!, 12);
        if (row.visitors! > 4096) past++;
      }
    }
    expect(past).toBeGreaterThan(0); // exact where the estimate would not be
  });

  it('include_bots counts the crawler events, left out by default', async () => {
    const body = { from: iso(D0), to: iso(D0 + 14 * DAY_MS), metrics: ['events', 'visitors'], dimensions: ['device_type'] };
    const without = await post('alpha', body);
    expect(without.rows.map((r: { device_type: string }) => r.device_type)).not.toContain('bot');
    const withBots = await post('alpha', { ...body, include_bots: true });
    expect(withBots.rows.map((r: { device_type: string }) => r.device_type)).toContain('bot');
    expect(withBots).toEqual(expectedInsights(seeded.rows, seeded.ids.alpha, insightsBodySchema.parse({ ...body, include_bots: true })));
  });
});

describe('GET /v1/properties matches the events', () => {
  it('lists the keys and each key\'s values with their events, per range and event, most used first', async () => {
    const get = async (name: Name, query: Record<string, string>) => {
      const res = await request(seeded.readApp).get('/v1/properties').set('authorization', `Bearer ${seeded.rk[name]}`).query(query);
      expect({ status: res.status, query }).toEqual({ status: 200, query });
      return res.body;
    };
    for (const name of ['alpha', 'beta'] as const) {
      for (const [from, to] of RANGES) {
        for (const event of [undefined, '$pageview', 'purchase']) {
          const params = { from, to, ...(event === undefined ? {} : { event }) };
          const query = { from: iso(from), to: iso(to), ...(event === undefined ? {} : { event }) };
          const keys = expectedProperties(seeded.rows, seeded.ids[name], params);
          expect({ query, answer: await get(name, query) }).toEqual({ query, answer: keys });
          for (const { key } of keys.rows as Array<{ key: string }>) {
            expect({ query, key, answer: await get(name, { ...query, key }) }).toEqual({ query, key, answer: expectedProperties(seeded.rows, seeded.ids[name], { ...params, key }) });
          }
        }
      }
    }
    // the data set holds properties, so the comparison above is not of empty lists
    expect(expectedProperties(seeded.rows, seeded.ids.alpha, { from: RANGES[0]![0], to: RANGES[0]![1] }).rows.length).toBeGreaterThan(1);
  });
});
