import { type SourcesParams, type SourcesResponse, rangeInZone } from '@analytics/schema';
import { SESSION_ENTRY, VISIT_ENTRY } from '../tables/aggregates';
import { DAY_MS, toClickHouseDate, toClickHouseTime } from '../primitives/clickhouse-time';
import type { ReadTables } from '../tables/read-tables';
import type { Reader } from './reader';
import { addDays, dayOf, dayStartMs, humanSessionsInRangeSql, sessionsInRangeSql } from '../tables/session-days';
import { isMonday, mergeableWeek, readSourceDaySeqs, sourceDayState, weekDays } from '../tables/sources-daily';

/** How far `sessions` rows are scanned past each end of the range: sessions shorter than this are merged whole. */
export const SESSION_SPAN_MS = DAY_MS;

type Query = { sql: string; params: Record<string, unknown> };

const keysOf = (params: SourcesParams) => (params.breakdown === 'source_medium' ? (['source', 'medium'] as const) : (['source'] as const));

/** Groups per-(source, medium) rows: `n` events, `u` uniqCombined states, into the endpoint's answer. */
function outerSelect(params: SourcesParams, from: string): string {
  const keys = keysOf(params);
  return [
    `SELECT ${keys.join(', ')},`,
    '  sum(n) AS events,',
    '  uniqCombinedMerge(u) AS uniques,',
    "  sumIf(n, medium = 'paid') / sum(n) AS paid_share",
    `FROM (${from})`,
    `GROUP BY ${keys.join(', ')}`,
    `ORDER BY events DESC, ${keys.map((k) => `${k} ASC`).join(', ')}`,
    'LIMIT {limit:UInt32}',
  ].join('\n');
}

/** The range's sessions (sessionsInRangeSql) per entry source and medium: events and a visitor sketch. */
const liveGroups = (tables: ReadTables, extraHaving = '', paramPrefix = '') =>
  [
    `SELECT ${SESSION_ENTRY.source('session_entry')} AS source, ${SESSION_ENTRY.medium('session_entry')} AS medium, sum(session_events) AS n, uniqCombinedStateIf(visitor, visitor != '') AS u`,
    `FROM (${sessionsInRangeSql(tables.sessions, extraHaving, paramPrefix)})`,
    'GROUP BY source, medium',
  ].join('\n');

/**
 * include_bots=false: the range's sessions as their events that are not bots make them (the `visits` aggregate keeps
 * a session's bot and other events in separate rows, bot = 0 or 1), so a session's entry is its first event that is
 * not a bot's, its events and visitor those of its other events, exactly as insights count visits without bots.
 */
const humanGroups = (tables: ReadTables) =>
  [
    `SELECT ${VISIT_ENTRY.source('session_entry')} AS source, ${VISIT_ENTRY.medium('session_entry')} AS medium, sum(session_events) AS n, uniqCombinedStateIf(visitor, visitor != '') AS u`,
    `FROM (${humanSessionsInRangeSql(tables.visits)})`,
    'GROUP BY source, medium',
  ].join('\n');

/**
 * GET /v1/sources from `sessions` alone. Sessions belong to the range by their first event; each session counts
 * whole (all its events) under its ENTRY source/medium. The inner query merges a session's per-day rows; `day`
 * bounds (range widened by SESSION_SPAN_MS) prune the scan, the HAVING on the merged first timestamp decides
 * membership. A server (no sources_daily) and ranges shorter than a whole UTC day are answered this way; include_bots=false
 * reads the `visits` aggregate the same way (humanGroups).
 */
export function buildSources(tables: ReadTables, projectId: string, params: SourcesParams): Query {
  return {
    sql: outerSelect(params, params.include_bots ? liveGroups(tables) : humanGroups(tables)),
    params: { p: projectId, ...sessionRangeParams(params.from, params.to), limit: params.limit },
  };
}

/** The parameters of sessionsInRangeSql for sessions that began in [from, to), named with `prefix`. */
function sessionRangeParams(from: number, to: number, prefix = ''): Record<string, string> {
  return {
    [`${prefix}from`]: toClickHouseTime(from),
    [`${prefix}to`]: toClickHouseTime(to),
    [`${prefix}scan_from`]: toClickHouseDate(from - SESSION_SPAN_MS),
    [`${prefix}scan_to`]: toClickHouseDate(to - 1 + SESSION_SPAN_MS),
  };
}

/** A whole-day range's days, split by where their answer comes from. */
export interface SourceDays {
  /** sources_daily holds the day as the aggregates are now (and no week of `weeks` holds it). */
  fresh: string[];
  /** Events built after the day's refresh touch it or a neighbour (or it was never refreshed): read from `sessions`. */
  stale: string[];
  /** Mondays of the range's whole ISO weeks read from sources_weekly (their days are in neither list above). */
  weeks: string[];
  /** Mondays of whole weeks whose days are all fresh but whose sources_weekly row is missing or older: read day by day, and told to the keeper. */
  unmerged: string[];
}

/**
 * Per day of [from, to): fresh, stale or empty by sourceDayState (empty days hold no session and are left out); then
 * each whole ISO week of the range whose days mergeableWeek accepts is read from sources_weekly when its row reflects
 * every one of its days as they are (its seq no lower than any of theirs), instead of day by day.
 */
export async function planSourceDays(reader: Reader, tables: ReadTables, projectId: string, params: SourcesParams): Promise<SourceDays> {
  const { touched, built, merged } = await readSourceDaySeqs(
    (sql, bound) => reader.read(projectId, sql, bound),
    { dailyUniques: tables.dailyUniques, refreshedDays: tables.sourcesDailyDays!, sourcesWeeklyWeeks: tables.sourcesWeeklyWeeks },
    projectId,
    dayOf(params.from),
    dayOf(params.to),
  );
  const seqs = { touched, built };
  const days: SourceDays = { fresh: [], stale: [], weeks: [], unmerged: [] };
  const inWeek = new Set<string>();
  if (tables.sourcesWeekly) {
    for (let ms = params.from; ms + 7 * DAY_MS <= params.to; ms += DAY_MS) {
      const monday = dayOf(ms);
      if (!isMonday(monday)) continue;
      const week = mergeableWeek(monday, seqs);
      if (!week) continue;
      const at = merged.get(monday);
      if (at === undefined || at < week.seq) {
        days.unmerged.push(monday);
        continue;
      }
      days.weeks.push(monday);
      for (const day of weekDays(monday)) inWeek.add(day);
    }
  }
  for (let ms = params.from; ms < params.to; ms += DAY_MS) {
    const day = dayOf(ms);
    if (inWeek.has(day)) continue;
    const state = sourceDayState(day, seqs);
    if (state !== 'empty') days[state].push(day);
  }
  return days;
}

/** The parts of a range before its first and after its last whole UTC day: [from, to) each, ms. */
export type RangeEdges = ReadonlyArray<readonly [number, number]>;

/** A range's whole UTC days [from, to) and what lies outside them (at most a part of a day at each end). */
export function wholeDaysOf(fromMs: number, toMs: number): { from: number; to: number; edges: RangeEdges } | undefined {
  const from = Math.ceil(fromMs / DAY_MS) * DAY_MS;
  const to = Math.floor(toMs / DAY_MS) * DAY_MS;
  if (to <= from) return undefined;
  const edges: Array<[number, number]> = [];
  if (fromMs < from) edges.push([fromMs, from]);
  if (to < toMs) edges.push([to, toMs]);
  return { from, to, edges };
}

/**
 * GET /v1/sources over whole UTC days: whole ISO weeks from sources_weekly and the other fresh days from sources_daily
 * (FINAL keeps each group's newest version; tombstones have 0 events), stale days from `sessions` exactly as a one-day range would be (merged over the day
 * before and after), summed and sketch-merged per group. `edges`, the parts of a range off whole days before and
 * after them, are read from `sessions` as buildSources reads a range (sessions that began within each), so that a
 * range such as "the last 30 days" from now reads its 29 whole days from sources_daily, not every session of 30 days.
 */
export function buildSourcesFromDays(tables: ReadTables, projectId: string, params: SourcesParams, days: SourceDays, edges: RangeEdges = []): Query | undefined {
  const parts: string[] = [];
  const bound: Record<string, unknown> = { p: projectId, limit: params.limit };
  edges.forEach(([from, to], i) => {
    parts.push(liveGroups(tables, '', `edge${i}_`));
    Object.assign(bound, sessionRangeParams(from, to, `edge${i}_`));
  });
  if (days.fresh.length > 0) {
    parts.push(`SELECT source, medium, events AS n, uniques AS u FROM ${tables.sourcesDaily!} FINAL WHERE project_id = {p:UUID} AND day IN {fresh:Array(Date)} AND events > 0`);
    bound.fresh = days.fresh;
  }
  if (days.weeks.length > 0) {
    parts.push(`SELECT source, medium, events AS n, uniques AS u FROM ${tables.sourcesWeekly!} FINAL WHERE project_id = {p:UUID} AND day IN {weeks:Array(Date)} AND events > 0`);
    bound.weeks = days.weeks;
  }
  if (days.stale.length > 0) {
    const first = days.stale[0]!;
    const last = days.stale.at(-1)!;
    parts.push(liveGroups(tables, ' AND toDate(session_start) IN {stale:Array(Date)}'));
    Object.assign(bound, {
      stale: days.stale,
      from: toClickHouseTime(dayStartMs(first)),
      to: toClickHouseTime(dayStartMs(last) + DAY_MS),
      scan_from: addDays(first, -1),
      scan_to: addDays(last, 1),
    });
  }
  if (parts.length === 0) return undefined;
  return { sql: outerSelect(params, parts.join('\nUNION ALL\n')), params: bound };
}

/** A Reader that may also keep sources_daily (the EventStore in the process that builds): it is told the stale days found. */
export interface SourcesReader extends Reader {
  readonly sourcesDaily?: { markStale(projectId: string, days: readonly string[]): void; markWeeks(projectId: string, mondays: readonly string[]): void };
}

export async function querySources(reader: SourcesReader, projectId: string, sent: SourcesParams): Promise<SourcesResponse> {
  // `tz` (UTC by default, the spec): dates sent without a time are its local midnights. Sessions count by their first
  // event, so a range of local days off UTC midnights reads its whole UTC days from the day rows and its ends from
  // `sessions`.
  const params = rangeInZone(sent, sent.tz ?? 'UTC');
  const tables = reader.tables;
  // The keeper of sources_daily is the builder's: in a process that does not build (read-api on a server) stale days
  // are not told to it; its own ranges and its start mark them (engines/write/sources-daily-refresh.ts).
  const cache = reader.sourcesDaily;
  let q: Query | undefined;
  // sources_daily counts every event (no bot flag): without bots, every range is read from the visits aggregate.
  // A range off UTC midnights reads its whole days as a whole-day range does and the rest of a day at either end from
  // `sessions` (wholeDaysOf); one shorter than a whole day reads `sessions` alone.
  const whole = tables.sourcesDaily && params.include_bots ? wholeDaysOf(params.from, params.to) : undefined;
  if (whole) {
    const days = await planSourceDays(reader, tables, projectId, { ...params, from: whole.from, to: whole.to });
    if (days.stale.length > 0) cache?.markStale(projectId, days.stale);
    if (days.unmerged.length > 0) cache?.markWeeks(projectId, days.unmerged);
    q = buildSourcesFromDays(tables, projectId, params, days, whole.edges);
  } else {
    q = buildSources(tables, projectId, params);
  }
  const rows = q ? await reader.read<Record<string, string | number>>(projectId, q.sql, q.params) : [];
  return {
    breakdown: params.breakdown,
    rows: rows.map((r) => ({
      source: String(r.source),
      ...(params.breakdown === 'source_medium' ? { medium: String(r.medium) } : {}),
      events: Number(r.events),
      uniques: Number(r.uniques),
      paid_share: Number(r.paid_share),
    })),
  };
}
