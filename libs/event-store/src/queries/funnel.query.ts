import {
  DAY_MS,
  FUNNEL_LIMITS,
  type FunnelQuery,
  type FunnelResponse,
  type FunnelStep,
  type InsightCondition,
  type InsightDimension,
  type RetentionPeriod,
  type RetentionQuery,
  type RetentionResponse,
  dimensionKind,
} from '@analytics/schema';
import { isUtcMidnight, toClickHouseDate, toClickHouseTime } from '../primitives/clickhouse-time';
import { Builder, COLUMNS_OF, DIMENSION_SQL, type Query, dimensionsOf, namesVisitDimension, visitValueOf } from './dimension-sql';
import { ANON_DAILY_SQL, HAS_ANON_KEY } from '../tables/event-keys';
import type { ReadTables } from '../tables/read-tables';
import type { Reader } from './reader';

// POST /v1/funnel and POST /v1/retention over the raw `events` table (exact: distinct entities). The meanings are
// the README's "Conversions".
//
// Both read the range's events (bots left out unless asked), each joined to its visit's row when a filter, goal or
// breakdown names a visit dimension (as /v1/insights), keep those the filters hold for, and group them per entity.
//
// Funnel: per entity, the sorted times of each step's events; for each of its step-1 events s, the greedy chain (each
// next step's earliest event at or after the previous one, no later than s + window). An entity reaches the level of
// its best chain (ClickHouse's windowFunnel(window) in its default mode); the chain kept is the latest start among
// those of the highest level, and gives the times between steps and the breakdown value (that of its step-1 event).
// Measured against windowFunnel itself: BENCHMARKS.md.

/**
 * The SQL of each entity kind; an event without one (no such id) is never counted. Visitors are grouped by anon_key
 * (migration 011: the id's 128-bit SipHash, as exact as the id, 16 fixed bytes per event); `daily` says whether the
 * entity is a daily visitor id (the answers' note).
 */
const ENTITY = {
  visitor: { sql: 'anon_key', has: HAS_ANON_KEY, daily: 'anon_daily', columns: ['anon_key', 'anon_daily'] },
  user: { sql: "ifNull(user_id, '')", has: "ifNull(user_id, '') != ''", daily: '0', columns: ['user_id'] },
  session: { sql: 'session_id', has: "session_id != ''", daily: '0', columns: [] },
} as const;

export const DAILY_IDS_NOTE =
  'Most visitor ids here are daily ids (the browser SDK\'s default persistence: \'none\' gives a visitor a new id every UTC day): a person coming back on another day counts as another visitor, so figures across days undercount. Send user_id and use count_by: "user" to follow people across days.';

interface Range {
  from: number;
  to: number;
  include_bots: boolean;
  filters: InsightCondition[];
}

/**
 * The range's events of the project, as rows of `entity` plus `cols` (SQL over an event row, its visit dimensions
 * included), where the filters and `where` hold. The builder's conditions may name visit dimensions: then each event is
 * joined to its visit's row.
 */
function eventRows(
  b: Builder,
  tables: ReadTables,
  projectId: string,
  r: Range,
  entity: keyof typeof ENTITY,
  cols: (b: Builder) => string[],
  where: (b: Builder) => string[],
  visitsNeeded?: string,
): string {
  Object.assign(b.params, { project: projectId, from: toClickHouseTime(r.from), to: toClickHouseTime(r.to) });
  for (const c of ENTITY[entity].columns) b.columns.add(c);
  const filters = r.filters.map((c) => b.condition(c));
  const selected = cols(b);
  const conditions = [...filters, ...where(b), ENTITY[entity].has];
  for (const d of b.visitDims) for (const col of COLUMNS_OF[d]) b.columns.add(col);
  if (b.visitDims.some((d) => d === 'entry_path' || d === 'exit_path')) b.columns.add('event_id');
  const range = [
    "project_id = {project:UUID} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}",
    ...(r.include_bots ? [] : ["device_type != 'bot'"]),
  ];
  // No visit dimension: one flat SELECT over `events` (the engine moves the cheap conditions to PREWHERE and reads
  // the other columns only for the rows they keep; no visit hash is computed).
  const head = `SELECT ${ENTITY[entity].sql} AS ent, ${ENTITY[entity].daily} AS dly, ${selected.join(', ')}`;
  if (b.visitDims.length === 0) return [head, `FROM ${tables.events}`, `WHERE ${[...range, ...conditions].join(' AND ')}`].join('\n');
  // Visit dimensions: each visit's values from all its events in the range, joined to the events that the conditions
  // not naming a visit dimension already kept (those are checked before the join, the others after it).
  const visitCols = `SELECT ${[...b.columns].join(', ')}, visit_key AS visit FROM ${tables.events}`;
  const kept = `${visitCols} WHERE ${[...range, ...conditions.filter((c) => !namesVisitDimension(c))].join(' AND ')}`;
  // `visitsNeeded` (an event condition): only the visits with such an event are read for their values (less memory);
  // the other events keep their row (LEFT JOIN) with empty visit values, which nothing then reads.
  const only = visitsNeeded && !namesVisitDimension(visitsNeeded) && !conditions.some(namesVisitDimension) ? ` AND visit IN (SELECT visit FROM (${kept}) WHERE ${visitsNeeded})` : '';
  const visits = `SELECT visit${b.visitDims.map((d, i) => `, ${DIMENSION_SQL[d]} AS vd${i}`).join('')} FROM (${visitCols} WHERE ${range.join(' AND ')}${only}) GROUP BY visit`;
  const after = conditions.filter(namesVisitDimension);
  return [head, `FROM (${kept}) AS e`, `LEFT JOIN (${visits}) AS v ON e.visit = v.visit`, ...(after.length > 0 ? [`WHERE ${after.join(' AND ')}`] : [])].join('\n');
}

/** The key of an event's visit (migration 011), as the `visits` aggregate's session_key. */
const VISIT_KEY = 'visit_key';

/** Bits below an event's time in its packed value (one per step, 10 at most): `(ms << 10) | steps it completes`. */
const STEP_BITS = 10;

/** Builds POST /v1/funnel as one statement (see the top of this file); every value is a bound parameter. */
export function buildFunnel(tables: ReadTables, projectId: string, q: FunnelQuery): Query {
  const b = new Builder();
  const steps = q.steps.map((g) => b.goal(g));
  const bd = q.breakdown as InsightDimension | undefined;
  // A visit-dimension breakdown over whole UTC days, with no step or filter naming a visit dimension: the kept chain's
  // step-1 event gives its visit's key, and only those visits' values are read, from the `visits` aggregate (instead of
  // grouping every event of the visits holding a step-1 event: 3.7 s CPU at 10M events, BENCHMARKS.md).
  const visitValues =
    bd !== undefined && dimensionKind(bd) === 'visit' && b.visitDims.length === 0 && q.filters.flatMap(dimensionsOf).every((d) => dimensionKind(d) === 'event') && isUtcMidnight(q.from) && isUtcMidnight(q.to)
      ? visitValueOf(tables, bd, q.include_bots)
      : undefined;
  if (visitValues) Object.assign(b.params, { from_day: toClickHouseDate(q.from), to_day: toClickHouseDate(q.to) });
  const bv = visitValues ? VISIT_KEY : bd ? b.value(bd) : null;
  b.params.window = q.window_s * 1000;
  // Each kept event as one UInt64: its time in ms above STEP_BITS bits saying which steps it completes (2000-2100 fits
  // in 42 bits). One array per entity sorted once (numbers) instead of one array per step (BENCHMARKS.md).
  const mask = steps.map((st, i) => `bitShiftLeft(toUInt64(${st}), ${i})`).join(' + ');
  const packed = `bitOr(bitShiftLeft(toUInt64(toUnixTimestamp64Milli(timestamp)), ${STEP_BITS}), ${mask}) AS x`;
  // A visit key is hashed only for step-1 events (the only ones whose value is read).
  const cols = () => [packed, ...(bv ? [`${visitValues ? `if(${steps[0]}, ${bv}, 0)` : bv} AS bv`, `${steps[0]} AS s1`] : [])];
  const rows = eventRows(b, tables, projectId, q, q.count_by, cols, () => [`(${steps.join(' OR ')})`], steps[0]);
  // Per entity: a1 = its step-1 events as (time, breakdown value), a2..an the times of the later steps, each sorted.
  const timesOf = (i: number) => `arrayMap(v -> toInt64(bitShiftRight(v, ${STEP_BITS})), arrayFilter(v -> bitTest(v, ${i}), a))`;
  const arrays = [bv ? 'b1 AS a1' : `arrayMap(t -> (t, NULL), ${timesOf(0)}) AS a1`, ...steps.slice(1).map((_, i) => `${timesOf(i + 1)} AS a${i + 2}`)];
  const grouped = [
    `SELECT ent, max(dly) AS daily, arraySort(groupArray(x)) AS a${bv ? `, arrayMap(t -> (toInt64(bitShiftRight(t.1, ${STEP_BITS})), t.2), arraySort(groupArrayIf((x, bv), s1))) AS b1` : ''}`,
    `FROM (${rows}) GROUP BY ent HAVING arrayExists(v -> bitTest(v, 0), a)`,
  ].join('\n');
  // chains: for each step-1 event, (time, value, [t1, t2, ...]) with NULL past the last step reached.
  // t1 = the start; t(j) = the first time of step j at or after t(j-1) and within the window (NULL: none, and so after).
  const t: string[] = ['toNullable(p.1)'];
  for (let j = 2; j <= steps.length; j++) t.push(`arrayFirstOrNull(x${j} -> x${j} >= ${t[j - 2]} AND x${j} <= p.1 + {window:Int64}, a${j})`);
  const chains = `arrayMap(p -> (p.1, p.2, [${t.join(', ')}]), a1)`;
  const level = (c: string) => `arrayCount(t -> t IS NOT NULL, ${c}.3)`;
  const chainsPerEntity = [
    `SELECT ent, daily, best.2 AS bv, ${level('best')} AS level, arrayMap(i -> assumeNotNull(best.3[i + 1]) - assumeNotNull(best.3[i]), range(1, level)) AS d`,
    `FROM (SELECT ent, daily, arrayReverseSort(c -> (${level('c')}, c.1), ${chains})[1] AS best FROM (SELECT ent, daily, ${arrays.join(', ')} FROM (${grouped})))`,
  ].join('\n');
  // With visitValues, bv is the kept chain's visit key until here: each entity takes its visit's value, merged from
  // that visit's rows in the aggregate (the entities are the hash join's build side, ~1 row per entity; the visit rows
  // stream through it, and only the matched ones are grouped: cheaper than grouping every visit of the range first).
  const perEntity = visitValues
    ? [
        `SELECT any(p.daily) AS daily, ${visitValues.merge}, ${visitValues.value} AS bv, any(p.level) AS level, any(p.d) AS d`,
        `FROM (${visitValues.rows}) AS v RIGHT JOIN (SELECT ent AS who, daily, bv AS vkey, level, d FROM (${chainsPerEntity})) AS p ON v.vkey = p.vkey`,
        'GROUP BY p.who',
      ].join('\n')
    : chainsPerEntity;
  const metrics = [
    'count() AS ents',
    'countIf(daily = 1) AS daily',
    ...steps.map((_, i) => `countIf(level >= ${i + 1}) AS n${i + 1}`),
    ...steps.slice(1).map((_, i) => `quantileExactInclusiveIf(0.5)(d[${i + 1}], level >= ${i + 2}) AS m${i + 2}`),
  ];
  const sql = q.breakdown
    ? `SELECT grouping(bv) = 1 AS total, bv, ${metrics.join(', ')} FROM (${perEntity}) GROUP BY GROUPING SETS ((), (bv))`
    : `SELECT 1 AS total, NULL AS bv, ${metrics.join(', ')} FROM (${perEntity})`;
  return { sql, params: b.params };
}

type Raw = Record<string, unknown>;

function stepsOf(r: Raw | undefined, n: number): FunnelStep[] {
  const count = (k: number) => (r ? Number(r[`n${k}`]) : 0);
  return Array.from({ length: n }, (_, i) => {
    const k = i + 1;
    const c = count(k);
    const m = k > 1 && c > 0 ? Number(r![`m${k}`]) / 1000 : null;
    return { index: k, count: c, conversion_rate: count(1) === 0 ? 0 : c / count(1), drop_off: k === 1 ? 0 : count(k - 1) - c, median_time_to_convert_s: m };
  });
}

const dailyNote = (countBy: string, span: number, r: Raw | undefined) => countBy === 'visitor' && span > DAY_MS && r !== undefined && Number(r.ents) > 0 && Number(r.daily) * 2 >= Number(r.ents);

/** POST /v1/funnel over a validated body, under the read gate and limits (reader.read). */
export async function queryFunnel(reader: Reader, projectId: string, q: FunnelQuery): Promise<FunnelResponse> {
  const { sql, params } = buildFunnel(reader.tables, projectId, q);
  const rows = await reader.read<Raw>(projectId, sql, params);
  // grouping(bv) = 1 on the totals row (bv aggregated away), 0 on each value's row.
  const total = rows.find((r) => Number(r.total) === 1);
  const out: FunnelResponse = { steps: stepsOf(total, q.steps.length) };
  if (q.breakdown) {
    const values = rows
      .filter((r) => Number(r.total) === 0)
      .map((r) => ({ value: r.bv === null || r.bv === undefined ? null : String(r.bv), n1: Number(r.n1), r }))
      .sort((x, y) => y.n1 - x.n1 || (x.value === y.value ? 0 : x.value === null ? 1 : y.value === null ? -1 : Buffer.compare(Buffer.from(x.value), Buffer.from(y.value))));
    out.breakdown = values.slice(0, FUNNEL_LIMITS.breakdownValues).map(({ value, r }) => ({ value, steps: stepsOf(r, q.steps.length) }));
  }
  if (dailyNote(q.count_by, q.to - q.from, total)) out.notes = [DAILY_IDS_NOTE];
  return out;
}

const PERIOD_SQL: Record<RetentionPeriod, (ts: string) => string> = { day: (t) => `toDate(${t})`, week: (t) => `toMonday(${t})`, month: (t) => `toStartOfMonth(${t})` };
const PERIOD_DIFF: Record<RetentionPeriod, (p: string, c: string) => string> = {
  day: (p, c) => `(toInt64(toRelativeDayNum(${p})) - toRelativeDayNum(${c}))`,
  week: (p, c) => `intDiv(toInt64(toRelativeDayNum(${p})) - toRelativeDayNum(${c}), 7)`,
  month: (p, c) => `(toInt64(toRelativeMonthNum(${p})) - toRelativeMonthNum(${c}))`,
};

/**
 * Builds POST /v1/retention as one statement: per entity, its first start event's period (the cohort) and the distinct
 * periods of its return events; rows (cohort, k, entities), k = -1 giving each cohort's size.
 */
export function buildRetention(tables: ReadTables, projectId: string, q: RetentionQuery): Query {
  const b = new Builder();
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
  const period = PERIOD_SQL[q.period];
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

/** The start (ms, UTC) of the period k periods after the one starting at `cohort` (YYYY-MM-DD). */
function periodStart(cohort: string, period: RetentionPeriod, k: number): number {
  const [y, m, d] = cohort.split('-').map(Number) as [number, number, number];
  if (period === 'month') return Date.UTC(y, m - 1 + k, 1);
  return Date.UTC(y, m - 1, d) + k * (period === 'week' ? 7 : 1) * DAY_MS;
}

/** POST /v1/retention over a validated body, under the read gate and limits (reader.read). */
export async function queryRetention(reader: Reader, projectId: string, q: RetentionQuery): Promise<RetentionResponse> {
  const { sql, params } = buildRetention(reader.tables, projectId, q);
  const rows = await reader.read<{ c: string; k: number | string; n: number | string; daily: number | string }>(projectId, sql, params);
  const cohorts = new Map<string, { cohort: string; size: number; returned: number[] }>();
  let ents = 0;
  let daily = 0;
  for (const r of rows) {
    let c = cohorts.get(r.c);
    if (!c) {
      let periods = 0;
      while (periodStart(r.c, q.period, periods) < q.to) periods++;
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
