import type { SourcesParams, SourcesResponse } from '@analytics/schema';
import { toClickHouseDate, toClickHouseTime } from './clickhouse-time';
import type { EventStore } from './event-store';
import { type ReadTables, readTablesOf } from './read-tables';

const DAY_MS = 86_400_000;

// A merged session's sessions.entry: '<15-digit epoch ms><5-digit byte length of source><source><medium>'.
const ENTRY = {
  source: 'substring(session_entry, 21, toUInt32(substring(session_entry, 16, 5)))',
  medium: 'substring(session_entry, 21 + toUInt32(substring(session_entry, 16, 5)))',
};

/** How far `sessions` rows are scanned past each end of the range: sessions shorter than this are merged whole. */
export const SESSION_SPAN_MS = DAY_MS;

/**
 * The SELECT behind GET /v1/sources. Sessions belong to the range by their first event; each session counts whole
 * (all its events) under its ENTRY source/medium. The inner query merges a session's per-day rows; `day` bounds
 * (range widened by SESSION_SPAN_MS) prune the scan, the HAVING on the merged first timestamp decides membership.
 */
export function buildSources(tables: ReadTables, projectId: string, params: SourcesParams): { sql: string; params: Record<string, unknown> } {
  const withMedium = params.breakdown === 'source_medium';
  const keys = withMedium ? (['source', 'medium'] as const) : (['source'] as const);
  const sql = [
    `SELECT ${keys.map((k) => `${ENTRY[k]} AS ${k}`).join(', ')},`,
    '  sum(session_events) AS events,',
    "  uniqCombinedIf(visitor, visitor != '') AS uniques,",
    `  sumIf(session_events, ${ENTRY.medium} = 'paid') / sum(session_events) AS paid_share`,
    'FROM (',
    '  SELECT any(anonymous_id) AS visitor, min(entry) AS session_entry, min(first_ts) AS session_start, sum(events) AS session_events',
    `  FROM ${tables.sessions}`,
    '  WHERE project_id = {p:UUID} AND day >= {scan_from:Date} AND day <= {scan_to:Date}',
    '  GROUP BY session_key',
    "  HAVING session_start >= {from:DateTime64(3, 'UTC')} AND session_start < {to:DateTime64(3, 'UTC')}",
    ')',
    `GROUP BY ${keys.join(', ')}`,
    `ORDER BY events DESC, ${keys.map((k) => `${k} ASC`).join(', ')}`,
    'LIMIT {limit:UInt32}',
  ].join('\n');
  return {
    sql,
    params: {
      p: projectId,
      from: toClickHouseTime(params.from),
      to: toClickHouseTime(params.to),
      scan_from: toClickHouseDate(params.from - SESSION_SPAN_MS),
      scan_to: toClickHouseDate(params.to - 1 + SESSION_SPAN_MS),
      limit: params.limit,
    },
  };
}

export async function querySources(store: EventStore, projectId: string, params: SourcesParams): Promise<SourcesResponse> {
  const q = buildSources(readTablesOf(store), projectId, params);
  const rows = await store.read<Record<string, string | number>>(projectId, q.sql, q.params);
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
