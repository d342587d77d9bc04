import { QUERY_SELECT_COLUMNS, type QueryEventRow, type QueryParams } from '@analytics/schema';
import { clickHouseTimeToIso, toClickHouseTime } from '../primitives/clickhouse-time';
import type { ReadTables } from '../tables/read-tables';
import type { Reader } from './reader';

/** Optional equality filters of raw-event reads (/v1/query, /v1/export): API parameter -> column. */
export const EVENT_FILTERS = [
  ['event', 'event_name'],
  ['source', 'source'],
  ['medium', 'medium'],
  ['user_id', 'user_id'],
] as const satisfies ReadonlyArray<readonly [keyof QueryParams, keyof QueryEventRow]>;

/** The SELECT behind GET /v1/query: newest first (timestamp DESC, event_id DESC), every value bound. */
export function buildQueryEvents(tables: ReadTables, projectId: string, params: QueryParams): { sql: string; params: Record<string, unknown> } {
  const where = ['project_id = {p:UUID}', "timestamp >= {from:DateTime64(3, 'UTC')}", "timestamp < {to:DateTime64(3, 'UTC')}"];
  const bound: Record<string, unknown> = { p: projectId, from: toClickHouseTime(params.from), to: toClickHouseTime(params.to), limit: params.limit };
  for (const [param, column] of EVENT_FILTERS) {
    const value = params[param];
    if (value === undefined) continue;
    where.push(`${column} = {${param}:String}`);
    bound[param] = value;
  }
  const sql = `SELECT ${QUERY_SELECT_COLUMNS.join(', ')} FROM ${tables.events} WHERE ${where.join(' AND ')} ORDER BY timestamp DESC, event_id DESC LIMIT {limit:UInt32}`;
  return { sql, params: bound };
}

export async function queryEvents(reader: Reader, projectId: string, params: QueryParams): Promise<QueryEventRow[]> {
  const q = buildQueryEvents(reader.tables, projectId, params);
  const rows = await reader.read<QueryEventRow>(projectId, q.sql, q.params);
  return rows.map((r) => ({ ...r, timestamp: clickHouseTimeToIso(r.timestamp) }));
}
