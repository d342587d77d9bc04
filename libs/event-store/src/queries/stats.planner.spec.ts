import { type StatsParams } from '@analytics/schema';
import { planStats, rollupFits, uniquesFits } from './stats.planner';

const TABLES = { events: 'db.events', dailyRollup: 'db.daily_rollup', dailyUniques: 'db.daily_uniques', sessions: 'db.sessions', visits: 'db.visits', visitSpans: 'db.visit_spans', dailyDims: 'db.daily_dims', quarterHours: 'db.quarter_hours' };
const P = '11111111-1111-4111-8111-111111111111';
const MIDNIGHT = Date.UTC(2026, 2, 1);
const DAY = 86_400_000;
const params = (o: Partial<StatsParams> = {}): StatsParams => ({ from: MIDNIGHT, to: MIDNIGHT + 7 * DAY, metric: 'count', limit: 100, ...o });

describe('rollupFits / planStats source', () => {
  it.each([
    ['no group_by, whole days', 'rollup', {}, []],
    ['every rollup column, interval day', 'rollup', { interval: 'day' }, ['event_name', 'source', 'medium', 'country', 'device_type']],
    ['interval week', 'rollup', { interval: 'week' }, ['source']],
    ['uniques', 'rollup', { metric: 'uniques' }, ['country']],
    ['interval hour', 'quarters', { interval: 'hour' }, []],
    ['interval hour by source', 'events', { interval: 'hour' }, ['source']],
    ['interval day in a zone', 'quarters', { interval: 'day', tz: 'Europe/Berlin' }, []],
    ['interval day, from on a quarter hour', 'quarters', { interval: 'day', from: MIDNIGHT + 900_000 }, []],
    ['interval day, from off a quarter hour', 'events', { interval: 'day', from: MIDNIGHT + 1 }, []],
    ['interval hour, $pageview', 'quarters', { interval: 'hour', event: '$pageview' }, []],
    ['interval hour, another event', 'events', { interval: 'hour', event: 'signup' }, []],
    ['browser', 'events', {}, ['browser']],
    ['os', 'events', {}, ['source', 'os']],
    ['path', 'events', {}, ['path']],
    ['from not at midnight', 'events', { from: MIDNIGHT + 1 }, []],
    ['to not at midnight', 'events', { to: MIDNIGHT + DAY + 3_600_000 }, []],
    ['sub-day range', 'events', { to: MIDNIGHT + 3_600_000 }, []],
  ] as const)('%s -> %s', (_name, source, over, groupBy) => {
    const p = params(over as Partial<StatsParams>);
    expect(rollupFits(p, groupBy)).toBe(source === 'rollup');
    expect(planStats(TABLES, P, p, [...groupBy]).source).toBe(source);
  });

  it.each([
    ['uniques, no group_by', 'uniques', {}, []],
    ['uniques by event_name', 'uniques', {}, ['event_name']],
    ['uniques, interval day', 'uniques', { interval: 'day' }, []],
    ['uniques, interval week by event_name', 'uniques', { interval: 'week' }, ['event_name']],
    ['uniques, event filter', 'uniques', { event: 'signup' }, []],
    ['uniques by event_name and source', 'rollup', {}, ['event_name', 'source']],
    ['uniques by country', 'rollup', { interval: 'day' }, ['country']],
    ['uniques, interval hour', 'quarters', { interval: 'hour' }, []],
    ['uniques, interval hour, $pageview', 'events', { interval: 'hour', event: '$pageview' }, []],
    ['uniques by browser', 'events', {}, ['browser']],
    ['uniques, from not at midnight', 'events', { from: MIDNIGHT + 1000 }, []],
    ['uniques by event_name, to not at midnight', 'events', { to: MIDNIGHT + DAY + 1 }, ['event_name']],
  ] as const)('metric=uniques: %s -> %s', (_name, source, over, groupBy) => {
    const p = params({ metric: 'uniques', ...(over as Partial<StatsParams>) });
    expect(uniquesFits(p, groupBy)).toBe(source === 'uniques');
    expect(planStats(TABLES, P, p, [...groupBy]).source).toBe(source);
  });

  it('never answers count from daily_uniques (it holds no counts)', () => {
    expect(uniquesFits(params(), [])).toBe(false);
    expect(planStats(TABLES, P, params(), []).source).toBe('rollup');
    expect(planStats(TABLES, P, params({ interval: 'day' }), ['event_name']).source).toBe('rollup');
    expect(() => planStats(TABLES, P, params(), [], 'uniques')).toThrow(/does not fit daily_uniques/);
  });

  it('still runs every path when forced on a request daily_uniques would answer', () => {
    const p = params({ metric: 'uniques', interval: 'week' });
    expect(planStats(TABLES, P, p, ['event_name'], 'rollup')).toMatchObject({ source: 'rollup', sql: expect.stringContaining('FROM db.daily_rollup ') });
    expect(planStats(TABLES, P, p, ['event_name'], 'events')).toMatchObject({ source: 'events', sql: expect.stringContaining('FROM db.events ') });
    expect(planStats(TABLES, P, p, ['event_name'], 'uniques')).toMatchObject({ source: 'uniques', sql: expect.stringContaining('FROM db.daily_uniques ') });
    expect(() => planStats(TABLES, P, p, ['source'], 'uniques')).toThrow(/does not fit daily_uniques/);
    expect(() => planStats(TABLES, P, { ...p, interval: 'hour' }, [], 'uniques')).toThrow(/does not fit daily_uniques/);
  });

  it('answers from events when forced, and refuses to force the rollup on a request outside its grain', () => {
    expect(planStats(TABLES, P, params(), [], 'events')).toMatchObject({ source: 'events', sql: expect.stringContaining('FROM db.events') });
    expect(() => planStats(TABLES, P, params({ interval: 'hour' }), [], 'rollup')).toThrow(/does not fit/);
  });
});

describe('planStats SQL', () => {
  it('groups raw events by the hash of LowCardinality columns when there are two keys or more, by the column otherwise', () => {
    const raw = params({ from: MIDNIGHT + 1 });
    const two = planStats(TABLES, P, raw, ['source', 'medium']).sql;
    expect(two).toContain('any(e.source) AS source, any(e.medium) AS medium');
    expect(two).toContain('GROUP BY cityHash64(e.source), cityHash64(e.medium)');
    const mixed = planStats(TABLES, P, { ...raw, interval: 'day' }, ['event_name', 'country']).sql;
    expect(mixed).toContain('GROUP BY toDate(timestamp), event_name, cityHash64(e.country)');
    expect(planStats(TABLES, P, raw, ['source']).sql).toContain('GROUP BY source ');
    expect(planStats(TABLES, P, params(), ['source', 'medium']).sql).toContain('GROUP BY source, medium ');
  });

  it('binds every value, scopes to the project first, and never puts request strings into SQL', () => {
    const evil = "x' OR 1=1 --";
    for (const plan of [planStats(TABLES, P, params({ event: evil }), ['source']), planStats(TABLES, P, params({ event: evil, from: MIDNIGHT + 5 }), ['browser'])]) {
      expect(plan.sql).not.toContain(evil);
      expect(plan.sql).not.toContain(P);
      expect(plan.sql).toMatch(/WHERE project_id = \{p:UUID\} AND /);
      expect(plan.sql).toContain('event_name = {event:String}');
      expect(plan.sql).toContain('LIMIT {limit:UInt32}');
      expect(plan.params).toMatchObject({ p: P, event: evil, limit: 100 });
    }
  });

  it('binds day bounds on the rollup and UTC DateTime64 bounds on events', () => {
    expect(planStats(TABLES, P, params(), []).params).toMatchObject({ from_day: '2026-03-01', to_day: '2026-03-08' });
    expect(planStats(TABLES, P, params({ from: MIDNIGHT + 1500 }), []).params).toMatchObject({ from: '2026-03-01 00:00:01.500', to: '2026-03-08 00:00:00.000' });
  });

  it('orders by bucket ascending, value descending, then the group columns', () => {
    const plan = planStats(TABLES, P, params({ interval: 'week' }), ['source', 'medium']);
    expect(plan.sql).toContain('ORDER BY bucket ASC, value DESC, source ASC, medium ASC');
    expect(plan.sql).toContain("formatDateTime(toMonday(day), '%Y-%m-%d %H:%i:%S', 'UTC') AS bucket");
  });

  it('daily_uniques: merged sketches, day bounds, day/week buckets, event filter bound, project first', () => {
    const evil = "x' OR 1=1 --";
    const plan = planStats(TABLES, P, params({ metric: 'uniques', interval: 'week', event: evil }), ['event_name']);
    expect(plan.source).toBe('uniques');
    expect(plan.sql).toBe(
      "SELECT formatDateTime(toMonday(day), '%Y-%m-%d %H:%i:%S', 'UTC') AS bucket, event_name, uniqCombinedMerge(uniques) AS value FROM db.daily_uniques " +
        'WHERE project_id = {p:UUID} AND day >= {from_day:Date} AND day < {to_day:Date} AND event_name = {event:String} ' +
        'GROUP BY toMonday(day), event_name ORDER BY bucket ASC, value DESC, event_name ASC LIMIT {limit:UInt32}',
    );
    expect(plan.params).toEqual({ p: P, limit: 100, from_day: '2026-03-01', to_day: '2026-03-08', event: evil });
  });

  it('uses merged sketches for uniques on the rollup and the same sketch on raw events', () => {
    expect(planStats(TABLES, P, params({ metric: 'uniques' }), [], 'rollup').sql).toContain('uniqCombinedMerge(uniques) AS value');
    expect(planStats(TABLES, P, params({ metric: 'uniques' }), [], 'events').sql).toContain("uniqCombinedIf(anonymous_id, anonymous_id != '') AS value");
  });
});
