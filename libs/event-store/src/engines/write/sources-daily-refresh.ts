import type { ClickHouseClient } from '@clickhouse/client';
import { ONE_BLOCK_SETTINGS, SESSION_ENTRY } from '../../tables/aggregates';
import { DAY_MS, toClickHouseTime } from '../../primitives/clickhouse-time';
import { addDays, dayStartMs, sessionsInRangeSql } from '../../tables/session-days';
import { mergeableWeek, mondayOf, readSourceDaySeqs } from '../../tables/sources-daily';
import { VISIT_DIMS, VISIT_DIMS_ALL, VISIT_DIMS_SPLIT } from '../../tables/visit-dims';
import { DIMENSION_SQL, VISITS_ROW } from '../../queries/dimension-sql';

/** An empty visitor sketch: a tombstone's. */
const EMPTY_SKETCH = "arrayReduce('uniqCombinedState', emptyArrayString())";

/**
 * One INSERT that replaces a key's groups in a ReplacingMergeTree(version) aggregate (sources_daily, sources_weekly,
 * visit_dims): a tombstone (version {tomb:UInt64}: `zeros` for the sums, an empty sketch) for each group it has now
 * (`live`: the key's WHERE, read FINAL, which merges before WHERE filters a non-key column), then `groups`, the new
 * groups (version {ver:UInt64}). FINAL then keeps the new answer and no group of the old one. One block into one month
 * partition: one part, visible at once.
 */
function replaceGroupsSql(table: string, o: { keys: readonly string[]; sums: readonly string[]; zeros: readonly string[]; live: string; groups: readonly string[] }): string {
  return [
    `INSERT INTO ${table} (${[...o.keys, ...o.sums, 'uniques', 'version'].join(', ')})`,
    `SELECT ${[...o.keys, ...o.zeros, EMPTY_SKETCH, '{tomb:UInt64}'].join(', ')}`,
    `FROM ${table} FINAL WHERE ${o.live}`,
    'UNION ALL',
    ...o.groups,
    `SETTINGS ${ONE_BLOCK_SETTINGS}`,
  ].join('\n');
}

/** sources_daily's and sources_weekly's groups: their keys, the sums beside the sketch, and a tombstone's sums. */
const SOURCES_GROUPS = { keys: ['project_id', 'day', 'source', 'medium'], sums: ['sessions', 'events'], zeros: ['0', '0'] } as const;

/**
 * A day of visit_dims (migration 018) as of the aggregates now, from `db`'s tables: tombstones (version {tomb}) for the
 * groups the day had, then per visit dimension and value the sums and the visitor sketch of the day's visits read
 * whole (version {ver}): their one `visits` row (FINAL: its parts merged, as insights read it), bots left out, no
 * visit_spans key on the day or a day beside it (a visit's rows lie on two adjacent days at most; every other visit
 * is listed on each day it has a row: VISIT_HOME_DAY_SQL), and one row (dim 'all') of them all; each dimension's rows
 * but channel's and all's split by the visits' channel. Params: p, day, day_before, day_after, tomb, ver.
 */
export function visitDimsDaySql(db: string): string {
  const channel = DIMENSION_SQL[VISIT_DIMS_SPLIT].visits!.sql;
  const dims = [
    ...VISIT_DIMS.map((d) => `('${d}', toNullable(${DIMENSION_SQL[d].visits!.sql}), ${d === VISIT_DIMS_SPLIT ? "''" : channel})`),
    `('${VISIT_DIMS_ALL}', CAST(NULL, 'Nullable(String)'), '')`,
  ].join(', ');
  return replaceGroupsSql(`${db}.visit_dims`, {
    keys: ['project_id', 'day', 'dim', 'value', 'channel'],
    sums: ['visits', 'bounces', 'duration', 'pageviews', 'events'],
    zeros: ['toUInt64(0)', 'toUInt64(0)', 'toInt64(0)', 'toUInt64(0)', 'toUInt64(0)'],
    live: 'project_id = {p:UUID} AND day = {day:Date} AND visits > 0',
    groups: [
      'SELECT {p:UUID}, {day:Date}, dv.1 AS dim, dv.2 AS value, dv.3 AS channel, count() AS visits, countIf(vn = 1 AND vpv = 1) AS bounces, sum(vdur) AS duration,',
      "  sum(vpv) AS pageviews, sum(vn) AS events, uniqCombinedStateIf(anon, anon != '') AS uniques, {ver:UInt64} AS version",
      `FROM (SELECT anonymous_id AS anon, events AS vn, pageviews AS vpv, toUnixTimestamp64Milli(last_ts) - toUnixTimestamp64Milli(first_ts) AS vdur, ${Object.values(VISITS_ROW).join(', ')}`,
      `  FROM ${db}.visits FINAL WHERE project_id = {p:UUID} AND day = {day:Date} AND bot = 0`,
      `  AND session_key NOT IN (SELECT session_key FROM ${db}.visit_spans WHERE project_id = {p:UUID} AND day >= {day_before:Date} AND day <= {day_after:Date}))`,
      `ARRAY JOIN [${dims}] AS dv`,
      'GROUP BY dim, value, channel',
    ],
  });
}

/** Days back from today that a restart checks for builds newer than their refresh. */
const UNREFRESHED_DAYS = 62;

export interface SourcesDailyOptions {
  db: string;
  /** The aggregate builder's connection (refreshes run between its builds, never beside them). */
  client: ClickHouseClient;
  /** A day refreshed at t is refreshed again at t + refreshMs at the earliest; reads compute it meanwhile. */
  refreshMs: number;
  /** Days refreshed per builder tick at most (each is one INSERT ... SELECT over 3 days of sessions), and weeks merged. */
  maxDaysPerTick?: number;
}

/**
 * Keeps sources_daily (migration 005): per project and day, the GET /v1/sources answer of that day, recomputed from
 * `sessions` by the aggregate builder between its builds. Which days to recompute: the days the newly built events
 * touch and their neighbours (a session of day d is merged over days d-1..d+1), plus days a read found stale
 * (after a restart, or before 005 existed). A day is recomputed at most once per refreshMs: under steady traffic
 * today and yesterday stay stale between refreshes and reads compute them from `sessions`, exactly (sources.query.ts
 * decides per day; a stale day is never answered from here).
 * It keeps visit_dims too (migration 018): each day it refreshes, at the same seq (visitDimsDaySql), so a read takes a
 * day's visit sums by the same rule (insights.query.ts, freshVisitDays).
 * It keeps sources_weekly too (migration 013): a week whose days were refreshed, or that a read found unmerged, is
 * merged from its 7 days once it and the day after it are over and none of its days waits for a refresh, and only when
 * each of its days is fresh then (mergeableWeek, the rule reads apply before using the week).
 */
export class SourcesDaily {
  /** `${project_id}|${day}` -> the project and day, waiting for a refresh. */
  private readonly dirty = new Map<string, { projectId: string; day: string }>();
  private readonly refreshedAt = new Map<string, number>();
  /** `${project_id}|${monday}` -> the project and the week's Monday, waiting to be merged into sources_weekly. */
  private readonly weeks = new Map<string, { projectId: string; monday: string }>();
  private readonly maxDaysPerTick: number;

  constructor(private readonly options: SourcesDailyOptions) {
    this.maxDaysPerTick = options.maxDaysPerTick ?? 8;
  }

  /** Days a read found stale: refreshed by the next tick (within the refresh interval). */
  markStale(projectId: string, days: readonly string[]): void {
    for (const day of days) this.dirty.set(`${projectId}|${day}`, { projectId, day });
  }

  /** Whole weeks a read found with every day fresh but no current sources_weekly row: merged by a coming tick. */
  markWeeks(projectId: string, mondays: readonly string[]): void {
    for (const monday of mondays) this.weeks.set(`${projectId}|${monday}`, { projectId, monday });
  }

  /** Days waiting for a refresh (tests and benchmarks). */
  get pending(): number {
    return this.dirty.size;
  }

  /** A range was built: the days its events touch, and their neighbours, wait for a refresh. */
  async noteBuilt(range: { sql: string; params: Record<string, unknown> }): Promise<void> {
    const touched = await this.query<{ p: string; d: string }>(
      `SELECT DISTINCT toString(project_id) AS p, toString(toDate(timestamp)) AS d FROM ${this.options.db}.events WHERE ${range.sql}`,
      range.params,
    );
    for (const { p, d } of touched) this.markStale(p, [addDays(d, -1), d, addDays(d, 1)]);
  }

  /**
   * At start: the days of the last UNREFRESHED_DAYS that a build touched after their last refresh (or never refreshed),
   * and their neighbours, wait for one. Nothing else remembers them across a restart: on a server the reads that find
   * such a day stale run in other processes.
   */
  async markUnrefreshed(): Promise<void> {
    const db = this.options.db;
    for (const days of ['sources_daily_days', 'visit_dims_days']) {
      const stale = await this.query<{ p: string; d: string }>(
        [
          `SELECT toString(b.project_id) AS p, toString(b.day) AS d FROM`,
          `  (SELECT project_id, day, max(built_seq) AS seq FROM ${db}.daily_uniques WHERE day >= today() - ${UNREFRESHED_DAYS} GROUP BY project_id, day) AS b`,
          `LEFT JOIN (SELECT project_id, day, max(built_seq) AS seq FROM ${db}.${days} WHERE day >= today() - ${UNREFRESHED_DAYS} GROUP BY project_id, day) AS r`,
          `  ON b.project_id = r.project_id AND b.day = r.day`,
          `WHERE b.seq > r.seq`,
        ].join('\n'),
        {},
      );
      for (const { p, d } of stale) this.markStale(p, [addDays(d, -1), d, addDays(d, 1)]);
    }
  }

  /**
   * Refreshes the due days, as of the aggregates built exactly up to the range stamped `stamp`. Runs between builds.
   * `all` ignores the interval and the per-tick cap (benchmarks and tests settle with it).
   */
  async refresh(stamp: number, now: number, all = false): Promise<number> {
    let done = 0;
    for (const [key, { projectId, day }] of [...this.dirty]) {
      if (!all && (done >= this.maxDaysPerTick || now - (this.refreshedAt.get(key) ?? -Infinity) < this.options.refreshMs)) continue;
      await this.refreshDay(projectId, day, stamp);
      this.dirty.delete(key);
      this.refreshedAt.set(key, now);
      this.markWeeks(projectId, [mondayOf(day)]);
      done++;
    }
    // Then the weeks that are over (the day after a week's Sunday too: its sessions touch that Sunday) and whose days
    // wait for nothing. A week still in progress stays listed until then.
    const dirtyWeeks = new Set([...this.dirty.values()].map(({ projectId, day }) => `${projectId}|${mondayOf(day)}`));
    let merged = 0;
    for (const [key, { projectId, monday }] of [...this.weeks]) {
      if (!all && merged >= this.maxDaysPerTick) break;
      if (dayStartMs(monday) + 8 * DAY_MS > now || dirtyWeeks.has(key)) continue;
      await this.mergeWeek(projectId, monday);
      this.weeks.delete(key);
      merged++;
    }
    // Refresh times only matter within the interval.
    for (const [key, at] of this.refreshedAt) if (now - at >= this.options.refreshMs) this.refreshedAt.delete(key);
    return done;
  }

  /**
   * The day's groups as of seq s replaced in one INSERT (replaceGroupsSql: tombstones at version 2s, the groups at
   * 2s + 1), then the day's seq in sources_daily_days (after the rows: a crash in between leaves the day stale,
   * computed by reads and refreshed again); then visit_dims' day the same way.
   */
  private async refreshDay(projectId: string, day: string, seq: number): Promise<void> {
    const db = this.options.db;
    const from = toClickHouseTime(dayStartMs(day));
    const to = toClickHouseTime(dayStartMs(day) + DAY_MS);
    const params = { p: projectId, day, from, to, scan_from: addDays(day, -1), scan_to: addDays(day, 1), tomb: 2 * seq, ver: 2 * seq + 1 };
    await this.command(
      replaceGroupsSql(`${db}.sources_daily`, {
        ...SOURCES_GROUPS,
        live: 'project_id = {p:UUID} AND day = {day:Date} AND events > 0',
        groups: [
          `SELECT {p:UUID}, {day:Date}, ${SESSION_ENTRY.source('session_entry')} AS source, ${SESSION_ENTRY.medium('session_entry')} AS medium, count(), sum(session_events),`,
          `  uniqCombinedStateIf(visitor, visitor != ''), {ver:UInt64}`,
          `FROM (${sessionsInRangeSql(`${db}.sessions`)})`,
          'GROUP BY source, medium',
        ],
      }),
      params,
    );
    await this.command(`INSERT INTO ${db}.sources_daily_days (project_id, day, built_seq) VALUES ({p:UUID}, {day:Date}, {seq:UInt64})`, { p: projectId, day, seq });
    // visit_dims' day (migration 018) as of the same seq, the same way: its rows, then its seq.
    await this.command(visitDimsDaySql(db), { p: projectId, day, day_before: addDays(day, -1), day_after: addDays(day, 1), tomb: 2 * seq, ver: 2 * seq + 1 });
    await this.command(`INSERT INTO ${db}.visit_dims_days (project_id, day, built_seq) VALUES ({p:UUID}, {day:Date}, {seq:UInt64})`, { p: projectId, day, seq });
  }

  /**
   * One week of sources_weekly from its 7 days of sources_daily, when mergeableWeek accepts their states as the
   * aggregates are now: tombstones (version 2s) for the groups the week had, its groups summed and sketch-merged
   * (version 2s + 1), s the highest seq of its days; then s in sources_weekly_weeks (after the rows, as refreshDay).
   * Refreshes and builds run in the builder's chain, never beside this, so the states read hold for the INSERT.
   */
  private async mergeWeek(projectId: string, monday: string): Promise<void> {
    const db = this.options.db;
    const next = addDays(monday, 7);
    const seqs = await readSourceDaySeqs((sql, params) => this.query(sql, params), { dailyUniques: `${db}.daily_uniques`, refreshedDays: `${db}.sources_daily_days` }, projectId, monday, next);
    const week = mergeableWeek(monday, seqs);
    if (!week) return;
    await this.command(
      replaceGroupsSql(`${db}.sources_weekly`, {
        ...SOURCES_GROUPS,
        live: 'project_id = {p:UUID} AND day = {monday:Date} AND events > 0',
        groups: [
          'SELECT {p:UUID}, {monday:Date}, source, medium, sum(sessions), sum(events), uniqCombinedMergeState(uniques), {ver:UInt64}',
          `FROM ${db}.sources_daily FINAL WHERE project_id = {p:UUID} AND day >= {monday:Date} AND day < {next:Date} AND events > 0`,
          'GROUP BY source, medium',
        ],
      }),
      { p: projectId, monday, next, tomb: 2 * week.seq, ver: 2 * week.seq + 1 },
    );
    await this.command(`INSERT INTO ${db}.sources_weekly_weeks (project_id, day, built_seq) VALUES ({p:UUID}, {monday:Date}, {seq:UInt64})`, { p: projectId, monday, seq: week.seq });
  }

  private async query<T>(query: string, query_params: Record<string, unknown>): Promise<T[]> {
    const rs = await this.options.client.query({ query, query_params, format: 'JSONEachRow' });
    return rs.json<T>();
  }

  private async command(query: string, query_params: Record<string, unknown>): Promise<void> {
    await this.options.client.command({ query, query_params });
  }
}
