import { STATS_GROUP_BY, type StatsGroupBy, type StatsMetric, type StatsParams } from '@analytics/schema';
import { isUtcMidnight, toClickHouseDate, toClickHouseTime } from '../primitives/clickhouse-time';
import type { ReadTables } from '../tables/read-tables';
import { QUARTER_MS } from '../tables/aggregates';
import { UNIQUES_BY_GROUP_BY } from '../tables/uniques-by';

/**
 * Which table answers a stats request: daily_rollup, daily_uniques or daily_uniques_by (metric=uniques only),
 * quarter_hours (buckets in any zone, no group_by), raw events.
 */
export type StatsSource = 'rollup' | 'uniques' | 'uniques_by' | 'quarters' | 'events';
export type StatsInterval = NonNullable<StatsParams['interval']>;

/**
 * Every group_by column's SQL (keyed by the catalog's STATS_COLUMNS in libs/schema: a column added there without its
 * SQL here is a compile error), the allow-list: every identifier a request can put into SQL comes from here, never
 * from the request.
 * - `rollup`: daily_rollup keeps the column (a request grouped only by such columns may be answered from it).
 * - `lowCardinality`: stored as LowCardinality(String) in events. Grouping raw events by two or more of them makes
 *   ClickHouse serialize every row's key; grouping by their cityHash64 keeps fixed-size keys (BENCHMARKS.md, "Read path
 *   at scale") and any() takes the value back. Two values of one column colliding in 64 bits: ~n^2/2^65.
 */
export const STATS_COLUMN_SQL: Record<StatsGroupBy, { sql: string; rollup: boolean; lowCardinality: boolean }> = {
  event_name: { sql: 'event_name', rollup: true, lowCardinality: false },
  source: { sql: 'source', rollup: true, lowCardinality: true },
  medium: { sql: 'medium', rollup: true, lowCardinality: true },
  country: { sql: 'country', rollup: true, lowCardinality: true },
  device_type: { sql: 'device_type', rollup: true, lowCardinality: true },
  browser: { sql: 'browser', rollup: false, lowCardinality: true },
  os: { sql: 'os', rollup: false, lowCardinality: true },
  path: { sql: 'path', rollup: false, lowCardinality: false },
  channel: { sql: 'channel', rollup: false, lowCardinality: true },
};
const COLUMN_SQL = (c: StatsGroupBy) => STATS_COLUMN_SQL[c].sql;

/** The group_by columns daily_rollup keeps: a request grouped only by these may be answered from it. */
export const ROLLUP_GROUP_BY: readonly StatsGroupBy[] = STATS_GROUP_BY.filter((c) => STATS_COLUMN_SQL[c].rollup);
/** The group_by columns daily_uniques keeps (its grain is project_id, day, event_name). */
export const UNIQUES_GROUP_BY: readonly StatsGroupBy[] = ['event_name'];

/** The buckets in `tz` (issue 47), bound as {tz:String}: the daily aggregates' days are UTC days, so events or quarter_hours answer. */
const ZONED_BUCKET_SQL: Record<StatsInterval, string> = { hour: 'toStartOfHour(timestamp, {tz:String})', day: 'toDate(timestamp, {tz:String})', week: 'toMonday(timestamp, {tz:String})' };

const BUCKET_SQL: Record<StatsSource, Partial<Record<StatsInterval, string>>> = {
  events: { hour: 'toStartOfHour(timestamp)', day: 'toDate(timestamp)', week: 'toMonday(timestamp)' },
  quarters: { hour: 'toStartOfHour(timestamp)', day: 'toDate(timestamp)', week: 'toMonday(timestamp)' },
  rollup: { day: 'day', week: 'toMonday(day)' },
  uniques: { day: 'day', week: 'toMonday(day)' },
  uniques_by: { day: 'day', week: 'toMonday(day)' },
};

// daily_uniques has no event counts: it answers metric=uniques only.
const VALUE_SQL: Record<StatsSource, Partial<Record<StatsMetric, string>>> = {
  events: { count: 'count()', uniques: "uniqCombinedIf(anonymous_id, anonymous_id != '')" },
  quarters: { count: 'sum(events)', uniques: 'uniqCombinedMerge(uniques)' },
  rollup: { count: 'sum(events)', uniques: 'uniqCombinedMerge(uniques)' },
  uniques: { uniques: 'uniqCombinedMerge(uniques)' },
  uniques_by: { uniques: 'uniqCombinedMerge(uniques)' },
};

/** True when daily_rollup holds the request's grain: rollup columns only, day/week or no buckets, whole UTC days. */
export function rollupFits(params: Pick<StatsParams, 'from' | 'to' | 'interval'> & { tz?: string }, groupBy: readonly StatsGroupBy[]): boolean {
  return (
    groupBy.every((c) => ROLLUP_GROUP_BY.includes(c)) &&
    (params.interval === undefined || (params.interval in BUCKET_SQL.rollup && zoneOf(params) === undefined)) &&
    isUtcMidnight(params.from) &&
    isUtcMidnight(params.to)
  );
}

/** True when daily_uniques answers the request: metric=uniques, the rollup's time shape, no group_by but event_name. */
export function uniquesFits(params: Pick<StatsParams, 'from' | 'to' | 'interval' | 'metric'>, groupBy: readonly StatsGroupBy[]): boolean {
  return params.metric === 'uniques' && groupBy.every((c) => UNIQUES_GROUP_BY.includes(c)) && rollupFits(params, groupBy);
}

/**
 * True when daily_uniques_by answers the request (the store has it): metric=uniques over whole days, and either no
 * group_by and no event filter (all visitors: dim '', event_name '') or exactly one of its columns (event filter or
 * not: event_name is the filter or '').
 */
export function uniquesByFits(tables: ReadTables, params: Pick<StatsParams, 'from' | 'to' | 'interval' | 'metric' | 'event'>, groupBy: readonly StatsGroupBy[]): boolean {
  const shape = groupBy.length === 0 ? params.event === undefined : groupBy.length === 1 && (UNIQUES_BY_GROUP_BY as readonly StatsGroupBy[]).includes(groupBy[0]!);
  return tables.dailyUniquesBy !== undefined && params.metric === 'uniques' && shape && rollupFits(params, groupBy);
}

/**
 * True when quarter_hours answers the request: buckets (in any zone: every zone's hours, days and weeks begin on a
 * quarter hour, so each row's events fall in one bucket), no group_by, no event filter but `$pageview` counted (its
 * own column), and a range on quarter hours (a row then lies wholly in it or out of it).
 */
export function quartersFit(params: Pick<StatsParams, 'from' | 'to' | 'interval' | 'metric' | 'event'>, groupBy: readonly StatsGroupBy[]): boolean {
  return (
    params.interval !== undefined && groupBy.length === 0 &&
    (params.event === undefined || (params.event === '$pageview' && params.metric === 'count')) &&
    params.from % QUARTER_MS === 0 && params.to % QUARTER_MS === 0
  );
}

/** The request's time zone when it is not UTC (its buckets then need {tz:String}); undefined in UTC. */
const zoneOf = (params: { tz?: string }) => (params.tz === undefined || params.tz === 'UTC' ? undefined : params.tz);

const FROM: Record<StatsSource, (t: ReadTables) => string> = {
  events: (t) => t.events,
  // A row's time is its quarter hour's start, under the events' name so that the buckets read as theirs.
  quarters: (t) => `(SELECT project_id, day, addSeconds(toDateTime64(day, 3, 'UTC'), slot * ${QUARTER_MS / 1000}) AS timestamp, events, pageviews, uniques FROM ${t.quarterHours})`,
  rollup: (t) => t.dailyRollup,
  uniques: (t) => t.dailyUniques,
  uniques_by: (t) => t.dailyUniquesBy!,
};

export interface StatsPlan {
  projectId: string;
  source: StatsSource;
  sql: string;
  params: Record<string, unknown>;
  groupBy: StatsGroupBy[];
  interval: StatsInterval | undefined;
}

/**
 * Plans GET /v1/stats: daily_uniques_by for uniques over whole days without grouping (no event filter) or by one of
 * its columns (embedded store), daily_uniques for uniques without grouping (or by event_name only) over whole days,
 * daily_rollup when the request fits its grain, quarter_hours for buckets it cannot answer (an hour, a zone off UTC,
 * a range off UTC midnights) without group_by, events otherwise (or the source `force`d, for tests proving they all
 * agree). Rows: bucket ascending, value descending, then group columns ascending.
 */
export function planStats(tables: ReadTables, projectId: string, params: StatsParams, groupBy: StatsGroupBy[], force?: StatsSource): StatsPlan {
  const fits = rollupFits(params, groupBy);
  const uniquesFit = uniquesFits(params, groupBy);
  const uniquesByFit = uniquesByFits(tables, params, groupBy);
  const quartersFits = quartersFit(params, groupBy);
  if (force === 'rollup' && !fits) throw new Error('stats planner: this request does not fit daily_rollup');
  if (force === 'uniques' && !uniquesFit) throw new Error('stats planner: this request does not fit daily_uniques');
  if (force === 'uniques_by' && !uniquesByFit) throw new Error('stats planner: this request does not fit daily_uniques_by');
  if (force === 'quarters' && !quartersFits) throw new Error('stats planner: this request does not fit quarter_hours');
  const source: StatsSource = force ?? (uniquesByFit ? 'uniques_by' : uniquesFit ? 'uniques' : fits ? 'rollup' : quartersFits ? 'quarters' : 'events');

  const bound: Record<string, unknown> = { p: projectId, limit: params.limit };
  const where = ['project_id = {p:UUID}'];
  if (source === 'quarters') {
    // The UTC days the range touches (the key's range), then its quarter hours.
    where.push('day >= {from_day:Date}', 'day <= {last_day:Date}', "timestamp >= {from:DateTime64(3, 'UTC')}", "timestamp < {to:DateTime64(3, 'UTC')}");
    Object.assign(bound, { from_day: toClickHouseDate(params.from), last_day: toClickHouseDate(params.to - 1), from: toClickHouseTime(params.from), to: toClickHouseTime(params.to) });
  } else if (source !== 'events') {
    where.push('day >= {from_day:Date}', 'day < {to_day:Date}');
    bound.from_day = toClickHouseDate(params.from);
    bound.to_day = toClickHouseDate(params.to);
  } else {
    where.push("timestamp >= {from:DateTime64(3, 'UTC')}", "timestamp < {to:DateTime64(3, 'UTC')}");
    bound.from = toClickHouseTime(params.from);
    bound.to = toClickHouseTime(params.to);
  }
  // quarter_hours counts `$pageview` in a column of its own (quartersFit admits no other event): its rows with some.
  if (params.event !== undefined && source === 'quarters') where.push('pageviews > 0');
  if (params.event !== undefined && source !== 'quarters') {
    where.push('event_name = {event:String}');
    bound.event = params.event;
  }
  if (source === 'uniques_by') {
    // dim: the one group_by column or '' (allow-listed names, bound all the same); event_name '' = every event.
    where.push('dim = {dim:String}');
    bound.dim = groupBy[0] ?? '';
    if (params.event === undefined) where.push("event_name = ''");
  }

  const columns = groupBy.map(COLUMN_SQL);
  const tz = zoneOf(params);
  if (tz !== undefined && params.interval) bound.tz = tz;
  const bucket = params.interval ? (tz !== undefined ? ZONED_BUCKET_SQL[params.interval] : BUCKET_SQL[source][params.interval]!) : undefined;
  // Raw events grouped by 2+ keys: LowCardinality columns by their hash (see STATS_COLUMN_SQL), read as e.<column>.
  const hashed = (c: StatsGroupBy) => source === 'events' && (bucket ? 1 : 0) + columns.length >= 2 && STATS_COLUMN_SQL[c].lowCardinality;
  const column = (c: StatsGroupBy) => (source === 'uniques_by' ? `dim_value AS ${COLUMN_SQL(c)}` : hashed(c) ? `any(e.${COLUMN_SQL(c)}) AS ${COLUMN_SQL(c)}` : COLUMN_SQL(c));
  const key = (c: StatsGroupBy) => (source === 'uniques_by' ? 'dim_value' : hashed(c) ? `cityHash64(e.${COLUMN_SQL(c)})` : COLUMN_SQL(c));
  const value = source === 'quarters' && params.event === '$pageview' ? 'sum(pageviews)' : VALUE_SQL[source][params.metric]!;
  const select = [...(bucket ? [`formatDateTime(${bucket}, '%Y-%m-%d %H:%i:%S', ${tz !== undefined ? '{tz:String}' : "'UTC'"}) AS bucket`] : []), ...groupBy.map(column), `${value} AS value`];
  const keys = [...(bucket ? [bucket] : []), ...groupBy.map(key)];
  const order = [...(bucket ? ['bucket ASC'] : []), 'value DESC', ...columns.map((c) => `${c} ASC`)];
  const sql = [
    `SELECT ${select.join(', ')}`,
    `FROM ${FROM[source](tables)}${source === 'events' ? ' AS e' : ''}`,
    `WHERE ${where.join(' AND ')}`,
    ...(keys.length > 0 ? [`GROUP BY ${keys.join(', ')}`] : []),
    `ORDER BY ${order.join(', ')}`,
    'LIMIT {limit:UInt32}',
  ].join(' ');
  return { projectId, source, sql, params: bound, groupBy, interval: params.interval };
}
