import { INSIGHTS_LIMITS, type PropertiesParams, type PropertiesResponse } from '@analytics/schema';
import { toClickHouseTime } from '../primitives/clickhouse-time';
import type { ReadTables } from '../tables/read-tables';
import { type Query, propSql } from './dimension-sql';
import type { Reader } from './reader';

/**
 * An event's top-level property keys, null-valued ones included: the map's keys, plus the keys the map leaves out
 * (null values) parsed from the JSON only for the events whose JSON holds a `null` at all (~half the CPU of parsing
 * every event's keys).
 */
export const PROPERTY_KEYS_SQL =
  "arrayConcat(mapKeys(properties_map), if(position(properties, 'null') > 0, arrayFilter(k -> NOT has(mapKeys(properties_map), k), JSONExtractKeys(properties)), []))";

/**
 * GET /v1/properties: the top-level keys of `properties` in the range (every stored event, bots included), most used
 * first; with `key`, that key's values as strings (absent and null left out). At most INSIGHTS_LIMITS.properties rows.
 */
export function buildProperties(tables: ReadTables, projectId: string, p: PropertiesParams): Query {
  const where = ["project_id = {project:UUID} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}", ...(p.event !== undefined ? ['event_name = {event:String}'] : [])];
  const params: Record<string, unknown> = { project: projectId, from: toClickHouseTime(p.from), to: toClickHouseTime(p.to), limit: INSIGHTS_LIMITS.properties, ...(p.event !== undefined ? { event: p.event } : {}) };
  if (p.key === undefined) {
    // Only events that can have a key: a non-empty map or a null in the JSON (PROPERTY_KEYS_SQL is empty for the rest).
    // The same answer; the rest are never expanded, and the engine's condition cache skips their granules next time
    // (BENCHMARKS.md, "The dashboard's calls that still read every event or every visit").
    return {
      sql: `SELECT arrayJoin(${PROPERTY_KEYS_SQL}) AS key, count() AS events FROM ${tables.events} WHERE ${where.join(' AND ')} AND (notEmpty(properties_map) OR position(properties, 'null') > 0) GROUP BY key ORDER BY events DESC, key ASC LIMIT {limit:UInt32}`,
      params,
    };
  }
  params.k0 = p.key;
  return {
    sql: `SELECT ${propSql('k0')} AS value, count() AS events FROM ${tables.events} WHERE ${where.join(' AND ')} AND value IS NOT NULL GROUP BY value ORDER BY events DESC, value ASC LIMIT {limit:UInt32}`,
    params,
  };
}

export async function queryProperties(reader: Reader, projectId: string, p: PropertiesParams): Promise<PropertiesResponse> {
  const { sql, params } = buildProperties(reader.tables, projectId, p);
  const rows = await reader.read<{ key?: string; value?: string; events: string | number }>(projectId, sql, params);
  return { rows: rows.map((r) => (p.key === undefined ? { key: String(r.key), events: Number(r.events) } : { value: String(r.value), events: Number(r.events) })) };
}
