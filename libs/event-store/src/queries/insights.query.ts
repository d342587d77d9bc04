import {
  type InsightCondition,
  type InsightDimension,
  type InsightMetric,
  type InsightsQuery,
  type InsightsResponse,
  type InsightsRow,
  LIMITS,
  DAY_MS,
  DEFAULT_TIME_ZONE,
  dimensionKind,
  metricsOfKind,
  rangeInZone,
} from '@analytics/schema';
import { toClickHouseDate, toClickHouseTime } from '../primitives/clickhouse-time';
import { DAILY_DIMS, QUARTER_MS, VISITS_COLUMN_NAMES, aggregateOf, aggregateSelect } from '../tables/aggregates';
import { EMPTY_ANON_KEY, anonKeyOf } from '../tables/event-keys';
import type { ReadTables } from '../tables/read-tables';
import { readSourceDaySeqs, sourceDayState } from '../tables/sources-daily';
import { VISIT_DIMS, VISIT_DIMS_ALL, VISIT_DIMS_SPLIT, type VisitDim } from '../tables/visit-dims';
import { Builder, DIMENSION_SQL, type Query, type ReadOptions, VISITS_MERGE, VISITS_ROW, dimensionsOf, namesVisitDimension } from './dimension-sql';
import type { SourcesReader } from './sources.query';

// POST /v1/insights (exact; both store modes). The meanings are docs/insights.md. Every read with visit metrics or
// visit dimensions takes its visits from the `visits` aggregate (migration 010): with visit dimensions only and no goal
// from it alone (its rows of the range merged per visit hold every per-visit figure), otherwise the events are joined
// to its visit rows. Event metrics with at most one of path, browser, os, country or device_type and a UTC day bucket
// read `daily_dims` (fromDims); by one time bucket otherwise, `quarter_hours` (fromQuarters); by event_name, country,
// device_type or a UTC day bucket, `daily_rollup` (fromRollup). The aggregates hold whole UTC days: a range's other
// events (its `edges`: a range that includes now, a project's local days) are folded at read time by the aggregate's
// own SELECT (splitDays, `partial`).
// Everything else reads the raw `events` table only:
//
// Shape of the SQL: `base` = the range's events (bots left out unless asked), each with its visit (a hash of
// session_id, anonymous_id and the period) and `cur` (1: the requested range, 0: the previous period of compare).
// Without visit metrics and visit dimensions, the events are grouped by the dimensions directly. With an event
// dimension or filter beside visit metrics or dimensions, the events matching the event filters are grouped per (event
// dimensions, visit, period), each of those rows is joined to its visit's row from the aggregate (event and pageview
// counts, duration, anonymous id, the visit dimensions, checked by the visit filters), and those per-visit rows are
// grouped per dimensions: a visit counts once in each group it has a matching event in. A filter naming both kinds of
// dimension in one `or` (or a goal naming a visit dimension) joins every event to its visit's row first instead.

/** Time buckets are written as /v1/stats writes its buckets: the wall clock in the read's time zone (UTC by default). */
const BUCKET_FORMAT = "'%Y-%m-%d %H:%i:%S', 'UTC'";
const ZONED_BUCKET_FORMAT = "'%Y-%m-%d %H:%i:%S', {tz:String}";

/**
 * The previous period compare reads (issue 47, like for like): the range of the same length just before `from`, cut to
 * the elapsed length `now - from` when the range includes now (`to > now`): today until 14:05 against yesterday until
 * 14:05. `cut` says whether it was cut; both ends are clamped to the accepted timestamps.
 */
export function previousPeriod(from: number, to: number, now: number): { lo: number; hi: number; cut: boolean } {
  const span = to - from;
  const lo = Math.max(from - span, LIMITS.timestamp.min);
  if (to <= now) return { lo, hi: from, cut: false };
  const elapsed = Math.min(Math.max(now - from, 0), span);
  return { lo, hi: Math.max(lo, Math.min(from, from - span + elapsed)), cut: true };
}

// The metrics' kinds are the catalog's (libs/schema METRIC_CATALOG): visit metrics need the per-visit rows, goal
// metrics the goal's flag.
const VISIT_METRICS: ReadonlySet<InsightMetric> = new Set(metricsOfKind('visit'));
const GOAL_METRICS: ReadonlySet<InsightMetric> = new Set(metricsOfKind('goal'));

/** What a metric's SQL is written from: the period `cur` (1 requested, 0 previous) and the rows' columns. */
interface MetricContext {
  cur: 0 | 1;
  /** The rows are per visit (join path, or the visits aggregate): n, pv, anon, akey, vn, vpv, vdur. Else events. */
  joined: boolean;
  /** conversion_rate is asked too: visitors is the exact count it divides by. */
  withRate: boolean;
  /** The visitor key column: `akey` per visit row, `anon_key` per event. */
  key: string;
  /** The exact count of visitors with a key of the period, and of those converted. */
  visitors: string;
  converted: string;
  /** The visits of the period, and a figure per visit. */
  visits: string;
  perVisit: (sum: string) => string;
}

/**
 * Every metric's SQL (keyed by the catalog's names: a metric added there without its SQL here is a compile error).
 * Visit metrics are only asked on per-visit rows (they make the read joined). Conversions are exact (distinct visitors
 * with a goal event), their rate over the exact count of visitors: counted by anon_key (migration 011), the SipHash128
 * uniqExact would keep of each anonymous_id, so as exact, read not hashed.
 */
export const METRIC_SQL: Record<InsightMetric, (c: MetricContext) => string> = {
  events: (c) => (c.joined ? `sumIf(n, cur = ${c.cur})` : `countIf(cur = ${c.cur})`),
  pageviews: (c) => (c.joined ? `sumIf(pv, cur = ${c.cur})` : `countIf(cur = ${c.cur} AND event_name = '$pageview')`),
  // Asked beside conversion_rate, visitors is the exact count the rate divides by (computed once by the engine): the
  // row's figures agree (conversions / visitors = conversion_rate), and the estimate would cost as much again.
  visitors: (c) =>
    c.withRate ? c.visitors : c.joined ? `uniqCombinedIf(anon, anon != '' AND cur = ${c.cur})` : `uniqCombinedIf(anonymous_id, anonymous_id != '' AND cur = ${c.cur})`,
  visits: (c) => c.visits,
  bounce_rate: (c) => c.perVisit(`countIf(cur = ${c.cur} AND vn = 1 AND vpv = 1)`),
  visit_duration: (c) => `${c.perVisit(`sumIf(vdur, cur = ${c.cur})`)} / 1000`,
  views_per_visit: (c) => c.perVisit(`sumIf(vpv, cur = ${c.cur})`),
  conversions: (c) => c.converted,
  conversion_rate: (c) => `if(${c.visitors} = 0, 0, ${c.converted} / ${c.visitors})`,
};

/** The metric over the per-visit rows (join path) or the events (events path) of period `cur` (1 requested, 0 previous). */
function metricSql(m: InsightMetric, cur: 0 | 1, joined: boolean, withRate: boolean): string {
  const key = joined ? 'akey' : 'anon_key';
  const counted = `${key} != ${EMPTY_ANON_KEY} AND cur = ${cur}`;
  const visits = `countIf(cur = ${cur})`;
  return METRIC_SQL[m]({
    cur,
    joined,
    withRate,
    key,
    visitors: `uniqExactIf(${key}, ${counted})`,
    converted: `uniqExactIf(${key}, ${counted} AND g)`,
    visits,
    perVisit: (sum) => `if(${visits} = 0, 0, ${sum} / ${visits})`,
  });
}

const isTime = (d: InsightDimension) => d.startsWith('time:');

const floorDay = (ms: number) => ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
const ceilDay = (ms: number) => floorDay(ms + DAY_MS - 1);

/**
 * What the daily aggregates answer of `periods` (the previous period, if any, then the range: [start, end) each, in
 * order): `days`, the whole UTC days inside a period, as day ranges (adjacent ones joined); `edges`, the rest of the
 * periods, as time ranges (adjacent ones joined), read from the events.
 */
export function splitDays(periods: ReadonlyArray<readonly [number, number]>): { days: Array<[number, number]>; edges: Array<[number, number]> } {
  const days: Array<[number, number]> = [];
  const edges: Array<[number, number]> = [];
  const add = (to: Array<[number, number]>, a: number, z: number) => {
    if (z <= a) return;
    const last = to.at(-1);
    if (last && last[1] === a) last[1] = z;
    else to.push([a, z]);
  };
  for (const [start, end] of periods) {
    const a = ceilDay(start);
    const z = floorDay(end);
    if (z > a) {
      add(edges, start, a);
      add(days, a, z);
      add(edges, z, end);
    } else add(edges, start, end);
  }
  return { days, edges };
}

/** The columns of daily_rollup (migration 002) a dimension or filter may name for a read from it alone. */
const ROLLUP_DIMENSIONS: ReadonlySet<InsightDimension> = new Set<InsightDimension>(['event_name', 'country', 'device_type']);
/** Time buckets made of whole UTC days (the aggregate's `day`). */
const ROLLUP_TIME: ReadonlySet<InsightDimension> = new Set<InsightDimension>(['time:day', 'time:week', 'time:month']);
/** The event metrics over daily_rollup's rows of period `cur`: the counts summed, the visitor sketches merged (the sketch the raw path computes). */
const ROLLUP_METRIC_SQL = {
  events: (cur: 0 | 1) => `sumIf(events, cur = ${cur})`,
  pageviews: (cur: 0 | 1) => `sumIf(events, cur = ${cur} AND event_name = '$pageview')`,
  visitors: (cur: 0 | 1) => `uniqCombinedMergeIf(uniques, cur = ${cur})`,
} as const;

/**
 * A condition the bot flag of the daily aggregates decides (their `bot` is device_type = 'bot'): device_type is, or is
 * not, exactly 'bot'. Any other value set or operator needs the non-bots' device types, which the flag does not hold.
 */
const isBotFilter = (c: InsightCondition): boolean =>
  c.op !== 'or' && c.dimension === 'device_type' && (c.op === 'is' || c.op === 'is_not') && c.values.length > 0 && c.values.every((v) => v === 'bot');

/** The dimensions of daily_dims (migration 016): at most one of them (with a UTC day bucket or not) for a read from it. */
const DIMS_DIMENSIONS: ReadonlySet<InsightDimension> = new Set<InsightDimension>(DAILY_DIMS);
/** The event metrics over daily_dims' rows of period `cur`: daily_rollup's, with pageviews counted in their own column. */
const DIMS_METRIC_SQL: Record<keyof typeof ROLLUP_METRIC_SQL, (cur: 0 | 1) => string> = { ...ROLLUP_METRIC_SQL, pageviews: (cur) => `sumIf(pageviews, cur = ${cur})` };

/** A per-visit column of the visits aggregate: over a visit's rows grouped, and on its one row (read with FINAL). */
type VisitColumn = readonly [grouped: string, row: string];
const same = (c: string): VisitColumn => [c, c];

/**
 * The metrics over rows of sums per (dimensions, period): the visits of a day read from visit_dims beside the per-visit
 * rows of the other days grouped the same way (w visits, b bounces, sdur ms, spv pageviews, sn events, u the visitors'
 * sketch). The same figures as METRIC_SQL over the per-visit rows: the same integer sums divided, the same sketch.
 * Every metric but the goal's: those are the ones visit_dims answers.
 */
const SUMMED_METRIC_SQL: Partial<Record<InsightMetric, (cur: 0 | 1) => string>> = {
  events: (cur) => `sumIf(sn, cur = ${cur})`,
  pageviews: (cur) => `sumIf(spv, cur = ${cur})`,
  visitors: (cur) => `uniqCombinedMergeIf(u, cur = ${cur})`,
  visits: (cur) => `sumIf(w, cur = ${cur})`,
  bounce_rate: (cur) => `if(sumIf(w, cur = ${cur}) = 0, 0, sumIf(b, cur = ${cur}) / sumIf(w, cur = ${cur}))`,
  visit_duration: (cur) => `if(sumIf(w, cur = ${cur}) = 0, 0, sumIf(sdur, cur = ${cur}) / sumIf(w, cur = ${cur})) / 1000`,
  views_per_visit: (cur) => `if(sumIf(w, cur = ${cur}) = 0, 0, sumIf(spv, cur = ${cur}) / sumIf(w, cur = ${cur}))`,
};

/**
 * The visit dimension whose visit_dims rows (migration 018) can answer `q` on its fresh whole days, or undefined: a
 * visit metric or a visit dimension asked, no goal metric, no bots, and the dimensions grouped or filtered on are visit
 * dimensions: one (its rows), or one and channel (the first's rows, split by channel); with none, the row of all the
 * day's visits (dim 'all').
 */
export function visitDimsShape(q: InsightsQuery): VisitDim | typeof VISIT_DIMS_ALL | undefined {
  if (q.include_bots || !q.metrics.every((m) => m in SUMMED_METRIC_SQL)) return undefined;
  const named = [...new Set([...q.dimensions, ...q.filters.flatMap(dimensionsOf)])];
  if (!named.every((d) => (VISIT_DIMS as readonly string[]).includes(d))) return undefined;
  if (named.length === 0 && !q.metrics.some((m) => VISIT_METRICS.has(m))) return undefined;
  const rows = named.filter((d) => d !== VISIT_DIMS_SPLIT);
  if (rows.length > 1 || named.length > 2) return undefined;
  return (rows[0] ?? named[0] ?? VISIT_DIMS_ALL) as VisitDim | typeof VISIT_DIMS_ALL;
}

/**
 * buildInsights' options: the project's zone and the request's time, and `visitDays`: the days visit_dims holds as of
 * the aggregates now (fresh: no build touched them or a day beside them since their refresh), read there when the
 * shape allows (visitDimsShape) and the day is a whole UTC day of a period.
 */
export type InsightsOptions = ReadOptions & { visitDays?: readonly string[] };

/** Builds POST /v1/insights as one statement; every value (range, property keys, filter values) is a bound parameter. */
export function buildInsights(tables: ReadTables, projectId: string, query: InsightsQuery, options: InsightsOptions = {}): Query {
  const tz = options.timezone ?? DEFAULT_TIME_ZONE;
  // Dates sent without a time are the project's local midnights; the time buckets are counted in its zone.
  const q = rangeInZone(query, tz);
  const b = new Builder(tz === DEFAULT_TIME_ZONE ? undefined : tz);
  const compare = q.compare === 'previous_period';
  const span = q.to - q.from;
  const now = options.now ?? Date.now();
  const previous = compare ? previousPeriod(q.from, q.to, now) : { lo: q.from, hi: q.from, cut: false };
  const lo = previous.lo;
  // A cut previous period leaves out its events from `hi` on (the current period's are all of [from, to)).
  const cut = previous.cut ? ' AND (timestamp >= {from:DateTime64(3, \'UTC\')} OR timestamp < {hi:DateTime64(3, \'UTC\')})' : '';
  Object.assign(b.params, { project: projectId, lo: toClickHouseTime(lo), from: toClickHouseTime(q.from), to: toClickHouseTime(q.to), shift: span, limit: q.limit });
  if (previous.cut) b.params.hi = toClickHouseTime(previous.hi);

  const dims = q.dimensions.map((d) => b.value(d));
  const where = q.filters.map((c) => b.condition(c));
  // The goal is checked per event (after the filters): `g` = the event completes it; per visit row, one of its events does.
  const goal = q.goal && q.metrics.some((m) => GOAL_METRICS.has(m)) ? b.goal(q.goal) : '0';
  if (goal !== '0') b.columns.add('anon_key');
  const joined = q.metrics.some((m) => VISIT_METRICS.has(m)) || b.visitDims.length > 0;
  const onlyVisitDims = [...q.dimensions, ...q.filters.flatMap(dimensionsOf)].every((d) => dimensionKind(d) === 'visit');
  // Each filter is the visit's (it names visit dimensions only) or the events' (it names none); with none naming both
  // (an `or` across the two) and a goal of the events alone, the join path groups the matching events per visit before
  // joining them to the visit rows (perVisitFirst).
  const visitSide = q.filters.map((c) => dimensionsOf(c).every((d) => dimensionKind(d) === 'visit'));
  const perVisitFirst =
    !namesVisitDimension(goal) && q.filters.every((c, i) => visitSide[i] || dimensionsOf(c).every((d) => dimensionKind(d) === 'event'));
  // Only visit dimensions grouped and filtered, no goal (the base columns untouched): each visit's row is all its events'.
  const visitShaped = goal === '0' && onlyVisitDims;
  // The daily aggregates answer any range (issue 47: a project's local days, a range that includes now): each period's
  // whole UTC days from their rows, and its other events (`edges`: at most a day's worth at each end of a period, the
  // whole period when it holds no whole UTC day) folded at read time by the aggregate's own SELECT (aggregates.ts)
  // into rows of its shape, grouped by period too: a UTC day that `from` cuts has rows of both. The visits aggregate
  // holds every per-visit figure (its rows of the range merged per visit are the visit cut to the range), ~1 row per
  // visit read instead of every event; with no goal, no event dimension and no event filter it answers alone, otherwise
  // it gives the visit rows the events are joined to (every visit dimension has its SQL over the aggregate's row:
  // DIMENSION_SQL, catalog.spec.ts).
  // A goal over visit dimensions only (grouped and filtered; none in the goal itself), with a visit metric or dimension:
  // each visit row of the aggregate is flagged when one of its events of that period completes the goal (the keys of
  // the goal's events, a set), instead of joining every event to its visit's row.
  const goalOverVisits = goal !== '0' && joined && !namesVisitDimension(goal) && onlyVisitDims;
  const fromVisits = visitShaped || goalOverVisits;
  // The range's last UTC day when the range ends within it after now (today of a zone east of UTC, whose day ends at
  // 23:00 UTC in Berlin): its aggregate rows hold exactly the range's part of it when that day has no event from `to`
  // on, which a read checks (one count over the key's range: a future-dated event makes it fold the day's events up to
  // `to` instead). The aggregate then answers today as it does for a UTC project.
  const tailDay = floorDay(q.to);
  const tail = q.to > now && q.to !== tailDay && tailDay >= q.from;
  const periodsOf: Array<[number, number]> = [...(compare ? [[lo, previous.hi] as [number, number]] : []), [q.from, tail ? tailDay : q.to]];
  const split = splitDays(periodsOf);
  const hasEdges = split.edges.length > 0 || tail;
  // The aggregate's days: their rows' period is the day's (every whole day lies in one period); an edge row's is its
  // events' (folded per period). Ranges on UTC midnights with no cut keep the one day range they always read.
  const dayRanges = split.days;
  const simpleDays = !hasEdges && dayRanges.length === 1;
  // The fresh whole days of visit_dims (migration 018) answer the visits read whole there: their sums per value, beside
  // the per-visit rows of the other days, grouped the same way (BENCHMARKS.md, "Insights: visits summed per day"). The
  // whole days split in two lists, both bound: a positive list of days prunes the key's ranges, a negated one did not.
  const fresh = new Set(options.visitDays ?? []);
  const wholeDayList = dayRanges.flatMap(([a, z]) => Array.from({ length: (z - a) / DAY_MS }, (_, i) => toClickHouseDate(a + i * DAY_MS)));
  const summedDayList = wholeDayList.filter((d) => fresh.has(d));
  const summedDim = fromVisits && goal === '0' && tables.visitDims !== undefined && summedDayList.length > 0 ? visitDimsShape(q) : undefined;
  const visitorsAsked = q.metrics.includes('visitors');
  const bindDays = () => {
    Object.assign(b.params, { lo_day: toClickHouseDate(floorDay(lo)), from_day: toClickHouseDate(ceilDay(q.from)), to_day: toClickHouseDate(ceilDay(q.to)) });
    if (!simpleDays) dayRanges.forEach(([a, z], i) => Object.assign(b.params, { [`days${i}_from`]: toClickHouseDate(a), [`days${i}_to`]: toClickHouseDate(z) }));
    split.edges.forEach(([a, z], i) => Object.assign(b.params, { [`edge${i}_from`]: toClickHouseTime(a), [`edge${i}_to`]: toClickHouseTime(z) }));
    if (tail) Object.assign(b.params, { tail_day: toClickHouseDate(tailDay), tail_from: toClickHouseTime(tailDay), tail_end: toClickHouseTime(tailDay + DAY_MS) });
  };
  /** The range's last day has no event from `to` on (its aggregate rows are then the range's part of it). */
  const tailWhole = `(SELECT count() FROM ${tables.events} WHERE project_id = {project:UUID} AND timestamp >= {to:DateTime64(3, 'UTC')} AND timestamp < {tail_end:DateTime64(3, 'UTC')}) = 0`;
  const bots = q.include_bots ? '' : ' AND bot = 0';
  /** A daily aggregate's whole days of both periods. */
  const wholeDays = simpleDays
    ? 'day >= {lo_day:Date} AND day < {to_day:Date}'
    : dayRanges.length === 0
      ? '0'
      : `(${dayRanges.map((_, i) => `day >= {days${i}_from:Date} AND day < {days${i}_to:Date}`).join(' OR ')})`;
  const days = tail ? `(${wholeDays} OR day = {tail_day:Date} AND ${tailWhole})` : wholeDays;
  /** The aggregate's rows of both periods' days (bots left out unless asked). */
  const visitsWhere = `WHERE project_id = {project:UUID} AND ${days}${bots}`;
  /** The events of both periods outside their whole days, to fold at read time. */
  const edgeEvents = `project_id = {project:UUID} AND (${[
    ...split.edges.map((_, i) => `timestamp >= {edge${i}_from:DateTime64(3, 'UTC')} AND timestamp < {edge${i}_to:DateTime64(3, 'UTC')}`),
    ...(tail ? [`timestamp >= {tail_from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')} AND NOT ${tailWhole}`] : []),
  ].join(' OR ')})`;
  /** An edge row's period: its events' (the fold groups by it). */
  const edgeCur = "toUInt8(timestamp >= {from:DateTime64(3, 'UTC')}) AS ecur";
  /** The edges folded into rows of aggregate `a`'s shape, one per grain row and period (`ecur`). */
  const foldEdges = (table: 'visits' | 'daily_rollup' | 'daily_dims' | 'quarter_hours', where: string) => {
    const a = aggregateOf(table);
    return aggregateSelect({ ...a, grain: [...a.grain, 'ecur'] }, tables.events, where, [edgeCur]);
  };
  const partial = hasEdges ? `(${foldEdges('visits', `${edgeEvents}${q.include_bots ? '' : " AND device_type != 'bot'"}`)})` : undefined;
  /**
   * A visit row's period: its day's for ranges on UTC midnights; otherwise its first event's (an aggregate row of a
   * whole day has all its events in that day's period, an edge row all in its `ecur`).
   */
  const visitCur = simpleDays ? 'toUInt8(day >= {from_day:Date})' : "toUInt8(first_ts >= {from:DateTime64(3, 'UTC')})";
  /** The aggregate's rows of both periods (those matching `condition` if given) with every row of the edges' (`partial`). */
  const visitsAndPartial = (condition?: string) =>
    `(SELECT ${VISITS_COLUMN_NAMES} FROM ${tables.visits} ${visitsWhere}${condition ? ` AND ${condition}` : ''} UNION ALL SELECT ${VISITS_COLUMN_NAMES} FROM ${partial})`;
  // The range's visits from the aggregate: one row per (visit, period) with `columns` (vd<i>: the visit dimensions).
  // Without bots, a visit that visit_spans (migration 014) does not list for these days has at most one row in them
  // (bot = 0, its home day): it is read whole with FINAL (the parts' rows of its key merged by the engine, in order),
  // and only the listed visits' rows are grouped per visit (BENCHMARKS.md, "Insights from visits read whole"). With
  // bots, a visit may have a bot row beside its other row on one day: every row is grouped per visit. The rows joined
  // to events (`grouped`) are grouped too: as a join's right side the two branches cost more than the one grouping
  // (1,070 -> 1,285 ms at 10M, the same BENCHMARKS.md section).
  // With visit_dims' days read, the keys listed a day beyond the range too: a visit visit_dims leaves out of a day (listed
  // on it or a day beside it) is then grouped here, never read whole and never lost.
  const spans = summedDim
    ? `SELECT session_key FROM ${tables.visitSpans} WHERE project_id = {project:UUID} AND day >= {spans_from:Date} AND day <= {spans_to:Date}`
    : `SELECT session_key FROM ${tables.visitSpans} WHERE project_id = {project:UUID} AND day >= {lo_day:Date} AND day < {to_day:Date}`;
  /** The days of `visits` read whole beside visit_dims': the other whole days, and the tail day as `days` has it. */
  const unsummedDays = `(day IN {raw_days:Array(Date)}${tail ? ` OR day = {tail_day:Date} AND ${tailWhole}` : ''})`;
  const visitRows = (columns: readonly VisitColumn[], key: string, grouped = false) => {
    const select = (grouped: boolean) => {
      const merged = [...new Set(b.visitDims.map((d) => DIMENSION_SQL[d].visits!.reads))].map((r) => (grouped ? VISITS_MERGE : VISITS_ROW)[r]);
      return `SELECT ${[...columns.map((c) => c[grouped ? 0 : 1]), ...merged, ...b.visitDims.map((d, i) => `${DIMENSION_SQL[d].visits!.sql} AS vd${i}`)].join(', ')}`;
    };
    if (q.include_bots || grouped) {
      return partial ? [select(true), `FROM ${visitsAndPartial()}`, `GROUP BY ${key}`].join('\n') : [select(true), `FROM ${tables.visits}`, visitsWhere, `GROUP BY ${key}`].join('\n');
    }
    const unlisted = `session_key NOT IN (${spans})`;
    const listed = `session_key IN (${spans})`;
    // The edges' rows are grouped with the listed visits' rows, every one of them: the fold then runs once per read
    // (~15 ms for an hour's edge at 2M events). An unlisted visit lies in one day, whole (the aggregate's rows) or an
    // edge's (the fold's, one row per period), so its rows there are one per group.
    return [
      select(false),
      `FROM ${tables.visits} FINAL`,
      `${summedDim ? `WHERE project_id = {project:UUID} AND ${unsummedDays}${bots}` : visitsWhere} AND ${unlisted}`,
      'UNION ALL',
      select(true),
      ...(partial ? [`FROM ${visitsAndPartial(listed)}`] : [`FROM ${tables.visits}`, `${visitsWhere} AND ${listed}`]),
      `GROUP BY ${key}`,
    ].join('\n');
  };
  const VDUR: VisitColumn = ['toUnixTimestamp64Milli(max(last_ts)) - toUnixTimestamp64Milli(min(first_ts)) AS vdur', 'toUnixTimestamp64Milli(last_ts) - toUnixTimestamp64Milli(first_ts) AS vdur'];

  const cur = "toUInt8(timestamp >= {from:DateTime64(3, 'UTC')})";
  const base = [
    `SELECT ${[...b.columns].join(', ')}, ${cur} AS cur, cityHash64(session_id, anonymous_id, cur) AS visit,${joined ? ' visit_key AS skey,' : ''}`,
    `  ${compare ? "if(cur = 1, timestamp, addMilliseconds(timestamp, {shift:Int64}))" : 'timestamp'} AS ts`,
    `FROM ${tables.events}`,
    `WHERE project_id = {project:UUID} AND timestamp >= {lo:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}${cut}`,
    ...(q.include_bots ? [] : ["  AND device_type != 'bot'"]),
  ].join('\n');

  const dimAliases = dims.map((_, i) => `d${i}`);
  const periods: Array<0 | 1> = compare ? [1, 0] : [1];
  // Totals from the aggregate with no filter and no goal: visitors are the distinct anonymous_id of the period's rows,
  // counted by a scan beside the per-visit grouping (every row of a visit holds its anonymous_id, so the set, and the
  // sketch, is the one the per-visit rows give), which then carries no string per visit (BENCHMARKS.md, "Insights
  // totals": the visit's anonymous_id in the grouping was ~40% of the read). The scalar is wrapped in any() so that
  // the statement stays one aggregate row when visitors is its only metric.
  const visitorsByScan = fromVisits && dims.length === 0 && where.length === 0 && goal === '0' && !summedDim;
  const visitorsScan = (p: 0 | 1) =>
    [
      `any((SELECT uniqCombinedIf(anonymous_id, anonymous_id != '' AND ${simpleDays ? `day ${p ? '>=' : '<'} {from_day:Date}` : `first_ts ${p ? '>=' : '<'} {from:DateTime64(3, 'UTC')}`})`,
      partial ? `FROM ${visitsAndPartial()}))` : `FROM ${tables.visits} ${visitsWhere}))`,
    ].join(' ');
  // Event metrics only, at most one dimension among daily_dims' (path, browser, os, country, device_type) and at most
  // one UTC day, week or month bucket, filters on that dimension only, no goal: its rows of the whole days (one per day
  // and value) and the edges' hold every figure. With no such dimension grouped, device_type's rows: every event has
  // one device type, so they hold each event of a day once (the dashboard's headline counts and its chart). A bucket
  // takes a row's UTC day as its time: compare then shifts by whole days only (an edge row's events all lie in its day).
  const eventDims = q.dimensions.filter((d) => !isTime(d));
  const timeDims = q.dimensions.filter(isTime);
  const dim = eventDims[0] ?? 'device_type';
  /** A UTC day, week or month bucket a daily aggregate's rows answer (compare moving them by whole days). */
  const dayBucket = (d: InsightDimension) => b.tz === undefined && ROLLUP_TIME.has(d) && (!compare || span % DAY_MS === 0);
  // A filter of bots alone or of everything but bots (device_type is or is not exactly 'bot') is the rows' bot flag,
  // beside any dimension: the dashboard's AI crawlers (bots' events by browser).
  const readsBotFlag = (c: InsightCondition) => dim !== 'device_type' && isBotFilter(c);
  const byBotFlag = q.filters.some(readsBotFlag);
  const fromDims =
    !joined && goal === '0' && eventDims.length <= 1 && DIMS_DIMENSIONS.has(dim) &&
    timeDims.length <= 1 && timeDims.every(dayBucket) &&
    q.metrics.every((m) => m in DIMS_METRIC_SQL) && q.filters.every((c) => dimensionsOf(c).every((d) => d === dim) || readsBotFlag(c));
  // Event metrics only by one time bucket otherwise (any zone, `time:hour` too), no other dimension, no filter, no
  // goal: quarter_hours' rows (migration 017), each quarter hour's events at its start. Every zone's hours and days
  // begin on a quarter hour, so a row's events all fall in its bucket; compare moves the previous period's rows by the
  // span, which keeps them on quarter hours when the span is a number of them.
  const fromQuarters =
    !fromDims && !joined && goal === '0' && eventDims.length === 0 && timeDims.length === 1 && q.filters.length === 0 &&
    q.metrics.every((m) => m in DIMS_METRIC_SQL) && (!compare || span % QUARTER_MS === 0);
  // Otherwise event metrics only, dimensions and filters among daily_rollup's columns (and UTC day, week or month
  // buckets, compare then by whole days), no goal: the aggregate's rows of the whole days (one per day and combination
  // of its columns, each with its event count and visitor sketch) and the edges' events folded, as daily_dims'; ~150K
  // rows for 10M events instead of every event (the dashboard's event names in any zone).
  const fromRollup =
    !fromDims && !fromQuarters && !joined && goal === '0' &&
    q.metrics.every((m) => m in ROLLUP_METRIC_SQL) &&
    [...q.dimensions, ...q.filters.flatMap(dimensionsOf)].every((d) => ROLLUP_DIMENSIONS.has(d) || dayBucket(d));
  if (joined || fromDims || fromQuarters || fromRollup) bindDays();
  if (summedDim) {
    Object.assign(b.params, {
      visit_days: summedDayList,
      raw_days: wholeDayList.filter((d) => !fresh.has(d)),
      spans_from: toClickHouseDate(floorDay(lo) - DAY_MS),
      spans_to: toClickHouseDate(ceilDay(q.to)),
    });
  }
  const metrics = periods.flatMap((p) =>
    q.metrics.map((m, i) => {
      const sql = summedDim ? SUMMED_METRIC_SQL[m]!(p) : fromDims || fromQuarters ? DIMS_METRIC_SQL[m as keyof typeof DIMS_METRIC_SQL](p) : fromRollup ? ROLLUP_METRIC_SQL[m as keyof typeof ROLLUP_METRIC_SQL](p) : visitorsByScan && m === 'visitors' ? visitorsScan(p) : metricSql(m, p, joined || fromVisits, q.metrics.includes('conversion_rate'));
      return `${sql} AS ${p ? 'm' : 'c'}${i}`;
    }),
  );
  const bucketFormat = b.tz === undefined ? BUCKET_FORMAT : ZONED_BUCKET_FORMAT;
  const output = q.dimensions.map((d, i) => (isTime(d) ? `formatDateTime(d${i}, ${bucketFormat}) AS o${i}` : `d${i} AS o${i}`));

  // A daily aggregate's row: its day as the time of its buckets, shifted into the range for compare.
  const day = "toDateTime64(day, 3, 'UTC')";
  /** A row's time `t`, moved forward by the span for the previous period's rows (compare). */
  const shifted = (t: string) => (compare ? `if(cur = 1, ${t}, addMilliseconds(${t}, {shift:Int64}))` : t);
  const dayTs = `${shifted(day)} AS ts`;
  /**
   * The rows of aggregate `name` (those matching `rows`) of the whole days, each with its period `cur`, beside the
   * edges' events folded by the aggregate's own SELECT: the FROM of daily_rollup's, daily_dims' and quarter_hours' reads.
   */
  const withEdges = (name: 'daily_rollup' | 'daily_dims' | 'quarter_hours', table: string, columns: string, rows?: string) => [
    `  FROM (SELECT ${columns}, toUInt8(day >= {from_day:Date}) AS cur FROM ${table}`,
    `    WHERE project_id = {project:UUID}${rows ? ` AND ${rows}` : ''} AND ${days}`,
    ...(hasEdges ? [`  UNION ALL SELECT ${columns}, ecur AS cur FROM (${foldEdges(name, edgeEvents)})${rows ? ` WHERE ${rows}` : ''}`] : []),
    '  ))',
  ];
  let from: string;
  if (fromDims) {
    // The dimension's value under its events column's name (each of DAILY_DIMS is one), so that its grouping and a
    // filter on it read as on the events: the aggregate's rows of the whole days beside the edges' events folded by
    // the aggregate's own SELECT.
    // A bot filter reads the device type the flag gives ('bot', or none of the others: '').
    from = [
      `SELECT *${dims.map((d, i) => `, ${d} AS d${i}`).join('')}`,
      `FROM (SELECT value AS ${dim}${byBotFlag ? ", if(bot = 1, 'bot', '') AS device_type" : ''}, events, pageviews, uniques, cur, ${dayTs}`,
      ...withEdges('daily_dims', tables.dailyDims, `value, day, events, pageviews, uniques${byBotFlag ? ', bot' : ''}`, `dim = '${dim}'${bots}`),
      ...(where.length > 0 ? [`WHERE ${where.join(' AND ')}`] : []),
    ].join('\n');
  } else if (fromQuarters) {
    // A row's time is its quarter hour's start (shifted into the range for compare), bucketed as an event's would be.
    const slot = `addSeconds(toDateTime64(day, 3, 'UTC'), slot * ${QUARTER_MS / 1000})`;
    from = [
      `SELECT *${dims.map((d, i) => `, ${d} AS d${i}`).join('')}`,
      `FROM (SELECT events, pageviews, uniques, cur, ${shifted(slot)} AS ts`,
      ...withEdges('quarter_hours', tables.quarterHours, 'day, slot, events, pageviews, uniques', q.include_bots ? undefined : 'bot = 0'),
    ].join('\n');
  } else if (fromRollup) {
    from = [
      `SELECT *${dims.map((d, i) => `, ${d} AS d${i}`).join('')}`,
      `FROM (SELECT event_name, country, device_type, events, uniques, cur, ${dayTs}`,
      ...withEdges('daily_rollup', tables.dailyRollup, 'event_name, country, device_type, day, events, uniques', q.include_bots ? undefined : "device_type != 'bot'"),
      ...(where.length > 0 ? [`WHERE ${where.join(' AND ')}`] : []),
    ].join('\n');
  } else if (fromVisits) {
    const columns: VisitColumn[] = [
      same('session_key AS visit'),
      same(`${visitCur} AS cur`),
      ...(visitorsByScan ? [] : [['any(anonymous_id) AS anon', 'anonymous_id AS anon'] as const]),
      ['sum(events) AS n', 'events AS n'],
      ['sum(pageviews) AS pv', 'pageviews AS pv'],
      same('n AS vn'),
      same('pv AS vpv'),
      ...(q.metrics.includes('visit_duration') || summedDim ? [VDUR] : []),
      ...(goal === '0'
        ? []
        : [
            same(`${anonKeyOf('anon')} AS akey`),
            same(
              [
                // Without compare every row is of the one period: the set holds visit keys alone (a UInt64 set).
                compare ? `(visit, cur) IN (SELECT visit_key, ${cur} FROM ${tables.events}` : `visit IN (SELECT visit_key FROM ${tables.events}`,
                `WHERE project_id = {project:UUID} AND timestamp >= {lo:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}${cut}${q.include_bots ? '' : " AND device_type != 'bot'"} AND ${goal}) AS g`,
              ].join(' '),
            ),
          ]),
    ];
    from = `SELECT *${dims.map((d, i) => `, ${d} AS d${i}`).join('')} FROM (${visitRows(columns, 'visit, cur')})${where.length > 0 ? `\nWHERE ${where.join(' AND ')}` : ''}`;
    if (summedDim) {
      // The per-visit rows summed per (dimension, period), beside visit_dims' rows of its fresh days in the same shape
      // (each dimension's value as the visit rows name it, `vd<i>`, so that its filters read as on them); the visitors'
      // sketches only when visitors is asked (merging a day's sketch costs more than its sums).
      const keys = [...dimAliases, 'cur'].join(', ');
      // The rows' value is the dimension they are of; a second visit dimension is channel, which splits them.
      const summedColumns = b.visitDims.map((d, i) => `${d === summedDim ? 'value' : 'channel'} AS vd${i}, `).join('');
      from = [
        `SELECT ${keys}, count() AS w, countIf(vn = 1 AND vpv = 1) AS b, sum(vdur) AS sdur, sum(vpv) AS spv, sum(n) AS sn${visitorsAsked ? ", uniqCombinedStateIf(anon, anon != '') AS u" : ''}`,
        `FROM (${from})`,
        `GROUP BY ${keys}`,
        'UNION ALL',
        `SELECT ${keys}, w, b, sdur, spv, sn${visitorsAsked ? ', u' : ''} FROM (SELECT *${dims.map((d, i) => `, ${d} AS d${i}`).join('')}`,
        `  FROM (SELECT ${summedColumns}toUInt8(day >= {from_day:Date}) AS cur, visits AS w, bounces AS b, duration AS sdur, pageviews AS spv, events AS sn${visitorsAsked ? ', uniques AS u' : ''}`,
        `    FROM ${tables.visitDims} FINAL WHERE project_id = {project:UUID} AND dim = '${summedDim}' AND day IN {visit_days:Array(Date)} AND visits > 0)`,
        ...(where.length > 0 ? [`  WHERE ${where.join(' AND ')}`] : []),
        ')',
      ].join('\n');
    }
  } else if (joined && perVisitFirst) {
    // The matching events grouped per (event dimensions, visit, period) first, then each of those rows joined to its
    // visit's row: the join and its grouping see one row per visit instead of one per event, and the visit's
    // anonymous_id comes with its row (BENCHMARKS.md, "Event filters and dimensions beside visit metrics": 1,461 ->
    // 872 ms for the filtered headline at 10M). Visit dimensions and the conditions on them are the visit row's.
    const visits = visitRows([same('session_key AS vkey'), same(`${visitCur} AS vcur`), ['any(anonymous_id) AS anon', 'anonymous_id AS anon'], ['sum(events) AS vn', 'events AS vn'], ['sum(pageviews) AS vpv', 'pageviews AS vpv'], VDUR], 'vkey, vcur', true);
    const ofVisit = dims.map(namesVisitDimension);
    const eventDimAliases = dims.flatMap((_, i) => (ofVisit[i] ? [] : [`d${i}`]));
    const eventWhere = where.filter((_, i) => !visitSide[i]);
    const visitWhere = where.filter((_, i) => visitSide[i]);
    from = [
      `SELECT ${[...dims.map((d, i) => (ofVisit[i] ? `${d} AS d${i}` : `e.d${i} AS d${i}`)), 'e.cur AS cur', 'anon', ...(goal === '0' ? [] : [`${anonKeyOf('anon')} AS akey`]), 'n', 'pv', 'vn', 'vpv', 'vdur', 'g'].join(', ')}`,
      `FROM (SELECT ${[...dims.flatMap((d, i) => (ofVisit[i] ? [] : [`${d} AS d${i}`])), 'skey', 'cur', 'count() AS n', "countIf(event_name = '$pageview') AS pv", `max(${goal}) AS g`].join(', ')}`,
      `  FROM (${base})`,
      ...(eventWhere.length > 0 ? [`  WHERE ${eventWhere.join(' AND ')}`] : []),
      `  GROUP BY ${[...eventDimAliases, 'skey', 'cur'].join(', ')}) AS e`,
      `INNER JOIN (${visits}) AS v ON e.skey = v.vkey AND e.cur = v.vcur`,
      ...(visitWhere.length > 0 ? [`WHERE ${visitWhere.join(' AND ')}`] : []),
    ].join('\n');
  } else if (joined) {
    const visits = visitRows([same('session_key AS vkey'), same(`${visitCur} AS vcur`), ['sum(events) AS vn', 'events AS vn'], ['sum(pageviews) AS vpv', 'pageviews AS vpv'], VDUR], 'vkey, vcur', true);
    from = [
      `SELECT ${[...dims.map((d, i) => `${d} AS d${i}`), 'e.visit AS visit', 'any(cur) AS cur', 'any(anonymous_id) AS anon', ...(goal === '0' ? [] : ['any(anon_key) AS akey']), 'count() AS n', "countIf(event_name = '$pageview') AS pv", 'any(vn) AS vn', 'any(vpv) AS vpv', 'any(vdur) AS vdur', `max(${goal}) AS g`].join(', ')}`,
      `FROM (${base}) AS e`,
      `INNER JOIN (${visits}) AS v ON e.skey = v.vkey AND e.cur = v.vcur`,
      ...(where.length > 0 ? [`WHERE ${where.join(' AND ')}`] : []),
      `GROUP BY ${[...dimAliases, 'visit'].join(', ')}`,
    ].join('\n');
  } else {
    from = [`SELECT *${dims.map((d, i) => `, ${d} AS d${i}`).join('')}, ${goal} AS g`, `FROM (${base})`, ...(where.length > 0 ? [`WHERE ${where.join(' AND ')}`] : [])].join('\n');
  }

  const names = [...q.metrics.map((m, i) => [m, `m${i}`] as const), ...q.dimensions.map((d, i) => [d, `d${i}`] as const)];
  const aliasOf = (name: string) => names.find(([n]) => n === name)![1];
  const order = (q.order_by ?? [[q.metrics[0]!, 'desc']]).map(([name, dir]) => `${aliasOf(name)} ${dir.toUpperCase()} NULLS LAST`);
  for (const [d, i] of q.dimensions.map((d, i) => [d, i] as const)) if (!q.order_by?.some(([n]) => n === d)) order.push(`d${i} ASC NULLS LAST`);

  const sql = [
    `SELECT ${[...output, ...metrics].join(', ')}`,
    `FROM (${from})`,
    ...(dims.length > 0 ? [`GROUP BY ${dimAliases.join(', ')}`, 'HAVING countIf(cur = 1) > 0'] : []),
    `ORDER BY ${order.join(', ')}`,
    'LIMIT {limit:UInt32}',
  ].join('\n');
  return { sql, params: b.params };
}

/** The answer's rows from the statement's: dimensions by name, metrics as numbers, `comparison` with compare. */
function rowsOf(q: InsightsQuery, raw: Array<Record<string, unknown>>): InsightsRow[] {
  return raw.map((r) => {
    const row: InsightsRow = {};
    q.dimensions.forEach((d, i) => (row[d] = (r[`o${i}`] as string | null | undefined) ?? null));
    q.metrics.forEach((m, i) => (row[m] = Number(r[`m${i}`])));
    if (q.compare) row.comparison = Object.fromEntries(q.metrics.map((m, i) => [m, Number(r[`c${i}`])]));
    return row;
  });
}

const isoOf = (ms: number) => new Date(ms).toISOString();

/**
 * POST /v1/insights over a validated body, under the read gate and limits (reader.read); `options`: the project's time
 * zone and the request's time. With compare, `compare_range` names the previous range compared.
 */
export async function queryInsights(reader: SourcesReader, projectId: string, q: InsightsQuery, options: ReadOptions = {}): Promise<InsightsResponse> {
  const now = options.now ?? Date.now();
  const visitDays = await freshVisitDays(reader, projectId, q, { ...options, now });
  const { sql, params } = buildInsights(reader.tables, projectId, q, { ...options, now, visitDays });
  const rows = rowsOf(q, await reader.read<Record<string, unknown>>(projectId, sql, params));
  if (q.compare !== 'previous_period') return { rows };
  const range = rangeInZone(q, options.timezone ?? DEFAULT_TIME_ZONE);
  const { lo, hi } = previousPeriod(range.from, range.to, now);
  return { rows, compare_range: { from: isoOf(lo), to: isoOf(hi) } };
}

/**
 * The whole UTC days of the read's periods that visit_dims holds fresh (as sources_daily's days are decided:
 * sourceDayState over the days' seqs), when its shape can read them; one small statement before the read. The stale
 * days it finds are told to the builder's keeper when this process has it (as querySources does): a day built before
 * the keeper's start window (62 days) is then refreshed once a read asks for it.
 */
export async function freshVisitDays(reader: SourcesReader, projectId: string, q: InsightsQuery, options: ReadOptions = {}): Promise<string[] | undefined> {
  const { visitDims, visitDimsDays, dailyUniques } = reader.tables;
  if (!visitDims || !visitDimsDays || !visitDimsShape(q)) return undefined;
  const range = rangeInZone(q, options.timezone ?? DEFAULT_TIME_ZONE);
  const lo = q.compare === 'previous_period' ? previousPeriod(range.from, range.to, options.now ?? Date.now()).lo : range.from;
  const fromDay = ceilDay(lo);
  const toDay = floorDay(range.to);
  if (toDay <= fromDay) return undefined;
  const seqs = await readSourceDaySeqs((sql, bound) => reader.read(projectId, sql, bound), { dailyUniques, refreshedDays: visitDimsDays }, projectId, toClickHouseDate(fromDay), toClickHouseDate(toDay));
  const days: string[] = [];
  const stale: string[] = [];
  for (let ms = fromDay; ms < toDay; ms += DAY_MS) {
    const state = sourceDayState(toClickHouseDate(ms), seqs);
    if (state === 'fresh') days.push(toClickHouseDate(ms));
    else if (state === 'stale') stale.push(toClickHouseDate(ms));
  }
  if (stale.length > 0) reader.sourcesDaily?.markStale(projectId, stale);
  return days;
}
