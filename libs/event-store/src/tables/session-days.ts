import { DAY_MS, toClickHouseDate } from '../primitives/clickhouse-time';

/** A UTC day as 'YYYY-MM-DD'. */
export const dayOf = (ms: number): string => toClickHouseDate(ms);
/** Epoch ms of a UTC day's midnight. */
export const dayStartMs = (day: string): number => Date.parse(`${day}T00:00:00Z`);
export const addDays = (day: string, n: number): string => dayOf(dayStartMs(day) + n * DAY_MS);

/**
 * Sessions whose first event is in [{from}, {to}), one row each (visitor, session_entry, session_events), from the
 * `sessions` rows of days [{scan_from}, {scan_to}]: a session's per-day rows are merged by session_key over those
 * days. GET /v1/sources and the per-day refresh of sources_daily share it, so both answer the same sessions.
 */
/** `paramPrefix` names its range parameters (`{<prefix>from}` ...) so that several ranges can be read in one query. */
export function sessionsInRangeSql(sessionsTable: string, extraHaving = '', paramPrefix = ''): string {
  const n = paramPrefix;
  return [
    'SELECT any(anonymous_id) AS visitor, min(entry) AS session_entry, min(first_ts) AS session_start, sum(events) AS session_events',
    `FROM ${sessionsTable}`,
    `WHERE project_id = {p:UUID} AND day >= {${n}scan_from:Date} AND day <= {${n}scan_to:Date}`,
    'GROUP BY session_key',
    `HAVING session_start >= {${n}from:DateTime64(3, 'UTC')} AND session_start < {${n}to:DateTime64(3, 'UTC')}${extraHaving}`,
  ].join('\n');
}

/**
 * sessionsInRangeSql without bots: the same rows from the `visits` aggregate's rows of non-bot events (bot = 0), so a
 * session's first event, events and visitor are those of its events whose device_type is not bot. visits.entry starts
 * as sessions.entry does (epoch ms, source length, source), so `min` picks the same first event.
 */
export function humanSessionsInRangeSql(visitsTable: string): string {
  return [
    'SELECT any(anonymous_id) AS visitor, min(entry) AS session_entry, min(first_ts) AS session_start, sum(events) AS session_events',
    `FROM ${visitsTable}`,
    'WHERE project_id = {p:UUID} AND day >= {scan_from:Date} AND day <= {scan_to:Date} AND bot = 0',
    'GROUP BY session_key',
    "HAVING session_start >= {from:DateTime64(3, 'UTC')} AND session_start < {to:DateTime64(3, 'UTC')}",
  ].join('\n');
}
