import { ApiError, DAY_MS, DEFAULT_TIME_ZONE, FUNNEL_LIMITS, type FunnelQuery, type FunnelResponse, type FunnelStep, type InsightDimension, dimensionKind, rangeInZone } from '@analytics/schema';
import { clickHouseCodeOf } from '../client/store-error';
import { isUtcMidnight, toClickHouseDate } from '../primitives/clickhouse-time';
import type { ReadTables } from '../tables/read-tables';
import { Builder, type Query, type ReadOptions, dimensionsOf, visitValueOf } from './dimension-sql';
import { DAILY_IDS_NOTE, eventRows } from './entity-rows';
import type { Reader } from './reader';

// POST /v1/funnel over the raw `events` table (exact: distinct entities; their rows: entity-rows.ts). The meanings are
// docs/conversions.md.
//
// Funnel: per entity, the sorted times of each step's events; for each of its step-1 events s, the greedy chain (each
// next step's earliest event at or after the previous one, no later than s + window). An entity reaches the level of
// its best chain (ClickHouse's windowFunnel(window) in its default mode); the chain kept is the latest start among
// those of the highest level, and gives the times between steps and the breakdown value (that of its step-1 event).
// Measured against windowFunnel itself: BENCHMARKS.md.

/** The key of an event's visit (migration 011), as the `visits` aggregate's session_key. */
const VISIT_KEY = 'visit_key';

/** Bits below an event's time in its packed value (one per step, 10 at most): `(ms << 10) | steps it completes`. */
const STEP_BITS = 10;

/**
 * The chains' next step, for every step-1 event of an entity at once. `prev`: the chains' times so far as 2 x ms (NONE
 * once a chain has ended), nondecreasing in a1's order (greedy chains' are). `times`: a step's sorted times as
 * 2 x ms + 1. Sorted together, a chain's time comes before an equal time of the step; split after each time of the
 * step, each piece holds the chains whose next time ends it (none in the last piece: NONE), in a1's order.
 * O(n log n) per entity, `prev` named once (named twice, the query's analysis doubles at each step). A lookup per chain
 * (arrayFirstOrNull inside arrayMap) copies the step's times for each chain: O(n^2) in one block of the engine, which a
 * KILL cannot stop (issue 43: a visitor's 2,000 events held the embedded engine for seconds).
 */
function nextStep(prev: string, times: string): string {
  const pieces = `arrayReverseSplit(v -> bitAnd(v, 1) = 1, arraySort(arrayConcat(${prev}, ${times})))`;
  return `arrayFlatten(arrayMap(c -> arrayWithConstant(length(c) - bitAnd(c[-1], 1), if(bitAnd(c[-1], 1) = 1, c[-1] - 1, ${NONE})), ${pieces}))`;
}
/** An ended chain's time in nextStep: 2^62, even, above every 2 x ms + 1 (2000-2100 in ms: 42 bits). */
const NONE = '4611686018427387904';

/**
 * Events of its steps one entity may have in a funnel's range: an entity's chains are one block of the engine that a
 * KILL cannot stop (the embedded engine runs one read at a time), so this bounds how long another project's read can
 * wait behind a funnel (docs/conversions.md). Beyond it the funnel is 400 query_too_expensive.
 */
export const FUNNEL_MAX_EVENTS_PER_ENTITY = 10_000;
/** FUNCTION_THROW_IF_VALUE_IS_NON_ZERO: the funnel's throwIf on an entity over FUNNEL_MAX_EVENTS_PER_ENTITY. */
const THROW_IF_CODE = 395;

/** Builds POST /v1/funnel as one statement (see the top of this file); every value is a bound parameter. */
export function buildFunnel(tables: ReadTables, projectId: string, query: FunnelQuery, options: ReadOptions = {}): Query {
  // Dates sent without a time are the project's local midnights (a funnel has no buckets: only its range moves).
  const q = rangeInZone(query, options.timezone ?? DEFAULT_TIME_ZONE);
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
  // The later steps' times as nextStep takes them: 2 x ms + 1.
  const oddTimesOf = (i: number) => `arrayMap(v -> toInt64(bitOr(bitShiftRight(v, ${STEP_BITS - 1}), 1)), arrayFilter(v -> bitTest(v, ${i}), a))`;
  const arrays = [bv ? 'b1 AS a1' : `arrayMap(t -> (t, NULL), ${timesOf(0)}) AS a1`, ...steps.slice(1).map((_, i) => `${oddTimesOf(i + 1)} AS a${i + 2}`)];
  const grouped = [
    `SELECT ent, max(dly) AS daily, arraySort(groupArray(x)) AS a${bv ? `, arrayMap(t -> (toInt64(bitShiftRight(t.1, ${STEP_BITS})), t.2), arraySort(groupArrayIf((x, bv), s1))) AS b1` : ''}`,
    `FROM (${rows}) GROUP BY ent HAVING arrayExists(v -> bitTest(v, 0), a) AND throwIf(count() > ${FUNNEL_MAX_EVENTS_PER_ENTITY} AND arrayExists(v -> bitTest(v, 0), a), 'an entity over FUNNEL_MAX_EVENTS_PER_ENTITY') = 0`,
  ].join('\n');
  // For every step-1 event at once, in a1's order (by time): u1 = its time; u(j) = the first time of step j at or after
  // u(j-1), none after none (nextStep; 2 x ms). Each u(j) in a SELECT of its own: an alias is inlined where it is used.
  let times = `SELECT ent, daily, ${arrays.join(', ')}, arrayMap(p -> 2 * p.1, a1) AS u1 FROM (${grouped})`;
  for (let j = 2; j <= steps.length; j++) times = `SELECT *, ${nextStep(`u${j - 1}`, `a${j}`)} AS u${j} FROM (${times})`;
  // chains: for each step-1 event, (time, value, [t1, t2, ...]): t(j) = u(j) within the window of t1, NULL past it (the
  // greedy chain within the window is the one without it cut where it leaves the window: the u(j) only grow).
  const us = steps.map((_, i) => `u${i + 1}`);
  const within = us.map((u) => `if(${u}_ <= 2 * (p.1 + {window:Int64}), intDiv(${u}_, 2), NULL)`);
  const chains = `arrayMap((p, ${us.map((u) => `${u}_`).join(', ')}) -> (p.1, p.2, [${within.join(', ')}]), a1, ${us.join(', ')})`;
  const level = (c: string) => `arrayCount(t -> t IS NOT NULL, ${c}.3)`;
  const chainsPerEntity = [
    `SELECT ent, daily, best.2 AS bv, ${level('best')} AS level, arrayMap(i -> assumeNotNull(best.3[i + 1]) - assumeNotNull(best.3[i]), range(1, level)) AS d`,
    `FROM (SELECT ent, daily, arrayReverseSort(c -> (${level('c')}, c.1), ${chains})[1] AS best FROM (${times}))`,
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
export async function queryFunnel(reader: Reader, projectId: string, query: FunnelQuery, options: ReadOptions = {}): Promise<FunnelResponse> {
  const q = rangeInZone(query, options.timezone ?? DEFAULT_TIME_ZONE);
  const { sql, params } = buildFunnel(reader.tables, projectId, q);
  const rows = await reader.read<Raw>(projectId, sql, params).catch((e: unknown) => {
    if (clickHouseCodeOf(e) !== THROW_IF_CODE) throw e;
    const bound = `${FUNNEL_MAX_EVENTS_PER_ENTITY} events`;
    const message = `a ${q.count_by} has more than ${bound} of the funnel's steps in the range: narrow the range or add filters`;
    throw new ApiError('query_too_expensive', { details: { limit: 'events_per_entity', bound, message } }, { cause: e });
  });
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
