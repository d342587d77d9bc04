import type { ClickHouseClient } from '@clickhouse/client';
import m001 from './migrations/001_events.sql';
import m002 from './migrations/002_aggregates.sql';
import m003 from './migrations/003_daily_uniques.sql';
import m004 from './migrations/004_aggregate_builder.sql';
import m005 from './migrations/005_sources_daily.sql';
import m006 from './migrations/006_daily_uniques_by.sql';
import m007 from './migrations/007_lightweight_forget.sql';
import { UNIQUES_BY_GROUPINGS_SQL } from './uniques-by';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Numbered ClickHouse migrations, applied in order, recorded in `${db}.schema_migrations`. */
export const EVENT_STORE_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: '001_events', sql: m001 },
  { version: 2, name: '002_aggregates', sql: m002 },
  { version: 3, name: '003_daily_uniques', sql: m003 },
  { version: 4, name: '004_aggregate_builder', sql: m004 },
  { version: 5, name: '005_sources_daily', sql: m005 },
  { version: 6, name: '006_daily_uniques_by', sql: m006 },
  { version: 7, name: '007_lightweight_forget', sql: m007 },
];

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function assertIdentifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`${what} must match ${IDENTIFIER} (got ${JSON.stringify(name)})`);
  return name;
}

export interface TableLayout {
  db: string;
  cluster?: string;
  /**
   * The aggregates are built by the AggregateBuilder off the request path (the embedded store), not by materialized
   * views on every INSERT (a server). Migration 004 applies only with it.
   */
  builder?: boolean;
}

/** Sharding key of the Distributed `events` (and `sessions`): a session's events all land on one shard (docs in 001). */
export const EVENTS_SHARDING_KEY = 'cityHash64(project_id, session_id)';

/** Name of the table holding a table's rows: the table itself single-node, its `<name>_local` replica table in a cluster. */
export function localTableOf(layout: TableLayout, table: string): string {
  return layout.cluster ? `${table}_local` : table;
}

function replicated(layout: TableLayout, engine: 'MergeTree' | 'AggregatingMergeTree', table: string): string {
  return layout.cluster ? `Replicated${engine}('/clickhouse/tables/{shard}/${layout.db}/${localTableOf(layout, table)}', '{replica}')` : engine;
}

/**
 * Fills the placeholders of a migration for single-node or cluster mode:
 * - `${db}`; `${on_cluster}` ('' or `ON CLUSTER <name>`); `${cluster}` (the cluster name, cluster mode only);
 * - `${events_table}`, `${daily_rollup_table}`, `${sessions_table}`, `${daily_uniques_table}`: the tables that hold
 *   the rows: `events`, `daily_rollup`, `sessions`, `daily_uniques` single-node; `events_local`, ... in a cluster,
 *   where the plain names are the Distributed tables over them;
 * - `${engine_events}`, `${engine_daily_rollup}`, `${engine_sessions}`, `${engine_daily_uniques}`:
 *   (Replicated)(Aggregating)MergeTree;
 * - `${events_sharding_key}`; `${uniques_by_groupings}` (the ARRAY JOIN tuples of daily_uniques_by, src/uniques-by.ts);
 *   `${cluster_only}`: '' in a cluster and `--` on a single node, so a line starting
 *   with it exists only in cluster mode (comments are dropped below); `${builder_only}` likewise exists only when
 *   the aggregate builder builds the aggregates (the embedded store).
 * Single-node output is exactly what it was before cluster mode existed: existing embedded databases depend on it.
 */
export function renderMigration(sql: string, layout: TableLayout): string[] {
  const cluster = layout.cluster ?? '';
  const vars: Record<string, string> = {
    db: layout.db,
    on_cluster: cluster ? `ON CLUSTER ${cluster}` : '',
    cluster,
    cluster_only: cluster ? '' : '--',
    builder_only: layout.builder && !cluster ? '' : '--',
    events_table: localTableOf(layout, 'events'),
    daily_rollup_table: localTableOf(layout, 'daily_rollup'),
    sessions_table: localTableOf(layout, 'sessions'),
    daily_uniques_table: localTableOf(layout, 'daily_uniques'),
    engine_events: replicated(layout, 'MergeTree', 'events'),
    engine_daily_rollup: replicated(layout, 'AggregatingMergeTree', 'daily_rollup'),
    engine_sessions: replicated(layout, 'AggregatingMergeTree', 'sessions'),
    engine_daily_uniques: replicated(layout, 'AggregatingMergeTree', 'daily_uniques'),
    events_sharding_key: EVENTS_SHARDING_KEY,
    uniques_by_groupings: UNIQUES_BY_GROUPINGS_SQL,
  };
  const text = sql.replace(/\$\{(\w+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new Error(`unknown migration variable ${name}`);
    return v;
  });
  return text
    .replace(/^\s*--.*$/gm, '')
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter(Boolean);
}

export async function migrateEventStore(client: ClickHouseClient, layout: TableLayout): Promise<number[]> {
  const db = assertIdentifier(layout.db, 'CLICKHOUSE_DATABASE');
  const onCluster = layout.cluster ? ` ON CLUSTER ${assertIdentifier(layout.cluster, 'CLICKHOUSE_CLUSTER')}` : '';
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}${onCluster}` });
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations${onCluster} (version UInt32, name String, applied_at DateTime DEFAULT now()) ENGINE = ${layout.cluster ? `ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}/schema_migrations', '{replica}')` : 'MergeTree'} ORDER BY version`,
  });
  const rs = await client.query({ query: `SELECT version FROM ${db}.schema_migrations`, format: 'JSONEachRow' });
  const done = new Set((await rs.json<{ version: number }>()).map((r) => Number(r.version)));
  const applied: number[] = [];
  for (const m of EVENT_STORE_MIGRATIONS) {
    if (done.has(m.version)) continue;
    for (const statement of renderMigration(m.sql, layout)) await client.command({ query: statement });
    await client.insert({ table: `${db}.schema_migrations`, values: [{ version: m.version, name: m.name }], format: 'JSONEachRow', columns: ['version', 'name'] });
    applied.push(m.version);
  }
  return applied;
}
