import { LIVE_EVENTS_LIMIT, LIVE_MINUTES, LIVE_TOP_LIMIT, LIVE_VISITOR_MINUTES, type LiveMessage } from '@analytics/schema';
import { clickHouseTimeToIso, toClickHouseTime } from '../primitives/clickhouse-time';
import type { ReadTables } from '../tables/read-tables';
import type { Reader } from './reader';

const MINUTE_MS = 60_000;

/** The live view's windows at `now`: 30 whole minutes ending with the current one, and the visitors' last 5 minutes. */
export function liveWindow(now: number): { from: number; to: number; visitorsFrom: number } {
  const to = Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  return { from: to - LIVE_MINUTES * MINUTE_MS, to, visitorsFrom: now - LIVE_VISITOR_MINUTES * MINUTE_MS };
}

/**
 * The SELECT behind one live message: one statement of scalar subqueries over the project's events of the window (bots
 * left out, as the dashboard counts), so a tick is one read through the gate. `recent` is inlined in each subquery;
 * each scans the same few minutes of one project's part of the (project_id, timestamp) ordered table.
 */
export function buildLive(tables: ReadTables, projectId: string, now: number): { sql: string; params: Record<string, unknown> } {
  const w = liveWindow(now);
  const sql = [
    'WITH recent AS (',
    `  SELECT timestamp, event_id, event_name, anonymous_id, path, source, country FROM ${tables.events}`,
    "  WHERE project_id = {p:UUID} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')} AND device_type != 'bot'",
    ')',
    'SELECT',
    "  (SELECT toUInt32(uniqExactIf(anonymous_id, anonymous_id != '')) FROM recent WHERE timestamp >= {visitors_from:DateTime64(3, 'UTC')}) AS visitors,",
    "  (SELECT groupArray((m, toUInt32(n))) FROM (SELECT toUInt32(intDiv(toUnixTimestamp64Milli(timestamp) - {from_ms:Int64}, 60000)) AS m, count() AS n FROM recent WHERE event_name = '$pageview' GROUP BY m)) AS per_minute,",
    "  (SELECT groupArray((path, toUInt32(n))) FROM (SELECT path, uniqExactIf(anonymous_id, anonymous_id != '') AS n FROM recent WHERE event_name = '$pageview' GROUP BY path ORDER BY n DESC, path ASC LIMIT {top:UInt32})) AS top_pages,",
    "  (SELECT groupArray((source, toUInt32(n))) FROM (SELECT source, count() AS n FROM (SELECT anonymous_id, argMin(source, timestamp) AS source FROM recent WHERE anonymous_id != '' GROUP BY anonymous_id) GROUP BY source ORDER BY n DESC, source ASC LIMIT {top:UInt32})) AS top_sources,",
    '  (SELECT groupArray((event_name, path, source, country, toString(timestamp))) FROM (SELECT event_name, path, source, country, timestamp FROM recent ORDER BY timestamp DESC, event_id DESC LIMIT {events:UInt32})) AS events',
  ].join('\n');
  return {
    sql,
    params: { p: projectId, from: toClickHouseTime(w.from), to: toClickHouseTime(w.to), visitors_from: toClickHouseTime(w.visitorsFrom), from_ms: w.from, top: LIVE_TOP_LIMIT, events: LIVE_EVENTS_LIMIT },
  };
}

interface LiveRow {
  visitors: number | string;
  per_minute: Array<[number | string, number | string]>;
  top_pages: Array<[string | null, number | string]>;
  top_sources: Array<[string, number | string]>;
  events: Array<[string, string | null, string, string, string]>;
}

const byCount = <T extends { visitors: number }>(key: (r: T) => string) => (a: T, b: T) => b.visitors - a.visitors || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/** One live message of the key's project at `now` (GET /v1/live sends one per tick; MCP get_live answers one). */
export async function queryLive(reader: Reader, projectId: string, now: number = Date.now()): Promise<LiveMessage> {
  const q = buildLive(reader.tables, projectId, now);
  const [row] = await reader.read<LiveRow>(projectId, q.sql, q.params);
  const perMinute = new Array<number>(LIVE_MINUTES).fill(0);
  for (const [m, n] of row?.per_minute ?? []) if (Number(m) < LIVE_MINUTES) perMinute[Number(m)] = Number(n);
  return {
    at: new Date(now).toISOString(),
    visitors: Number(row?.visitors ?? 0),
    pageviews_per_minute: perMinute,
    top_pages: (row?.top_pages ?? []).map(([path, n]) => ({ path, visitors: Number(n) })).sort(byCount((r) => r.path ?? '')),
    top_sources: (row?.top_sources ?? []).map(([source, n]) => ({ source, visitors: Number(n) })).sort(byCount((r) => r.source)),
    events: (row?.events ?? [])
      .map(([event_name, path, source, country, timestamp]) => ({ event_name, path, source, country, timestamp: clickHouseTimeToIso(timestamp) }))
      .sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0)),
  };
}
