import type { ClickHouseClient } from '@clickhouse/client';
import m001 from './migrations/001_events.sql';
import m002 from './migrations/002_aggregates.sql';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Numbered ClickHouse migrations, applied in order, recorded in `${db}.schema_migrations`. */
export const EVENT_STORE_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: '001_events', sql: m001 },
  { version: 2, name: '002_aggregates', sql: m002 },
];

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function assertIdentifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`${what} must match ${IDENTIFIER} (got ${JSON.stringify(name)})`);
  return name;
}

export interface TableLayout {
  db: string;
  cluster?: string;
}

function aggregatingEngine(layout: TableLayout, table: string): string {
  return layout.cluster ? `ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${layout.db}/${table}', '{replica}')` : 'AggregatingMergeTree';
}

/** Fills the placeholders of a migration: database, ON CLUSTER clause and engines for single-node or cluster mode. */
export function renderMigration(sql: string, layout: TableLayout): string[] {
  const vars: Record<string, string> = {
    db: layout.db,
    on_cluster: layout.cluster ? `ON CLUSTER ${layout.cluster}` : '',
    engine_events: layout.cluster ? `ReplicatedMergeTree('/clickhouse/tables/{shard}/${layout.db}/events_local', '{replica}')` : 'MergeTree',
    engine_daily_rollup: aggregatingEngine(layout, 'daily_rollup'),
    engine_sessions: aggregatingEngine(layout, 'sessions'),
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
