import { toClickHouseTime } from '../primitives/clickhouse-time';
import type { ReadTables } from '../tables/read-tables';
import type { Reader } from './reader';

type Query = { sql: string; params: Record<string, unknown> };

/** Which of some events a project already holds, by (event_id, timestamp): what POST /admin/projects/{id}/import skips. */
export interface StoredEventKeysParams {
  /** The candidates: event_id and the timestamp as epoch ms. */
  events: ReadonlyArray<{ event_id: string; timestamp: number }>;
}

/** The key of an event in the answer: event_id, a NUL, epoch ms. */
export const storedEventKey = (eventId: string, timestampMs: number): string => `${eventId}\0${timestampMs}`;

/** The candidates' ids between their first and last timestamp (the table's sort key prunes by project and time). */
export function buildStoredEventKeys(tables: ReadTables, projectId: string, params: StoredEventKeysParams): Query {
  const times = params.events.map((e) => e.timestamp);
  return {
    sql: [
      'SELECT DISTINCT event_id, toUnixTimestamp64Milli(timestamp) AS ms',
      `FROM ${tables.events}`,
      "WHERE project_id = {p:UUID} AND timestamp >= {lo:DateTime64(3, 'UTC')} AND timestamp <= {hi:DateTime64(3, 'UTC')}",
      '  AND event_id IN {ids:Array(String)}',
    ].join('\n'),
    params: { p: projectId, lo: toClickHouseTime(Math.min(...times)), hi: toClickHouseTime(Math.max(...times)), ids: [...new Set(params.events.map((e) => e.event_id))] },
  };
}

/** The keys (storedEventKey) of the candidates the project already holds. */
export async function queryStoredEventKeys(reader: Reader, projectId: string, params: StoredEventKeysParams): Promise<Set<string>> {
  if (params.events.length === 0) return new Set();
  const q = buildStoredEventKeys(reader.tables, projectId, params);
  const rows = await reader.read<{ event_id: string; ms: string | number }>(projectId, q.sql, q.params);
  return new Set(rows.map((r) => storedEventKey(r.event_id, Number(r.ms))));
}
