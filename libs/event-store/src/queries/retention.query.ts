import { DAY_MS, DEFAULT_TIME_ZONE, type RetentionPeriod, type RetentionQuery, type RetentionResponse, localMidnight, rangeInZone } from '@analytics/schema';
import { isUtcMidnight, toClickHouseDate } from '../primitives/clickhouse-time';
import { ANON_DAILY_SQL } from '../tables/event-keys';
import type { ReadTables } from '../tables/read-tables';
import { Builder, type Query, type ReadOptions } from './dimension-sql';
import { DAILY_IDS_NOTE, eventRows } from './entity-rows';
import type { Reader } from './reader';

const PERIOD_SQL: Record<RetentionPeriod, (ts: string) => string> = { day: (t) => `toDate(${t})`, week: (t) => `toMonday(${t})`, month: (t) => `toStartOfMonth(${t})` };
/** The periods in the project's time zone (issue 47), bound as {tz:String}: local dates, Mondays, firsts of the month. */
const ZONED_PERIOD_SQL: Record<RetentionPeriod, (ts: string) => string> = {
  day: (t) => `toDate(${t}, {tz:String})`,
  week: (t) => `toMonday(${t}, {tz:String})`,
  month: (t) => `toStartOfMonth(${t}, {tz:String})`,
};
const PERIOD_DIFF: Record<RetentionPeriod, (p: string, c: string) => string> = {
  day: (p, c) => `(toInt64(toRelativeDayNum(${p})) - toRelativeDayNum(${c}))`,
  week: (p, c) => `intDiv(toInt64(toRelativeDayNum(${p})) - toRelativeDayNum(${c}), 7)`,
  month: (p, c) => `(toInt64(toRelativeMonthNum(${p})) - toRelativeMonthNum(${c}))`,
};

/**
 * Builds POST /v1/retention as one statement: per entity, its first start event's period (the cohort) and the distinct
 * periods of its return events; rows (cohort, k, entities), k = -1 giving each cohort's size.
 */
export function buildRetention(tables: ReadTables, projectId: string, query: RetentionQuery, options: ReadOptions = {}): Query {
  const tz = options.timezone ?? DEFAULT_TIME_ZONE;
  const q = rangeInZone(query, tz);
  const b = new Builder(tz === DEFAULT_TIME_ZONE ? undefined : tz);
  const start = q.start ? b.goal(q.start) : '1';
  const ret = q.return ? b.goal(q.return) : '1';
  // Any event as start and return, by visitor, no filter, whole UTC days: who was active on which day is in the visits
  // aggregate (a row per visitor's session and day, its first event time), ~1 row per visit instead of every event.
  const fromVisits = q.count_by === 'visitor' && !q.start && !q.return && q.filters.length === 0 && isUtcMidnight(q.from) && isUtcMidnight(q.to);
  if (fromVisits) Object.assign(b.params, { project: projectId, from_day: toClickHouseDate(q.from), to_day: toClickHouseDate(q.to) });
  const rows = fromVisits
    ? [
        `SELECT anonymous_id AS ent, ${ANON_DAILY_SQL} AS dly, first_ts AS ts, 1 AS st, 1 AS rt`,
        `FROM ${tables.visits}`,
        `WHERE project_id = {project:UUID} AND day >= {from_day:Date} AND day < {to_day:Date} AND anonymous_id != ''${q.include_bots ? '' : ' AND bot = 0'}`,
      ].join('\n')
    : eventRows(b, tables, projectId, q, q.count_by, () => ['timestamp AS ts', `${start} AS st`, `${ret} AS rt`], () => [`(${start} OR ${ret})`]);
  const period = (b.tz === undefined ? PERIOD_SQL : ZONED_PERIOD_SQL)[q.period];
  const perEntity = [
    `SELECT ent, max(dly) AS daily, ${period('minIf(ts, st)')} AS cohort, groupUniqArrayIf(${period('ts')}, rt) AS ps`,
    `FROM (${rows}) GROUP BY ent HAVING countIf(st) > 0`,
  ].join('\n');
  const sql = [
    "SELECT formatDateTime(cohort, '%Y-%m-%d') AS c, k, count() AS n, countIf(daily = 1) AS daily",
    `FROM (${perEntity})`,
    `ARRAY JOIN arrayConcat([-1], arrayFilter(k -> k >= 0, arrayMap(p -> ${PERIOD_DIFF[q.period]('p', 'cohort')}, ps))) AS k`,
    'GROUP BY c, k ORDER BY c, k',
  ].join('\n');
  return { sql, params: b.params };
}

/** The start (ms) of the period k periods after the one starting at `cohort` (YYYY-MM-DD): its local midnight in `tz`. */
function periodStart(cohort: string, period: RetentionPeriod, k: number, tz: string): number {
  const [y, m, d] = cohort.split('-').map(Number) as [number, number, number];
  const day = period === 'month' ? Date.UTC(y, m - 1 + k, 1) : Date.UTC(y, m - 1, d) + k * (period === 'week' ? 7 : 1) * DAY_MS;
  return tz === DEFAULT_TIME_ZONE ? day : localMidnight(new Date(day).toISOString().slice(0, 10), tz);
}

/** POST /v1/retention over a validated body, under the read gate and limits (reader.read). */
export async function queryRetention(reader: Reader, projectId: string, query: RetentionQuery, options: ReadOptions = {}): Promise<RetentionResponse> {
  const tz = options.timezone ?? DEFAULT_TIME_ZONE;
  const q = rangeInZone(query, tz);
  const { sql, params } = buildRetention(reader.tables, projectId, q, { timezone: tz });
  const rows = await reader.read<{ c: string; k: number | string; n: number | string; daily: number | string }>(projectId, sql, params);
  const cohorts = new Map<string, { cohort: string; size: number; returned: number[] }>();
  let ents = 0;
  let daily = 0;
  for (const r of rows) {
    let c = cohorts.get(r.c);
    if (!c) {
      let periods = 0;
      while (periodStart(r.c, q.period, periods, tz) < q.to) periods++;
      cohorts.set(r.c, (c = { cohort: r.c, size: 0, returned: new Array<number>(periods).fill(0) }));
    }
    const k = Number(r.k);
    if (k < 0) {
      c.size = Number(r.n);
      ents += Number(r.n);
      daily += Number(r.daily);
    } else if (k < c.returned.length) c.returned[k] = Number(r.n);
  }
  const out: RetentionResponse = { cohorts: [...cohorts.values()] };
  if (q.count_by === 'visitor' && q.to - q.from > DAY_MS && ents > 0 && daily * 2 >= ents) out.notes = [DAILY_IDS_NOTE];
  return out;
}
